/* accel-cutlass-quant.cu: quant-matmul on every case the op takes, sm_80
 * on: the weights dequantised in f32 as they are staged into a tiled
 * product, (q − zero) · scale exactly as the op defines them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cutlass-simt.cuh"

using namespace accel_cutlass;

namespace {

__device__ __forceinline__ float
weight (const AccelCutlassQuantParams &p, int64_t n, int64_t k)
{
  int64_t groups = p.k / p.group_size, gi = n * groups + k / p.group_size;
  float q, zero;
  switch (p.format)
    {
    case ACCEL_CUTLASS_QUANT_INT4:
      {
        uint8_t byte = ((const uint8_t *) p.b)[(n * p.k + k) / 2];
        q = (float) (k % 2 ? byte >> 4 : byte & 0xF);
        zero = 8.0f;
        break;
      }
    case ACCEL_CUTLASS_QUANT_INT8:
      q = (float) ((const int8_t *) p.b)[n * p.k + k];
      zero = 0.0f;
      break;
    default:
      q = load (p.b, n * p.k + k, ACCEL_CUTLASS_E4M3);
      zero = 0.0f;
      break;
    }
  if (p.zeros)
    zero = load (p.zeros, gi, p.scale_type);
  return (q - zero) * load (p.scales, gi, p.scale_type);
}

__global__ void __launch_bounds__ (kThreads)
quant_generic (AccelCutlassQuantParams p)
{
  __shared__ TileSmem smem;
  int64_t m0 = (int64_t) blockIdx.x * kTile, n0 = (int64_t) blockIdx.y * kTile;
  float acc[4][4] = {};
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  auto la = [&] (int r, int64_t l) {
    return m0 + r < p.m ? load (p.a, (m0 + r) * p.k + l, p.act_type) : 0.0f;
  };
  auto lb = [&] (int64_t l, int c) {
    return n0 + c < p.n ? weight (p, n0 + c, l) : 0.0f;
  };
  tile_product (la, lb, p.k, acc, smem);
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int j = 0; j < 4; j++)
      {
        int64_t m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
        if (m < p.m && n < p.n)
          store (p.out, m * p.n + n, acc[i][j] + (p.bias ? load (p.bias, n, p.act_type) : 0.0f), p.act_type);
      }
}

}  // namespace

extern "C" int
accel_cutlass_quant_generic (const AccelCutlassQuantParams *p, cudaStream_t stream)
{
  if (p->m == 0 || p->n == 0)
    return cudaSuccess;
  if ((p->n + kTile - 1) / kTile > 65535)
    return ACCEL_CUTLASS_UNSUPPORTED;
  dim3 grid ((unsigned) ((p->m + kTile - 1) / kTile), (unsigned) ((p->n + kTile - 1) / kTile));
  quant_generic<<<grid, kThreads, 0, stream>>> (*p);
  return cudaGetLastError ();
}
