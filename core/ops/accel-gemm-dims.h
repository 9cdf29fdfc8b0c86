/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

/**
 * AccelGemmDims:
 * @batch: how many matrices (1 for rank-2 buffers)
 * @m: the rows of `op(a)` and `c`
 * @n: the columns of `op(b)` and `c`
 * @k: the columns of `op(a)`, the rows of `op(b)`
 *
 * The sizes of a matrix product `c = op(a) op(b)` on row-major buffers, as
 * accel_gemm_dims() reads them.
 */
typedef struct {
  gint64 batch;
  gint64 m;
  gint64 n;
  gint64 k;
} AccelGemmDims;

ACCEL_API
gboolean accel_gemm_dims (AccelOp *op,
                          AccelBuffer *a,
                          gboolean transa,
                          AccelBuffer *b,
                          gboolean transb,
                          AccelBuffer *c,
                          AccelGemmDims *dims,
                          GError **error);

G_END_DECLS
