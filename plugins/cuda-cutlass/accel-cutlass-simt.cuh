/* accel-cutlass-simt.cuh: what the plugin's general kernels share: element
 * loads and stores by run-time type, and a 64 x 64 tile of a product accumulated in f32 by 256
 * threads through shared memory (any sizes, any layout the loaders give).
 * These kernels serve every case the tensor-core paths do not take; they
 * favour reach over speed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include "accel-cutlass-kernels.h"
#include "accel-cutlass-act.cuh"

namespace accel_cutlass {

constexpr int kTile = 64;     /* rows and columns of a tile */
constexpr int kTileK = 16;    /* depth of a shared-memory stage */
constexpr int kThreads = 256; /* 16 x 16 threads, 4 x 4 results each */

__device__ __forceinline__ float
load (const void *p, int64_t i, AccelCutlassType t)
{
  switch (t)
    {
    case ACCEL_CUTLASS_F32: return ((const float *) p)[i];
    case ACCEL_CUTLASS_F16: return __half2float (((const __half *) p)[i]);
    case ACCEL_CUTLASS_BF16: return __bfloat162float (((const __nv_bfloat16 *) p)[i]);
    case ACCEL_CUTLASS_E4M3: return float (((const __nv_fp8_e4m3 *) p)[i]);
    default: return float (((const __nv_fp8_e5m2 *) p)[i]);
    }
}

/* Rounds once to the stored type: to nearest even; e4m3 saturates at ±448,
 * e5m2 overflows to infinity (as the CPU kernels store them). */
__device__ __forceinline__ void
store (void *p, int64_t i, float v, AccelCutlassType t)
{
  switch (t)
    {
    case ACCEL_CUTLASS_F32: ((float *) p)[i] = v; break;
    case ACCEL_CUTLASS_F16: ((__half *) p)[i] = __float2half_rn (v); break;
    case ACCEL_CUTLASS_BF16: ((__nv_bfloat16 *) p)[i] = __float2bfloat16_rn (v); break;
    case ACCEL_CUTLASS_E4M3:
      ((__nv_fp8_storage_t *) p)[i] = __nv_cvt_float_to_fp8 (v, __NV_SATFINITE, __NV_E4M3);
      break;
    default:
      ((__nv_fp8_storage_t *) p)[i] = __nv_cvt_float_to_fp8 (v, __NV_NOSAT, __NV_E5M2);
      break;
    }
}

/* Non-negative floats order as their bits. */
__device__ __forceinline__ void
atomic_max_abs (float *amax, float v)
{
  atomicMax ((unsigned int *) amax, __float_as_uint (fabsf (v)));
}

struct TileSmem {
  float a[kTileK][kTile + 1];
  float b[kTileK][kTile + 1];
};

/* acc[i][j] += sum over l < k of la (row, l) lb (l, col) for this thread's
 * rows ty + 16 i and columns tx + 16 j of the tile (tx = thread % 16,
 * ty = thread / 16). la (r, l) and lb (l, c) give the operands as f32 and
 * answer 0 outside the problem. */
template <class LoadA, class LoadB>
__device__ void
tile_product (const LoadA &la, const LoadB &lb, int64_t k, float (&acc)[4][4], TileSmem &s)
{
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  for (int64_t k0 = 0; k0 < k; k0 += kTileK)
    {
      for (int e = threadIdx.x; e < kTile * kTileK; e += kThreads)
        {
          int r = e / kTileK, l = e % kTileK;
          s.a[l][r] = k0 + l < k ? la (r, k0 + l) : 0.0f;
        }
      for (int e = threadIdx.x; e < kTile * kTileK; e += kThreads)
        {
          int l = e / kTile, c = e % kTile;
          s.b[l][c] = k0 + l < k ? lb (k0 + l, c) : 0.0f;
        }
      __syncthreads ();
#pragma unroll
      for (int l = 0; l < kTileK; l++)
        {
          float av[4], bv[4];
#pragma unroll
          for (int i = 0; i < 4; i++)
            av[i] = s.a[l][ty + 16 * i], bv[i] = s.b[l][tx + 16 * i];
#pragma unroll
          for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
              acc[i][j] = fmaf (av[i], bv[j], acc[i][j]);
        }
      __syncthreads ();
    }
}

}  // namespace accel_cutlass
