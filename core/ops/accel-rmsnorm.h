/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_RMSNORM (accel_rmsnorm_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelRmsnorm, accel_rmsnorm, ACCEL, RMSNORM, AccelOp)

struct _AccelRmsnorm {
  AccelOp parent_instance;

  /*< public >*/
  AccelBuffer *x; /*< family=AccelNormFields >*/
  AccelBuffer *gamma; /*< family=AccelNormFields >*/
  AccelBuffer *beta; /*< family=AccelNormFields >*/
  AccelBuffer *y; /*< family=AccelNormFields >*/
  double eps; /*< family=AccelNormFields >*/
};

ACCEL_API
AccelOp *accel_rmsnorm_new (AccelBuffer *x, AccelBuffer *gamma, AccelBuffer *beta, AccelBuffer *y);

G_END_DECLS
