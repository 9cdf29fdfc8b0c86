/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

/**
 * AccelMatmulEpilogue:
 * @ACCEL_MATMUL_EPILOGUE_NONE: `c = t`
 * @ACCEL_MATMUL_EPILOGUE_BIAS: `c = t + bias`
 * @ACCEL_MATMUL_EPILOGUE_RELU: `c = max (t, 0)`
 * @ACCEL_MATMUL_EPILOGUE_GELU: `c = gelu (t)`
 * @ACCEL_MATMUL_EPILOGUE_BIAS_RELU: `c = max (t + bias, 0)`
 * @ACCEL_MATMUL_EPILOGUE_BIAS_GELU: `c = gelu (t + bias)`
 * @ACCEL_MATMUL_EPILOGUE_GELU_ERF: `c = gelu_erf (t)`
 * @ACCEL_MATMUL_EPILOGUE_BIAS_GELU_ERF: `c = gelu_erf (t + bias)`
 *
 * What `matmul` applies to `t = alpha op(a) op(b) + beta c` before storing
 * it; `bias` is a row vector added to every row. `gelu` is the tanh
 * approximation, `x / 2 · (1 + tanh (√(2/π) (x + 0.044715 x³)))`, as
 * cuBLASLt's GELU epilogue and PyTorch's `gelu (x, approximate="tanh")`;
 * `gelu_erf` is the exact form, `x / 2 · (1 + erf (x / √2))`, PyTorch's
 * default `torch.nn.functional.gelu`.
 */
typedef enum {
  ACCEL_MATMUL_EPILOGUE_NONE,
  ACCEL_MATMUL_EPILOGUE_BIAS,
  ACCEL_MATMUL_EPILOGUE_RELU,
  ACCEL_MATMUL_EPILOGUE_GELU,
  ACCEL_MATMUL_EPILOGUE_BIAS_RELU,
  ACCEL_MATMUL_EPILOGUE_BIAS_GELU,
  ACCEL_MATMUL_EPILOGUE_GELU_ERF,
  ACCEL_MATMUL_EPILOGUE_BIAS_GELU_ERF,
} AccelMatmulEpilogue;

#define ACCEL_TYPE_MATMUL (accel_matmul_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelMatmul, accel_matmul, ACCEL, MATMUL, AccelOp)

struct _AccelMatmul {
  AccelOp parent_instance;

  /*< public >*/
  /* Left matrix [m, k] ([k, m] if transa), or a batch [b, m, k] */
  AccelBuffer *a; /*< read required >*/
  /* Right matrix [k, n] ([n, k] if transb), or a batch [b, k, n] */
  AccelBuffer *b; /*< read required >*/
  /* Result [m, n], or a batch [b, m, n]; read when beta is not 0 */
  AccelBuffer *c; /*< readwrite required >*/
  /* The row vector `[n]` of the bias epilogues. */
  AccelBuffer *bias; /*< read >*/
  /* What is applied to the product before it is stored. */
  AccelMatmulEpilogue epilogue; /*< default=ACCEL_MATMUL_EPILOGUE_NONE >*/
  /* Whether `a` is stored transposed (`[k, m]`). */
  gboolean transa; /*< default=FALSE >*/
  /* Whether `b` is stored transposed (`[n, k]`). */
  gboolean transb; /*< default=FALSE >*/
  /* Scale of the product op(a) op(b). */
  double alpha; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=1.0 >*/
  /* Scale of the old contents of `c`; with 0, `c` is not read (so NaNs there
   * do not propagate). */
  double beta; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=0.0 >*/
  /* A further factor of the product, the per-tensor dequantisation scale of an
   * fp8 `a`. */
  double a_scale; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=1.0 >*/
  /* A further factor of the product, the per-tensor dequantisation scale of an
   * fp8 `b`. */
  double b_scale; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=1.0 >*/
  /* The factor applied after the epilogue, before rounding to an fp8 `c` (the
   * per-tensor quantisation scale); it must be 1 for other types of `c`. */
  double c_scale; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=1.0 >*/
  /* The arithmetic the kernel may use; tf32 applies to f32 only. */
  AccelGemmCompute compute; /*< default=ACCEL_GEMM_COMPUTE_DEFAULT >*/
  /* Added after the activation, shaped and typed as `c`. */
  AccelBuffer *residual; /*< read >*/
  /* Optional f32 [m]: a scale per row of the product */
  AccelBuffer *row_scales; /*< read >*/
  /* Optional f32 [n]: a scale per column of the product */
  AccelBuffer *col_scales; /*< read >*/
  /* F32 `[1]`, receives the largest magnitude of the result before `c_scale`. */
  AccelBuffer *amax; /*< write >*/
};

ACCEL_API
AccelOp *accel_matmul_new (AccelBuffer *a, AccelBuffer *b, AccelBuffer *c, AccelMatmulEpilogue epilogue);

G_END_DECLS
