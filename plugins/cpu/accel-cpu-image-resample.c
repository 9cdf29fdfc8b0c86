/* accel-cpu-image-resample.c: convert-color and resize on the CPU.
 *
 * Both are one resampler: every destination sample plane is made row by
 * row from the source sample planes it needs, each resampled at the
 * destination's sample positions (accel-image-sampling.h gives the map
 * and the taps): first down the columns (the taps of the row, summed in
 * order into a binary32 row of the source's width), then along the row
 * through a table of taps per destination sample. resize takes each
 * plane from its own source plane; convert-color then maps the channels
 * of a pixel through the colour transform. Rows are split among threads;
 * each row's result depends only on its own sums, so any split gives the
 * same bytes.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cpu-kernels.h"
#include "accel-cpu-image.h"

/* One source sample plane resampled for one destination plane. */
typedef struct {
  int plane;               /* index into Job.src */
  AccelImageAxis ax, ay;
  int taps_x, taps_y;
  int *idx;                /* [dst width × taps_x], clamped to the source */
  float *wx;               /* [dst width × taps_x] */
} Source;

/* What a destination channel takes: a row of the transform (0 to 2), the
 * source's alpha (3) or full opacity (4). */
enum { TAKE_ALPHA = 3, TAKE_OPAQUE = 4 };

typedef struct {
  AccelCpuPlane dst;
  int n_sources;
  Source sources[ACCEL_IMAGE_MAX_PLANES];
  int take[4];
} Target;

typedef struct {
  const AccelCpuExec *exec;
  int method;
  gboolean convert;        /* FALSE: resize, each target from its own plane */
  float t[12];
  AccelCpuPlane src[ACCEL_IMAGE_MAX_PLANES];
  /* Where source components 0 to 2 (Y, U, V or R, G, B) and alpha are: a
   * Source index of the current target and a channel; -1 when absent. */
  int comp_source[4], comp_channel[4];
  Target *target;
  int max_src_row;         /* floats in the widest source row */
  GError *error;
  gint failed;             /* atomic */
} Job;

static int
component_of (AccelImageChannel channel)
{
  switch (channel)
    {
    case ACCEL_IMAGE_CHANNEL_Y: case ACCEL_IMAGE_CHANNEL_R: return 0;
    case ACCEL_IMAGE_CHANNEL_U: case ACCEL_IMAGE_CHANNEL_G: return 1;
    case ACCEL_IMAGE_CHANNEL_V: case ACCEL_IMAGE_CHANNEL_B: return 2;
    default: return 3;
    }
}

static void
source_init (Source *s, int plane, AccelImageAxis ax, AccelImageAxis ay, int src_w, int dst_w)
{
  s->plane = plane;
  s->ax = ax;
  s->ay = ay;
  s->taps_x = MIN (accel_image_taps_needed (ax.method, ax.scale), ACCEL_IMAGE_MAX_TAPS);
  s->taps_y = MIN (accel_image_taps_needed (ay.method, ay.scale), ACCEL_IMAGE_MAX_TAPS);
  s->idx = g_new (int, (gsize) dst_w * s->taps_x);
  s->wx = g_new0 (float, (gsize) dst_w * s->taps_x);
  for (int x = 0; x < dst_w; x++)
    {
      float w[ACCEL_IMAGE_MAX_TAPS];
      int first = 0;
      int n = accel_image_axis_taps (ax, x, src_w, w, s->taps_x, &first);
      for (int j = 0; j < s->taps_x; j++)
        {
          s->idx[x * s->taps_x + j] = accel_image_clampi (first + MIN (j, n - 1), 0, src_w - 1);
          s->wx[x * s->taps_x + j] = j < n ? w[j] : 0.0f;
        }
    }
}

static void
source_clear (Source *s)
{
  g_clear_pointer (&s->idx, g_free);
  g_clear_pointer (&s->wx, g_free);
}

/* Source row @y resampled at the target's row into @res (dst width ×
 * channels); @tmp and @row hold a source row each. */
static void
resample_row (const Job *job, const Source *s, int dst_w, int y, float *tmp, float *row, float *res)
{
  const AccelCpuPlane *p = &job->src[s->plane];
  int ch = p->channels;
  gint64 n = (gint64) p->width * ch;
  float wv[ACCEL_IMAGE_MAX_TAPS];
  int first = 0;
  int taps = accel_image_axis_taps (s->ay, y, p->height, wv, ACCEL_IMAGE_MAX_TAPS, &first);

  /* Down the columns: sum in tap order. */
  for (int k = 0; k < taps; k++)
    {
      int sy = accel_image_clampi (first + k, 0, p->height - 1);
      float w = wv[k];
      if (p->packed)
        {
          const guint8 *r = p->base + sy * p->stride;
          if (k == 0)
            for (gint64 i = 0; i < n; i++)
              tmp[i] = 0.0f + w * (float) r[i];
          else
            for (gint64 i = 0; i < n; i++)
              tmp[i] += w * (float) r[i];
        }
      else
        {
          accel_cpu_plane_load_row (p, sy, row);
          if (k == 0)
            for (gint64 i = 0; i < n; i++)
              tmp[i] = 0.0f + w * row[i];
          else
            for (gint64 i = 0; i < n; i++)
              tmp[i] += w * row[i];
        }
    }

  /* Along the row. */
  for (int x = 0; x < dst_w; x++)
    {
      const int *idx = s->idx + (gsize) x * s->taps_x;
      const float *wx = s->wx + (gsize) x * s->taps_x;
      for (int c = 0; c < ch; c++)
        {
          float acc = 0.0f;
          for (int j = 0; j < s->taps_x; j++)
            acc += wx[j] * tmp[idx[j] * ch + c];
          res[x * ch + c] = acc;
        }
    }
}

static void
target_rows (gint64 begin, gint64 end, gpointer data)
{
  Job *job = data;
  const Target *tg = job->target;
  const AccelCpuPlane *d = &tg->dst;
  int dw = d->width;
  GError *error = NULL;
  gsize src_row = (gsize) job->max_src_row;
  float *scratch = accel_cpu_scratch_alloc (sizeof (float) * (2 * src_row + (gsize) dw * 4 * (tg->n_sources + 1)),
                                            &error);
  if (scratch == NULL)
    {
      if (g_atomic_int_compare_and_exchange (&job->failed, 0, 1))
        job->error = error;
      else
        g_error_free (error);
      return;
    }
  float *tmp = scratch, *row = tmp + src_row, *out = row + src_row;
  float *res[ACCEL_IMAGE_MAX_PLANES];
  for (int s = 0; s < tg->n_sources; s++)
    res[s] = out + (gsize) dw * 4 * (s + 1);

  for (gint64 y = begin; y < end; y++)
    {
      for (int s = 0; s < tg->n_sources; s++)
        resample_row (job, &tg->sources[s], dw, (int) y, tmp, row, res[s]);

      if (!job->convert)
        {
          accel_cpu_plane_store_row (d, (int) y, res[0]);
          continue;
        }
      const float *t = job->t;
      for (int x = 0; x < dw; x++)
        {
          float c[4];
          for (int k = 0; k < 4; k++)
            {
              int s = job->comp_source[k];
              c[k] = s < 0 ? 0.0f : res[s][x * job->src[tg->sources[s].plane].channels + job->comp_channel[k]];
            }
          for (int ch = 0; ch < d->channels; ch++)
            {
              int take = tg->take[ch];
              float v;
              if (take < 3)
                v = t[take * 4] * c[0] + t[take * 4 + 1] * c[1] + t[take * 4 + 2] * c[2] + t[take * 4 + 3];
              else if (take == TAKE_ALPHA)
                v = c[3];
              else
                v = (float) d->maxv;
              out[x * d->channels + ch] = v;
            }
        }
      accel_cpu_plane_store_row (d, (int) y, out);
    }
  accel_cpu_scratch_free (scratch);
}

static gboolean
run_targets (Job *job, Target *targets, int n_targets, GError **error)
{
  for (int i = 0; i < n_targets && !job->failed; i++)
    {
      job->target = &targets[i];
      /* Rows of one target in chunks of a few hundred thousand samples. */
      gint64 per_row = (gint64) targets[i].dst.width * 4 * 4 + job->max_src_row;
      accel_cpu_parallel_for (job->exec, targets[i].dst.height, MAX (1, 65536 / per_row), target_rows, job);
    }
  for (int i = 0; i < n_targets; i++)
    for (int s = 0; s < targets[i].n_sources; s++)
      source_clear (&targets[i].sources[s]);
  if (job->failed)
    {
      g_propagate_error (error, job->error);
      return FALSE;
    }
  return TRUE;
}

static void
job_init_sources (Job *job, AccelBuffer *buffer, const AccelImageLayout *ls)
{
  guint8 *data = accel_buffer_get_data (buffer);
  job->max_src_row = 0;
  for (guint s = 0; s < ls->n_samples; s++)
    {
      accel_cpu_plane_init (&job->src[s], data, &ls->samples[s]);
      job->max_src_row = MAX (job->max_src_row, ls->samples[s].width * ls->samples[s].channels);
    }
}

/* resize */

static gboolean
resize_run (AccelOp *op, gpointer context, GError **error)
{
  AccelResize *self = ACCEL_RESIZE (op);
  AccelImageLayout ls, ld;
  Job job = { .exec = context, .method = self->method, .convert = FALSE };
  Target targets[ACCEL_IMAGE_MAX_PLANES] = { 0 };

  accel_cpu_image_layout (&self->src, NULL, &ls);
  accel_cpu_image_layout (&self->dst, NULL, &ld);
  job_init_sources (&job, self->src.buffer, &ls);
  guint8 *dst = accel_buffer_get_data (self->dst.buffer);
  for (guint s = 0; s < ld.n_samples; s++)
    {
      const AccelImageSamples *a = &ls.samples[s], *b = &ld.samples[s];
      accel_cpu_plane_init (&targets[s].dst, dst, b);
      targets[s].n_sources = 1;
      source_init (&targets[s].sources[0], (int) s, accel_image_axis_resize (a->width, b->width, job.method),
                   accel_image_axis_resize (a->height, b->height, job.method), a->width, b->width);
    }
  return run_targets (&job, targets, (int) ld.n_samples, error);
}

/* convert-color */

static gboolean
siting_cosited (AccelChromaSiting siting, int axis)
{
  if (siting == ACCEL_CHROMA_SITING_COSITED)
    return TRUE;
  return siting == ACCEL_CHROMA_SITING_MPEG2 && axis == 0;
}

static gboolean
convert_run (AccelOp *op, gpointer context, GError **error)
{
  AccelConvertColor *self = ACCEL_CONVERT_COLOR (op);
  AccelImageLayout ls, ld;
  Job job = { .exec = context, .method = self->method, .convert = TRUE };
  Target targets[ACCEL_IMAGE_MAX_PLANES] = { 0 };
  int src_comp_plane[4] = { -1, -1, -1, -1 }, src_comp_channel[4] = { 0 };

  accel_cpu_image_layout (&self->src, NULL, &ls);
  accel_cpu_image_layout (&self->dst, NULL, &ld);
  job_init_sources (&job, self->src.buffer, &ls);
  accel_image_color_transform (self->src.format, self->src_matrix, self->src_range, self->dst.format,
                               self->dst_matrix, self->dst_range, job.t);
  for (guint s = 0; s < ls.n_samples; s++)
    for (int c = 0; c < ls.samples[s].channels; c++)
      {
        int k = component_of (ls.samples[s].channel[c]);
        src_comp_plane[k] = (int) s;
        src_comp_channel[k] = c;
      }

  guint8 *dst = accel_buffer_get_data (self->dst.buffer);
  /* Each target has its own sources; convert_rows reads components
   * through comp_source, which is per target, so targets run one by one
   * with the mapping set for each. */
  gboolean ok = TRUE;
  for (guint t = 0; t < ld.n_samples && ok; t++)
    {
      const AccelImageSamples *b = &ld.samples[t];
      Target *tg = &targets[t];
      gboolean need[ACCEL_IMAGE_MAX_PLANES] = { FALSE };
      accel_cpu_plane_init (&tg->dst, dst, b);
      for (int c = 0; c < b->channels; c++)
        {
          int k = component_of (b->channel[c]);
          if (k < 3)
            {
              tg->take[c] = k;
              for (int j = 0; j < 3; j++)
                if (job.t[k * 4 + j] != 0.0f && src_comp_plane[j] >= 0)
                  need[src_comp_plane[j]] = TRUE;
            }
          else if (src_comp_plane[3] >= 0)
            {
              tg->take[c] = TAKE_ALPHA;
              need[src_comp_plane[3]] = TRUE;
            }
          else
            tg->take[c] = TAKE_OPAQUE;
        }
      for (int k = 0; k < 4; k++)
        job.comp_source[k] = -1;
      for (guint s = 0; s < ls.n_samples; s++)
        {
          if (!need[s])
            continue;
          const AccelImageSamples *a = &ls.samples[s];
          AccelImageAxis ax = accel_image_axis_convert (ls.width, ld.width, a->sub_x,
                                                        accel_image_site_half (a->sub_x, siting_cosited (self->src_chroma_siting, 0)),
                                                        b->sub_x,
                                                        accel_image_site_half (b->sub_x, siting_cosited (self->dst_chroma_siting, 0)),
                                                        job.method);
          AccelImageAxis ay = accel_image_axis_convert (ls.height, ld.height, a->sub_y,
                                                        accel_image_site_half (a->sub_y, siting_cosited (self->src_chroma_siting, 1)),
                                                        b->sub_y,
                                                        accel_image_site_half (b->sub_y, siting_cosited (self->dst_chroma_siting, 1)),
                                                        job.method);
          int idx = tg->n_sources++;
          source_init (&tg->sources[idx], (int) s, ax, ay, a->width, b->width);
          for (int k = 0; k < 4; k++)
            if (src_comp_plane[k] == (int) s)
              {
                job.comp_source[k] = idx;
                job.comp_channel[k] = src_comp_channel[k];
              }
        }
      ok = run_targets (&job, tg, 1, error);
    }
  for (guint t = 0; t < ld.n_samples; t++)
    for (int s = 0; s < targets[t].n_sources; s++)
      source_clear (&targets[t].sources[s]);
  return ok;
}

static const AccelKernelVTable resize_kernel = { .run = resize_run };
static const AccelKernelVTable convert_kernel = { .run = convert_run };

void
accel_cpu_register_image_resample (AccelPlugin *plugin)
{
  accel_plugin_register_kernel (plugin, "resize", "cpu", ACCEL_CPU_KERNEL_RANK, &resize_kernel);
  accel_plugin_register_kernel (plugin, "convert-color", "cpu", ACCEL_CPU_KERNEL_RANK, &convert_kernel);
}
