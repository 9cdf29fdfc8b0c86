/* accel-cutlass-matmul.cu: matmul with the epilogue extras (row and column
 * scales, residual, amax, fp8 results) on every type the op takes: a tiled
 * f32 kernel with the whole epilogue applied as each result leaves the
 * accumulators, and the amax reduced per block then once per block into
 * device memory (zeroed before, in stream order).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cutlass-simt.cuh"

using namespace accel_cutlass;

namespace {

__global__ void __launch_bounds__ (kThreads)
matmul_generic (AccelCutlassMatmulParams p)
{
  __shared__ TileSmem smem;
  __shared__ float block_amax;
  int64_t i0 = (int64_t) blockIdx.x * kTile, j0 = (int64_t) blockIdx.y * kTile, batch = blockIdx.z;
  int64_t M = p.m, N = p.n, K = p.k;
  const int64_t a_off = batch * M * K, b_off = batch * K * N, c_off = batch * M * N;
  float acc[4][4] = {};
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;

  if (threadIdx.x == 0)
    block_amax = 0.0f;
  auto la = [&] (int r, int64_t l) {
    int64_t i = i0 + r;
    if (i >= M)
      return 0.0f;
    return load (p.a, a_off + (p.transa ? l * M + i : i * K + l), p.a_type);
  };
  auto lb = [&] (int64_t l, int c) {
    int64_t j = j0 + c;
    if (j >= N)
      return 0.0f;
    return load (p.b, b_off + (p.transb ? j * K + l : l * N + j), p.b_type);
  };
  tile_product (la, lb, K, acc, smem);

  float amax = 0.0f;
#pragma unroll
  for (int u = 0; u < 4; u++)
    {
      int64_t i = i0 + ty + 16 * u;
      if (i >= M)
        continue;
#pragma unroll
      for (int w = 0; w < 4; w++)
        {
          int64_t j = j0 + tx + 16 * w;
          if (j >= N)
            continue;
          float v = p.alpha * acc[u][w];
          if (p.row_scales)
            v *= p.row_scales[i];
          if (p.col_scales)
            v *= p.col_scales[j];
          if (p.beta != 0.0f)
            v += p.beta * load (p.c, c_off + i * N + j, p.c_type);
          if (p.bias)
            v += load (p.bias, j, p.bias_type);
          v = activate (v, p.act);
          if (p.residual)
            v += load (p.residual, c_off + i * N + j, p.c_type);
          amax = fmaxf (amax, fabsf (v));
          store (p.c, c_off + i * N + j, v * p.c_scale, p.c_type);
        }
    }
  if (p.amax)
    {
      for (int off = 16; off > 0; off /= 2)
        amax = fmaxf (amax, __shfl_xor_sync (0xffffffffu, amax, off));
      __syncthreads ();
      if (threadIdx.x % 32 == 0)
        atomic_max_abs (&block_amax, amax);
      __syncthreads ();
      if (threadIdx.x == 0)
        atomic_max_abs (p.amax, block_amax);
    }
}

}  // namespace

extern "C" int
accel_cutlass_matmul_generic (const AccelCutlassMatmulParams *p, cudaStream_t stream)
{
  cudaError_t status;
  if (p->amax && (status = cudaMemsetAsync (p->amax, 0, sizeof (float), stream)) != cudaSuccess)
    return status;
  if (p->m == 0 || p->n == 0 || p->batch == 0)
    return cudaSuccess;
  if ((p->n + kTile - 1) / kTile > 65535 || p->batch > 65535)
    return ACCEL_CUTLASS_UNSUPPORTED;
  dim3 grid ((unsigned) ((p->m + kTile - 1) / kTile), (unsigned) ((p->n + kTile - 1) / kTile), (unsigned) p->batch);
  matmul_generic<<<grid, kThreads, 0, stream>>> (*p);
  return cudaGetLastError ();
}
