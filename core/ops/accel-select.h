/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_SELECT (accel_select_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelSelect, accel_select, ACCEL, SELECT, AccelOp)

struct _AccelSelect {
  AccelOp parent_instance;

  /*< public >*/
  /* Elements [n] of any type */
  AccelBuffer *input; /*< read required >*/
  /* Flags [n]: u8, i8, i32 or u32; non-zero selects */
  AccelBuffer *flags; /*< read required >*/
  /* Selected elements first [n], type of input; the rest is kept */
  AccelBuffer *output; /*< readwrite required >*/
  /* Receives the number selected, `[1]`. */
  AccelBuffer *count; /*< write required >*/
};

ACCEL_API
AccelOp *accel_select_new (AccelBuffer *input, AccelBuffer *flags, AccelBuffer *output, AccelBuffer *count);

G_END_DECLS
