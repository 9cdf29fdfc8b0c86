/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_FILL (accel_fill_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelFill, accel_fill, ACCEL, FILL, AccelOp)

struct _AccelFill {
  AccelOp parent_instance;

  /*< public >*/
  AccelBuffer *dst;
  double value;
  double value_imag;
};

ACCEL_API
AccelOp *accel_fill_new (AccelBuffer *dst, double value);

G_END_DECLS
