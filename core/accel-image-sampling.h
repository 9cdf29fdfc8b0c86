/* accel-image-sampling.h: the sampling arithmetic of the image ops (resize,
 * convert-color, warps): where a destination pixel lies in the source, and
 * the interpolation weights around it.
 *
 * Header-only, with no dependency beyond the C library, so the CPU kernels
 * (the oracle) and the CUDA kernels compute the very same binary32 values
 * (every function is `__host__ __device__` under nvcc; both sides are built
 * without contraction into fused multiply-adds). Include it directly:
 * `#include <accel-image-sampling.h>`. It is not part of the introspected API.
 *
 * Conventions: pixel centres are at integer coordinates; a destination
 * pixel `x` of a resize by `scale = src_size / dst_size` samples source
 * coordinate `(x + 0.5) scale - 0.5` (half-pixel centres, OpenCV's
 * INTER_LINEAR and PyTorch's `align_corners=False`). Taps are listed from
 * `first` upwards; readers clamp each index to `[0, n - 1]`, which is what
 * "edge samples repeated" means.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#ifndef __GI_SCANNER__

#include <math.h>

#if defined(__CUDACC__)
#define ACCEL_IMAGE_FN static __host__ __device__ __forceinline__
#else
#define ACCEL_IMAGE_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The values of AccelInterpolation. */
enum {
  ACCEL_IMAGE_NEAREST, ACCEL_IMAGE_BILINEAR, ACCEL_IMAGE_BICUBIC, ACCEL_IMAGE_AREA, ACCEL_IMAGE_LANCZOS3,
};

/* The most taps of one axis the kernels keep; accel_image_taps_needed()
 * stays within it for scale factors up to ACCEL_IMAGE_MAX_SHRINK. */
#define ACCEL_IMAGE_MAX_TAPS 64
#define ACCEL_IMAGE_MAX_SHRINK 8

ACCEL_IMAGE_FN int
accel_image_clampi (int v, int lo, int hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

/* Keys' cubic convolution kernel with a = -0.75 (OpenCV, PyTorch). */
ACCEL_IMAGE_FN float
accel_image_cubic (float x)
{
  const float a = -0.75f;
  x = fabsf (x);
  if (x <= 1.0f)
    return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f;
  if (x < 2.0f)
    return ((a * x - 5.0f * a) * x + 8.0f * a) * x - 4.0f * a;
  return 0.0f;
}

ACCEL_IMAGE_FN float
accel_image_lanczos3 (float x)
{
  const float pi = 3.14159265358979323846f;
  x = fabsf (x);
  if (x < 1e-6f)
    return 1.0f;
  if (x >= 3.0f)
    return 0.0f;
  float px = pi * x;
  return 3.0f * sinf (px) * sinf (px / 3.0f) / (px * px);
}

/* The source coordinate of destination index @x under @scale. */
ACCEL_IMAGE_FN float
accel_image_source_coord (int x, float scale)
{
  return ((float) x + 0.5f) * scale - 0.5f;
}

/* How many taps @method may need along an axis shrunk by @scale (source
 * size over destination size; below 1 when growing). */
ACCEL_IMAGE_FN int
accel_image_taps_needed (int method, float scale)
{
  float s = scale > 1.0f ? scale : 1.0f;
  switch (method)
    {
    case ACCEL_IMAGE_NEAREST: return 1;
    case ACCEL_IMAGE_BILINEAR: return 2;
    case ACCEL_IMAGE_BICUBIC: return 4;
    case ACCEL_IMAGE_AREA: return (int) ceilf (s) + 2;
    default: return 2 * (int) ceilf (3.0f * s) + 2;
    }
}

/* The taps of @method at source coordinate @c on an axis of @n samples
 * shrunk by @scale: their weights in @w (at most @max of them) and the
 * index of the first in *@first. Returns how many. Weights sum to 1. */
ACCEL_IMAGE_FN int
accel_image_taps (int method, float c, float scale, int n, float *w, int max, int *first)
{
  switch (method)
    {
    case ACCEL_IMAGE_NEAREST:
      *first = accel_image_clampi ((int) floorf (c + 0.5f), 0, n - 1);
      w[0] = 1.0f;
      return 1;
    case ACCEL_IMAGE_BILINEAR:
      {
        float cc = c < 0.0f ? 0.0f : c > (float) (n - 1) ? (float) (n - 1) : c;
        float i0 = floorf (cc);
        float f = cc - i0;
        *first = (int) i0;
        w[0] = 1.0f - f;
        w[1] = f;
        return 2;
      }
    case ACCEL_IMAGE_BICUBIC:
      {
        float i0 = floorf (c);
        float f = c - i0;
        *first = (int) i0 - 1;
        w[0] = accel_image_cubic (f + 1.0f);
        w[1] = accel_image_cubic (f);
        w[2] = accel_image_cubic (1.0f - f);
        w[3] = accel_image_cubic (2.0f - f);
        return 4;
      }
    case ACCEL_IMAGE_AREA:
      {
        /* The box the destination pixel covers, in source edge coordinates
         * (narrower than a sample when growing); past the edges it covers
         * repeated edge samples, like every method's taps. */
        float half = 0.5f * scale;
        float lo = c + 0.5f - half, hi = c + 0.5f + half;
        int i0 = (int) floorf (lo), i1 = (int) ceilf (hi) - 1;
        if (i1 < i0)
          i1 = i0;
        if (i1 - i0 + 1 > max)
          i1 = i0 + max - 1;
        float total = 0.0f;
        for (int i = i0; i <= i1; i++)
          {
            float a = (float) i > lo ? (float) i : lo;
            float b = (float) (i + 1) < hi ? (float) (i + 1) : hi;
            w[i - i0] = b > a ? b - a : 0.0f;
            total += w[i - i0];
          }
        for (int i = i0; i <= i1; i++)
          w[i - i0] /= total;
        *first = i0;
        return i1 - i0 + 1;
      }
    default:
      {
        float s = scale > 1.0f ? scale : 1.0f;
        float radius = 3.0f * s;
        int i0 = (int) ceilf (c - radius), i1 = (int) floorf (c + radius);
        if (i1 - i0 + 1 > max)
          {
            int excess = i1 - i0 + 1 - max;
            i0 += excess / 2;
            i1 = i0 + max - 1;
          }
        float total = 0.0f;
        for (int i = i0; i <= i1; i++)
          {
            w[i - i0] = accel_image_lanczos3 (((float) i - c) / s);
            total += w[i - i0];
          }
        for (int i = i0; i <= i1; i++)
          w[i - i0] /= total;
        *first = i0;
        return i1 - i0 + 1;
      }
    }
}

/* How one axis of a destination sample plane samples one source sample
 * plane: destination index `x` lies at source coordinate `(num_a x +
 * num_b) / den`, a ratio of integers (so that nearest breaks ties
 * exactly, as integer arithmetic does; the other methods take it as
 * `(num_a x + num_b) inv_den` in binary64, rounded to binary32); the taps
 * are those of @method there, widened by @scale. */
typedef struct {
  long long num_a;
  long long num_b;
  long long den;
  double inv_den;
  float scale;
  int method;
} AccelImageAxis;

/* resize: one plane of @dst_n samples made from one of @src_n:
 * `(x + 0.5) src_n / dst_n - 0.5`. */
ACCEL_IMAGE_FN AccelImageAxis
accel_image_axis_resize (int src_n, int dst_n, int method)
{
  AccelImageAxis axis = { 2LL * src_n, (long long) src_n - dst_n, 2LL * dst_n, 1.0 / (2.0 * dst_n),
                          (float) ((double) src_n / (double) dst_n), method };
  return axis;
}

/* convert-color: images @src_full and @dst_full pixels along the axis; the
 * source plane subsampled by @src_sub with its first sample at luma
 * coordinate @src_half / 2 (0: cosited, 1: halfway), the destination plane
 * likewise. Destination sample `x` lies at luma coordinate `dst_sub x +
 * dst_half / 2` of the destination, so at `(that + 0.5) src_full /
 * dst_full - 0.5` of the source, and on the source plane's grid at `(that
 * - src_half / 2) / src_sub`. A destination subsampled more than the
 * source (chroma made from finer samples) takes the mean over each
 * sample's footprint: area, whatever @method (so the chroma of a centred
 * siting is the mean of 2 samples, of a cosited one [1 2 1] / 4, as
 * GStreamer downsamples). */
ACCEL_IMAGE_FN AccelImageAxis
accel_image_axis_convert (int src_full, int dst_full, int src_sub, int src_half, int dst_sub, int dst_half,
                          int method)
{
  AccelImageAxis axis = { 2LL * dst_sub * src_full,
                          (long long) (dst_half + 1) * src_full - dst_full - (long long) src_half * dst_full,
                          2LL * dst_full * src_sub, 1.0 / (2.0 * dst_full * src_sub),
                          (float) ((double) dst_sub * src_full / ((double) src_sub * dst_full)),
                          dst_sub > src_sub ? ACCEL_IMAGE_AREA : method };
  return axis;
}

/* Whether the chroma of an axis subsampled by @sub is cosited (0) or
 * halfway (1) between luma samples, in the half units of the axis maps. */
ACCEL_IMAGE_FN int
accel_image_site_half (int sub, int cosited)
{
  return sub == 1 || cosited ? 0 : 1;
}

ACCEL_IMAGE_FN float
accel_image_axis_coord (AccelImageAxis axis, int x)
{
  return (float) ((double) (axis.num_a * x + axis.num_b) * axis.inv_den);
}

/* floor (@n / @d) for @d above 0 */
ACCEL_IMAGE_FN long long
accel_image_floor_div (long long n, long long d)
{
  long long q = n / d;
  return q * d > n ? q - 1 : q;
}

/* The taps of destination index @x along @axis, on a source axis of @n
 * samples: their weights in @w (at most @max) and the index of the first
 * in *@first. Returns how many. Weights sum to 1. */
ACCEL_IMAGE_FN int
accel_image_axis_taps (AccelImageAxis axis, int x, int n, float *w, int max, int *first)
{
  if (axis.method == ACCEL_IMAGE_NEAREST)
    {
      /* floor (c + 0.5), exactly */
      long long i = accel_image_floor_div (2 * (axis.num_a * x + axis.num_b) + axis.den, 2 * axis.den);
      *first = i < 0 ? 0 : i >= n ? n - 1 : (int) i;
      w[0] = 1.0f;
      return 1;
    }
  return accel_image_taps (axis.method, accel_image_axis_coord (axis, x), axis.scale, n, w, max, first);
}

/* The taps of a warp's @method (nearest, bilinear or bicubic) at
 * coordinate @c, not clamped: past the edge they read the border. */
ACCEL_IMAGE_FN int
accel_image_warp_taps (int method, float c, float *w, int *first)
{
  float i0 = floorf (c);
  float f = c - i0;
  switch (method)
    {
    case ACCEL_IMAGE_NEAREST:
      *first = (int) floorf (c + 0.5f);
      w[0] = 1.0f;
      return 1;
    case ACCEL_IMAGE_BILINEAR:
      *first = (int) i0;
      w[0] = 1.0f - f;
      w[1] = f;
      return 2;
    default:
      *first = (int) i0 - 1;
      w[0] = accel_image_cubic (f + 1.0f);
      w[1] = accel_image_cubic (f);
      w[2] = accel_image_cubic (1.0f - f);
      w[3] = accel_image_cubic (2.0f - f);
      return 4;
    }
}

/* Maps the centre of sample (@x, @y) of a destination plane subsampled by
 * @sub_x, @sub_y through the inverse map @m (row-major 3×3; the last row
 * 0, 0, 1 unless @perspective) onto the source plane of @w × @h samples,
 * into (*@sx, *@sy). Returns 0 where the sample takes the border value
 * whatever the border mode: behind the camera, beyond 10^7 samples
 * outside (where binary32 has no fraction left), or not a number. */
ACCEL_IMAGE_FN int
accel_image_warp_point (const float *m, int perspective, int sub_x, int sub_y, int x, int y, int w, int h,
                        float *sx, float *sy)
{
  const float far = 1e7f;
  float X = sub_x == 1 ? (float) x : (float) sub_x * ((float) x + 0.5f) - 0.5f;
  float Y = sub_y == 1 ? (float) y : (float) sub_y * ((float) y + 0.5f) - 0.5f;
  float u = m[0] * X + m[1] * Y + m[2];
  float v = m[3] * X + m[4] * Y + m[5];
  if (perspective)
    {
      float q = m[6] * X + m[7] * Y + m[8];
      if (!(q > 0.0f))
        return 0;
      u = u / q;
      v = v / q;
    }
  *sx = sub_x == 1 ? u : (u + 0.5f) / (float) sub_x - 0.5f;
  *sy = sub_y == 1 ? v : (v + 0.5f) / (float) sub_y - 0.5f;
  return *sx > -far && *sx < (float) w + far && *sy > -far && *sy < (float) h + far;
}

/* Rounds @v half up to an integer in [0, @maxv] (NaN to 0), without
 * branches, so that row loops vectorise. */
ACCEL_IMAGE_FN int
accel_image_quantize (float v, int maxv)
{
  v = v > 0.0f ? v : 0.0f;
  v = v < (float) maxv ? v : (float) maxv;
  return (int) (v + 0.5f);
}

/* Where the border mode @mode (an AccelBorderMode) reads index @i of an
 * axis of @n samples: the index, or -1 for the constant. */
ACCEL_IMAGE_FN int
accel_image_border_index (int i, int n, int mode)
{
  if (i >= 0 && i < n)
    return i;
  if (mode == 0)   /* replicate */
    return i < 0 ? 0 : n - 1;
  if (mode == 1)   /* reflect-101 */
    {
      if (n == 1)
        return 0;
      int period = 2 * (n - 1);
      i = i % period;
      if (i < 0)
        i += period;
      return i < n ? i : period - i;
    }
  return -1;
}

#ifdef __cplusplus
}
#endif

#endif /* __GI_SCANNER__ */
