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
  AccelBuffer *a;
  AccelBuffer *b;
  AccelBuffer *c;
  AccelBuffer *bias;
  AccelMatmulEpilogue epilogue;
  gboolean transa;
  gboolean transb;
  double alpha;
  double beta;
  double a_scale;
  double b_scale;
  double c_scale;
  AccelGemmCompute compute;
  AccelBuffer *residual;
  AccelBuffer *row_scales;
  AccelBuffer *col_scales;
  AccelBuffer *amax;
};

ACCEL_API
AccelOp *accel_matmul_new (AccelBuffer *a, AccelBuffer *b, AccelBuffer *c, AccelMatmulEpilogue epilogue);

G_END_DECLS
