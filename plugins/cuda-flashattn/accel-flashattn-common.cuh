/* accel-flashattn-common.cuh: device helpers the FlashAttention kernels share:
 * tensor-core fragments (mma.sync m16n8k16, ldmatrix), cp.async, a swizzled
 * shared-memory tile layout and the mask rule.
 *
 * Fragment layouts (PTX ISA, mma.m16n8k16 with .bf16/.f16):
 *   A (16x16, row): a0 (r, c) a1 (r+8, c) a2 (r, c+8) a3 (r+8, c+8),
 *                   r = lane/4, c = 2*(lane%4) (+1 in the upper half)
 *   B (16x8, col):  b0 (k = 2*(lane%4), n = lane/4), b1 (k+8, n)
 *   C (16x8):       c0,c1 (r, c), c2,c3 (r+8, c)
 * so the accumulators of two neighbouring 8-column tiles are, converted, the
 * A operand of the next product (P of softmax feeds P·V without shared memory).
 *
 * Shared tiles are rows of 16-byte chunks with chunk c of row r stored at
 * c ^ (r % 8): the 8 row addresses of every ldmatrix phase and the 16-byte
 * cp.async stores then touch 8 different bank groups.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include "accel-flashattn.h"

namespace accel_fa {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

template <typename T> struct TypeTraits;
template <> struct TypeTraits<__nv_bfloat16> {
  static __device__ __forceinline__ uint32_t pack (float a, float b)
  {
    __nv_bfloat162 h = __floats2bfloat162_rn (a, b);
    return *reinterpret_cast<uint32_t *> (&h);
  }
  static __device__ __forceinline__ float2 unpack (uint32_t u)
  {
    __nv_bfloat162 h = *reinterpret_cast<__nv_bfloat162 *> (&u);
    return __bfloat1622float2 (h);
  }
  static __device__ __forceinline__ void mma (float *c, const uint32_t *a, uint32_t b0, uint32_t b1)
  {
    asm volatile ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                  "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                  : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                  : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};
template <> struct TypeTraits<__half> {
  static __device__ __forceinline__ uint32_t pack (float a, float b)
  {
    __half2 h = __floats2half2_rn (a, b);
    return *reinterpret_cast<uint32_t *> (&h);
  }
  static __device__ __forceinline__ float2 unpack (uint32_t u)
  {
    __half2 h = *reinterpret_cast<__half2 *> (&u);
    return __half22float2 (h);
  }
  static __device__ __forceinline__ void mma (float *c, const uint32_t *a, uint32_t b0, uint32_t b1)
  {
    asm volatile ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                  "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                  : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                  : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

__device__ __forceinline__ uint32_t
smem_u32 (const void *p)
{
  return static_cast<uint32_t> (__cvta_generic_to_shared (p));
}

__device__ __forceinline__ void
ldmatrix_x4 (uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3)
{
  asm volatile ("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}

__device__ __forceinline__ void
ldmatrix_x4_trans (uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3)
{
  asm volatile ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}

/* 16 bytes global -> shared; bytes past @src_bytes (0 or 16) are zeroed. */
__device__ __forceinline__ void
cp_async_16 (uint32_t dst, const void *src, int src_bytes)
{
  asm volatile ("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                :: "r"(dst), "l"(src), "r"(src_bytes));
}

__device__ __forceinline__ void
cp_async_commit ()
{
  asm volatile ("cp.async.commit_group;\n" ::);
}

template <int N>
__device__ __forceinline__ void
cp_async_wait ()
{
  asm volatile ("cp.async.wait_group %0;\n" :: "n"(N));
}

__device__ __forceinline__ float
fast_exp2 (float x)
{
  float y;
  asm ("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float
fast_tanh (float x)
{
  float y;
  asm ("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/* dst[0] += a, dst[1] += b in global memory (8-byte aligned): one vector
 * reduction on sm_90, two scalar ones before. */
__device__ __forceinline__ void
red_add_f32x2 (float *dst, float a, float b)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile ("red.global.add.v2.f32 [%0], {%1, %2};" :: "l"(dst), "f"(a), "f"(b) : "memory");
#else
  atomicAdd (dst, a);
  atomicAdd (dst + 1, b);
#endif
}

/* Element offset of (row, col) in a swizzled tile of rows of @D elements. */
template <int D>
__device__ __forceinline__ int
swz (int row, int col)
{
  return row * D + ((((col >> 3) ^ (row & 7))) << 3) + (col & 7);
}

/* Copies a ROWS x D tile from global (row stride @stride elements) into a
 * swizzled shared tile; rows at or past @valid are zeroed. Each thread keeps
 * one chunk column, so its addresses advance by constants. */
template <typename T, int ROWS, int D, int NTHREADS>
__device__ __forceinline__ void
load_tile (T *smem, const T *gmem, int64_t stride, int valid, int tid)
{
  constexpr int CHUNKS = D / 8;
  constexpr int RSTEP = NTHREADS / CHUNKS;
  static_assert (NTHREADS % CHUNKS == 0 && ROWS % RSTEP == 0, "tile not a multiple of the block");
  const int r0 = tid / CHUNKS, c = tid % CHUNKS;
  const T *src = gmem + r0 * stride + c * 8;
  const int64_t step = RSTEP * stride;
  const uint32_t base = smem_u32 (smem);
  const int left = valid - r0;
#pragma unroll
  for (int i = 0; i < ROWS / RSTEP; i++)
    {
      const bool ok = i * RSTEP < left;
      cp_async_16 (base + 2 * swz<D> (r0 + i * RSTEP, c * 8), ok ? src : gmem, ok ? 16 : 0);
      src += step;
    }
}

/* The mask rule of the attention op: query i sees key j iff
 * j < Sk, j <= i + off + right (right >= 0) and j >= i + off - left (left >= 0),
 * with off = Sk - Sq and right = 0 when causal. */
struct MaskInfo {
  int seqlen_q, seqlen_k, off, left, right;
};

/* The visible keys [*lo, *hi] of query @i, shifted by -@base. */
__device__ __forceinline__ void
row_limits (const MaskInfo &m, int i, int base, int &lo, int &hi)
{
  hi = m.seqlen_k - 1;
  if (m.right >= 0)
    hi = min (hi, i + m.off + m.right);
  lo = m.left >= 0 ? i + m.off - m.left : 0;
  hi -= base;
  lo -= base;
}

/* Whether the tile of queries [m0, m0+bm) x keys [n0, n0+bn) has any masked
 * element (key tails count; query tails do not, they are never stored). */
__device__ __forceinline__ bool
tile_needs_mask (const MaskInfo &m, int m0, int bm, int n0, int bn)
{
  if (n0 + bn > m.seqlen_k)
    return true;
  if (m.right >= 0 && n0 + bn - 1 > m0 + m.off + m.right)
    return true;
  if (m.left >= 0 && n0 < m0 + bm - 1 + m.off - m.left)
    return true;
  return false;
}

} /* namespace accel_fa */
