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
  /* The packed rows of every group, `[T, K]`. */
  AccelBuffer *a; /*< read required >*/
  /* One matrix per group, `[G, K, N]` (`[G, N, K]` with `transb`). */
  AccelBuffer *b; /*< read required >*/
  /* i32 `[G + 1]`: the rows of group `g` are `group_offsets[g]` to
   * `group_offsets[g + 1] - 1`; from 0, never decreasing, ending at T. */
  AccelBuffer *group_offsets; /*< read required >*/
  /* One row vector per group, `[G, N]`, of `out`'s dtype. */
  AccelBuffer *bias; /*< read >*/
  /* The result, `[T, N]`. */
  AccelBuffer *out; /*< write required >*/
  /* Whether `b` is stored `[G, N, K]`: each group's matrix transposed, as a
   * `torch.nn.Linear` weight. */
  gboolean transb; /*< default=FALSE >*/
  /* The scale of every product (for fp8, the product of the per-tensor scales
   * of `a` and `b`). */
  double alpha; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=1.0 >*/
};

ACCEL_API
AccelOp *accel_grouped_gemm_new (AccelBuffer *a, AccelBuffer *b, AccelBuffer *group_offsets, AccelBuffer *out);

G_END_DECLS
