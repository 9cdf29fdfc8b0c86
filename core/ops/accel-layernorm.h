/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_LAYERNORM (accel_layernorm_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelLayernorm, accel_layernorm, ACCEL, LAYERNORM, AccelOp)

struct _AccelLayernorm {
  AccelOp parent_instance;

  /*< public >*/
  AccelBuffer *x; /*< family=AccelNormFields >*/
  AccelBuffer *gamma; /*< family=AccelNormFields >*/
  AccelBuffer *beta; /*< family=AccelNormFields >*/
  AccelBuffer *y; /*< family=AccelNormFields >*/
  double eps; /*< family=AccelNormFields >*/
};

ACCEL_API
AccelOp *accel_layernorm_new (AccelBuffer *x, AccelBuffer *gamma, AccelBuffer *beta, AccelBuffer *y);

G_END_DECLS
