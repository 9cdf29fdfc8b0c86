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

G_END_DECLS
