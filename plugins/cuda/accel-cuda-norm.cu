/* accel-cuda-norm.cu: layernorm and rmsnorm over the last axis on CUDA.
 *
 * f32, f16 and bf16 storage, statistics and arithmetic in binary32, one
 * rounding to the storage type at the end; the CPU backend
 * (accel-cpu-norm.c) works in binary64, so results agree to a few units in
 * the last place of the storage type, not bit for bit.
 *
 * The work is memory-bound, so each kernel reads x once and writes y once
 * where the row fits in registers:
 *
 * - rows of up to 1024 elements of f16 or bf16, 512 of f32 (256 one
 *   element at a time): one warp per row, four rows to a block of 128
 *   threads, reductions by shuffles alone;
 * - rows that fit in the registers of up to 512 threads (32768 elements
 *   of f16 or bf16, 16384 of f32, 4096 one at a time, with 8 packs of
 *   16 bytes or 8 elements a thread): one block per row, of as few
 *   threads as carry it (64 for a bf16 row of 4096; see aim_items): a
 *   thread's packs are all its loads in flight at once, and a small
 *   block spends less of the row's time in its reduction (blocks of 1024
 *   threads, 64 registers each, spill: the compiler keeps a thread's
 *   values widened to binary32 between the two passes);
 * - on sm_90, rows up to 8 times that (262144 elements of f16 or bf16;
 *   ragged rows too, their head and tail in the first block's first
 *   threads): the same kernel, a row split over a cluster of 2 to 8
 *   blocks of up to 512 threads (for a bf16 row of 65536, 2 blocks of 512
 *   ran at 0.58 / 0.73 of a copy for layernorm / rmsnorm, 4 of 256 at
 *   0.55 / 0.73, 8 of 128 at 0.49 / 0.69), whose moments are merged
 *   through distributed shared memory in rank order;
 * - longer rows, and those where there are no clusters: one block of 512
 *   threads per row that reads x twice (the second read mostly from L2;
 *   0.41 / 0.46 of a copy for that bf16 row of 65536): once for the
 *   moments, merged per thread and then across the block with Chan's
 *   pairwise update, once to write y.
 *
 * Every thread takes the mean and the sum of squared deviations of its
 * own values in two passes over its registers (no cancellation); the
 * row's moments are those merged with Chan's pairwise update, in one
 * reduction (rmsnorm needs only Σx², one sum). The long kernel merges
 * the exact mean and second moment of each chunk of a thread, which is
 * as stable. rmsnorm of a long row takes Σx²/n as M2/n + mean², a sum of
 * two non-negative terms. layernorm first subtracts x[0] of its row and
 * keeps the mean relative to it: x − x[0] is exact for values near x[0],
 * while subtracting a binary32 mean of a row around 1000 would round that
 * mean by up to 2⁻¹⁵ first and shift every deviation by as much. gamma
 * and beta are read after the reduction, as y is written: they are
 * n elements read by every row, from L2.
 *
 * Loads and stores are 16 bytes wide wherever x and y lie at the same
 * distance from a 16-byte boundary: a row of the cached kernels is its
 * elements up to the first boundary (the head), whole 16-byte packs, and
 * the elements after the last (the tail), so rows of any length (4097)
 * and views one element into their buffers keep wide loads; the head and
 * tail, fewer than 2 × 16 bytes, are one element each of the row's first
 * threads. gamma and beta are read as packs in rows where they are
 * aligned with x, else one element at a time (from L2 either way). The
 * long kernel takes whole packs only (rows of a multiple of 16 bytes,
 * x aligned); x and y at different distances from a boundary, or a
 * ragged row too long for a cluster (or with no clusters), go one
 * element at a time, still coalesced. y may be x:
 * every element is read by the thread that writes it, before it writes
 * it, and x is not read through the non-coherent cache.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cooperative_groups.h>
#include "accel-cuda-kernels.h"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define ACCEL_NORM_HAVE_CLUSTERS 1
#endif

namespace {

constexpr int WARP = 32;
constexpr unsigned FULL_MASK = 0xffffffffu;
/* Warp-per-row blocks: four rows each. */
constexpr int WARP_ROW_THREADS = 128;
constexpr int64_t WARP_ROW_MAX_LEN = 1024;
/* Block-per-row: aim at this many threads, allow up to the maximum. */
constexpr int BLOCK_ROW_TARGET_THREADS = 64;
constexpr int BLOCK_ROW_MAX_THREADS = 512;
constexpr int LONG_THREADS = 512;
/* Rows split over a cluster: aim at blocks of this many threads (see
 * above), in clusters of up to 8 blocks (the portable size). */
constexpr int CLUSTER_TARGET_THREADS = 512;
constexpr int MAX_CLUSTER = 8;
/* Packs per thread that a cached kernel keeps in registers, at most: the
 * packs stay in their storage type (a 16-byte pack is four registers)
 * and are widened where they are used. */
constexpr int MAX_ITEMS = 8;
/* Beyond this many blocks the kernels stride over rows. */
constexpr int64_t MAX_GRID = 1 << 20;

template <typename T> struct Elem;

template <> struct Elem<float>
{
  static __device__ __forceinline__ float widen (float v) { return v; }
  static __device__ __forceinline__ float narrow (float v) { return v; }
};

template <> struct Elem<__half>
{
  static __device__ __forceinline__ float widen (__half v) { return __half2float (v); }
  static __device__ __forceinline__ __half narrow (float v) { return __float2half_rn (v); }
};

template <> struct Elem<__nv_bfloat16>
{
  static __device__ __forceinline__ float widen (__nv_bfloat16 v) { return __bfloat162float (v); }
  static __device__ __forceinline__ __nv_bfloat16 narrow (float v) { return __float2bfloat16_rn (v); }
};

/* VEC elements moved by one load or store of their whole size. */
template <typename T, int VEC>
struct alignas (sizeof (T) * VEC) Pack
{
  T e[VEC];
};

/* Packs per thread a cached kernel aims at: as many as let 64 threads
 * carry a row, for 16-bit types (a bf16 row of 4096 is 64 threads with
 * 128 bytes of loads each in flight); f32 rows run at the speed of a
 * copy with 4 (a row of 4096 is 256 threads), and take 8 only where 512
 * threads of 4 are too few (rows of up to 16384). */
template <int VEC>
constexpr int
aim_items ()
{
  return VEC == 4 ? 4 : 8;
}

/* Packs per thread in flight in each step of the long kernel. */
template <int VEC>
constexpr int
long_unroll ()
{
  return VEC >= 8 ? 2 : 4;
}

struct NormArgs
{
  const void *x, *gamma, *beta;   /* gamma, beta nullable */
  void *y;                        /* may be x */
  int64_t rows, n;
  float eps, n_f;
  bool rms;
  /* Elements from the 16-byte boundary at or before x (and y), gamma and
   * beta; 0 for one-element packs. */
  int x_phase, g_phase, b_phase;
  /* Blocks a row is split over (a cluster), 1 if none. */
  int parts;
};

/* Where a row's whole packs lie: @h elements before the first (up to a
 * 16-byte boundary), @nv packs, @t elements after the last; the packs
 * are from pack @first of x and y for rows of whole packs, from pack 0
 * at element @h of the row for ragged ones (see norm_cached_kernel).
 * @affine_packs: gamma and beta are aligned with the packs too. */
struct RowLayout
{
  int64_t first;
  int nv, h, t;
  bool affine_packs;
};

/* For rows of the cached kernels, whose lengths fit an int; rows of
 * whole packs unless RAGGED. */
template <int VEC, bool RAGGED>
__device__ __forceinline__ RowLayout
row_layout (const NormArgs &a, int64_t row)
{
  if (!RAGGED)
    return { row * (a.n / VEC), (int) (a.n / VEC), 0, 0, true };
  const int64_t s = a.x_phase + row * a.n;
  const int64_t h = min ((int64_t) ((VEC - (s & (VEC - 1))) & (VEC - 1)), a.n);
  const int64_t nv = (a.n - h) / VEC;
  const bool affine = ((a.g_phase + h) & (VEC - 1)) == 0 && ((a.b_phase + h) & (VEC - 1)) == 0;
  return { 0, (int) nv, (int) h, (int) (a.n - h - nv * VEC), affine };
}

template <typename T, int VEC>
__device__ __forceinline__ Pack<T, VEC>
load_pack (const void *base, int64_t k)
{
  return static_cast<const Pack<T, VEC> *> (base)[k];
}

template <typename T, int VEC>
__device__ __forceinline__ void
widen_pack (const Pack<T, VEC> &p, float (&out)[VEC], float shift)
{
#pragma unroll
  for (int e = 0; e < VEC; e++)
    out[e] = Elem<T>::widen (p.e[e]) - shift;
}

/* The optional gamma and beta packs of pack index @k of a row of whole
 * packs. */
template <typename T, int VEC>
__device__ __forceinline__ void
load_affine (const NormArgs &a, int64_t k, Pack<T, VEC> &g, Pack<T, VEC> &b)
{
  if (a.gamma)
    g = load_pack<T, VEC> (a.gamma, k);
  if (a.beta)
    b = load_pack<T, VEC> (a.beta, k);
}

/* The optional gamma and beta values of the VEC elements from element
 * @at of a row: one load of each where they are aligned with x. */
template <typename T, int VEC>
__device__ __forceinline__ void
load_affine_at (const NormArgs &a, int64_t at, bool packs, Pack<T, VEC> &g, Pack<T, VEC> &b)
{
  if (packs)
    {
      if (a.gamma)
        g = load_pack<T, VEC> (static_cast<const T *> (a.gamma) + at, 0);
      if (a.beta)
        b = load_pack<T, VEC> (static_cast<const T *> (a.beta) + at, 0);
      return;
    }
#pragma unroll
  for (int e = 0; e < VEC; e++)
    {
      if (a.gamma)
        g.e[e] = static_cast<const T *> (a.gamma)[at + e];
      if (a.beta)
        b.e[e] = static_cast<const T *> (a.beta)[at + e];
    }
}

/* Pack @at of @y = (v - mean) · rstd · gamma + beta, in the CPU's order;
 * v and mean both shifted by the row's shift. */
template <typename T, int VEC>
__device__ __forceinline__ void
store_normalised (const NormArgs &a, void *y, int64_t at, const float (&v)[VEC], const Pack<T, VEC> &g,
                  const Pack<T, VEC> &b, float mean, float rstd)
{
  Pack<T, VEC> out;
#pragma unroll
  for (int e = 0; e < VEC; e++)
    {
      float r = (v[e] - mean) * rstd;
      if (a.gamma)
        r *= Elem<T>::widen (g.e[e]);
      if (a.beta)
        r += Elem<T>::widen (b.e[e]);
      out.e[e] = Elem<T>::narrow (r);
    }
  static_cast<Pack<T, VEC> *> (y)[at] = out;
}

/* Every lane gets the same sum: the butterfly adds the same two values in
 * each pair of lanes, and addition commutes. */
__device__ __forceinline__ float
warp_sum (float v)
{
#pragma unroll
  for (int o = WARP / 2; o > 0; o /= 2)
    v += __shfl_xor_sync (FULL_MASK, v, o);
  return v;
}

/* The sum over the row's threads, the same in all of them. A block-wide
 * sum synchronises twice (the second so @scratch can be reused). */
template <bool WARP_ROW>
__device__ __forceinline__ float
row_sum (float v, float *scratch)
{
  v = warp_sum (v);
  if (WARP_ROW)
    return v;

  const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads ();
  v = lane < (int) (blockDim.x / WARP) ? scratch[lane] : 0.0f;
  v = warp_sum (v);
  __syncthreads ();
  return v;
}

/* The shift of a row's values before its moments (see above). Every
 * thread of a row reads x[0] before the first reduction of the row, so
 * an in-place write of y[0] comes after all these reads. */
template <typename T>
__device__ __forceinline__ float
row_shift (const NormArgs &a, int64_t row)
{
  return a.rms ? 0.0f : Elem<T>::widen (static_cast<const T *> (a.x)[row * a.n]);
}

/* Count, mean and sum of squared deviations of a set of values. */
struct Moments
{
  float count, mean, m2;
};

/* Chan, Golub and LeVeque's pairwise update. */
__device__ __forceinline__ Moments
merge (const Moments &a, const Moments &b)
{
  if (b.count == 0.0f)
    return a;
  if (a.count == 0.0f)
    return b;
  const float n = a.count + b.count;
  const float d = b.mean - a.mean, w = b.count / n;
  return { n, a.mean + d * w, a.m2 + b.m2 + d * d * a.count * w };
}

/* Valid in lane 0 (the merge does not commute bit for bit, so the result
 * is broadcast rather than computed in every lane). */
__device__ __forceinline__ Moments
warp_merge (Moments m)
{
#pragma unroll
  for (int o = WARP / 2; o > 0; o /= 2)
    {
      Moments other = { __shfl_down_sync (FULL_MASK, m.count, o), __shfl_down_sync (FULL_MASK, m.mean, o),
                        __shfl_down_sync (FULL_MASK, m.m2, o) };
      m = merge (m, other);
    }
  return m;
}

/* Lane 0's moments in every lane of the warp. */
__device__ __forceinline__ Moments
broadcast (const Moments &m)
{
  return { __shfl_sync (FULL_MASK, m.count, 0), __shfl_sync (FULL_MASK, m.mean, 0),
           __shfl_sync (FULL_MASK, m.m2, 0) };
}

/* The moments of the whole block, the same in every thread. */
__device__ __forceinline__ Moments
block_merge (Moments m, Moments *scratch)
{
  const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
  m = warp_merge (m);
  if (lane == 0)
    scratch[warp] = m;
  __syncthreads ();
  m = lane < (int) (blockDim.x / WARP) ? scratch[lane] : Moments { 0.0f, 0.0f, 0.0f };
  m = broadcast (warp_merge (m));
  __syncthreads ();
  return m;
}

/* The moments of the row's threads (a warp, or the block), the same in
 * all of them. */
template <bool WARP_ROW>
__device__ __forceinline__ Moments
row_merge (Moments m, Moments *scratch)
{
  return WARP_ROW ? broadcast (warp_merge (m)) : block_merge (m, scratch);
}

__device__ __forceinline__ float
combine (float a, float b)
{
  return a + b;
}

__device__ __forceinline__ Moments
combine (const Moments &a, const Moments &b)
{
  return merge (a, b);
}

/* @v of every block of the cluster (the same in all the threads of a
 * block) combined in rank order, so that every block gets the same
 * result; @slot is the block's shared memory to pass it on. Only sm_90
 * builds have clusters; the host launches clustered kernels only where
 * the device runs such a build (clusters_run ()). */
template <typename V>
__device__ __forceinline__ V
cluster_combine (V v, V *slot)
{
#ifdef ACCEL_NORM_HAVE_CLUSTERS
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster ();
  /* Only the writer fences (cluster.sync () fences in every thread): its
   * fence and relaxed arrival release the slot, the others' wait
   * acquires it. */
  if (threadIdx.x == 0)
    {
      *slot = v;
      asm volatile ("fence.acq_rel.cluster;" ::: "memory");
    }
  asm volatile ("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
  V all = *cluster.map_shared_rank (slot, 0);
  for (unsigned r = 1; r < cluster.num_blocks (); r++)
    all = combine (all, *cluster.map_shared_rank (slot, r));
  /* No block reuses its slot, or leaves, while another may read it: the
   * reads are done, their values used. */
  asm volatile ("barrier.cluster.arrive.relaxed.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
  return all;
#else
  (void) slot;
  __trap ();
  return v;
#endif
}

/* The sum of @f over the widened values of the packs of @p in the row
 * (pack i of a thread is the row's pack i · stride + off, of @nv), and
 * of the thread's head or tail element @xe if @has_extra. */
template <typename T, int VEC, int ITEMS, typename F>
__device__ __forceinline__ float
sum_of (const Pack<T, VEC> (&p)[ITEMS], int off, int stride, int nv, bool has_extra, float xe, F f)
{
  float sum = has_extra ? f (xe) : 0.0f;
#pragma unroll
  for (int i = 0; i < ITEMS; i++)
    if (i * stride + off < nv)
#pragma unroll
      for (int e = 0; e < VEC; e++)
        sum += f (Elem<T>::widen (p[i].e[e]));
  return sum;
}

/* Rows that fit in registers: ITEMS packs of VEC elements per thread, one
 * warp per row (WARP_ROW), one block per row, or (CLUSTERED) the blocks
 * of a cluster per row, a.parts of them, which merge their moments
 * through distributed shared memory; if RAGGED, the row's head and tail
 * elements, one each, in its first threads (a separate instance: rows of
 * whole packs, the most common, do without its arithmetic). */
template <typename T, int VEC, int ITEMS, bool WARP_ROW, bool RAGGED, bool CLUSTERED>
__global__ void __launch_bounds__ (BLOCK_ROW_MAX_THREADS)
norm_cached_kernel (NormArgs a)
{
  __shared__ float scratch[WARP];
  __shared__ Moments mscratch[WARP];
  __shared__ float cluster_sum_slot;
  __shared__ Moments cluster_moments_slot;
  const int tid = WARP_ROW ? (int) threadIdx.x % WARP : (int) threadIdx.x;
  const int threads = WARP_ROW ? WARP : (int) blockDim.x;
  const int rows_per_block = WARP_ROW ? (int) blockDim.x / WARP : 1;
  const int parts = CLUSTERED ? a.parts : 1;
  /* Pack i of a thread is pack i · stride + off of the row. */
  const int stride = CLUSTERED ? threads * parts : threads;
  const int off = CLUSTERED ? (int) (blockIdx.x % parts) * threads + tid : tid;
  const int64_t step = (int64_t) (gridDim.x / parts) * rows_per_block;
  int64_t row = (int64_t) (blockIdx.x / parts) * rows_per_block + (WARP_ROW ? threadIdx.x / WARP : 0);

  /* The loop bound is uniform over the threads of a row (a warp, or the
   * block), as the reductions need. */
  for (; row < a.rows; row += step)
    {
      const RowLayout l = row_layout<VEC, RAGGED> (a, row);
      const float shift = row_shift<T> (a, row);
      Pack<T, VEC> p[ITEMS];
      /* Pack k of the row is pack l.first + k of these. Rows of whole
       * packs are addressed from x itself, as the compiler then emits
       * the faster code (a base less x's phase, 0 at run time, cost 12 %
       * of a bf16 row of 4096 on the H100). */
      const void *xp = RAGGED ? static_cast<const T *> (a.x) + row * a.n + l.h : a.x;
      void *yp = RAGGED ? static_cast<T *> (a.y) + row * a.n + l.h : a.y;

#pragma unroll
      for (int i = 0; i < ITEMS; i++)
        {
          const int k = i * stride + off;
          if (k < l.nv)
            p[i] = load_pack<T, VEC> (xp, l.first + k);
        }
      /* The head or tail element of this thread, if any. */
      const bool has_extra = RAGGED && off < l.h + l.t;
      const int extra_at = off < l.h ? off : l.h + l.nv * VEC + (off - l.h);
      const float xe = has_extra ? Elem<T>::widen (static_cast<const T *> (a.x)[row * a.n + extra_at]) : 0.0f;

      float mean = 0.0f, var;
      if (a.rms)
        {
          float ss = row_sum<WARP_ROW> (sum_of (p, off, stride, l.nv, has_extra, xe, [] (float v) { return v * v; }),
                                        scratch);
          if (CLUSTERED)
            ss = cluster_combine (ss, &cluster_sum_slot);
          var = ss / a.n_f;
        }
      else
        {
          float s = has_extra ? xe - shift : 0.0f, c = has_extra ? 1.0f : 0.0f;
#pragma unroll
          for (int i = 0; i < ITEMS; i++)
            if (i * stride + off < l.nv)
              {
                c += VEC;
#pragma unroll
                for (int e = 0; e < VEC; e++)
                  s += Elem<T>::widen (p[i].e[e]) - shift;
              }
          const float m = c > 0.0f ? s / c : 0.0f;
          const float q = sum_of (p, off, stride, l.nv, has_extra, xe, [shift, m] (float v) {
            const float d = v - shift - m;
            return d * d;
          });
          Moments mo = row_merge<WARP_ROW> (Moments { c, m, q }, mscratch);
          if (CLUSTERED)
            mo = cluster_combine (mo, &cluster_moments_slot);
          mean = mo.mean;
          var = mo.m2 / a.n_f;
        }
      const float rstd = 1.0f / sqrtf (var + a.eps);

#pragma unroll
      for (int i = 0; i < ITEMS; i++)
        {
          const int k = i * stride + off;
          if (k < l.nv)
            {
              Pack<T, VEC> gi, bi;
              load_affine_at (a, l.h + k * VEC, l.affine_packs, gi, bi);
              float v[VEC];
              widen_pack (p[i], v, shift);
              store_normalised (a, yp, l.first + k, v, gi, bi, mean, rstd);
            }
        }
      if (has_extra)
        {
          Pack<T, 1> gi, bi;
          load_affine_at (a, extra_at, false, gi, bi);
          const float v[1] = { xe - shift };
          store_normalised (a, a.y, row * a.n + extra_at, v, gi, bi, mean, rstd);
        }
    }
}

/* Rows too long for registers: one block per row, x read twice. */
template <typename T, int VEC>
__global__ void __launch_bounds__ (LONG_THREADS)
norm_long_kernel (NormArgs a)
{
  constexpr int LONG_UNROLL = long_unroll<VEC> ();
  __shared__ Moments scratch[WARP];
  const int64_t nv = a.n / VEC;
  const int64_t stride = blockDim.x;

  for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x)
    {
      const int64_t base = row * nv;
      const float shift = row_shift<T> (a, row);
      Moments m = { 0.0f, 0.0f, 0.0f };

      for (int64_t k0 = threadIdx.x; k0 < nv; k0 += LONG_UNROLL * stride)
        {
          float v[LONG_UNROLL][VEC];
          float s = 0.0f, c = 0.0f;
#pragma unroll
          for (int u = 0; u < LONG_UNROLL; u++)
            {
              if (k0 + u * stride < nv)
                {
                  widen_pack (load_pack<T, VEC> (a.x, base + k0 + u * stride), v[u], shift);
                  c += VEC;
                }
              else
#pragma unroll
                for (int e = 0; e < VEC; e++)
                  v[u][e] = 0.0f;
#pragma unroll
              for (int e = 0; e < VEC; e++)
                s += v[u][e];
            }
          /* c > 0: the first pack of the chunk is in the row. */
          const float cm = s / c;
          float q = 0.0f;
#pragma unroll
          for (int u = 0; u < LONG_UNROLL; u++)
            if (k0 + u * stride < nv)
#pragma unroll
              for (int e = 0; e < VEC; e++)
                {
                  const float d = v[u][e] - cm;
                  q += d * d;
                }
          m = merge (m, Moments { c, cm, q });
        }
      m = block_merge (m, scratch);

      const float mean = a.rms ? 0.0f : m.mean;
      const float var = a.rms ? m.m2 / a.n_f + m.mean * m.mean : m.m2 / a.n_f;
      const float rstd = 1.0f / sqrtf (var + a.eps);

      /* Every load of a chunk before its stores: y may alias x, so the
       * compiler could not move later loads above earlier stores. */
      for (int64_t k0 = threadIdx.x; k0 < nv; k0 += LONG_UNROLL * stride)
        {
          float v[LONG_UNROLL][VEC];
          Pack<T, VEC> g[LONG_UNROLL], b[LONG_UNROLL];
#pragma unroll
          for (int u = 0; u < LONG_UNROLL; u++)
            if (k0 + u * stride < nv)
              {
                widen_pack (load_pack<T, VEC> (a.x, base + k0 + u * stride), v[u], shift);
                load_affine (a, k0 + u * stride, g[u], b[u]);
              }
#pragma unroll
          for (int u = 0; u < LONG_UNROLL; u++)
            if (k0 + u * stride < nv)
              store_normalised (a, a.y, base + k0 + u * stride, v[u], g[u], b[u], mean, rstd);
        }
    }
}

unsigned int
grid_for (int64_t blocks)
{
  return (unsigned int) (blocks < 1 ? 1 : blocks > MAX_GRID ? MAX_GRID : blocks);
}

int64_t
ceil_div (int64_t a, int64_t b)
{
  return (a + b - 1) / b;
}

template <typename T, int VEC, bool WARP_ROW, bool RAGGED>
void
launch_cached (int items, unsigned int grid, int threads, const NormArgs &a, cudaStream_t stream)
{
  switch (items)
    {
    case 1:
      norm_cached_kernel<T, VEC, 1, WARP_ROW, RAGGED, false><<<grid, threads, 0, stream>>> (a);
      break;
    case 2:
      norm_cached_kernel<T, VEC, 2, WARP_ROW, RAGGED, false><<<grid, threads, 0, stream>>> (a);
      break;
    case 4:
      norm_cached_kernel<T, VEC, 4, WARP_ROW, RAGGED, false><<<grid, threads, 0, stream>>> (a);
      break;
    case 8:
      norm_cached_kernel<T, VEC, 8, WARP_ROW, RAGGED, false><<<grid, threads, 0, stream>>> (a);
      break;
    default:
      break;
    }
}

template <typename T, int VEC, bool WARP_ROW>
void
launch_cached (bool whole, int items, unsigned int grid, int threads, const NormArgs &a, cudaStream_t stream)
{
  if (VEC > 1 && !whole)
    launch_cached<T, VEC, WARP_ROW, (VEC > 1)> (items, grid, threads, a, stream);
  else
    launch_cached<T, VEC, WARP_ROW, false> (items, grid, threads, a, stream);
}

/* The shape of a cached kernel for rows of @n elements in packs of VEC:
 * FALSE where the row is too long for registers. */
template <int VEC>
bool
cached_shape (int64_t n, bool *warp_row, int *items, int64_t *threads)
{
  const int64_t nv = n / VEC;

  *items = 1;
  if (n <= WARP_ROW_MAX_LEN && nv <= (int64_t) WARP * aim_items<VEC> ())
    {
      while ((int64_t) *items * WARP < nv)
        *items *= 2;
      *warp_row = true;
      *threads = WARP_ROW_THREADS;
      return true;
    }
  while (*items < aim_items<VEC> () && ceil_div (nv, *items) > BLOCK_ROW_TARGET_THREADS)
    *items *= 2;
  while (*items < MAX_ITEMS && ceil_div (nv, *items) > BLOCK_ROW_MAX_THREADS)
    *items *= 2;
  *warp_row = false;
  *threads = ceil_div (ceil_div (nv, *items), WARP) * WARP;
  return *threads <= BLOCK_ROW_MAX_THREADS;
}

/* Whether @kernel runs on this device from a build with clusters (sm_90):
 * cached per device. */
template <typename K>
bool
clusters_run (K kernel)
{
  static int cached[64]; /* 0 unknown, 1 yes, 2 no */
  int dev = 0;
  if (cudaGetDevice (&dev) != cudaSuccess || dev < 0 || dev >= 64)
    return false;
  if (cached[dev] == 0)
    {
      cudaFuncAttributes fa;
      cached[dev] = cudaFuncGetAttributes (&fa, kernel) == cudaSuccess && fa.binaryVersion >= 90 ? 1 : 2;
      (void) cudaGetLastError ();
    }
  return cached[dev] == 1;
}

/* Rows too long for one block's registers (of whole packs, or RAGGED),
 * split over a cluster of 2 to 8 blocks of 8 packs a thread: FALSE where
 * they are too long for that too, or the device has no clusters. */
template <typename T, int VEC, bool RAGGED>
bool
launch_clustered (const NormArgs &a, cudaStream_t stream)
{
  const int64_t nv = a.n / VEC;
  int parts = 2;
  while (parts < MAX_CLUSTER && ceil_div (nv, (int64_t) MAX_ITEMS * parts) > CLUSTER_TARGET_THREADS)
    parts *= 2;
  const int64_t threads = ceil_div (ceil_div (nv, (int64_t) MAX_ITEMS * parts), WARP) * WARP;
  auto kernel = norm_cached_kernel<T, VEC, MAX_ITEMS, false, RAGGED, true>;
  if (threads > BLOCK_ROW_MAX_THREADS || !clusters_run (kernel))
    return false;

  NormArgs c = a;
  c.parts = parts;
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = (unsigned int) parts;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3 ((unsigned int) (a.rows < MAX_GRID / parts ? a.rows : MAX_GRID / parts) * parts);
  config.blockDim = dim3 ((unsigned int) threads);
  config.stream = stream;
  config.attrs = &attr;
  config.numAttrs = 1;
  if (cudaLaunchKernelEx (&config, kernel, c) == cudaSuccess)
    return true;
  (void) cudaGetLastError (); /* the long kernel instead */
  return false;
}

/* Picks the kernel and its shape for packs of VEC elements: a cached
 * kernel, a clustered one, else the long one for whole packs; FALSE for a
 * ragged row too long for a cluster. */
template <typename T, int VEC>
bool
launch_packed (const NormArgs &a, bool whole, cudaStream_t stream)
{
  bool warp_row;
  int items;
  int64_t threads;

  if (!cached_shape<VEC> (a.n, &warp_row, &items, &threads))
    {
      if constexpr (VEC > 1)
        if (whole ? launch_clustered<T, VEC, false> (a, stream) : launch_clustered<T, VEC, true> (a, stream))
          return true;
      if (!whole)
        return false;
      norm_long_kernel<T, VEC><<<grid_for (a.rows), LONG_THREADS, 0, stream>>> (a);
    }
  else if (warp_row)
    launch_cached<T, VEC, true> (whole, items, grid_for (ceil_div (a.rows, WARP_ROW_THREADS / WARP)), (int) threads,
                                 a, stream);
  else
    launch_cached<T, VEC, false> (whole, items, grid_for (a.rows), (int) threads, a, stream);
  return true;
}

/* Elements of @p past the 16-byte boundary before it; -1 where @p is not
 * aligned to its element size. */
template <typename T>
int
phase_of (const void *p)
{
  const uintptr_t off = (uintptr_t) p % 16;
  return off % sizeof (T) ? -1 : (int) (off / sizeof (T));
}

template <typename T>
cudaError_t
launch_typed (NormArgs a, cudaStream_t stream)
{
  constexpr int VEC = 16 / sizeof (T);
  const int px = phase_of<T> (a.x), pg = phase_of<T> (a.gamma), pb = phase_of<T> (a.beta);

  if (px >= 0 && px == phase_of<T> (a.y) && pg >= 0 && pb >= 0)
    {
      NormArgs packed = a;
      packed.x_phase = px;
      packed.g_phase = pg;
      packed.b_phase = pb;
      if (launch_packed<T, VEC> (packed, px == 0 && pg == 0 && pb == 0 && a.n % VEC == 0, stream))
        return cudaGetLastError ();
    }
  launch_packed<T, 1> (a, true, stream);
  return cudaGetLastError ();
}

} /* namespace */

extern "C" cudaError_t
accel_cuda_launch_norm (const void *x, const void *gamma, const void *beta, void *y, int dtype, int rms,
                        int64_t rows, int64_t n, double eps, cudaStream_t stream)
{
  if (rows <= 0 || n <= 0)
    return cudaSuccess;
  const NormArgs a = { x, gamma, beta, y, rows, n, (float) eps, (float) n, rms != 0, 0, 0, 0, 1 };
  switch (dtype)
    {
    case ACCEL_CUDA_DT_F32:
      return launch_typed<float> (a, stream);
    case ACCEL_CUDA_DT_F16:
      return launch_typed<__half> (a, stream);
    case ACCEL_CUDA_DT_BF16:
      return launch_typed<__nv_bfloat16> (a, stream);
    default:
      return cudaErrorInvalidValue;
    }
}
