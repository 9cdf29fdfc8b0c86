/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_GEMM (accel_gemm_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelGemm, accel_gemm, ACCEL, GEMM, AccelOp)

struct _AccelGemm {
  AccelOp parent_instance;

  /*< public >*/
  AccelBuffer *a;
  AccelBuffer *b;
  AccelBuffer *c;
  gboolean transa;
  gboolean transb;
  double alpha;
  double beta;
  AccelGemmCompute compute;
};

ACCEL_API
AccelOp *accel_gemm_new (AccelBuffer *a, AccelBuffer *b, AccelBuffer *c);

G_END_DECLS
