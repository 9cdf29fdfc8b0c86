/* accel-cuda-norm.cuh: what the layernorm / rmsnorm kernels share.
 *
 * Storage types widened to binary32, 16-byte packs, the kernels'
 * arguments, reductions of sums and of moments over a warp, a block and a
 * cluster, and the host's question whether clusters run. The kernels and
 * their reasons are in accel-cuda-norm.cu (rows in registers, rows read
 * twice) and accel-cuda-norm-bulk.cu (long rows streamed through shared
 * memory).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stdint.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cooperative_groups.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define ACCEL_NORM_HAVE_CLUSTERS 1
#endif

namespace accel_norm {

constexpr int WARP = 32;
constexpr unsigned FULL_MASK = 0xffffffffu;
/* Clusters of up to 8 blocks: the portable size. */
constexpr int MAX_CLUSTER = 8;

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

/* Chan, Golub and LeVeque's pairwise update. FAST takes the weight by
 * __fdividef () (within 2 units in the last place; the counts are whole
 * numbers well inside its range): it saved the streaming kernel 4 % of a
 * layernorm's time on the H100, and cost the cached kernel 1 %. */
template <bool FAST = false>
__device__ __forceinline__ Moments
merge (const Moments &a, const Moments &b)
{
  if (b.count == 0.0f)
    return a;
  if (a.count == 0.0f)
    return b;
  const float n = a.count + b.count;
  const float d = b.mean - a.mean, w = FAST ? __fdividef (b.count, n) : b.count / n;
  return { n, a.mean + d * w, a.m2 + b.m2 + d * d * a.count * w };
}

/* Valid in lane 0 (the merge does not commute bit for bit, so the result
 * is broadcast rather than computed in every lane). */
template <bool FAST = false>
__device__ __forceinline__ Moments
warp_merge (Moments m)
{
#pragma unroll
  for (int o = WARP / 2; o > 0; o /= 2)
    {
      Moments other = { __shfl_down_sync (FULL_MASK, m.count, o), __shfl_down_sync (FULL_MASK, m.mean, o),
                        __shfl_down_sync (FULL_MASK, m.m2, o) };
      m = merge<FAST> (m, other);
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
template <bool FAST = false>
__device__ __forceinline__ Moments
block_merge (Moments m, Moments *scratch)
{
  const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
  m = warp_merge<FAST> (m);
  if (lane == 0)
    scratch[warp] = m;
  __syncthreads ();
  m = lane < (int) (blockDim.x / WARP) ? scratch[lane] : Moments { 0.0f, 0.0f, 0.0f };
  m = broadcast (warp_merge<FAST> (m));
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

/* The count, mean and sum of squared deviations of a thread's values
 * (those of sum_of (), less @shift), in two passes over its registers. */
template <typename T, int VEC, int ITEMS>
__device__ __forceinline__ Moments
thread_moments (const Pack<T, VEC> (&p)[ITEMS], int off, int stride, int nv, bool has_extra, float xe, float shift)
{
  float s = has_extra ? xe - shift : 0.0f, c = has_extra ? 1.0f : 0.0f;
#pragma unroll
  for (int i = 0; i < ITEMS; i++)
    if (i * stride + off < nv)
      {
        c += VEC;
#pragma unroll
        for (int e = 0; e < VEC; e++)
          s += Elem<T>::widen (p[i].e[e]) - shift;
      }
  const float m = c > 0.0f ? s / c : 0.0f;
  const float q = sum_of (p, off, stride, nv, has_extra, xe, [shift, m] (float v) {
    const float d = v - shift - m;
    return d * d;
  });
  return { c, m, q };
}

inline int64_t
ceil_div (int64_t a, int64_t b)
{
  return (a + b - 1) / b;
}

/* Whether @kernel runs on this device from a build with clusters (sm_90):
 * asked once per device (the kernels of one signature share the answer:
 * they are built for the same architectures); a failed question is not
 * kept. Called from any device thread. */
template <typename K>
inline bool
clusters_run (K kernel)
{
  static int cached[64]; /* 0 unknown, 1 yes, 2 no; atomic */
  int dev = 0;
  if (cudaGetDevice (&dev) != cudaSuccess || dev < 0 || dev >= 64)
    return false;
  int known = __atomic_load_n (&cached[dev], __ATOMIC_RELAXED);
  if (known == 0)
    {
      cudaFuncAttributes fa;
      if (cudaFuncGetAttributes (&fa, kernel) != cudaSuccess)
        {
          (void) cudaGetLastError ();
          return false;
        }
      known = fa.binaryVersion >= 90 ? 1 : 2;
      __atomic_store_n (&cached[dev], known, __ATOMIC_RELAXED);
    }
  return known == 1;
}

/* A launch of blocks of @threads in clusters of @parts along x, with
 * @smem bytes of dynamic shared memory; the caller sets the grid. */
struct ClusterLaunch
{
  cudaLaunchAttribute attr;
  cudaLaunchConfig_t config;
};

inline void
cluster_launch_init (ClusterLaunch *l, int parts, int threads, size_t smem, cudaStream_t stream)
{
  l->attr = {};
  l->attr.id = cudaLaunchAttributeClusterDimension;
  l->attr.val.clusterDim.x = (unsigned int) parts;
  l->attr.val.clusterDim.y = 1;
  l->attr.val.clusterDim.z = 1;
  l->config = {};
  l->config.blockDim = dim3 ((unsigned int) threads);
  l->config.dynamicSmemBytes = smem;
  l->config.stream = stream;
  l->config.attrs = &l->attr;
  l->config.numAttrs = 1;
}

/* accel-cuda-norm-bulk.cu: rows of whole packs too long for one block's
 * registers, streamed through shared memory over a cluster (sm_90 only):
 * FALSE where that does not apply, and nothing was launched. Instances
 * for (float, 4), (__half, 8) and (__nv_bfloat16, 8). */
template <typename T, int VEC>
bool launch_bulk (const NormArgs &a, cudaStream_t stream);

} /* namespace accel_norm */
