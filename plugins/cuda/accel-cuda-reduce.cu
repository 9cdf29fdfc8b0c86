/* accel-cuda-reduce.cu: reduce and softmax on CUDA.
 *
 * Numerics follow the CPU backend (accel-cpu-reduce.c): sums accumulate in
 * binary64; max and min let a NaN win once seen; softmax of f32, f16 and
 * bf16 works in binary32 with a binary64 sum, f64 in binary64. The order of
 * the additions differs from the CPU's, so sums agree to rounding, not bit
 * for bit.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel-half.h>
#include "accel-cuda-kernels.h"

#define THREADS 256

__device__ __forceinline__ double
load_elem (int dt, const void *base, int64_t i)
{
  switch (dt)
    {
    case ACCEL_CUDA_DT_F32: return ((const float *) base)[i];
    case ACCEL_CUDA_DT_F64: return ((const double *) base)[i];
    case ACCEL_CUDA_DT_F16: return accel_f16_to_f32 (((const uint16_t *) base)[i]);
    default: return accel_bf16_to_f32 (((const uint16_t *) base)[i]);
    }
}

__device__ __forceinline__ void
store_elem (int dt, void *base, int64_t i, double v)
{
  switch (dt)
    {
    case ACCEL_CUDA_DT_F32: ((float *) base)[i] = (float) v; break;
    case ACCEL_CUDA_DT_F64: ((double *) base)[i] = v; break;
    case ACCEL_CUDA_DT_F16: ((uint16_t *) base)[i] = accel_f16_from_f64 (v); break;
    default: ((uint16_t *) base)[i] = accel_bf16_from_f64 (v); break;
    }
}

__device__ __forceinline__ double
combine (int op, double acc, double v)
{
  switch (op)
    {
    case ACCEL_CUDA_REDUCE_MAX:
      return isnan (acc) ? acc : (isnan (v) || v > acc) ? v : acc;
    case ACCEL_CUDA_REDUCE_MIN:
      return isnan (acc) ? acc : (isnan (v) || v < acc) ? v : acc;
    default:
      return acc + v;
    }
}

__device__ __forceinline__ double
identity (int op)
{
  switch (op)
    {
    case ACCEL_CUDA_REDUCE_MAX: return -INFINITY;
    case ACCEL_CUDA_REDUCE_MIN: return INFINITY;
    default: return 0.0;
    }
}

__device__ __forceinline__ double
finish (int op, double v, int64_t len)
{
  if (op == ACCEL_CUDA_REDUCE_MEAN)
    return len > 0 ? v / (double) len : NAN;
  return v;
}

/* Combines across the block; the result is valid in thread 0. */
__device__ double
block_combine (int op, double v)
{
  __shared__ double partial[THREADS / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  for (int o = 16; o > 0; o /= 2)
    v = combine (op, v, __shfl_down_sync (0xffffffffu, v, o));
  if (lane == 0)
    partial[warp] = v;
  __syncthreads ();
  if (warp == 0)
    {
      v = lane < (int) (blockDim.x / 32) ? partial[lane] : identity (op);
      for (int o = 16; o > 0; o /= 2)
        v = combine (op, v, __shfl_down_sync (0xffffffffu, v, o));
    }
  __syncthreads ();
  return v;
}

/* The reduced axis is the last: one block per output. */
__global__ void
reduce_rows_kernel (const void *src, void *dst, int dt, int op, int64_t outer, int64_t len)
{
  for (int64_t o = blockIdx.x; o < outer; o += gridDim.x)
    {
      double acc = identity (op);
      for (int64_t r = threadIdx.x; r < len; r += blockDim.x)
        acc = combine (op, acc, load_elem (dt, src, o * len + r));
      acc = block_combine (op, acc);
      if (threadIdx.x == 0)
        store_elem (dt, dst, o, finish (op, acc, len));
    }
}

/* A middle axis: one thread per output, coalesced along the inner axis. */
__global__ void
reduce_columns_kernel (const void *src, void *dst, int dt, int op, int64_t outer, int64_t len, int64_t inner)
{
  const int64_t total = outer * inner;
  for (int64_t t = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; t < total; t += (int64_t) gridDim.x * blockDim.x)
    {
      const int64_t o = t / inner, i = t % inner;
      double acc = identity (op);
      for (int64_t r = 0; r < len; r++)
        acc = combine (op, acc, load_elem (dt, src, (o * len + r) * inner + i));
      store_elem (dt, dst, t, finish (op, acc, len));
    }
}

extern "C" cudaError_t
accel_cuda_launch_reduce (const void *src, void *dst, int dtype, int reduction,
                          int64_t outer, int64_t len, int64_t inner, cudaStream_t stream)
{
  if (outer <= 0 || inner <= 0)
    return cudaSuccess;
  if (inner == 1)
    {
      unsigned int grid = (unsigned int) (outer < 65536 ? outer : 65536);
      reduce_rows_kernel<<<grid, THREADS, 0, stream>>> (src, dst, dtype, reduction, outer, len);
    }
  else
    {
      int64_t total = outer * inner;
      int64_t blocks = (total + THREADS - 1) / THREADS;
      reduce_columns_kernel<<<(unsigned int) (blocks < 65536 ? blocks : 65536), THREADS, 0, stream>>> (
        src, dst, dtype, reduction, outer, len, inner);
    }
  return cudaGetLastError ();
}

/* softmax: one block per row of the last axis. */

__device__ double
block_max (double v)
{
  __shared__ double partial[THREADS / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  for (int o = 16; o > 0; o /= 2)
    v = fmax (v, __shfl_xor_sync (0xffffffffu, v, o));
  if (lane == 0)
    partial[warp] = v;
  __syncthreads ();
  v = partial[0];
  for (int w = 1; w < (int) (blockDim.x / 32); w++)
    v = fmax (v, partial[w]);
  __syncthreads ();
  return v;
}

__device__ double
block_sum (double v)
{
  __shared__ double partial[THREADS / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  for (int o = 16; o > 0; o /= 2)
    v += __shfl_xor_sync (0xffffffffu, v, o);
  if (lane == 0)
    partial[warp] = v;
  __syncthreads ();
  v = 0.0;
  for (int w = 0; w < (int) (blockDim.x / 32); w++)
    v += partial[w];
  __syncthreads ();
  return v;
}

__global__ void
softmax_kernel (const void *src, void *dst, int dt, int64_t rows, int64_t len)
{
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x)
    {
      const int64_t base = r * len;
      if (dt == ACCEL_CUDA_DT_F64)
        {
          const double *x = (const double *) src + base;
          double *y = (double *) dst + base;
          double m = -INFINITY;
          for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
            m = fmax (m, x[j]);
          m = block_max (m);
          double s = 0.0;
          for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
            s += exp (x[j] - m);
          s = block_sum (s);
          for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
            y[j] = exp (x[j] - m) / s;
          __syncthreads ();
          continue;
        }

      float m = -INFINITY;
      for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
        m = fmaxf (m, (float) load_elem (dt, src, base + j));
      m = (float) block_max (m);
      double s = 0.0;
      for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
        s += expf ((float) load_elem (dt, src, base + j) - m);
      s = block_sum (s);
      const float inv = (float) (1.0 / s);
      /* When dst is src, every read of the row happened before the sum. */
      for (int64_t j = threadIdx.x; j < len; j += blockDim.x)
        {
          float y = expf ((float) load_elem (dt, src, base + j) - m) * inv;
          store_elem (dt, dst, base + j, y);
        }
      __syncthreads ();
    }
}

extern "C" cudaError_t
accel_cuda_launch_softmax (const void *src, void *dst, int dtype, int64_t rows, int64_t len,
                           cudaStream_t stream)
{
  if (rows <= 0 || len <= 0)
    return cudaSuccess;
  unsigned int grid = (unsigned int) (rows < 65536 ? rows : 65536);
  softmax_kernel<<<grid, THREADS, 0, stream>>> (src, dst, dtype, rows, len);
  return cudaGetLastError ();
}
