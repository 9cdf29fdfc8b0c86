/* accel-cuda-image.cuh: what the image op kernels share on the device:
 * reading and writing samples of an AccelCudaPlane, as the CPU kernels'
 * accel-cpu-image.h does on the host.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-cuda-image-kernels.h"

__device__ __forceinline__ int
accel_cuda_plane_get (const AccelCudaPlane &p, int x, int y, int c)
{
  const uint8_t *at = p.base + y * p.stride + (int64_t) x * p.pixel_step + c * p.channel_step;
  if (p.depth == 1)
    return *at;
  return *(const uint16_t *) at >> p.shift;
}

__device__ __forceinline__ void
accel_cuda_plane_put (const AccelCudaPlane &p, int x, int y, int c, int v)
{
  uint8_t *at = p.base + y * p.stride + (int64_t) x * p.pixel_step + c * p.channel_step;
  if (p.depth == 1)
    *at = (uint8_t) v;
  else
    *(uint16_t *) at = (uint16_t) (v << p.shift);
}

/* Whether @p's pixels of 8-bit samples are whole: its @ch channels
 * adjacent and every pixel aligned to its @ch bytes (@ch 1, 2 or 4), so
 * that one load reads a pixel. */
__host__ __device__ __forceinline__ bool
whole_pixels (const AccelCudaPlane &p, int ch)
{
  return p.channel_step == 1 && p.pixel_step == ch && p.channels == ch
      && (((uintptr_t) p.base | (uintptr_t) p.stride) & (ch - 1)) == 0;
}

/* Whether @p holds 8-bit samples of 4 channels packed in 32-bit words. */
__host__ __device__ __forceinline__ bool
packed_u8x4 (const AccelCudaPlane &p)
{
  return p.depth == 1 && whole_pixels (p, 4);
}

/* Channel @c at (@x, @y) through the border @mode (an AccelBorderMode),
 * or @value where it reads the constant. */
__device__ __forceinline__ float
accel_cuda_plane_bordered (const AccelCudaPlane &p, int x, int y, int c, int mode, float value)
{
  int bx = accel_image_border_index (x, p.width, mode);
  int by = accel_image_border_index (y, p.height, mode);
  if (bx < 0 || by < 0)
    return value;
  return (float) accel_cuda_plane_get (p, bx, by, c);
}

static inline dim3
accel_cuda_image_grid (int width, int height, dim3 block)
{
  return dim3 ((unsigned) ((width + block.x - 1) / block.x), (unsigned) ((height + block.y - 1) / block.y));
}
