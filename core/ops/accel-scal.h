/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_SCAL (accel_scal_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelScal, accel_scal, ACCEL, SCAL, AccelOp)

struct _AccelScal {
  AccelOp parent_instance;

  /*< public >*/
  /* Vector x (contiguous), scaled in place */
  AccelBuffer *x; /*< readwrite required >*/
  /* The scale (real, also for complex types). */
  double alpha; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=1.0 >*/
};

ACCEL_API
AccelOp *accel_scal_new (double alpha, AccelBuffer *x);

G_END_DECLS
