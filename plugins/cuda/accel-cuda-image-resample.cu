/* accel-cuda-image-resample.cu: resize and convert-color on the GPU.
 *
 * One thread per destination column and ROWS_PER_THREAD rows of it. Each
 * source plane a sample needs is sampled through the axis maps and taps
 * of accel-image-sampling.h (the CPU kernel's), summed in the CPU kernel's order: down each tap column
 * first, then along the row, in binary32 without fused multiply-adds
 * (this library is built with -fmad=false), so the results are the CPU's
 * to the bit but where sinf() differs (lanczos3). convert-color then maps
 * the components through the same affine transform.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-image.cuh"

#define ROWS_PER_THREAD 4

/* The taps of one axis of one source plane, in registers where MAXT is
 * small (the loops below are unrolled to it). */
template <int MAXT>
struct Taps {
  float w[MAXT];
  int first, n;
  /* Tap loops are unrolled only for the fixed kernels' four. */
  static constexpr int unroll = MAXT <= 4 ? MAXT : 1;
};


template <int MAXT>
__device__ __forceinline__ void
taps_of (Taps<MAXT> &t, AccelImageAxis axis, int x, int n)
{
  float w[MAXT];
  t.n = accel_image_axis_taps (axis, x, n, w, MAXT, &t.first);
#pragma unroll Taps<MAXT>::unroll
  for (int j = 0; j < MAXT; j++)
    t.w[j] = j < t.n ? w[j] : 0.0f;
}

/* Channel @c of plane @p through the taps: down each tap column first,
 * then along the row, as the CPU kernel sums. */
template <int MAXT>
__device__ __forceinline__ float
sample (const AccelCudaPlane &p, const Taps<MAXT> &tx, const Taps<MAXT> &ty, int c)
{
  float acc = 0.0f;
#pragma unroll Taps<MAXT>::unroll
  for (int j = 0; j < MAXT; j++)
    {
      if (j >= tx.n)
        break;
      int sx = accel_image_clampi (tx.first + j, 0, p.width - 1);
      float v = 0.0f;
#pragma unroll Taps<MAXT>::unroll
      for (int k = 0; k < MAXT; k++)
        {
          if (k >= ty.n)
            break;
          v += ty.w[k] * (float) accel_cuda_plane_get (p, sx, accel_image_clampi (ty.first + k, 0, p.height - 1), c);
        }
      acc += tx.w[j] * v;
    }
  return acc;
}

/* One thread: one destination column, ROWS_PER_THREAD rows of it (the
 * column's taps found once); whole 8-bit RGBA pixels stored as one word. */
template <int MAXT>
__global__ void
resample_kernel (const AccelCudaResample r)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * ROWS_PER_THREAD;
  const AccelCudaPlane &d = r.dst;
  if (x >= d.width || y0 >= d.height)
    return;

  Taps<MAXT> tx[ACCEL_CUDA_IMAGE_MAX_PLANES];
#pragma unroll
  for (int s = 0; s < ACCEL_CUDA_IMAGE_MAX_PLANES; s++)
    if (s < r.n_sources)
      taps_of (tx[s], r.ax[s], x, r.src[s].width);
  const bool packed = d.depth == 1 && d.channels == 4 && d.pixel_step == 4 && d.channel_step == 1
                   && ((uintptr_t) d.base & 3) == 0 && (d.stride & 3) == 0;

  for (int y = y0; y < y0 + ROWS_PER_THREAD && y < d.height; y++)
    {
      float res[ACCEL_CUDA_IMAGE_MAX_PLANES][4];
#pragma unroll
      for (int s = 0; s < ACCEL_CUDA_IMAGE_MAX_PLANES; s++)
        {
          if (s >= r.n_sources)
            break;
          const AccelCudaPlane &p = r.src[s];
          Taps<MAXT> ty;
          taps_of (ty, r.ay[s], y, p.height);
#pragma unroll
          for (int c = 0; c < 4; c++)
            res[s][c] = c < p.channels ? sample (p, tx[s], ty, c) : 0.0f;
        }

      int out[4];
      if (!r.convert)
        {
#pragma unroll
          for (int c = 0; c < 4; c++)
            out[c] = accel_image_quantize (res[0][c], d.maxv);
        }
      else
        {
          /* The components, picked without indexing the sums at run time. */
          float comp[4];
#pragma unroll
          for (int k = 0; k < 4; k++)
            {
              comp[k] = 0.0f;
#pragma unroll
              for (int s = 0; s < ACCEL_CUDA_IMAGE_MAX_PLANES; s++)
#pragma unroll
                for (int c = 0; c < 4; c++)
                  if (r.comp_source[k] == s && r.comp_channel[k] == c)
                    comp[k] = res[s][c];
            }
#pragma unroll
          for (int c = 0; c < 4; c++)
            {
              int take = c < d.channels ? r.take[c] : ACCEL_CUDA_TAKE_OPAQUE;
              float v;
              if (take < 3)
                v = r.t[take * 4] * comp[0] + r.t[take * 4 + 1] * comp[1] + r.t[take * 4 + 2] * comp[2]
                  + r.t[take * 4 + 3];
              else if (take == ACCEL_CUDA_TAKE_ALPHA)
                v = comp[3];
              else
                v = (float) d.maxv;
              out[c] = accel_image_quantize (v, d.maxv);
            }
        }
      if (packed)
        *(uint32_t *) (d.base + y * d.stride + (int64_t) x * 4)
          = (uint32_t) out[0] | (uint32_t) out[1] << 8 | (uint32_t) out[2] << 16 | (uint32_t) out[3] << 24;
      else
#pragma unroll
        for (int c = 0; c < 4; c++)
          if (c < d.channels)
            accel_cuda_plane_put (d, x, y, c, out[c]);
    }
}

extern "C" cudaError_t
accel_cuda_launch_resample (const AccelCudaResample *r, cudaStream_t stream)
{
  dim3 block (32, 8);
  dim3 grid = accel_cuda_image_grid (r->dst.width, (r->dst.height + ROWS_PER_THREAD - 1) / ROWS_PER_THREAD, block);
  /* Area and lanczos3 take more taps than the fixed kernels' four. */
  bool wide = false;
  for (int s = 0; s < r->n_sources; s++)
    wide = wide || accel_image_taps_needed (r->ax[s].method, r->ax[s].scale) > 4
                || accel_image_taps_needed (r->ay[s].method, r->ay[s].scale) > 4;
  if (wide)
    resample_kernel<ACCEL_IMAGE_MAX_TAPS><<<grid, block, 0, stream>>> (*r);
  else
    resample_kernel<4><<<grid, block, 0, stream>>> (*r);
  return cudaGetLastError ();
}
