/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-types.h"

G_BEGIN_DECLS

/**
 * AccelGemmCompute:
 * @ACCEL_GEMM_COMPUTE_DEFAULT: the natural precision of the dtype (f32 accumulation for f16/bf16)
 * @ACCEL_GEMM_COMPUTE_TF32: f32 data multiplied on tensor cores in tf32
 * @ACCEL_GEMM_COMPUTE_F32: f32 data in full f32 (no tf32 even where allowed by default)
 *
 * The arithmetic a GEMM may use.
 */
typedef enum {
  ACCEL_GEMM_COMPUTE_DEFAULT,
  ACCEL_GEMM_COMPUTE_TF32,
  ACCEL_GEMM_COMPUTE_F32,
} AccelGemmCompute;

/**
 * AccelRngDistribution:
 * @ACCEL_RNG_UNIFORM: uniform on [low, high)
 * @ACCEL_RNG_NORMAL: normal with mean and stddev
 *
 * Distributions of `rng-fill`.
 */
typedef enum {
  ACCEL_RNG_UNIFORM,
  ACCEL_RNG_NORMAL,
} AccelRngDistribution;

/**
 * AccelFftKind:
 * @ACCEL_FFT_C2C: complex to complex
 * @ACCEL_FFT_R2C: real to half-spectrum complex (forward only)
 * @ACCEL_FFT_C2R: half-spectrum complex to real (inverse only)
 *
 * Kinds of FFT.
 */
typedef enum {
  ACCEL_FFT_C2C,
  ACCEL_FFT_R2C,
  ACCEL_FFT_C2R,
} AccelFftKind;

/**
 * AccelFftDirection:
 * @ACCEL_FFT_FORWARD: exp(-2πi jk/n)
 * @ACCEL_FFT_INVERSE: exp(+2πi jk/n), unnormalised (as FFTW and cuFFT)
 *
 * Direction of an FFT.
 */
typedef enum {
  ACCEL_FFT_FORWARD,
  ACCEL_FFT_INVERSE,
} AccelFftDirection;

/**
 * AccelReduceOp:
 * @ACCEL_REDUCE_SUM: sum
 * @ACCEL_REDUCE_MAX: maximum
 * @ACCEL_REDUCE_MIN: minimum
 * @ACCEL_REDUCE_MEAN: arithmetic mean
 *
 * Reductions of `reduce`.
 */
typedef enum {
  ACCEL_REDUCE_SUM,
  ACCEL_REDUCE_MAX,
  ACCEL_REDUCE_MIN,
  ACCEL_REDUCE_MEAN,
} AccelReduceOp;

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

/**
 * AccelPoolMode:
 * @ACCEL_POOL_MAX: the largest value in the window (padding never wins)
 * @ACCEL_POOL_AVG: the mean of the window (see #AccelPool2d:count-include-pad)
 *
 * What `pool2d` computes over each window.
 */
typedef enum {
  ACCEL_POOL_MAX,
  ACCEL_POOL_AVG,
} AccelPoolMode;

/**
 * AccelScanKind:
 * @ACCEL_SCAN_INCLUSIVE: `output[i] = input[0] + … + input[i]`
 * @ACCEL_SCAN_EXCLUSIVE: `output[i] = input[0] + … + input[i - 1]`, `output[0] = 0`
 *
 * The prefix sums of `scan`.
 */
typedef enum {
  ACCEL_SCAN_INCLUSIVE,
  ACCEL_SCAN_EXCLUSIVE,
} AccelScanKind;

/**
 * AccelQuantFormat:
 * @ACCEL_QUANT_FORMAT_INT4: two 4-bit codes per byte (u8 storage, `[N, K / 2]`),
 *   the even `k` in the low nibble; codes 0 to 15, zero point 8 unless given
 * @ACCEL_QUANT_FORMAT_INT8: one signed byte per weight (i8, `[N, K]`), zero
 *   point 0 unless given
 * @ACCEL_QUANT_FORMAT_FP8_E4M3: one fp8-e4m3 value per weight (`[N, K]`),
 *   no zero point
 *
 * How `quant-matmul` stores its weights.
 */
typedef enum {
  ACCEL_QUANT_FORMAT_INT4,
  ACCEL_QUANT_FORMAT_INT8,
  ACCEL_QUANT_FORMAT_FP8_E4M3,
} AccelQuantFormat;

/**
 * AccelConvLayout:
 * @ACCEL_CONV_LAYOUT_NCHW: images `[n, c, h, w]`, filters `[k, c / groups, r, s]`
 * @ACCEL_CONV_LAYOUT_NHWC: images `[n, h, w, c]`, filters `[k, r, s, c / groups]`
 *
 * The memory layout of the images and filters of `conv2d`, its backward
 * ops and `pool2d`.
 */
typedef enum {
  ACCEL_CONV_LAYOUT_NCHW,
  ACCEL_CONV_LAYOUT_NHWC,
} AccelConvLayout;

G_END_DECLS
