/* accel-cpu-conv.c: conv2d, its backward-data and backward-filter ops, and
 * pool2d, written directly from the definitions: f32, f16 and bf16 stored,
 * f64 accumulated. f16 and bf16 operands are widened to f32 copies first
 * and the result rounded back once, to nearest even.
 *
 * These are the oracles of the cuDNN kernels: plain loops, in parallel
 * over images and channels, not tuned.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include "accel-cpu-kernels.h"

typedef struct {
  gboolean nhwc;
  gint64 n, c, h, w;       /* images */
  gint64 k, cg, r, s;      /* k filters of cg channels (one group's share) */
  gint64 kg;               /* filters per group */
  gint64 p, q;             /* output size */
  gint64 sh, sw, ph, pw, dh, dw;
} Geo;

static void
geo_init (Geo *g, const AccelConv2dParams *params, AccelBuffer *x, AccelBuffer *w, AccelBuffer *y)
{
  const AccelShape *sx = accel_buffer_get_shape (x);
  const AccelShape *sw = accel_buffer_get_shape (w);
  const AccelShape *sy = accel_buffer_get_shape (y);
  gboolean nhwc = params->layout == ACCEL_CONV_LAYOUT_NHWC;

  g->nhwc = nhwc;
  g->n = accel_shape_get_dim (sx, 0);
  g->c = accel_shape_get_dim (sx, nhwc ? 3 : 1);
  g->h = accel_shape_get_dim (sx, nhwc ? 1 : 2);
  g->w = accel_shape_get_dim (sx, nhwc ? 2 : 3);
  g->k = accel_shape_get_dim (sw, 0);
  g->cg = accel_shape_get_dim (sw, nhwc ? 3 : 1);
  g->r = accel_shape_get_dim (sw, nhwc ? 1 : 2);
  g->s = accel_shape_get_dim (sw, nhwc ? 2 : 3);
  g->kg = g->k / params->groups;
  g->p = accel_shape_get_dim (sy, nhwc ? 1 : 2);
  g->q = accel_shape_get_dim (sy, nhwc ? 2 : 3);
  g->sh = params->stride_h;
  g->sw = params->stride_w;
  g->ph = params->pad_h;
  g->pw = params->pad_w;
  g->dh = params->dilation_h;
  g->dw = params->dilation_w;
}

static inline gint64
img_at (const Geo *g, gint64 n, gint64 c, gint64 h, gint64 w)
{
  return g->nhwc ? ((n * g->h + h) * g->w + w) * g->c + c : ((n * g->c + c) * g->h + h) * g->w + w;
}

static inline gint64
out_at (const Geo *g, gint64 n, gint64 k, gint64 p, gint64 q)
{
  return g->nhwc ? ((n * g->p + p) * g->q + q) * g->k + k : ((n * g->k + k) * g->p + p) * g->q + q;
}

static inline gint64
filt_at (const Geo *g, gint64 k, gint64 c, gint64 r, gint64 s)
{
  return g->nhwc ? ((k * g->r + r) * g->s + s) * g->cg + c : ((k * g->cg + c) * g->r + r) * g->s + s;
}

/* An f32 view of a buffer: the buffer itself for f32, else a widened copy. */
typedef struct {
  float *data;
  gboolean owned;
} F32View;

static gboolean
view_in (F32View *v, gpointer context, AccelBuffer *buffer, GError **error)
{
  AccelDType dt = accel_buffer_get_dtype (buffer);
  gint64 n = accel_buffer_get_n_elements (buffer);
  v->owned = dt != ACCEL_DTYPE_F32;
  if (!v->owned)
    {
      v->data = accel_buffer_get_data (buffer);
      return TRUE;
    }
  v->data = accel_cpu_scratch_alloc (MAX (n, 1) * sizeof (float), error);
  if (v->data == NULL)
    return FALSE;
  accel_cpu_to_f32 (context, dt, accel_buffer_get_data (buffer), v->data, n);
  return TRUE;
}

/* For an output: no copy in, the result is rounded back by view_out_finish(). */
static gboolean
view_out (F32View *v, AccelBuffer *buffer, GError **error)
{
  gint64 n = accel_buffer_get_n_elements (buffer);
  v->owned = accel_buffer_get_dtype (buffer) != ACCEL_DTYPE_F32;
  v->data = v->owned ? accel_cpu_scratch_alloc (MAX (n, 1) * sizeof (float), error)
                     : accel_buffer_get_data (buffer);
  return v->data != NULL;
}

static void
view_out_finish (F32View *v, gpointer context, AccelBuffer *buffer)
{
  if (v->owned && v->data != NULL)
    accel_cpu_from_f32 (context, accel_buffer_get_dtype (buffer), v->data,
                        accel_buffer_get_data (buffer), accel_buffer_get_n_elements (buffer));
}

static void
view_clear (F32View *v)
{
  if (v->owned)
    accel_cpu_scratch_free (v->data);
  v->data = NULL;
  v->owned = FALSE;
}

/* The two operands: forward x and w; backward-data dy and w; backward-filter
 * x and dy. */
typedef struct {
  Geo g;
  const float *a;
  const float *b;
  const float *bias;       /* nullable */
  float *out;
} ConvJob;

/* Forward: one (image, filter) pair per item. */
static void
forward_range (gint64 begin, gint64 end, gpointer data)
{
  ConvJob *job = data;
  const Geo *g = &job->g;

  for (gint64 item = begin; item < end; item++)
    {
      gint64 n = item / g->k, k = item % g->k;
      gint64 c0 = (k / g->kg) * g->cg;
      for (gint64 p = 0; p < g->p; p++)
        for (gint64 q = 0; q < g->q; q++)
          {
            double acc = job->bias ? job->bias[k] : 0.0;
            for (gint64 ci = 0; ci < g->cg; ci++)
              for (gint64 r = 0; r < g->r; r++)
                {
                  gint64 h = p * g->sh - g->ph + r * g->dh;
                  if (h < 0 || h >= g->h)
                    continue;
                  for (gint64 s = 0; s < g->s; s++)
                    {
                      gint64 w = q * g->sw - g->pw + s * g->dw;
                      if (w < 0 || w >= g->w)
                        continue;
                      acc += (double) job->a[img_at (g, n, c0 + ci, h, w)] * job->b[filt_at (g, k, ci, r, s)];
                    }
                }
            job->out[out_at (g, n, k, p, q)] = (float) acc;
          }
    }
}

/* Backward data: one (image, channel) pair per item; each input element
 * gathers the outputs whose windows cover it. */
static void
backward_data_range (gint64 begin, gint64 end, gpointer data)
{
  ConvJob *job = data;
  const Geo *g = &job->g;

  for (gint64 item = begin; item < end; item++)
    {
      gint64 n = item / g->c, c = item % g->c;
      gint64 group = c / g->cg, ci = c % g->cg;
      for (gint64 h = 0; h < g->h; h++)
        for (gint64 w = 0; w < g->w; w++)
          {
            double acc = 0.0;
            for (gint64 r = 0; r < g->r; r++)
              {
                gint64 th = h + g->ph - r * g->dh;
                if (th < 0 || th % g->sh != 0 || th / g->sh >= g->p)
                  continue;
                for (gint64 s = 0; s < g->s; s++)
                  {
                    gint64 tw = w + g->pw - s * g->dw;
                    if (tw < 0 || tw % g->sw != 0 || tw / g->sw >= g->q)
                      continue;
                    for (gint64 k = group * g->kg; k < (group + 1) * g->kg; k++)
                      acc += (double) job->a[out_at (g, n, k, th / g->sh, tw / g->sw)]
                             * job->b[filt_at (g, k, ci, r, s)];
                  }
              }
            job->out[img_at (g, n, c, h, w)] = (float) acc;
          }
    }
}

/* Backward filter: one filter per item. */
static void
backward_filter_range (gint64 begin, gint64 end, gpointer data)
{
  ConvJob *job = data;
  const Geo *g = &job->g;

  for (gint64 k = begin; k < end; k++)
    {
      gint64 c0 = (k / g->kg) * g->cg;
      for (gint64 ci = 0; ci < g->cg; ci++)
        for (gint64 r = 0; r < g->r; r++)
          for (gint64 s = 0; s < g->s; s++)
            {
              double acc = 0.0;
              for (gint64 n = 0; n < g->n; n++)
                for (gint64 p = 0; p < g->p; p++)
                  {
                    gint64 h = p * g->sh - g->ph + r * g->dh;
                    if (h < 0 || h >= g->h)
                      continue;
                    for (gint64 q = 0; q < g->q; q++)
                      {
                        gint64 w = q * g->sw - g->pw + s * g->dw;
                        if (w < 0 || w >= g->w)
                          continue;
                        acc += (double) job->a[img_at (g, n, c0 + ci, h, w)]
                               * job->b[out_at (g, n, k, p, q)];
                      }
                  }
              job->out[filt_at (g, k, ci, r, s)] = (float) acc;
            }
    }
}

/* Runs @func over @n_items with f32 views of the operands and the output;
 * @x, @w, @y play the forward roles for the geometry. */
static gboolean
conv_run (gpointer context,
          const AccelConv2dParams *params,
          AccelBuffer *x, AccelBuffer *w, AccelBuffer *y,   /* the forward roles */
          AccelBuffer *in_a,
          AccelBuffer *in_b,
          AccelBuffer *bias,
          AccelBuffer *out,
          gint64 (*n_items) (const Geo *),
          AccelCpuRangeFunc func,
          GError **error)
{
  ConvJob job = { 0 };
  F32View va = { 0 }, vb = { 0 }, vbias = { 0 }, vout = { 0 };
  gboolean ok = FALSE;

  geo_init (&job.g, params, x, w, y);
  if (!view_in (&va, context, in_a, error)
      || !view_in (&vb, context, in_b, error)
      || (bias != NULL && !view_in (&vbias, context, bias, error))
      || !view_out (&vout, out, error))
    goto out;

  job.a = va.data;
  job.b = vb.data;
  job.bias = vbias.data;
  job.out = vout.data;
  accel_cpu_parallel_for (context, n_items (&job.g), 1, func, &job);
  view_out_finish (&vout, context, out);
  ok = TRUE;

out:
  view_clear (&va);
  view_clear (&vb);
  view_clear (&vbias);
  view_clear (&vout);
  return ok;
}

static gint64
items_forward (const Geo *g)
{
  return g->n * g->k;
}

static gint64
items_backward_data (const Geo *g)
{
  return g->n * g->c;
}

static gint64
items_backward_filter (const Geo *g)
{
  return g->k;
}

gboolean
accel_cpu_conv2d_run (AccelOp *op, gpointer context, GError **error)
{
  AccelConv2d *self = ACCEL_CONV2D (op);
  return conv_run (context, &self->params, self->x, self->w, self->y,
                   self->x, self->w, self->bias, self->y,
                   items_forward, forward_range, error);
}

gboolean
accel_cpu_conv2d_backward_data_run (AccelOp *op, gpointer context, GError **error)
{
  AccelConv2dBackwardData *self = ACCEL_CONV2D_BACKWARD_DATA (op);
  return conv_run (context, &self->params, self->dx, self->w, self->dy,
                   self->dy, self->w, NULL, self->dx,
                   items_backward_data, backward_data_range, error);
}

gboolean
accel_cpu_conv2d_backward_filter_run (AccelOp *op, gpointer context, GError **error)
{
  AccelConv2dBackwardFilter *self = ACCEL_CONV2D_BACKWARD_FILTER (op);
  return conv_run (context, &self->params, self->x, self->dw, self->dy,
                   self->x, self->dy, NULL, self->dw,
                   items_backward_filter, backward_filter_range, error);
}

/* pool2d */

typedef struct {
  AccelPool2d *op;
  gboolean nhwc;
  gint64 n, c, h, w, p, q;
  const float *x;
  float *y;
} PoolJob;

static void
pool_range (gint64 begin, gint64 end, gpointer data)
{
  PoolJob *job = data;
  const AccelPool2d *op = job->op;
  gboolean is_max = op->mode == ACCEL_POOL_MAX;

  for (gint64 item = begin; item < end; item++)
    {
      gint64 n = item / job->c, c = item % job->c;
      for (gint64 p = 0; p < job->p; p++)
        for (gint64 q = 0; q < job->q; q++)
          {
            double acc = is_max ? -INFINITY : 0.0;
            gint64 count = 0;
            for (gint64 i = 0; i < op->window_h; i++)
              {
                gint64 h = p * op->stride_h - op->pad_h + i;
                if (h < 0 || h >= job->h)
                  continue;
                for (gint64 j = 0; j < op->window_w; j++)
                  {
                    gint64 w = q * op->stride_w - op->pad_w + j;
                    if (w < 0 || w >= job->w)
                      continue;
                    gint64 at = job->nhwc ? ((n * job->h + h) * job->w + w) * job->c + c
                                          : ((n * job->c + c) * job->h + h) * job->w + w;
                    double v = job->x[at];
                    /* NaN propagates through max, as cuDNN's default does. */
                    if (is_max)
                      acc = (v > acc || isnan (v)) && !isnan (acc) ? v : acc;
                    else
                      acc += v;
                    count++;
                  }
              }
            if (!is_max)
              acc /= op->count_include_pad ? (double) op->window_h * op->window_w : (double) count;
            gint64 at = job->nhwc ? ((n * job->p + p) * job->q + q) * job->c + c
                                  : ((n * job->c + c) * job->p + p) * job->q + q;
            job->y[at] = (float) acc;
          }
    }
}

gboolean
accel_cpu_pool2d_run (AccelOp *op, gpointer context, GError **error)
{
  AccelPool2d *self = ACCEL_POOL2D (op);
  const AccelShape *sx = accel_buffer_get_shape (self->x);
  const AccelShape *sy = accel_buffer_get_shape (self->y);
  gboolean nhwc = self->layout == ACCEL_CONV_LAYOUT_NHWC;
  F32View vx = { 0 }, vy = { 0 };
  PoolJob job = {
    self, nhwc,
    accel_shape_get_dim (sx, 0), accel_shape_get_dim (sx, nhwc ? 3 : 1),
    accel_shape_get_dim (sx, nhwc ? 1 : 2), accel_shape_get_dim (sx, nhwc ? 2 : 3),
    accel_shape_get_dim (sy, nhwc ? 1 : 2), accel_shape_get_dim (sy, nhwc ? 2 : 3),
    NULL, NULL,
  };
  gboolean ok = FALSE;

  if (view_in (&vx, context, self->x, error) && view_out (&vy, self->y, error))
    {
      job.x = vx.data;
      job.y = vy.data;
      accel_cpu_parallel_for (context, job.n * job.c, 1, pool_range, &job);
      view_out_finish (&vy, context, self->y);
      ok = TRUE;
    }
  view_clear (&vx);
  view_clear (&vy);
  return ok;
}
