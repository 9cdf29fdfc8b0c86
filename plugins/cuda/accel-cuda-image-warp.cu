/* accel-cuda-image-warp.cu: warp-affine and warp-perspective on the GPU:
 * one thread per destination sample, mapped and sampled through
 * accel-image-sampling.h and summed in the CPU kernel's order (taps along
 * each source row, then those sums down the column; no fused
 * multiply-adds), so the results are the CPU kernel's to the bit.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-image.cuh"

__global__ void
warp_kernel (const AccelCudaWarp w)
{
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w.dst.width || y >= w.dst.height)
    return;
  float sx, sy;
  int inside = accel_image_warp_point (w.m, w.perspective, w.sub_x, w.sub_y, x, y, w.src.width, w.src.height,
                                       &sx, &sy);
  float wx[4], wy[4];
  int fx = 0, fy = 0, nx = 0, ny = 0;
  if (inside)
    {
      nx = accel_image_warp_taps (w.method, sx, wx, &fx);
      ny = accel_image_warp_taps (w.method, sy, wy, &fy);
    }
  for (int c = 0; c < w.dst.channels; c++)
    {
      float acc = w.border_value;
      if (inside)
        {
          acc = 0.0f;
          for (int j = 0; j < ny; j++)
            {
              float r = 0.0f;
              for (int i = 0; i < nx; i++)
                r += wx[i] * accel_cuda_plane_bordered (w.src, fx + i, fy + j, c, w.border, w.border_value);
              acc += wy[j] * r;
            }
        }
      accel_cuda_plane_put (w.dst, x, y, c, accel_image_quantize (acc, w.dst.maxv));
    }
}

extern "C" cudaError_t
accel_cuda_launch_warp (const AccelCudaWarp *w, cudaStream_t stream)
{
  dim3 block (32, 8);
  warp_kernel<<<accel_cuda_image_grid (w->dst.width, w->dst.height, block), block, 0, stream>>> (*w);
  return cudaGetLastError ();
}
