/* accel-cpu-image.h: what the CPU kernels of the image ops share: a view
 * of one sample plane of an image in memory and its rows as binary32.
 *
 * The CPU kernels are the oracle of the CUDA ones: both take their
 * coordinates and weights from accel-image-sampling.h and sum in the same
 * order in binary32, so the two agree to the last bit but where a library
 * sinf() differs (lanczos3).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <accel.h>
#include <accel-image-sampling.h>
#include "accel-cpu-parallel.h"

G_BEGIN_DECLS

/* One sample plane of an image in host memory. */
typedef struct {
  guint8 *base;          /* channel 0 of sample (0, 0) */
  gint64 stride;
  int width;
  int height;
  int channels;
  int pixel_step;
  int channel_step;
  int depth;
  int shift;
  int maxv;              /* the largest code value */
  gboolean packed;       /* 8-bit channels one after another: a row is width × channels bytes */
} AccelCpuPlane;

static inline void
accel_cpu_plane_init (AccelCpuPlane *p, guint8 *data, const AccelImageSamples *s)
{
  p->base = data + s->offset;
  p->stride = s->stride;
  p->width = s->width;
  p->height = s->height;
  p->channels = s->channels;
  p->pixel_step = s->pixel_step;
  p->channel_step = s->channel_step;
  p->depth = s->depth;
  p->shift = s->shift;
  p->maxv = (int) ((1u << s->bits) - 1);
  p->packed = s->depth == 1 && s->channel_step == 1 && s->pixel_step == s->channels;
}

static inline int
accel_cpu_plane_get (const AccelCpuPlane *p, int x, int y, int c)
{
  const guint8 *at = p->base + y * p->stride + (gint64) x * p->pixel_step + c * p->channel_step;
  if (p->depth == 1)
    return *at;
  return (at[0] | (at[1] << 8)) >> p->shift;
}

static inline void
accel_cpu_plane_put (const AccelCpuPlane *p, int x, int y, int c, int v)
{
  guint8 *at = p->base + y * p->stride + (gint64) x * p->pixel_step + c * p->channel_step;
  if (p->depth == 1)
    *at = (guint8) v;
  else
    {
      guint w = (guint) v << p->shift;
      at[0] = (guint8) w;
      at[1] = (guint8) (w >> 8);
    }
}

/* Row @y as width × channels binary32 values. */
static inline void
accel_cpu_plane_load_row (const AccelCpuPlane *p, int y, float *out)
{
  const guint8 *row = p->base + y * p->stride;
  if (p->packed)
    {
      gint64 n = (gint64) p->width * p->channels;
      for (gint64 i = 0; i < n; i++)
        out[i] = row[i];
      return;
    }
  for (int x = 0; x < p->width; x++)
    for (int c = 0; c < p->channels; c++)
      out[x * p->channels + c] = (float) accel_cpu_plane_get (p, x, y, c);
}

/* Quantises width × channels values (rounded half up, saturated) into row @y. */
static inline void
accel_cpu_plane_store_row (const AccelCpuPlane *p, int y, const float *in)
{
  guint8 *row = p->base + y * p->stride;
  if (p->packed)
    {
      gint64 n = (gint64) p->width * p->channels, i = 0;
#ifdef __SSE2__
      /* accel_image_quantize, 16 at a time: max (v, 0) takes 0 for NaN as
       * the scalar code does; the packs cannot saturate after the clamp. */
      const __m128 zero = _mm_setzero_ps (), top = _mm_set1_ps (255.0f), half = _mm_set1_ps (0.5f);
      for (; i + 16 <= n; i += 16)
        {
          __m128i q[4];
          for (int k = 0; k < 4; k++)
            {
              __m128 v = _mm_min_ps (_mm_max_ps (_mm_loadu_ps (in + i + 4 * k), zero), top);
              q[k] = _mm_cvttps_epi32 (_mm_add_ps (v, half));
            }
          __m128i lo = _mm_packs_epi32 (q[0], q[1]), hi = _mm_packs_epi32 (q[2], q[3]);
          _mm_storeu_si128 ((__m128i *) (row + i), _mm_packus_epi16 (lo, hi));
        }
#endif
      for (; i < n; i++)
        row[i] = (guint8) accel_image_quantize (in[i], 255);
      return;
    }
  for (int x = 0; x < p->width; x++)
    for (int c = 0; c < p->channels; c++)
      accel_cpu_plane_put (p, x, y, c, accel_image_quantize (in[x * p->channels + c], p->maxv));
}

/* The layouts of an op's images, after validate (which already checked them). */
static inline void
accel_cpu_image_layout (const AccelImage *image, const AccelImage *geometry, AccelImageLayout *layout)
{
  const AccelImage *g = geometry ? geometry : image;
  gboolean ok = accel_image_layout_init (layout, g->format, g->width, g->height, image->stride,
                                         image->uv_stride, image->uv_offset, image->v_offset, NULL);
  g_assert (ok);
}

G_END_DECLS
