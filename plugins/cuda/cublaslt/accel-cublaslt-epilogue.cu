/* accel-cublaslt-epilogue.cu: the epilogues cuBLASLt does not fuse, run
 * after a matmul into an f32 result: the exact (erf) GELU, with the bias.
 * cuBLASLt's own GELU epilogue is the tanh approximation.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include "accel-cublaslt-epilogue.h"

#define THREADS 256

static unsigned
blocks_for (long long n)
{
  long long b = (n + THREADS - 1) / THREADS;
  return (unsigned) (b < 8192 ? (b > 0 ? b : 1) : 8192);
}

template <typename T> __device__ __forceinline__ float to_f32 (T v);
template <> __device__ __forceinline__ float to_f32<float> (float v) { return v; }
template <> __device__ __forceinline__ float to_f32<__half> (__half v) { return __half2float (v); }
template <> __device__ __forceinline__ float to_f32<__nv_bfloat16> (__nv_bfloat16 v) { return __bfloat162float (v); }

template <typename T> __device__ __forceinline__ T from_f32 (float v);
template <> __device__ __forceinline__ float from_f32<float> (float v) { return v; }
template <> __device__ __forceinline__ __half from_f32<__half> (float v) { return __float2half_rn (v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16> (float v) { return __float2bfloat16_rn (v); }

template <typename T>
__global__ void
widen_kernel (const T *in, float *out, long long n)
{
  for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) gridDim.x * blockDim.x)
    out[i] = to_f32 (in[i]);
}

/* out[i] = gelu_erf (t[i] + bias[i % n]), computed in f32 (double for
 * the erf argument's scale is not needed: erff is within 2 ulp). */
template <typename T>
__global__ void
gelu_erf_kernel (const float *t, const T *bias, T *out, long long total, long long n)
{
  for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < total;
       i += (long long) gridDim.x * blockDim.x)
    {
      float v = t[i];
      if (bias)
        v += to_f32 (bias[i % n]);
      out[i] = from_f32<T> (0.5f * v * (1.0f + erff (v * 0.70710678118654752f)));
    }
}

extern "C" cudaError_t
accel_cublaslt_widen (AccelCublasltType type, const void *in, float *out, long long n, cudaStream_t stream)
{
  if (n == 0)
    return cudaSuccess;
  switch (type)
    {
    case ACCEL_CUBLASLT_F16: widen_kernel<<<blocks_for (n), THREADS, 0, stream>>> ((const __half *) in, out, n); break;
    case ACCEL_CUBLASLT_BF16:
      widen_kernel<<<blocks_for (n), THREADS, 0, stream>>> ((const __nv_bfloat16 *) in, out, n);
      break;
    default: widen_kernel<<<blocks_for (n), THREADS, 0, stream>>> ((const float *) in, out, n); break;
    }
  return cudaGetLastError ();
}

extern "C" cudaError_t
accel_cublaslt_gelu_erf (AccelCublasltType type, const float *t, const void *bias, void *out, long long total,
                         long long n, cudaStream_t stream)
{
  if (total == 0)
    return cudaSuccess;
  unsigned blocks = blocks_for (total);
  switch (type)
    {
    case ACCEL_CUBLASLT_F16:
      gelu_erf_kernel<<<blocks, THREADS, 0, stream>>> (t, (const __half *) bias, (__half *) out, total, n);
      break;
    case ACCEL_CUBLASLT_BF16:
      gelu_erf_kernel<<<blocks, THREADS, 0, stream>>> (t, (const __nv_bfloat16 *) bias, (__nv_bfloat16 *) out,
                                                        total, n);
      break;
    default:
      gelu_erf_kernel<<<blocks, THREADS, 0, stream>>> (t, (const float *) bias, (float *) out, total, n);
      break;
    }
  return cudaGetLastError ();
}
