/* accel-flashattn-sm90.cuh: what the sm_90a kernels share: wgmma fences
 * and shared-memory matrix descriptors, the 128-byte-swizzled tile layout
 * the tensor cores read, stmatrix, and the bulk asynchronous reduction.
 *
 * Tiles: a ROWS x D tile is D/64 slabs of ROWS rows of 128 bytes (64
 * 16-bit elements), the 16-byte chunks of row r XORed with r % 8 (the
 * 128-byte swizzle of the descriptors below).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-flashattn-common.cuh"
#include "accel-flashattn-wgmma.cuh"

namespace accel_fa {

__device__ __forceinline__ void wgmma_fence () { asm volatile ("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit () { asm volatile ("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait0 () { asm volatile ("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait () { asm volatile ("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory"); }
__device__ __forceinline__ void fence_proxy_async () { asm volatile ("fence.proxy.async.shared::cta;\n" ::: "memory"); }

/* Keeps the compiler from moving reads or writes of accumulators across
 * the asynchronous MMA's issue and wait. */
template <int N>
__device__ __forceinline__ void
fence_regs (float *r)
{
#pragma unroll
  for (int i = 0; i < N; i++)
    asm volatile ("" : "+f"(r[i]) :: "memory");
}

/* The same for the A fragments of a wgmma reading registers: keeps them
 * live (and unmoved) until after the wait that ends the MMA. */
template <int N>
__device__ __forceinline__ void
fence_regs_u32 (uint32_t *r)
{
#pragma unroll
  for (int i = 0; i < N; i++)
    asm volatile ("" : "+r"(r[i]) :: "memory");
}

/* Shared-memory matrix descriptor, 128-byte swizzle. */
__device__ __forceinline__ uint64_t
make_desc (uint32_t addr, uint32_t lbo, uint32_t sbo)
{
  uint64_t d = (uint64_t) ((addr & 0x3FFFF) >> 4);
  d |= (uint64_t) ((lbo & 0x3FFFF) >> 4) << 16;
  d |= (uint64_t) ((sbo & 0x3FFFF) >> 4) << 32;
  d |= (uint64_t) 1 << 62;
  return d;
}

/* Element offset of (row, col) in a ROWS x D tile stored as D/64
 * 64-column slabs of 128-byte swizzled rows. */
template <int ROWS>
__device__ __forceinline__ int
sw128 (int row, int col)
{
  return (col >> 6) * ROWS * 64 + row * 64 + ((((col >> 3) & 7) ^ (row & 7)) << 3) + (col & 7);
}

/* load_tile() (accel-flashattn-common.cuh) into the 128-byte-swizzled
 * layout: rows at or past @valid zeroed, columns from @cols to @read
 * (default: cols_read (@cols)) zeroed, those past it not written. */
template <typename T, int ROWS, int D, int NTHREADS>
__device__ __forceinline__ void
load_tile_sw128 (T *smem, const T *gmem, int64_t stride, int valid, int tid, int cols = D, int read = -1)
{
  constexpr int CHUNKS = D / 8;
  constexpr int RSTEP = NTHREADS / CHUNKS;
  static_assert (RSTEP % 8 == 0 && ROWS % RSTEP == 0, "tile not a multiple of the block");
  const int r0 = tid / CHUNKS, c = tid % CHUNKS;
  if (c * 8 >= (read < 0 ? cols_read (cols) : read))
    return;
  const bool col_ok = c * 8 < cols;
  const T *src = gmem + r0 * stride + c * 8;
  const int64_t step = RSTEP * stride;
  const uint32_t base = smem_u32 (smem + sw128<ROWS> (r0, c * 8));
  const int left = valid - r0;
#pragma unroll
  for (int i = 0; i < ROWS / RSTEP; i++)
    {
      const bool ok = col_ok && i * RSTEP < left;
      cp_async_16 (base + i * RSTEP * 64 * 2, ok ? src : gmem, ok ? 16 : 0);
      src += step;
    }
}


/* Stores four 8x8 16-bit matrices transposed: register j holds matrix j in
 * the mma fragment layout (row lane / 4, columns 2 (lane % 4) and + 1);
 * lane 8 j + i gives the address of row i of stored matrix j, which is
 * column i of the fragment's matrix. */
__device__ __forceinline__ void
stmatrix_x4_trans (uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3)
{
  asm volatile ("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n"
                :: "r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
}

/* Adds @bytes of f32 from shared memory to global memory, element by
 * element, in the L2 (a bulk asynchronous reduction: the issuing thread
 * goes on at once); then commits the bulk group. */
__device__ __forceinline__ void
bulk_reduce_add_f32 (float *dst, uint32_t src, uint32_t bytes)
{
  asm volatile ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n"
                "cp.async.bulk.commit_group;\n"
                :: "l"(dst), "r"(src), "r"(bytes) : "memory");
}

/* Waits until at most N bulk groups of this thread still read their source. */
template <int N>
__device__ __forceinline__ void
bulk_wait_read ()
{
  asm volatile ("cp.async.bulk.wait_group.read %0;\n" :: "n"(N) : "memory");
}

/* Waits until this thread's bulk groups are complete. */
__device__ __forceinline__ void
bulk_wait_all ()
{
  asm volatile ("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

} /* namespace accel_fa */
