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
  /* Left matrix [m, k] ([k, m] if transa), or a batch [b, m, k] */
  AccelBuffer *a; /*< read required >*/
  /* Right matrix [k, n] ([n, k] if transb), or a batch [b, k, n] */
  AccelBuffer *b; /*< read required >*/
  /* Result [m, n], or a batch [b, m, n]; read when beta is not 0 */
  AccelBuffer *c; /*< readwrite required >*/
  /* Whether `a` is stored transposed (`[k, m]`). */
  gboolean transa; /*< default=FALSE >*/
  /* Whether `b` is stored transposed (`[n, k]`). */
  gboolean transb; /*< default=FALSE >*/
  /* Scale of the product (real, also for complex types). */
  double alpha; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=1.0 >*/
  /* Scale of the old contents of `c`; with 0, `c` is not read (so NaNs there
   * do not propagate). */
  double beta; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=0.0 >*/
  /* The arithmetic the kernel may use. */
  AccelGemmCompute compute; /*< default=ACCEL_GEMM_COMPUTE_DEFAULT >*/
};

ACCEL_API
AccelOp *accel_gemm_new (AccelBuffer *a, AccelBuffer *b, AccelBuffer *c);

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
