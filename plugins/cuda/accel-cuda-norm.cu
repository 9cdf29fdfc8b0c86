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
 * - on sm_90, rows of whole packs up to 8 times that (262144 elements
 *   of f16 or bf16, 131072 of f32): streamed through shared memory by a
 *   cluster of 2 to 8 blocks, the next rows' copies in flight while a
 *   row is worked on (accel-cuda-norm-bulk.cu; 0.69 / 0.84 of a copy for
 *   layernorm / rmsnorm of a bf16 row of 65536);
 * - on sm_90, ragged rows as long (their head and tail in the first
 *   block's first threads): the cached kernel, a row split over a
 *   cluster of 2 to 8 blocks of up to 512 threads (for a bf16 row of
 *   65536 of whole packs, 2 blocks of 512 ran at 0.58 / 0.73 of a copy,
 *   4 of 256 at 0.55 / 0.73, 8 of 128 at 0.49 / 0.69), whose moments are
 *   merged through distributed shared memory in rank order;
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
#include "accel-cuda-kernels.h"
#include "accel-cuda-norm.cuh"

namespace {

using namespace accel_norm;

/* Warp-per-row blocks: four rows each. */
constexpr int WARP_ROW_THREADS = 128;
constexpr int64_t WARP_ROW_MAX_LEN = 1024;
/* Block-per-row: aim at this many threads, allow up to the maximum. */
constexpr int BLOCK_ROW_TARGET_THREADS = 64;
constexpr int BLOCK_ROW_MAX_THREADS = 512;
constexpr int LONG_THREADS = 512;
/* Rows split over a cluster: aim at blocks of this many threads (see
 * above). */
constexpr int CLUSTER_TARGET_THREADS = 512;
/* Packs per thread that a cached kernel keeps in registers, at most: the
 * packs stay in their storage type (a 16-byte pack is four registers)
 * and are widened where they are used. */
constexpr int MAX_ITEMS = 8;
/* Beyond this many blocks the kernels stride over rows. */
constexpr int64_t MAX_GRID = 1 << 20;

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
          Moments mo = row_merge<WARP_ROW> (thread_moments (p, off, stride, l.nv, has_extra, xe, shift), mscratch);
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
                load_affine_at (a, (k0 + u * stride) * VEC, true, g[u], b[u]);
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
  ClusterLaunch l;
  cluster_launch_init (&l, parts, (int) threads, 0, stream);
  l.config.gridDim = dim3 ((unsigned int) (a.rows < MAX_GRID / parts ? a.rows : MAX_GRID / parts) * parts);
  if (cudaLaunchKernelEx (&l.config, kernel, c) == cudaSuccess)
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
        if (whole ? launch_bulk<T, VEC> (a, stream) || launch_clustered<T, VEC, false> (a, stream)
                  : launch_clustered<T, VEC, true> (a, stream))
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
