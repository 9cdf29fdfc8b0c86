/* accel-cublaslt-epilogue.h: launchers of accel-cublaslt-epilogue.cu.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ACCEL_CUBLASLT_F32,
  ACCEL_CUBLASLT_F16,
  ACCEL_CUBLASLT_BF16,
} AccelCublasltType;

/* out[i] = in[i] as f32, for @n elements of @type. */
cudaError_t accel_cublaslt_widen (AccelCublasltType type, const void *in, float *out, long long n,
                                  cudaStream_t stream);

/* out = gelu_erf (t + bias per column) in @type, for @total elements of rows
 * of @n; @bias (of @type, [n]) may be NULL; @out may be @t when @type is f32. */
cudaError_t accel_cublaslt_gelu_erf (AccelCublasltType type, const float *t, const void *bias, void *out,
                                     long long total, long long n, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
