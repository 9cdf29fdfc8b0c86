/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_GROUPED_GEMM (accel_grouped_gemm_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelGroupedGemm, accel_grouped_gemm, ACCEL, GROUPED_GEMM, AccelOp)

struct _AccelGroupedGemm {
  AccelOp parent_instance;

  /*< public >*/
  AccelBuffer *a;
  AccelBuffer *b;
  AccelBuffer *group_offsets;
  AccelBuffer *bias;
  AccelBuffer *out;
  gboolean transb;
  double alpha;
};

ACCEL_API
AccelOp *accel_grouped_gemm_new (AccelBuffer *a, AccelBuffer *b, AccelBuffer *group_offsets, AccelBuffer *out);

G_END_DECLS
