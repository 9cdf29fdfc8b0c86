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

/* 4 bytes global -> shared (both 4-byte aligned). */
__device__ __forceinline__ void
cp_async_4 (uint32_t dst, const void *src)
{
  asm volatile ("cp.async.ca.shared.global [%0], [%1], 4;\n" :: "r"(dst), "l"(src));
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

/* The general instances' head dims: @cols of the instance's D columns
 * hold data; a k16 MMA step reads up to the next multiple of 16, so the
 * chunks from @cols to there are zeroed, and those past it never read. */
__device__ __forceinline__ int
cols_read (int cols)
{
  return (cols + 15) & ~15;
}

/* Copies a ROWS x D tile from global (row stride @stride elements) into a
 * swizzled shared tile; rows at or past @valid are zeroed, and so are the
 * columns from @cols to cols_read (@cols). Each thread keeps one chunk
 * column, so its addresses advance by constants. */
template <typename T, int ROWS, int D, int NTHREADS>
__device__ __forceinline__ void
load_tile (T *smem, const T *gmem, int64_t stride, int valid, int tid, int cols = D)
{
  constexpr int CHUNKS = D / 8;
  constexpr int RSTEP = NTHREADS / CHUNKS;
  static_assert (NTHREADS % CHUNKS == 0 && ROWS % RSTEP == 0, "tile not a multiple of the block");
  const int r0 = tid / CHUNKS, c = tid % CHUNKS;
  if (c * 8 >= cols_read (cols))
    return;
  const bool col_ok = c * 8 < cols;
  const T *src = gmem + r0 * stride + c * 8;
  const int64_t step = RSTEP * stride;
  const uint32_t base = smem_u32 (smem);
  const int left = valid - r0;
#pragma unroll
  for (int i = 0; i < ROWS / RSTEP; i++)
    {
      const bool ok = col_ok && i * RSTEP < left;
      cp_async_16 (base + 2 * swz<D> (r0 + i * RSTEP, c * 8), ok ? src : gmem, ok ? 16 : 0);
      src += step;
    }
}

/* The position, in floats from the start of its 64-row block, of dQ
 * accumulator element (@row, @col) as the sm_90a backward kernel leaves it:
 * per 64 columns, the m64n64 wgmma accumulators of a warpgroup, stored as
 * 16-byte pieces, thread-minor (conflict-free stores, one bulk reduction
 * per block). Thread t = 32 (row / 16) + 4 (row % 8) + (col % 8) / 2 holds
 * register i = 4 ((col % 64) / 8) + 2 ((row / 8) % 2) + col % 2. */
template <int D>
__device__ __forceinline__ int
dq_perm_offset (int row, int col)
{
  const int grp = col >> 6, nt = (col & 63) >> 3;
  const int t = (row >> 4) * 32 + (row & 7) * 4 + ((col & 7) >> 1);
  return ((grp * 8 + nt) * 128 + t) * 4 + ((row >> 3) & 1) * 2 + (col & 1);
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

/* The key blocks (of BN keys) that the query block [m0, m0 + bm) visits,
 * last first: those of its window [n_lo, n_hi), then, with SINKS, those of
 * the sink keys [0, min (sinks, n_hi)) that the window left out, so that a
 * left window never skips the first blocks when they hold sinks.
 * Two ways through: by block, for (nb = first; nb >= stop; nb = next (nb))
 * (the sm_80 kernel: without SINKS exactly the plain countdown, two live
 * registers); by step, at (it) for it < n_iter (the sm_90a kernel, which
 * loads two steps ahead). */
template <bool SINKS>
struct KeyBlocks {
  int first, stop, nb_min, sink_end, n_main, n_iter;
  bool empty;
  __device__ __forceinline__ int next (int nb) const
  {
    if (!SINKS)
      return nb - 1;
    return nb - 1 >= nb_min ? nb - 1 : min (nb - 1, sink_end - 1);
  }
  __device__ __forceinline__ int at (int it) const
  {
    if (!SINKS)
      return first - it;
    return it < n_main ? first - it : n_iter - 1 - it;
  }
};

template <bool SINKS>
__device__ __forceinline__ KeyBlocks<SINKS>
key_blocks (const MaskInfo &m, int m0, int bm, int bn, int sinks)
{
  int n_hi = m.seqlen_k;
  if (m.right >= 0)
    n_hi = min (n_hi, m0 + bm + m.off + m.right);
  int n_lo = 0;
  if (m.left >= 0)
    n_lo = max (0, m0 + m.off - m.left);
  KeyBlocks<SINKS> kb;
  kb.empty = n_hi <= n_lo;
  kb.first = (n_hi + bn - 1) / bn - 1;
  kb.nb_min = n_lo / bn;
  kb.stop = kb.nb_min;
  kb.n_main = kb.first + 1 - kb.nb_min;
  kb.n_iter = kb.n_main;
  kb.sink_end = 0;
  if (SINKS)
    {
      if (kb.empty)
        {
          kb.first = -1;
          kb.nb_min = kb.stop = kb.n_main = kb.n_iter = 0;
        }
      const int ns = min (sinks, n_hi);
      const int sb = ns > 0 ? (ns + bn - 1) / bn : 0;
      kb.sink_end = kb.empty ? sb : min (sb, kb.nb_min);   /* blocks [0, sink_end) that the window leaves out */
      kb.n_iter += kb.sink_end;
      if (kb.sink_end > 0)
        kb.stop = 0;
      if (kb.empty)
        kb.first = kb.sink_end - 1;
      kb.empty = kb.n_iter == 0;
    }
  return kb;
}

/* attention-varlen: which sequence @b and which of its query blocks @blk
 * (of @bm rows) the block-index @v stands for, with the sequence's first
 * row @start and length @len. Sequence b has ceil (len_b / bm) blocks, where
 * len_b = cu[b+1] - cu[b] if 0 <= cu[b] <= cu[b+1] <= @total, else 0 (bad
 * values are reported by check_cu_seqlens(); here they must only keep every
 * access inside the buffers). False when @v is past the last block.
 * Called by whole warps; every lane gets the same answer. The walk takes 32
 * sequences per step, so no host ever reads cu_seqlens. */
__device__ __forceinline__ bool
varlen_locate (const int32_t *cu, int batch, int total, int bm, int v, int &b, int &blk, int &start, int &len)
{
  const int lane = threadIdx.x & 31;
  int before = 0;
  for (int base = 0; base < batch; base += 32)
    {
      const int i = base + lane;
      int s = 0, e = 0;
      if (i < batch)
        {
          s = cu[i];
          e = cu[i + 1];
        }
      const bool ok = 0 <= s && s <= e && e <= total;
      const int n = ok ? (e - s + bm - 1) / bm : 0;
      int incl = n;
#pragma unroll
      for (int d = 1; d < 32; d <<= 1)
        {
          const int t = __shfl_up_sync (0xffffffffu, incl, d);
          if (lane >= d)
            incl += t;
        }
      const unsigned hit = __ballot_sync (0xffffffffu, before + incl > v);
      if (hit != 0)
        {
          const int l = __ffs (hit) - 1;
          b = base + l;
          blk = v - before - __shfl_sync (0xffffffffu, incl - n, l);
          start = __shfl_sync (0xffffffffu, s, l);
          len = __shfl_sync (0xffffffffu, e - s, l);
          return true;
        }
      before += __shfl_sync (0xffffffffu, incl, 31);
    }
  return false;
}

/* The bounds of sequence @b in @cu, or an empty range at 0 where they are
 * not 0 <= start <= end <= @total. */
__device__ __forceinline__ void
varlen_bounds (const int32_t *cu, int b, int total, int &start, int &len)
{
  const int s = cu[b], e = cu[b + 1];
  const bool ok = 0 <= s && s <= e && e <= total;
  start = ok ? s : 0;
  len = ok ? e - s : 0;
}

/* attention-varlen, at the start of a kernel whose grid's x covers an
 * upper bound of the blocks: block (0, 0)'s warp 0 checks both cu_seqlens
 * arrays into p.codes, and every block finds what blockIdx.x stands for:
 * with @by_keys false, the sequence @b and its query block @m_block (of
 * @bm rows, counted down from the last as the forward kernels walk them);
 * with @by_keys, its key block @m_block (of @bm keys, counted up). @q_start,
 * @Sq, @k_start, @Sk: the sequence's rows. False for a surplus block. */
__device__ __forceinline__ void check_cu_seqlens (const int32_t *cu, int batch, int total, int32_t *codes);

__device__ __forceinline__ bool
varlen_block (const AccelFlashAttnFwdParams &p, int bm, int warp, bool by_keys, int &b, int &m_block, int &q_start,
              int &Sq, int &k_start, int &Sk)
{
  if (p.codes != nullptr && blockIdx.x == 0 && blockIdx.y == 0 && warp == 0)
    {
      check_cu_seqlens (p.cu_seqlens_q, p.batch, p.seqlen_q, p.codes);
      check_cu_seqlens (p.cu_seqlens_k, p.batch, p.seqlen_k, p.codes + 3);
    }
  int blk;
  if (by_keys)
    {
      if (!varlen_locate (p.cu_seqlens_k, p.batch, p.seqlen_k, bm, blockIdx.x, b, blk, k_start, Sk))
        return false;
      m_block = blk;
      varlen_bounds (p.cu_seqlens_q, b, p.seqlen_q, q_start, Sq);
      return true;
    }
  if (!varlen_locate (p.cu_seqlens_q, p.batch, p.seqlen_q, bm, blockIdx.x, b, blk, q_start, Sq))
    return false;
  m_block = (Sq + bm - 1) / bm - 1 - blk;
  varlen_bounds (p.cu_seqlens_k, b, p.seqlen_k, k_start, Sk);
  return true;
}

/* One warp: the first index i of @cu [0 .. batch] that breaks cu[0] == 0,
 * cu[i-1] <= cu[i], cu[batch] == @total, written as codes[0] = i + 1,
 * codes[1] = cu[i], codes[2] = cu[i-1] (0 for i = 0); nothing if none.
 * (These three rules imply 0 <= cu[i] <= total everywhere.) */
__device__ __forceinline__ void
check_cu_seqlens (const int32_t *cu, int batch, int total, int32_t *codes)
{
  const int lane = threadIdx.x & 31;
  for (int base = 0; base <= batch; base += 32)
    {
      const int i = base + lane;
      int val = 0, prev = 0;
      bool bad = false;
      if (i <= batch)
        {
          val = cu[i];
          prev = i > 0 ? cu[i - 1] : 0;
          bad = i == 0 ? val != 0 : (val < prev || (i == batch && val != total));
        }
      const unsigned m = __ballot_sync (0xffffffffu, bad);
      if (m != 0)
        {
          if (lane == __ffs (m) - 1)
            {
              codes[0] = i + 1;
              codes[1] = val;
              codes[2] = prev;
            }
          return;
        }
    }
}

} /* namespace accel_fa */
