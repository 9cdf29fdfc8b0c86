/* accel-cutlass-grouped.cu: the offset check every grouped-gemm path runs
 * first, and the general grouped kernel (any of the op's types, any
 * sizes, sm_80 on).
 *
 * The check is one block: it finds the first bad index of the offsets
 * (offsets[0] != 0, a decrease, offsets[G] != T) and leaves it in the
 * codes, which the plugin judges once the op has run. The kernels that
 * follow on the stream read the codes and touch nothing when they are
 * set, so a bad offset never sends a read out of bounds.
 *
 * The general kernel tiles the packed rows: a block takes 64 rows and 64
 * columns of out, walks the groups those rows belong to (found by binary
 * search in the offsets), and accumulates each group's rows against that
 * group's b in f32.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cutlass-simt.cuh"

using namespace accel_cutlass;

namespace {

__global__ void
check_offsets (const int32_t *offsets, int64_t groups, int64_t rows, int32_t *codes)
{
  __shared__ unsigned long long first;
  if (threadIdx.x == 0)
    first = ~0ull;
  __syncthreads ();
  for (int64_t i = threadIdx.x; i <= groups; i += blockDim.x)
    {
      int32_t v = offsets[i];
      bool bad = i == 0 ? v != 0 : v < offsets[i - 1];
      bad = bad || (i == groups && v != rows);
      if (bad)
        {
          atomicMin (&first, (unsigned long long) i);
          break;
        }
    }
  __syncthreads ();
  if (threadIdx.x == 0 && first != ~0ull)
    {
      codes[0] = (int32_t) (first + 1);
      codes[1] = offsets[first];
      codes[2] = first > 0 ? offsets[first - 1] : 0;
    }
}

/* The last group whose first row is at most @row (offsets checked). */
__device__ int64_t
group_of (const int32_t *offsets, int64_t groups, int64_t row)
{
  int64_t lo = 0, hi = groups - 1;
  while (lo < hi)
    {
      int64_t mid = (lo + hi + 1) / 2;
      if (offsets[mid] <= row)
        lo = mid;
      else
        hi = mid - 1;
    }
  return lo;
}

__global__ void __launch_bounds__ (kThreads)
grouped_generic (AccelCutlassGroupedParams p)
{
  __shared__ TileSmem smem;
  if (p.codes[0] != 0)
    return;
  int64_t r0 = (int64_t) blockIdx.x * kTile, n0 = (int64_t) blockIdx.y * kTile;
  int64_t r1 = min (r0 + kTile, p.rows);
  int64_t K = p.k, N = p.n;
  float acc[4][4] = {};
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  int64_t my_group[4] = { -1, -1, -1, -1 };

  for (int64_t g = group_of (p.offsets, p.groups, r0); g < p.groups && p.offsets[g] < r1; g++)
    {
      int64_t lo = max ((int64_t) p.offsets[g], r0), hi = min ((int64_t) p.offsets[g + 1], r1);
      if (lo >= hi)
        continue;
#pragma unroll
      for (int i = 0; i < 4; i++)
        if (r0 + ty + 16 * i >= lo && r0 + ty + 16 * i < hi)
          my_group[i] = g;
      auto la = [&] (int r, int64_t l) {
        int64_t row = r0 + r;
        return row >= lo && row < hi ? load (p.a, row * K + l, p.in_type) : 0.0f;
      };
      auto lb = [&] (int64_t l, int c) {
        int64_t col = n0 + c;
        if (col >= N)
          return 0.0f;
        return load (p.b, p.transb ? (g * N + col) * K + l : (g * K + l) * N + col, p.in_type);
      };
      tile_product (la, lb, K, acc, smem);
    }

#pragma unroll
  for (int i = 0; i < 4; i++)
    {
      int64_t row = r0 + ty + 16 * i;
      if (row >= r1)
        continue;
#pragma unroll
      for (int j = 0; j < 4; j++)
        {
          int64_t col = n0 + tx + 16 * j;
          if (col >= N)
            continue;
          float v = p.alpha * acc[i][j];
          if (p.bias && my_group[i] >= 0)
            v += load (p.bias, my_group[i] * N + col, p.out_type);
          store (p.out, row * N + col, v, p.out_type);
        }
    }
}

}  // namespace

extern "C" int
accel_cutlass_grouped_check (const AccelCutlassGroupedParams *p, cudaStream_t stream)
{
  check_offsets<<<1, 256, 0, stream>>> (p->offsets, p->groups, p->rows, p->codes);
  return cudaGetLastError ();
}

extern "C" int
accel_cutlass_grouped_generic (const AccelCutlassGroupedParams *p, cudaStream_t stream)
{
  if (p->rows == 0 || p->n == 0 || p->groups == 0)
    return cudaSuccess;
  if ((p->n + kTile - 1) / kTile > 65535)
    return ACCEL_CUTLASS_UNSUPPORTED;
  dim3 grid ((unsigned) ((p->rows + kTile - 1) / kTile), (unsigned) ((p->n + kTile - 1) / kTile));
  grouped_generic<<<grid, kThreads, 0, stream>>> (*p);
  return cudaGetLastError ();
}
