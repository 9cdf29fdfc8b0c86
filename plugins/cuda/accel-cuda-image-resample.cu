/* accel-cuda-image-resample.cu: resize and convert-color on the GPU.
 *
 * One thread per destination sample. Each source plane the sample needs is
 * sampled through the axis maps and taps of accel-image-sampling.h (the
 * CPU kernel's), summed in the CPU kernel's order: down each tap column
 * first, then along the row, in binary32 without fused multiply-adds
 * (this library is built with -fmad=false), so the results are the CPU's
 * to the bit but where sinf() differs (lanczos3). convert-color then maps
 * the components through the same affine transform.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-image.cuh"

template <int MAXT>
__global__ void
resample_kernel (const AccelCudaResample r)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= r.dst.width || y >= r.dst.height)
    return;

  float res[ACCEL_CUDA_IMAGE_MAX_PLANES][4];
  for (int s = 0; s < r.n_sources; s++)
    {
      const AccelCudaPlane &p = r.src[s];
      float wx[MAXT], wy[MAXT];
      int fx, fy;
      int nx = accel_image_axis_taps (r.ax[s], x, p.width, wx, MAXT, &fx);
      int ny = accel_image_axis_taps (r.ay[s], y, p.height, wy, MAXT, &fy);
      for (int c = 0; c < p.channels; c++)
        {
          float acc = 0.0f;
          for (int j = 0; j < nx; j++)
            {
              int sx = accel_image_clampi (fx + j, 0, p.width - 1);
              float v = 0.0f;
              for (int k = 0; k < ny; k++)
                v += wy[k] * (float) accel_cuda_plane_get (p, sx, accel_image_clampi (fy + k, 0, p.height - 1), c);
              acc += wx[j] * v;
            }
          res[s][c] = acc;
        }
    }

  const AccelCudaPlane &d = r.dst;
  if (!r.convert)
    {
      for (int c = 0; c < d.channels; c++)
        accel_cuda_plane_put (d, x, y, c, accel_image_quantize (res[0][c], d.maxv));
      return;
    }
  float comp[4];
  for (int k = 0; k < 4; k++)
    comp[k] = r.comp_source[k] < 0 ? 0.0f : res[r.comp_source[k]][r.comp_channel[k]];
  for (int c = 0; c < d.channels; c++)
    {
      int take = r.take[c];
      float v;
      if (take < 3)
        v = r.t[take * 4] * comp[0] + r.t[take * 4 + 1] * comp[1] + r.t[take * 4 + 2] * comp[2] + r.t[take * 4 + 3];
      else if (take == ACCEL_CUDA_TAKE_ALPHA)
        v = comp[3];
      else
        v = (float) d.maxv;
      accel_cuda_plane_put (d, x, y, c, accel_image_quantize (v, d.maxv));
    }
}

extern "C" cudaError_t
accel_cuda_launch_resample (const AccelCudaResample *r, cudaStream_t stream)
{
  dim3 block (32, 8);
  dim3 grid = accel_cuda_image_grid (r->dst.width, r->dst.height, block);
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
