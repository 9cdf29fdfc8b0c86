/* accel-cuda-image-kernels.h: the launchers of the image op kernels
 * (accel-cuda-image-resample.cu, -filter.cu, -warp.cu), in plain C free of
 * GLib so nvcc compiles them without it. accel-cuda-image.c fills the
 * descriptors from the ops (with the same accel-image-sampling.h maps the
 * CPU kernels use). Each launcher only enqueues on @stream.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stdint.h>
#include <cuda_runtime_api.h>
#include <accel-image-sampling.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One sample plane in device memory (AccelImageSamples with its address). */
typedef struct {
  uint8_t *base;           /* channel 0 of sample (0, 0) */
  int64_t stride;
  int width, height;
  int channels;
  int pixel_step, channel_step;
  int depth, shift, maxv;
} AccelCudaPlane;

#define ACCEL_CUDA_IMAGE_MAX_PLANES 3

/* What a destination channel takes in convert-color: a row of the
 * transform (0 to 2), the source's alpha (3), full opacity (4). */
enum { ACCEL_CUDA_TAKE_ALPHA = 3, ACCEL_CUDA_TAKE_OPAQUE = 4 };

/* One destination sample plane of resize (@convert 0: channel for channel
 * from source 0) or convert-color. */
typedef struct {
  AccelCudaPlane dst;
  int n_sources;
  AccelCudaPlane src[ACCEL_CUDA_IMAGE_MAX_PLANES];
  AccelImageAxis ax[ACCEL_CUDA_IMAGE_MAX_PLANES], ay[ACCEL_CUDA_IMAGE_MAX_PLANES];
  int convert;
  float t[12];
  int comp_source[4], comp_channel[4];   /* Y/R, U/G, V/B, A: a source and its channel, or -1 */
  int take[4];
  /* Filled by accel_cuda_launch_resample () from @take and @t: destination
   * channel c is ((rows[c][0] Y + rows[c][1] U) + rows[c][2] V) +
   * rows[c][3], then + rows[c][4] A. */
  float rows[4][5];
  /* And from the axes: bit 2 s set where every column of source plane s
   * takes one sample at weight 1 (its other taps weigh 0), bit 2 s + 1
   * the same for its rows. */
  int one_tap;
} AccelCudaResample;

cudaError_t accel_cuda_launch_resample (const AccelCudaResample *r, cudaStream_t stream);

#define ACCEL_CUDA_FILTER_MAX_TAPS 255

/* filter on one sample plane: separable (@kx, @ky on the host, or
 * @dkx, @dky in device memory) or 2-D (@dk2, [ny][nx], device). */
typedef struct {
  AccelCudaPlane src, dst;
  int separable;
  int nx, ny;
  float kx[ACCEL_CUDA_FILTER_MAX_TAPS], ky[ACCEL_CUDA_FILTER_MAX_TAPS];
  const float *dkx, *dky, *dk2;
  int border;
  float border_value, scale, delta;
} AccelCudaFilter;

/* @workspace: room for width × height × channels floats, used when the
 * kernel is too large for a shared-memory tile (NULL otherwise). */
cudaError_t accel_cuda_launch_filter (const AccelCudaFilter *f, float *workspace, cudaStream_t stream);
size_t accel_cuda_filter_workspace (const AccelCudaFilter *f);

/* morphology on one sample plane: the element's row j covers columns
 * [@first[j], @last[j]] (empty where first > last); @tmp a plane of the
 * source's geometry for open and close (else unused). @operation is an
 * AccelMorphologyOp. */
typedef struct {
  AccelCudaPlane src, dst, tmp;
  int kw, kh;
  uint8_t first[ACCEL_CUDA_FILTER_MAX_TAPS], last[ACCEL_CUDA_FILTER_MAX_TAPS];
  int operation;
} AccelCudaMorphology;

cudaError_t accel_cuda_launch_morphology (const AccelCudaMorphology *m, cudaStream_t stream);

/* warp-affine (@perspective 0) or warp-perspective of one sample plane. */
typedef struct {
  AccelCudaPlane src, dst;
  float m[9];
  int perspective;
  int method;
  int border;
  float border_value;
  int sub_x, sub_y;
} AccelCudaWarp;

cudaError_t accel_cuda_launch_warp (const AccelCudaWarp *w, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
