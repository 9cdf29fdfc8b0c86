/* accel-cuda-norm-bulk.cu: layernorm and rmsnorm of long rows on sm_90,
 * streamed through shared memory.
 *
 * Rows of whole packs too long for one block's registers (a bf16 row of
 * more than 32768 elements) are split over a cluster of 2 to 8 blocks of
 * 1024 threads, each block taking a contiguous part of the row of up to
 * 64 KiB. The tensor memory accelerator copies each part into shared
 * memory with one bulk copy (cp.async.bulk, completing on an mbarrier);
 * the threads move their packs into registers, and the buffer at once
 * takes the row after next, so two rows are in flight while a block
 * works on a third. The grid is as many clusters as are resident, and
 * they stride over rows. The moments are those of the cached kernel
 * (accel-cuda-norm.cu): exact per thread, merged with Chan's update
 * across the block and then, in rank order, across the cluster.
 *
 * On the H100, for bf16 [2048, 65536], this ran at 0.69 / 0.84 of a
 * device copy (layernorm / rmsnorm), where the same rows held in the
 * registers of a cluster (the cached kernel) ran at 0.58 / 0.73: with
 * 123 registers a thread that kernel fits one block a GPU core, which
 * waits for its loads between rows. Shapes measured: 2 buffers of 1024
 * threads with 4 packs each (kept), 3 buffers (0.69 / 0.84), 512 threads
 * with 8 packs (0.67 / 0.80), and reading the packs from shared memory
 * in each pass instead of keeping them in registers (0.67 / 0.80).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <mutex>
#include <cuda/ptx>
#include "accel-cuda-norm.cuh"
#include "accel-cuda-smem.cuh"

namespace accel_norm {

namespace {

/* Rows of whole packs too long for one block's registers, on sm_90 (see
 * above): the blocks of a cluster, a.parts of them, each take @count
 * packs of the row from pack @k0, copied into one of BULK_BUFFERS
 * buffers of @buffer_packs by the tensor memory accelerator. A block's
 * threads take their packs into registers, and the buffer is at once
 * refilled with a row BULK_BUFFERS rows on: that many rows are in flight
 * while one is worked on. The clusters stride over rows. */
constexpr int BULK_THREADS = 1024;
constexpr int BULK_ITEMS = 4;
constexpr int BULK_BUFFERS = 2;
constexpr int BULK_MAX_BYTES = BULK_THREADS * BULK_ITEMS * 16;

template <typename T, int VEC>
__global__ void __launch_bounds__ (BULK_THREADS, 1)
norm_bulk_kernel (NormArgs a, int buffer_packs)
{
#ifdef ACCEL_NORM_HAVE_CLUSTERS
  using P = Pack<T, VEC>;
  extern __shared__ __align__ (128) unsigned char bulk_smem[];
  __shared__ __align__ (8) uint64_t full[BULK_BUFFERS];
  __shared__ float scratch[WARP];
  __shared__ Moments mscratch[WARP];
  __shared__ float cluster_sum_slot;
  __shared__ Moments cluster_moments_slot;
  P *const buf0 = reinterpret_cast<P *> (bulk_smem);
  const int parts = a.parts, rank = (int) (blockIdx.x % parts);
  const int64_t nv = a.n / VEC;
  const int64_t k0 = rank * nv / parts;
  const int count = (int) ((rank + 1) * nv / parts - k0);
  const uint32_t bytes = (uint32_t) count * sizeof (P);
  const int64_t step = gridDim.x / parts;
  int64_t row = blockIdx.x / parts;
  const P *x = static_cast<const P *> (a.x);

  auto fetch = [&] (int b, int64_t r) {
    cuda::ptx::mbarrier_arrive_expect_tx (cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                          &full[b], bytes);
    cuda::ptx::cp_async_bulk (cuda::ptx::space_cluster, cuda::ptx::space_global, buf0 + b * buffer_packs,
                              x + r * nv + k0, bytes, &full[b]);
  };
  if (threadIdx.x == 0)
    {
      for (int b = 0; b < BULK_BUFFERS; b++)
        cuda::ptx::mbarrier_init (&full[b], 1);
      cuda::ptx::fence_proxy_async (cuda::ptx::space_shared);
      for (int b = 0; b < BULK_BUFFERS; b++)
        if (row + b * step < a.rows)
          fetch (b, row + b * step);
    }
  __syncthreads ();

  uint32_t parity = 0;
  for (int b = 0; row < a.rows; row += step, b = b + 1 < BULK_BUFFERS ? b + 1 : 0)
    {
      const float shift = row_shift<T> (a, row);
      while (!cuda::ptx::mbarrier_try_wait_parity (&full[b], (parity >> b) & 1u))
        ;
      parity ^= 1u << b;
      /* Pack i of a thread is pack i · BULK_THREADS + threadIdx.x of the
       * block's part, held in registers from here: the buffer takes the
       * row after next as soon as every thread has its packs (the fence
       * orders the reads before the copy's writes). */
      P v[BULK_ITEMS];
#pragma unroll
      for (int i = 0; i < BULK_ITEMS; i++)
        if (i * BULK_THREADS + (int) threadIdx.x < count)
          v[i] = buf0[b * buffer_packs + i * BULK_THREADS + threadIdx.x];
      __syncthreads ();
      if (threadIdx.x == 0 && row + BULK_BUFFERS * step < a.rows)
        {
          cuda::ptx::fence_proxy_async (cuda::ptx::space_shared);
          fetch (b, row + BULK_BUFFERS * step);
        }

      const int off = threadIdx.x, stride = BULK_THREADS;
      float mean = 0.0f, var;
      if (a.rms)
        {
          const float ss = sum_of (v, off, stride, count, false, 0.0f, [] (float f) { return f * f; });
          var = cluster_combine (row_sum<false> (ss, scratch), &cluster_sum_slot) / a.n_f;
        }
      else
        {
          const Moments mo = cluster_combine (
            block_merge<true> (thread_moments (v, off, stride, count, false, 0.0f, shift), mscratch),
            &cluster_moments_slot);
          mean = mo.mean;
          var = mo.m2 / a.n_f;
        }
      const float rstd = 1.0f / sqrtf (var + a.eps);

      /* The cached kernel's store loop, written again: a shared helper
       * made this kernel's layernorm 3 % slower on the H100 (0.68-0.69
       * against 0.70-0.71 of a copy, A/B in one call). */
#pragma unroll
      for (int i = 0; i < BULK_ITEMS; i++)
        {
          const int k = i * stride + off;
          if (k < count)
            {
              Pack<T, VEC> gi, bi;
              load_affine_at (a, (k0 + k) * VEC, true, gi, bi);
              float f[VEC];
              widen_pack (v[i], f, shift);
              store_normalised (a, a.y, row * nv + k0 + k, f, gi, bi, mean, rstd);
            }
        }
    }
#else
  (void) a;
  (void) buffer_packs;
  __trap ();
#endif
}

/* How many clusters of @config's shape are resident at once, asked once
 * per GPU, cluster size and shared memory size (a few of each are used):
 * a grid of that many clusters that stride over rows leaves no tail wave.
 * 0 where it cannot be asked. */
template <typename K>
int
resident_clusters (K kernel, const cudaLaunchConfig_t &config)
{
  struct Entry
  {
    int dev, parts;
    size_t smem;
    int clusters;
  };
  static std::mutex lock;
  static Entry cache[32];
  static int n_cache;
  int dev = 0;
  if (cudaGetDevice (&dev) != cudaSuccess)
    return 0;
  const int parts = (int) config.attrs[0].val.clusterDim.x;
  {
    std::lock_guard<std::mutex> hold (lock);
    for (int i = 0; i < n_cache; i++)
      if (cache[i].dev == dev && cache[i].parts == parts && cache[i].smem == config.dynamicSmemBytes)
        return cache[i].clusters;
  }
  cudaLaunchConfig_t probe = config;
  probe.gridDim = dim3 ((unsigned int) parts * 1024);
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters (&clusters, kernel, &probe) != cudaSuccess)
    {
      (void) cudaGetLastError ();
      return 0;
    }
  std::lock_guard<std::mutex> hold (lock);
  if (n_cache < 32)
    cache[n_cache++] = { dev, parts, config.dynamicSmemBytes, clusters };
  return clusters;
}

/* Rows of whole packs too long for one block's registers, over a cluster
 * of 2 to 8 blocks that stream them through shared memory: FALSE where a
 * part would not fit, or the device has no clusters. */
template <typename T, int VEC>
bool
launch_bulk_in (const NormArgs &a, cudaStream_t stream)
{
  using P = Pack<T, VEC>;
  const int64_t nv = a.n / VEC;
  int parts = 2;
  while (parts < MAX_CLUSTER && ceil_div (nv, parts) * (int64_t) sizeof (P) > BULK_MAX_BYTES)
    parts *= 2;
  const int64_t buffer_packs = ceil_div (ceil_div (nv, parts), 128 / (int64_t) sizeof (P)) * (128 / (int64_t) sizeof (P));
  const int64_t smem = BULK_BUFFERS * buffer_packs * (int64_t) sizeof (P);
  constexpr auto kernel = norm_bulk_kernel<T, VEC>;
  /* The kernel's limit is raised once, to what its largest buffers take. */
  if (ceil_div (nv, parts) * (int64_t) sizeof (P) > BULK_MAX_BYTES || !clusters_run (kernel)
      || accel_cuda_smem_once<kernel> (BULK_BUFFERS * BULK_MAX_BYTES) != cudaSuccess)
    {
      (void) cudaGetLastError ();
      return false;
    }

  NormArgs c = a;
  c.parts = parts;
  ClusterLaunch l;
  cluster_launch_init (&l, parts, BULK_THREADS, (size_t) smem, stream);
  const int clusters = resident_clusters (kernel, l.config);
  if (clusters < 1)
    return false;
  l.config.gridDim = dim3 ((unsigned int) (a.rows < clusters ? a.rows : clusters) * parts);
  if (cudaLaunchKernelEx (&l.config, kernel, c, (int) buffer_packs) == cudaSuccess)
    return true;
  (void) cudaGetLastError ();
  return false;
}

} /* namespace */

template <typename T, int VEC>
bool
launch_bulk (const NormArgs &a, cudaStream_t stream)
{
  return launch_bulk_in<T, VEC> (a, stream);
}

template bool launch_bulk<float, 4> (const NormArgs &, cudaStream_t);
template bool launch_bulk<__half, 8> (const NormArgs &, cudaStream_t);
template bool launch_bulk<__nv_bfloat16, 8> (const NormArgs &, cudaStream_t);

} /* namespace accel_norm */
