/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_AXPY (accel_axpy_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelAxpy, accel_axpy, ACCEL, AXPY, AccelOp)

struct _AccelAxpy {
  AccelOp parent_instance;

  /*< public >*/
  /* Vector x (contiguous) */
  AccelBuffer *x; /*< read required >*/
  /* Vector y, updated in place; same dtype and element count as x */
  AccelBuffer *y; /*< readwrite required >*/
  /* The scale of `x` (real, also for complex types). */
  double alpha; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=1.0 >*/
};

ACCEL_API
AccelOp *accel_axpy_new (double alpha, AccelBuffer *x, AccelBuffer *y);

G_END_DECLS
