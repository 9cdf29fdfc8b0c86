/* accel-cuda-image.c: the `cuda` plugin's kernels of the image ops
 * (resize, convert-color, filter, morphology, warp-affine,
 * warp-perspective; accel-cuda-plugin.c registers them): each fills the
 * plain descriptors of accel-cuda-image-kernels.h from the op, one sample
 * plane at a time, and enqueues on the lane's stream.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <accel-image-plan.h>
#include "accel-config.h"
#include "accel-cuda.h"
#include "accel-cuda-image.h"
#include "accel-cuda-image-kernels.h"

G_STATIC_ASSERT ((int) ACCEL_IMAGE_TAKE_ALPHA == ACCEL_CUDA_TAKE_ALPHA);
G_STATIC_ASSERT ((int) ACCEL_IMAGE_TAKE_OPAQUE == ACCEL_CUDA_TAKE_OPAQUE);
G_STATIC_ASSERT ((int) ACCEL_INTERPOLATION_AREA == ACCEL_IMAGE_AREA);
G_STATIC_ASSERT ((int) ACCEL_FILTER_MAX_KSIZE == ACCEL_CUDA_FILTER_MAX_TAPS);

static void
plane_of (AccelCudaPlane *p, AccelBuffer *buffer, const AccelImageSamples *s)
{
  p->base = (uint8_t *) accel_buffer_get_data (buffer) + s->offset;
  p->stride = s->stride;
  p->width = s->width;
  p->height = s->height;
  p->channels = s->channels;
  p->pixel_step = s->pixel_step;
  p->channel_step = s->channel_step;
  p->depth = s->depth;
  p->shift = s->shift;
  p->maxv = (int) ((1u << s->bits) - 1);
}

static void
layouts (const AccelImage *src, const AccelImage *dst, gboolean dst_geometry, AccelImageLayout *ls,
         AccelImageLayout *ld)
{
  const AccelImage *g = dst_geometry ? dst : src;
  gboolean ok = accel_image_get_layout (src, ls, NULL)
             && accel_image_layout_init (ld, g->format, g->width, g->height, dst->stride, dst->uv_stride,
                                         dst->uv_offset, dst->v_offset, NULL);
  g_assert (ok);   /* validate checked both */
}

/* resize and convert-color */

static gboolean
run_plan (const AccelImagePlan *plan, AccelBuffer *src, AccelBuffer *dst, gpointer context, GError **error)
{
  for (guint t = 0; t < plan->dst.n_samples; t++)
    {
      const AccelImageTarget *p = &plan->targets[t];
      AccelCudaResample r;
      memset (&r, 0, sizeof r);
      plane_of (&r.dst, dst, &plan->dst.samples[t]);
      r.n_sources = p->n_sources;
      for (int s = 0; s < p->n_sources; s++)
        {
          plane_of (&r.src[s], src, &plan->src.samples[p->source[s]]);
          r.ax[s] = p->ax[s];
          r.ay[s] = p->ay[s];
        }
      r.convert = plan->convert;
      memcpy (r.t, plan->transform, sizeof r.t);
      memcpy (r.comp_source, p->comp_source, sizeof r.comp_source);
      memcpy (r.comp_channel, p->comp_channel, sizeof r.comp_channel);
      memcpy (r.take, p->take, sizeof r.take);
      if (!accel_cuda_check (accel_cuda_launch_resample (&r, accel_cuda_lane_get_stream (context)),
                             plan->convert ? "convert-color kernel" : "resize kernel", error))
        return FALSE;
    }
  return TRUE;
}

/* resize and convert-color alike: their plans differ, not their runs. */
gboolean
accel_cuda_resample_run (AccelOp *op, gpointer context, GError **error)
{
  AccelImagePlan plan;
  AccelBuffer *src, *dst;
  accel_image_plan_of (op, &plan, &src, &dst);
  return run_plan (&plan, src, dst, context, error);
}

/* filter */

gboolean
accel_cuda_filter_run (AccelOp *op, gpointer context, GError **error)
{
  AccelFilter *self = ACCEL_FILTER (op);
  AccelImageLayout ls, ld;
  g_autofree AccelCudaFilter *f = g_new0 (AccelCudaFilter, 1);
  guint nx = 0, ny = 0;
  cudaStream_t stream = accel_cuda_lane_get_stream (context);

  layouts (&self->src, &self->dst, FALSE, &ls, &ld);
  f->border = self->border;
  f->border_value = (float) self->border_value;
  f->scale = (float) self->scale;
  f->delta = (float) self->delta;
  if (accel_filter_get_separable_kernel (self, f->kx, &nx, f->ky, &ny))
    f->separable = TRUE;
  else if (self->kind == ACCEL_FILTER_SEPARABLE)
    {
      f->separable = TRUE;
      f->dkx = accel_buffer_get_data (self->kernel);
      f->dky = accel_buffer_get_data (self->kernel_y);
      nx = (guint) accel_buffer_get_n_elements (self->kernel);
      ny = (guint) accel_buffer_get_n_elements (self->kernel_y);
    }
  else
    {
      const AccelShape *shape = accel_buffer_get_shape (self->kernel);
      f->dk2 = accel_buffer_get_data (self->kernel);
      ny = (guint) accel_shape_get_dim (shape, 0);
      nx = (guint) accel_shape_get_dim (shape, 1);
    }
  f->nx = (int) nx;
  f->ny = (int) ny;

  for (guint s = 0; s < ls.n_samples; s++)
    {
      plane_of (&f->src, self->src.buffer, &ls.samples[s]);
      plane_of (&f->dst, self->dst.buffer, &ld.samples[s]);
      gsize bytes = accel_cuda_filter_workspace (f);
      float *workspace = bytes ? accel_cuda_lane_alloc_workspace (context, bytes, error) : NULL;
      if (bytes && workspace == NULL)
        return FALSE;
      if (!accel_cuda_check (accel_cuda_launch_filter (f, workspace, stream), "filter kernel", error))
        return FALSE;
    }
  return TRUE;
}

/* morphology */

gboolean
accel_cuda_morphology_run (AccelOp *op, gpointer context, GError **error)
{
  AccelMorphology *self = ACCEL_MORPHOLOGY (op);
  AccelImageLayout ls, ld;
  g_autofree AccelCudaMorphology *m = g_new0 (AccelCudaMorphology, 1);
  g_autofree guint8 *mask = g_malloc (ACCEL_FILTER_MAX_KSIZE * ACCEL_FILTER_MAX_KSIZE);

  layouts (&self->src, &self->dst, FALSE, &ls, &ld);
  accel_morphology_get_element (self, mask, &m->kw, &m->kh);
  /* Each row of the element is one run of columns (rectangles and
   * OpenCV's ellipses both). */
  for (int j = 0; j < m->kh; j++)
    {
      int first = m->kw, last = -1;
      for (int i = 0; i < m->kw; i++)
        if (mask[j * m->kw + i])
          {
            first = MIN (first, i);
            last = i;
          }
      m->first[j] = (uint8_t) MIN (first, 255);
      m->last[j] = last < 0 ? 0 : (uint8_t) last;
      if (last < 0)
        m->first[j] = 1;   /* empty: first > last */
    }
  m->operation = self->operation;
  gboolean two = self->operation == ACCEL_MORPHOLOGY_OPEN || self->operation == ACCEL_MORPHOLOGY_CLOSE;

  for (guint s = 0; s < ls.n_samples; s++)
    {
      const AccelImageSamples *a = &ls.samples[s];
      plane_of (&m->src, self->src.buffer, a);
      plane_of (&m->dst, self->dst.buffer, &ld.samples[s]);
      if (two)
        {
          /* The intermediate: the source plane's samples, packed. */
          gsize row = (gsize) a->width * a->channels * a->depth;
          uint8_t *tmp = accel_cuda_lane_alloc_workspace (context, row * a->height, error);
          if (tmp == NULL)
            return FALSE;
          m->tmp = m->src;
          m->tmp.base = tmp;
          m->tmp.stride = (int64_t) row;
          m->tmp.pixel_step = a->channels * a->depth;
          m->tmp.channel_step = a->depth;
          m->tmp.shift = 0;
        }
      if (!accel_cuda_check (accel_cuda_launch_morphology (m, accel_cuda_lane_get_stream (context)),
                             "morphology kernel", error))
        return FALSE;
    }
  return TRUE;
}

/* warps */

static gboolean
warp_run (AccelImage *src, AccelImage *dst, const double *matrix, gboolean perspective, AccelInterpolation method,
          AccelBorderMode border, double border_value, gpointer context, GError **error)
{
  AccelImageLayout ls, ld;
  AccelCudaWarp w;

  memset (&w, 0, sizeof w);
  layouts (src, dst, TRUE, &ls, &ld);
  for (int i = 0; i < 9; i++)
    w.m[i] = i < 6 || perspective ? (float) matrix[i] : (i == 8 ? 1.0f : 0.0f);
  w.perspective = perspective;
  w.method = method;
  w.border = border;
  w.border_value = (float) border_value;
  for (guint s = 0; s < ls.n_samples; s++)
    {
      plane_of (&w.src, src->buffer, &ls.samples[s]);
      plane_of (&w.dst, dst->buffer, &ld.samples[s]);
      w.sub_x = ls.samples[s].sub_x;
      w.sub_y = ls.samples[s].sub_y;
      if (!accel_cuda_check (accel_cuda_launch_warp (&w, accel_cuda_lane_get_stream (context)), "warp kernel", error))
        return FALSE;
    }
  return TRUE;
}

gboolean
accel_cuda_warp_affine_run (AccelOp *op, gpointer context, GError **error)
{
  AccelWarpAffine *self = ACCEL_WARP_AFFINE (op);
  return warp_run (&self->src, &self->dst, self->matrix, FALSE, self->method, self->border, self->border_value,
                   context, error);
}

gboolean
accel_cuda_warp_perspective_run (AccelOp *op, gpointer context, GError **error)
{
  AccelWarpPerspective *self = ACCEL_WARP_PERSPECTIVE (op);
  return warp_run (&self->src, &self->dst, self->matrix, TRUE, self->method, self->border, self->border_value,
                   context, error);
}
