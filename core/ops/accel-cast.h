/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_CAST (accel_cast_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelCast, accel_cast, ACCEL, CAST, AccelOp)

struct _AccelCast {
  AccelOp parent_instance;

  /*< public >*/
  /* Source buffer, any dtype */
  AccelBuffer *src; /*< read required >*/
  /* Destination buffer, any dtype, same element count as src */
  AccelBuffer *dst; /*< write required >*/
};

ACCEL_API
AccelOp *accel_cast_new (AccelBuffer *src, AccelBuffer *dst);

G_END_DECLS
