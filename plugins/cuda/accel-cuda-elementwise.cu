/* accel-cuda-elementwise.cu: copy, fill, cast and rng-fill on CUDA.
 *
 * The conversions follow the CPU backend exactly (accel-cpu-elementwise.c):
 * a source element is decoded to binary64 (real, imaginary) or, for integer
 * sources, to int64, and encoded to the target with the rounding of
 * accel-half.h, so cast gives the same bytes as on cpu:0. rng-fill computes
 * the Philox mapping of accel-philox.h; uniform values are bit-identical to
 * cpu:0 (the header uses __fmul_rn/__fadd_rn, and this file is built with
 * -fmad=false).
 *
 * One generic kernel per op, with the dtypes as arguments, keeps the build
 * short; these kernels are memory-bound and the switch is warp-uniform.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel-half.h>
#include <accel-philox.h>
#include "accel-cuda-kernels.h"

#define THREADS 256

static unsigned int
grid_for (int64_t n)
{
  int64_t blocks = (n + THREADS - 1) / THREADS;
  if (blocks > 65536)
    blocks = 65536;
  return (unsigned int) (blocks > 0 ? blocks : 1);
}

/* Offset in elements of the element of row-major index @i. */
__device__ __forceinline__ int64_t
layout_offset (const AccelCudaLayout &l, int64_t i)
{
  if (l.rank == 0)
    return i;
  int64_t off = 0;
  for (int a = l.rank - 1; a >= 0; a--)
    {
      int64_t d = l.dims[a] > 0 ? l.dims[a] : 1;
      off += (i % d) * l.strides[a];
      i /= d;
    }
  return off;
}

__device__ __forceinline__ void
copy_bytes (unsigned char *dst, const unsigned char *src, size_t esize)
{
  switch (esize)
    {
    case 1: *dst = *src; break;
    case 2: *(uint16_t *) dst = *(const uint16_t *) src; break;
    case 4: *(uint32_t *) dst = *(const uint32_t *) src; break;
    case 8: *(uint64_t *) dst = *(const uint64_t *) src; break;
    case 16: *(uint4 *) dst = *(const uint4 *) src; break;
    default: for (size_t b = 0; b < esize; b++) dst[b] = src[b];
    }
}

/* copy */

__global__ void
copy_kernel (const unsigned char *src, AccelCudaLayout ls, unsigned char *dst, AccelCudaLayout ld,
             int64_t n, size_t esize)
{
  for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n; i += (int64_t) gridDim.x * blockDim.x)
    copy_bytes (dst + layout_offset (ld, i) * esize, src + layout_offset (ls, i) * esize, esize);
}

extern "C" cudaError_t
accel_cuda_launch_copy (const void *src, const AccelCudaLayout *src_layout,
                        void *dst, const AccelCudaLayout *dst_layout,
                        int64_t n, size_t esize, cudaStream_t stream)
{
  if (n <= 0)
    return cudaSuccess;
  copy_kernel<<<grid_for (n), THREADS, 0, stream>>> ((const unsigned char *) src, *src_layout,
                                                     (unsigned char *) dst, *dst_layout, n, esize);
  return cudaGetLastError ();
}

/* fill */

__global__ void
fill_kernel (unsigned char *dst, AccelCudaLayout ld, int64_t n, uint4 pattern, size_t esize)
{
  const unsigned char *p = (const unsigned char *) &pattern;
  for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n; i += (int64_t) gridDim.x * blockDim.x)
    copy_bytes (dst + layout_offset (ld, i) * esize, p, esize);
}

/* Contiguous: typed stores, and a parameter block a quarter the size of one
 * with a layout (a launch's host cost grows with its parameters, and a
 * one-element fill is all launch). */
template <typename T>
__global__ void
fill_contiguous_kernel (T *dst, int64_t n, uint4 pattern)
{
  const T v = *(const T *) &pattern;
  for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n; i += (int64_t) gridDim.x * blockDim.x)
    dst[i] = v;
}

extern "C" cudaError_t
accel_cuda_launch_fill (void *dst, const AccelCudaLayout *layout, int64_t n,
                        const uint8_t pattern[16], size_t esize, cudaStream_t stream)
{
  if (n <= 0)
    return cudaSuccess;
  uint4 pat;
  memcpy (&pat, pattern, 16);
  if (layout->rank == 0)
    switch (esize)
      {
      case 1: fill_contiguous_kernel<uint8_t><<<grid_for (n), THREADS, 0, stream>>> ((uint8_t *) dst, n, pat);
        return cudaGetLastError ();
      case 2: fill_contiguous_kernel<uint16_t><<<grid_for (n), THREADS, 0, stream>>> ((uint16_t *) dst, n, pat);
        return cudaGetLastError ();
      case 4: fill_contiguous_kernel<uint32_t><<<grid_for (n), THREADS, 0, stream>>> ((uint32_t *) dst, n, pat);
        return cudaGetLastError ();
      case 8: fill_contiguous_kernel<uint64_t><<<grid_for (n), THREADS, 0, stream>>> ((uint64_t *) dst, n, pat);
        return cudaGetLastError ();
      case 16: fill_contiguous_kernel<uint4><<<grid_for (n), THREADS, 0, stream>>> ((uint4 *) dst, n, pat);
        return cudaGetLastError ();
      default:
        break;
      }
  fill_kernel<<<grid_for (n), THREADS, 0, stream>>> ((unsigned char *) dst, *layout, n, pat, esize);
  return cudaGetLastError ();
}

/* cast */

struct Decoded {
  double re, im;
  long long iv;
};

__device__ __forceinline__ Decoded
decode (int dt, const unsigned char *p)
{
  Decoded d = { 0.0, 0.0, 0 };
  switch (dt)
    {
    case ACCEL_CUDA_DT_F16: d.re = accel_f16_to_f32 (*(const uint16_t *) p); break;
    case ACCEL_CUDA_DT_BF16: d.re = accel_bf16_to_f32 (*(const uint16_t *) p); break;
    case ACCEL_CUDA_DT_F32: d.re = *(const float *) p; break;
    case ACCEL_CUDA_DT_F64: d.re = *(const double *) p; break;
    case ACCEL_CUDA_DT_FP8_E4M3: d.re = accel_fp8_e4m3_to_f32 (*p); break;
    case ACCEL_CUDA_DT_FP8_E5M2: d.re = accel_fp8_e5m2_to_f32 (*p); break;
    case ACCEL_CUDA_DT_C64: d.re = ((const float *) p)[0]; d.im = ((const float *) p)[1]; break;
    case ACCEL_CUDA_DT_C128: d.re = ((const double *) p)[0]; d.im = ((const double *) p)[1]; break;
    case ACCEL_CUDA_DT_I8: d.iv = *(const int8_t *) p; break;
    case ACCEL_CUDA_DT_U8: d.iv = *(const uint8_t *) p; break;
    case ACCEL_CUDA_DT_I32: d.iv = *(const int32_t *) p; break;
    case ACCEL_CUDA_DT_U32: d.iv = *(const uint32_t *) p; break;
    case ACCEL_CUDA_DT_I64: d.iv = *(const int64_t *) p; break;
    }
  return d;
}

__device__ __forceinline__ long long
clamp_ll (long long v, long long lo, long long hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

/* An int64 as a binary64 rounded to odd, so a second rounding to a format
 * of at most 51 significant bits is correctly rounded. */
__device__ __forceinline__ double
i64_to_f64_odd (long long v)
{
  unsigned long long u = v < 0 ? 0ull - (unsigned long long) v : (unsigned long long) v;
  if (u >= (1ull << 53))
    {
      int drop = 64 - __clzll ((long long) u) - 53;
      unsigned long long mask = (1ull << drop) - 1;
      if (u & mask)
        u = (u & ~mask) | (1ull << drop);
    }
  double d = (double) u;
  return v < 0 ? -d : d;
}

__device__ __forceinline__ void
encode (int dt, bool from_int, const Decoded &d, unsigned char *p)
{
  switch (dt)
    {
    case ACCEL_CUDA_DT_F16:
      *(uint16_t *) p = accel_f16_from_f64 (from_int ? i64_to_f64_odd (d.iv) : d.re);
      break;
    case ACCEL_CUDA_DT_BF16:
      *(uint16_t *) p = accel_bf16_from_f64 (from_int ? i64_to_f64_odd (d.iv) : d.re);
      break;
    case ACCEL_CUDA_DT_FP8_E4M3:
      *p = accel_fp8_e4m3_from_f64 (from_int ? i64_to_f64_odd (d.iv) : d.re);
      break;
    case ACCEL_CUDA_DT_FP8_E5M2:
      *p = accel_fp8_e5m2_from_f64 (from_int ? i64_to_f64_odd (d.iv) : d.re);
      break;
    case ACCEL_CUDA_DT_F32:
      *(float *) p = from_int ? (float) d.iv : (float) d.re;
      break;
    case ACCEL_CUDA_DT_F64:
      *(double *) p = from_int ? (double) d.iv : d.re;
      break;
    case ACCEL_CUDA_DT_C64:
      ((float *) p)[0] = from_int ? (float) d.iv : (float) d.re;
      ((float *) p)[1] = from_int ? 0.0f : (float) d.im;
      break;
    case ACCEL_CUDA_DT_C128:
      ((double *) p)[0] = from_int ? (double) d.iv : d.re;
      ((double *) p)[1] = from_int ? 0.0 : d.im;
      break;
    case ACCEL_CUDA_DT_I8:
      *(int8_t *) p = (int8_t) (from_int ? clamp_ll (d.iv, -128, 127)
                                         : accel_sat_trunc (d.re, -128.0, 128.0, -128, 127));
      break;
    case ACCEL_CUDA_DT_U8:
      *(uint8_t *) p = (uint8_t) (from_int ? clamp_ll (d.iv, 0, 255)
                                           : accel_sat_trunc (d.re, 0.0, 256.0, 0, 255));
      break;
    case ACCEL_CUDA_DT_I32:
      *(int32_t *) p = (int32_t) (from_int ? clamp_ll (d.iv, INT32_MIN, INT32_MAX)
                                           : accel_sat_trunc (d.re, -2147483648.0, 2147483648.0,
                                                                   INT32_MIN, INT32_MAX));
      break;
    case ACCEL_CUDA_DT_U32:
      *(uint32_t *) p = (uint32_t) (from_int ? clamp_ll (d.iv, 0, UINT32_MAX)
                                             : accel_sat_trunc (d.re, 0.0, 4294967296.0, 0, UINT32_MAX));
      break;
    case ACCEL_CUDA_DT_I64:
      *(int64_t *) p = from_int ? d.iv : accel_sat_trunc (d.re, -9223372036854775808.0, 9223372036854775808.0,
                                                               INT64_MIN, INT64_MAX);
      break;
    }
}

__device__ __forceinline__ size_t
dtype_size (int dt)
{
  switch (dt)
    {
    case ACCEL_CUDA_DT_I8: case ACCEL_CUDA_DT_U8: case ACCEL_CUDA_DT_FP8_E4M3: case ACCEL_CUDA_DT_FP8_E5M2:
      return 1;
    case ACCEL_CUDA_DT_F16: case ACCEL_CUDA_DT_BF16:
      return 2;
    case ACCEL_CUDA_DT_F32: case ACCEL_CUDA_DT_I32: case ACCEL_CUDA_DT_U32:
      return 4;
    case ACCEL_CUDA_DT_C128:
      return 16;
    default:
      return 8;
    }
}

__global__ void
cast_kernel (const unsigned char *src, int from, AccelCudaLayout ls, unsigned char *dst, int to,
             AccelCudaLayout ld, int64_t n)
{
  const size_t es = dtype_size (from), ed = dtype_size (to);
  const bool from_int = from == ACCEL_CUDA_DT_I8 || from == ACCEL_CUDA_DT_U8 || from == ACCEL_CUDA_DT_I32
                        || from == ACCEL_CUDA_DT_U32 || from == ACCEL_CUDA_DT_I64;

  for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n; i += (int64_t) gridDim.x * blockDim.x)
    {
      const unsigned char *s = src + layout_offset (ls, i) * es;
      unsigned char *d = dst + layout_offset (ld, i) * ed;
      /* The conversions mixed precision lives on, in binary32 as on the CPU. */
      if (from == ACCEL_CUDA_DT_F32 && to == ACCEL_CUDA_DT_F16)
        *(uint16_t *) d = accel_f16_from_f32 (*(const float *) s);
      else if (from == ACCEL_CUDA_DT_F32 && to == ACCEL_CUDA_DT_BF16)
        *(uint16_t *) d = accel_bf16_from_f32 (*(const float *) s);
      else if (from == to)
        copy_bytes (d, s, es);
      else
        encode (to, from_int, decode (from, s), d);
    }
}

extern "C" cudaError_t
accel_cuda_launch_cast (const void *src, int from, const AccelCudaLayout *src_layout,
                        void *dst, int to, const AccelCudaLayout *dst_layout,
                        int64_t n, cudaStream_t stream)
{
  if (n <= 0)
    return cudaSuccess;
  cast_kernel<<<grid_for (n), THREADS, 0, stream>>> ((const unsigned char *) src, from, *src_layout,
                                                     (unsigned char *) dst, to, *dst_layout, n);
  return cudaGetLastError ();
}

/* rng-fill: one thread per Philox counter. */

/* @aligned: the buffer starts on a 16-byte boundary, so each thread's
 * values (16 bytes of f32 or f64, 8 of f16 or bf16) go in one store. */
template <int DTYPE, bool NORMAL>
__global__ void
rng_kernel (unsigned char *dst, int64_t n, int64_t counters, uint64_t seed, uint64_t offset,
            double a, double b, float af, float bf, int aligned)
{
  /* Constants, so each instance keeps only its own dtype's path: the
   * generic form, with both as arguments, ran at 0.72x cuRAND. */
  const int dtype = DTYPE;
  const bool normal = NORMAL;
  for (int64_t k = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; k < counters;
       k += (int64_t) gridDim.x * blockDim.x)
    {
      uint32_t w[4];
      accel_philox_block (seed, offset + (uint64_t) k, w);

      if (dtype == ACCEL_CUDA_DT_F64)
        {
          double *out = (double *) dst;
          double v[2];
#pragma unroll
          for (int j = 0; j < 2; j++)
            v[j] = normal ? accel_philox_normal_f64 (w, j, a, b)
                          : accel_philox_uniform_f64 (w[2 * j], w[2 * j + 1], a, b);
          if (aligned && 2 * k + 1 < n)
            *(double2 *) (out + 2 * k) = make_double2 (v[0], v[1]);
          else
            for (int j = 0; j < 2 && 2 * k + j < n; j++)
              out[2 * k + j] = v[j];
          continue;
        }

      float v[4];
      if (normal)
        {
#pragma unroll
          for (int j = 0; j < 4; j++)
            v[j] = accel_philox_normal_f32 (w[2 * (j / 2)], w[2 * (j / 2) + 1], j & 1, a, b);
        }
      else
        {
#pragma unroll
          for (int j = 0; j < 4; j++)
            v[j] = accel_philox_uniform_f32 (w[j], af, bf);
        }

      int64_t base = 4 * k;
      if (aligned && base + 3 < n)
        {
          if (dtype == ACCEL_CUDA_DT_F32)
            *(float4 *) ((float *) dst + base) = make_float4 (v[0], v[1], v[2], v[3]);
          else
            {
              const bool bf16 = dtype == ACCEL_CUDA_DT_BF16;
              uint32_t lo = (uint32_t) (bf16 ? accel_bf16_from_f32 (v[0]) : accel_f16_from_f32 (v[0]))
                            | ((uint32_t) (bf16 ? accel_bf16_from_f32 (v[1]) : accel_f16_from_f32 (v[1])) << 16);
              uint32_t hi = (uint32_t) (bf16 ? accel_bf16_from_f32 (v[2]) : accel_f16_from_f32 (v[2]))
                            | ((uint32_t) (bf16 ? accel_bf16_from_f32 (v[3]) : accel_f16_from_f32 (v[3])) << 16);
              *(uint2 *) ((uint16_t *) dst + base) = make_uint2 (lo, hi);
            }
          continue;
        }
#pragma unroll
      for (int j = 0; j < 4; j++)
        {
          if (base + j >= n)
            break;
          switch (dtype)
            {
            case ACCEL_CUDA_DT_F32: ((float *) dst)[base + j] = v[j]; break;
            case ACCEL_CUDA_DT_F16: ((uint16_t *) dst)[base + j] = accel_f16_from_f32 (v[j]); break;
            case ACCEL_CUDA_DT_BF16: ((uint16_t *) dst)[base + j] = accel_bf16_from_f32 (v[j]); break;
            }
        }
    }
}

extern "C" cudaError_t
accel_cuda_launch_rng_fill (void *dst, int dtype, int64_t n, uint64_t seed, uint64_t offset,
                            int normal, double a, double b, cudaStream_t stream)
{
  if (n <= 0)
    return cudaSuccess;
  int64_t per = dtype == ACCEL_CUDA_DT_F64 ? 2 : 4;
  int64_t counters = (n + per - 1) / per;
  int aligned = ((uintptr_t) dst % 16) == 0;
  unsigned char *p = (unsigned char *) dst;
  const unsigned int grid = grid_for (counters);
#define RNG_LAUNCH(DT)                                                                                     \
  (normal ? rng_kernel<DT, true><<<grid, THREADS, 0, stream>>> (p, n, counters, seed, offset, a, b,         \
                                                                 (float) a, (float) b, aligned)            \
          : rng_kernel<DT, false><<<grid, THREADS, 0, stream>>> (p, n, counters, seed, offset, a, b,        \
                                                                  (float) a, (float) b, aligned))
  switch (dtype)
    {
    case ACCEL_CUDA_DT_F32: RNG_LAUNCH (ACCEL_CUDA_DT_F32); break;
    case ACCEL_CUDA_DT_F64: RNG_LAUNCH (ACCEL_CUDA_DT_F64); break;
    case ACCEL_CUDA_DT_F16: RNG_LAUNCH (ACCEL_CUDA_DT_F16); break;
    case ACCEL_CUDA_DT_BF16: RNG_LAUNCH (ACCEL_CUDA_DT_BF16); break;
    default: return cudaErrorInvalidValue;
    }
#undef RNG_LAUNCH
  return cudaGetLastError ();
}
