/* accel-flashattn-common.cuh: device helpers the FlashAttention kernels share:
 * tensor-core fragments (mma.sync m16n8k16, ldmatrix) and the k16 products
 * of the sm_80 kernels, cp.async, a swizzled shared-memory tile layout, the
 * mask rule and the walks over key and query blocks, and the forward
 * kernels' block set-up (FwdBlock), online softmax (Scores) and epilogue.
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
#include <math.h>
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

/* Two neighbouring 8-column accumulator tiles (@c: 8 floats, c0..c3 of
 * each), rounded, as the A fragment of the next k16 product. */
template <typename T>
__device__ __forceinline__ void
pack_a (const float *c, uint32_t *a)
{
  using TT = TypeTraits<T>;
  a[0] = TT::pack (c[0], c[1]);
  a[1] = TT::pack (c[2], c[3]);
  a[2] = TT::pack (c[4], c[5]);
  a[3] = TT::pack (c[6], c[7]);
}

/* The K/8 accumulator tiles @c (4 floats each), rounded, as the K/16 A
 * fragments of a product over K (P of softmax for P V, straight from S). */
template <typename T, int K>
__device__ __forceinline__ void
pack_a_tiles (const float *c, uint32_t (*a)[4])
{
#pragma unroll
  for (int kk = 0; kk < K / 16; kk++)
    pack_a<T> (c + 8 * kk, a[kk]);
}

/* acc (MT x N/8 tiles of 16 x 8) += A B^T over the first @cols of the D
 * columns (GENERAL; all D otherwise): A the MT 16-row tiles from row @arow
 * of the swizzled tile @sa, B the N rows of the swizzled tile @sb, both
 * [.][D] and read by ldmatrix; UNROLL: the k16 steps unrolled at once. */
template <typename T, int D, int N, int MT, int UNROLL, bool GENERAL>
__device__ __forceinline__ void
mma_abt (float (*acc)[N / 8][4], uint32_t sa, int arow, uint32_t sb, int lane, int cols)
{
  using TT = TypeTraits<T>;
#pragma unroll (UNROLL)
  for (int kq = 0; kq < D / 16; kq++)
    {
      if (GENERAL && kq * 16 >= cols)
        break;
      uint32_t a[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; mt++)
        ldmatrix_x4 (sa + 2 * swz<D> (arow + mt * 16 + (lane & 15), kq * 16 + (lane >> 4) * 8),
                     a[mt][0], a[mt][1], a[mt][2], a[mt][3]);
#pragma unroll
      for (int j = 0; j < N / 16; j++)
        {
          uint32_t b0, b1, b2, b3;
          ldmatrix_x4 (sb + 2 * swz<D> (j * 16 + (lane >> 4) * 8 + (lane & 7), kq * 16 + ((lane >> 3) & 1) * 8),
                       b0, b1, b2, b3);
#pragma unroll
          for (int mt = 0; mt < MT; mt++)
            {
              TT::mma (acc[mt][2 * j], a[mt], b0, b1);
              TT::mma (acc[mt][2 * j + 1], a[mt], b2, b3);
            }
        }
    }
}

/* acc (MT x D/8 tiles) += P B: P the MT x K/8 accumulator tiles @pc
 * (rounded to T, straight from the registers), B the swizzled [K][D] tile
 * @sb read transposed, its first @cols columns (GENERAL; all D otherwise). */
template <typename T, int D, int K, int MT, bool GENERAL>
__device__ __forceinline__ void
mma_pb (float (*acc)[D / 8][4], const float (*pc)[K / 8][4], uint32_t sb, int lane, int cols)
{
  using TT = TypeTraits<T>;
#pragma unroll
  for (int kk = 0; kk < K / 16; kk++)
    {
      uint32_t a[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; mt++)
        pack_a<T> (&pc[mt][2 * kk][0], a[mt]);
#pragma unroll
      for (int j = 0; j < D / 16; j++)
        {
          if (GENERAL && j * 16 >= cols)
            break;
          uint32_t b0, b1, b2, b3;
          ldmatrix_x4_trans (sb + 2 * swz<D> (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7), j * 16 + (lane >> 4) * 8),
                             b0, b1, b2, b3);
#pragma unroll
          for (int mt = 0; mt < MT; mt++)
            {
              TT::mma (acc[mt][2 * j], a[mt], b0, b1);
              TT::mma (acc[mt][2 * j + 1], a[mt], b2, b3);
            }
        }
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

/* The mask of @p for a sequence of @Sq queries and @Sk keys. */
__device__ __forceinline__ MaskInfo
mask_info (const AccelFlashAttnFwdParams &p, int Sq, int Sk)
{
  MaskInfo mi;
  mi.seqlen_q = Sq;
  mi.seqlen_k = Sk;
  mi.off = Sk - Sq;
  mi.left = p.window_left;
  mi.right = p.causal ? 0 : p.window_right;
  return mi;
}

/* The backward kernels' walk: the query blocks (of @bm rows) [@mb_min,
 * @mb_min + @n_mb) holding a query that sees a key of [n0, min (n0 + bn,
 * Sk)); with @sink_block (the key block holds sinks) the left window lets
 * every query through. */
__device__ __forceinline__ void
query_blocks (const MaskInfo &mi, int n0, int bn, bool sink_block, int bm, int &mb_min, int &n_mb)
{
  int i_lo = 0, i_hi = mi.seqlen_q - 1;
  if (mi.right >= 0)
    i_lo = max (0, n0 - mi.off - mi.right);
  if (mi.left >= 0 && !sink_block)
    i_hi = min (i_hi, min (n0 + bn, mi.seqlen_k) - 1 - mi.off + mi.left);
  mb_min = i_lo / bm;
  n_mb = i_hi >= i_lo ? i_hi / bm + 1 - mb_min : 0;
}

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

/* What a forward block works on: its (batch @b, head @h), its query block
 * (first row @m0 of the sequence, whose rows are @Sq queries from @q_start
 * and @Sk keys from @k_start; @bs the batch index of the buffers), the
 * head dims of q/k and v/out, the mask and sinks; then (set_rows) where
 * its q, k, v, out and lse rows start. */
template <typename T>
struct FwdBlock {
  int h, hk, b, bs, m0, Sq, Sk, q_start, k_start, dqk, dv, sinks;
  bool varlen;
  MaskInfo mi;
  const T *gq, *gk, *gv;
  T *go;
  float *glse;

  __device__ __forceinline__ void set_rows (const AccelFlashAttnFwdParams &p)
  {
    gq = static_cast<const T *> (p.q) + bs * p.q_strides[0] + h * p.q_strides[1] + (int64_t) (q_start + m0) * p.q_strides[2];
    gk = static_cast<const T *> (p.k) + bs * p.k_strides[0] + hk * p.k_strides[1] + (int64_t) k_start * p.k_strides[2];
    gv = static_cast<const T *> (p.v) + bs * p.v_strides[0] + hk * p.v_strides[1] + (int64_t) k_start * p.v_strides[2];
    go = static_cast<T *> (p.out) + bs * p.o_strides[0] + h * p.o_strides[1] + (int64_t) (q_start + m0) * p.o_strides[2];
    glse = nullptr;
    if (p.lse)
      glse = p.lse + (varlen ? (int64_t) h * p.seqlen_q + q_start : ((int64_t) b * p.heads_q + h) * Sq) + m0;
  }
};

/* The FwdBlock of this block (of @bm query rows; @warp the thread's warp),
 * the query blocks counted down from the last, but for its rows; false for
 * a surplus block of a varlen grid. D: the instance's head dim, all of q/k
 * and v/out unless GENERAL. The kernels then take key_blocks() and call
 * set_rows(): with both inside this function, ptxas gave the sm_80 d = 128
 * kernel 56 bytes of stack against 32 (and other registers elsewhere). */
template <typename T, int D, bool GENERAL>
__device__ __forceinline__ bool
fwd_block (const AccelFlashAttnFwdParams &p, int bm, int warp, FwdBlock<T> &fb)
{
  fb.h = blockIdx.y;
  fb.hk = fb.h / (p.heads_q / p.heads_kv);
  fb.varlen = GENERAL && p.cu_seqlens_q != nullptr;
  /* Head dims of q/k and of v/out (the instance's D in the plain case). */
  fb.dqk = GENERAL ? p.head_dim : D;
  fb.dv = GENERAL ? (p.head_dim_v > 0 ? p.head_dim_v : p.head_dim) : D;
  int m_block;
  fb.Sq = p.seqlen_q;
  fb.Sk = p.seqlen_k;
  fb.q_start = 0;
  fb.k_start = 0;
  if (fb.varlen)
    {
      if (!varlen_block (p, bm, warp, false, fb.b, m_block, fb.q_start, fb.Sq, fb.k_start, fb.Sk))
        return false;   /* one of the surplus blocks of the grid's upper bound */
    }
  else
    {
      m_block = gridDim.x - 1 - blockIdx.x;
      fb.b = blockIdx.z;
    }
  fb.bs = fb.varlen ? 0 : fb.b;   /* varlen buffers have no batch stride */
  fb.m0 = m_block * bm;
  fb.mi = mask_info (p, fb.Sq, fb.Sk);
  fb.sinks = GENERAL && fb.mi.left >= 0 ? p.sinks : 0;
  return true;
}

/* The elementwise part of a key block (of kBN keys, for a block of kBM
 * queries), for the thread's rows row0 + 16 mt and row0 + 16 mt + 8 of
 * the block, mt < MT: soft cap, ALiBi, mask, then the online softmax: s
 * (MT x kBN/8 tiles of 4 floats) becomes P (unnormalised, in the max of
 * the rows so far), row_max and row_sum (2 MT each) move on, and
 * corr[2 mt + hh] is what O must be multiplied by. With ON > 0, the MT x
 * ON accumulator tiles @o (and row_sum) are rescaled right away (the
 * sm_80 kernel's order); else the caller rescales O. */
template <int kBM, int kBN, bool GENERAL>
struct Scores {
  MaskInfo mi;
  int m0, lane, sinks;
  bool capped, alibi;
  float sl, cap_in, cap_out, alibi_mul;

  /* For the block @fb of a kernel with logit scale @scale. */
  template <typename T>
  __device__ __forceinline__ void
  init (const AccelFlashAttnFwdParams &p, float scale, const FwdBlock<T> &fb, int lane_)
  {
    mi = fb.mi;
    m0 = fb.m0;
    lane = lane_;
    sinks = fb.sinks;
    capped = p.softcap > 0.f;
    sl = capped ? 1.f : scale * kLog2e;
    cap_in = capped ? scale / p.softcap : 0.f;
    cap_out = p.softcap * kLog2e;
    /* ALiBi in the units of S (logit = S * sl / log2 (e) after the cap). */
    alibi = GENERAL && p.alibi_slopes != nullptr;
    alibi_mul = alibi ? -p.alibi_slopes[(int64_t) fb.b * p.alibi_batch_stride + fb.h] * kLog2e / sl : 0.f;
  }

  template <int MT = 1, int ON = 0>
  __device__ __forceinline__ void
  scores (float *s, int nb, int row0, float *row_max, float *row_sum, float *corr, float *o = nullptr) const
  {
    constexpr int SN = kBN / 8;
    if (capped)
      {
#pragma unroll
        for (int i = 0; i < MT * SN * 4; i++)
          s[i] = fast_tanh (s[i] * cap_in) * cap_out;
      }
    if (alibi)
      {
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
          for (int hh = 0; hh < 2; hh++)
            {
              /* p - j of the thread's first column */
              const float rel = (float) (m0 + row0 + mt * 16 + hh * 8 + mi.off - nb * kBN - (lane & 3) * 2);
#pragma unroll
              for (int nt = 0; nt < SN; nt++)
#pragma unroll
                for (int e = 0; e < 2; e++)
                  s[(mt * SN + nt) * 4 + 2 * hh + e]
                    = fmaf (fabsf (rel - (float) (nt * 8 + e)), alibi_mul, s[(mt * SN + nt) * 4 + 2 * hh + e]);
            }
      }
    if (tile_needs_mask (mi, m0, kBM, nb * kBN, kBN))
      {
        const int sink_rel = sinks - nb * kBN - (lane & 3) * 2;
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
          for (int hh = 0; hh < 2; hh++)
            {
              int lo, hi;
              row_limits (mi, m0 + row0 + mt * 16 + hh * 8, nb * kBN + (lane & 3) * 2, lo, hi);
#pragma unroll
              for (int nt = 0; nt < SN; nt++)
#pragma unroll
                for (int e = 0; e < 2; e++)
                  {
                    const int c = nt * 8 + e;
                    /* sinks are exempt from the left window only */
                    if (c > hi || (c < lo && (!GENERAL || c >= sink_rel)))
                      s[(mt * SN + nt) * 4 + 2 * hh + e] = -INFINITY;
                  }
            }
      }
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
      for (int hh = 0; hh < 2; hh++)
        {
          float *sm = s + mt * SN * 4;
          const int r = mt * 2 + hh;
          float mx = row_max[r];
#pragma unroll
          for (int nt = 0; nt < SN; nt++)
            mx = fmaxf (mx, fmaxf (sm[nt * 4 + 2 * hh], sm[nt * 4 + 2 * hh + 1]));
          mx = fmaxf (mx, __shfl_xor_sync (0xffffffffu, mx, 1));
          mx = fmaxf (mx, __shfl_xor_sync (0xffffffffu, mx, 2));
          const float m_use = mx == -INFINITY ? 0.f : mx * sl;
          corr[r] = fast_exp2 (row_max[r] * sl - m_use);
          row_max[r] = mx;
          if (ON > 0)
            {
              row_sum[r] *= corr[r];
#pragma unroll
              for (int dt = 0; dt < ON; dt++)
                {
                  o[(mt * ON + dt) * 4 + 2 * hh] *= corr[r];
                  o[(mt * ON + dt) * 4 + 2 * hh + 1] *= corr[r];
                }
            }
          float sum = 0.f;
#pragma unroll
          for (int nt = 0; nt < SN; nt++)
            {
              const float p0 = fast_exp2 (fmaf (sm[nt * 4 + 2 * hh], sl, -m_use));
              const float p1 = fast_exp2 (fmaf (sm[nt * 4 + 2 * hh + 1], sl, -m_use));
              sm[nt * 4 + 2 * hh] = p0;
              sm[nt * 4 + 2 * hh + 1] = p1;
              sum += p0 + p1;
            }
          row_sum[r] = (ON > 0 ? row_sum[r] : row_sum[r] * corr[r]) + sum;
        }
  }
};

/* A forward block of BM rows that sees no key: zero rows of out (their
 * @dv columns; @os the row stride) and -inf lse, for the rows below @Sq. */
template <typename T, int BM, int D, int NTH>
__device__ __forceinline__ void
fwd_store_empty (T *go, int64_t os, float *glse, int tid, int m0, int Sq, int dv)
{
  constexpr int CH = D / 8;
  for (int idx = tid; idx < BM * CH; idx += NTH)
    {
      int r = idx / CH, c = idx % CH;
      if (m0 + r < Sq && c * 8 < dv)
        *reinterpret_cast<uint4 *> (go + r * os + c * 8) = make_uint4 (0, 0, 0, 0);
    }
  if (glse)
    for (int r = tid; r < BM; r += NTH)
      if (m0 + r < Sq)
        glse[r] = -INFINITY;
}

/* The forward epilogue of one of the thread's rows (@row of the block,
 * half @hh of its 16-row tile): its O elements of the D/8 accumulator
 * tiles @o over the row's sum (shared by the row's 4 lanes), rounded into
 * the swizzled staging tile @sO, and the row's lse (natural log, from the
 * running max and sum in log2 units of @sl) into @glse[row] for a row
 * below @Sq. */
template <typename T, int D>
__device__ __forceinline__ void
fwd_finish_row (T *sO, const float *o, int hh, int row, int lane, float row_max, float row_sum, float sl,
                float *glse, int m0, int Sq)
{
  using TT = TypeTraits<T>;
  float sum = row_sum;
  sum += __shfl_xor_sync (0xffffffffu, sum, 1);
  sum += __shfl_xor_sync (0xffffffffu, sum, 2);
  const float inv = sum > 0.f ? 1.f / sum : 0.f;
#pragma unroll
  for (int dt = 0; dt < D / 8; dt++)
    *reinterpret_cast<uint32_t *> (sO + swz<D> (row, dt * 8 + (lane & 3) * 2))
      = TT::pack (o[dt * 4 + 2 * hh] * inv, o[dt * 4 + 2 * hh + 1] * inv);
  if (glse && (lane & 3) == 0 && m0 + row < Sq)
    glse[row] = sum > 0.f ? (row_max * sl + __log2f (sum)) * kLn2 : -INFINITY;
}

/* One warp stores ROWS staged rows of O from @wrow of @sO (their @dv
 * columns, those below @Sq) with 16-byte stores. */
template <typename T, int D, int ROWS>
__device__ __forceinline__ void
fwd_store_rows (T *go, int64_t os, const T *sO, int wrow, int lane, int m0, int Sq, int dv)
{
  constexpr int CH = D / 8;
#pragma unroll
  for (int idx = lane; idx < ROWS * CH; idx += 32)
    {
      int row = wrow + idx / CH, c = idx % CH;
      if (m0 + row < Sq && c * 8 < dv)
        *reinterpret_cast<uint4 *> (go + row * os + c * 8) = *reinterpret_cast<const uint4 *> (sO + swz<D> (row, c * 8));
    }
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
