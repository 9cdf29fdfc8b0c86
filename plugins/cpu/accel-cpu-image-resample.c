/* accel-cpu-image-resample.c: convert-color and resize on the CPU.
 *
 * Both are one resampler driven by the op's plan (accel-image-plan.h):
 * every destination sample plane is made row by row from the source
 * sample planes it needs, each resampled at the destination's sample
 * positions (accel-image-sampling.h gives the map and the taps): first
 * down the columns (the taps of the row, summed in order into a binary32
 * row of the source's width), then along the row through a table of taps
 * per destination sample. resize takes each plane from its own source
 * plane; convert-color then maps the channels of a pixel through the
 * colour transform. Rows are split among threads; each row's result
 * depends only on its own sums, so any split gives the same bytes.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cpu-kernels.h"
#include "accel-cpu-image.h"
#include <accel-image-plan.h>

/* One source sample plane resampled for one destination plane: the tap
 * table along the row, per destination sample. */
typedef struct {
  int plane;               /* index into Job.src */
  AccelImageAxis ay;
  int taps_x;
  int *idx;                /* [dst width × taps_x], clamped to the source */
  float *wx;               /* [dst width × taps_x] */
} Source;

typedef struct {
  AccelCpuPlane dst;
  const AccelImageTarget *plan;
  Source sources[ACCEL_IMAGE_MAX_PLANES];
} Target;

typedef struct {
  const AccelCpuExec *exec;
  const AccelImagePlan *plan;
  AccelCpuPlane src[ACCEL_IMAGE_MAX_PLANES];
  Target *target;
  int max_src_row;         /* floats in the widest source row */
  GError *error;
  gint failed;             /* atomic */
} Job;

static void
source_init (Source *s, int plane, AccelImageAxis ax, AccelImageAxis ay, int src_w, int dst_w)
{
  s->plane = plane;
  s->ay = ay;
  s->taps_x = MIN (accel_image_taps_needed (ax.method, ax.scale), ACCEL_IMAGE_MAX_TAPS);
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

/* Along a row: @res[x][c] = the taps of x summed in order over @tmp. The
 * common tap and channel counts get loops of their own. */
static inline void
along_row_n (const int *restrict idx, const float *restrict wx, int taps, int ch, const float *restrict tmp,
             float *restrict res, int dst_w)
{
  for (int x = 0; x < dst_w; x++)
    {
      const int *ix = idx + (gsize) x * taps;
      const float *w = wx + (gsize) x * taps;
      for (int c = 0; c < ch; c++)
        {
          float acc = 0.0f;
          for (int j = 0; j < taps; j++)
            acc += w[j] * tmp[ix[j] * ch + c];
          res[x * ch + c] = acc;
        }
    }
}

static void
along_row (const Source *s, int ch, const float *tmp, float *res, int dst_w)
{
#define CASE(T, C) \
  if (s->taps_x == (T) && ch == (C)) \
    return along_row_n (s->idx, s->wx, (T), (C), tmp, res, dst_w);
  CASE (1, 1) CASE (1, 2) CASE (1, 3) CASE (1, 4)
  CASE (2, 1) CASE (2, 2) CASE (2, 3) CASE (2, 4)
  CASE (4, 1) CASE (4, 2) CASE (4, 4)
#undef CASE
  along_row_n (s->idx, s->wx, s->taps_x, ch, tmp, res, dst_w);
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
  along_row (s, ch, tmp, res, dst_w);
}

/* One destination channel of a row: @out[x × @out_step] from the
 * components at @comp[k][x × @step[k]]. The common steps get loops of
 * their own, which the compiler vectorises. */
static inline void
combine_n (const float *m, const float *const *comp, int s0, int s1, int s2, int s3, float *restrict out, int out_step,
           int n)
{
  const float *c0 = comp[0], *c1 = comp[1], *c2 = comp[2], *c3 = comp[3];
  for (int x = 0; x < n; x++)
    out[x * out_step] = m[0] * c0[x * s0] + m[1] * c1[x * s1] + m[2] * c2[x * s2] + m[3] * c3[x * s3] + m[4];
}

static void
combine (const float *m, const float *const *comp, const int *step, float *out, int out_step, int n)
{
  /* NV12 and I420 to RGBA/BGRA (Y, then U and V interleaved or apart, no alpha). */
  if (step[0] == 1 && step[1] == 2 && step[2] == 2 && step[3] == 0 && out_step == 4)
    return combine_n (m, comp, 1, 2, 2, 0, out, 4, n);
  if (step[0] == 1 && step[1] == 1 && step[2] == 1 && step[3] == 0 && out_step == 4)
    return combine_n (m, comp, 1, 1, 1, 0, out, 4, n);
  combine_n (m, comp, step[0], step[1], step[2], step[3], out, out_step, n);
}

/* YUV to 8-bit RGBA or BGRA (the bench's conversion and the commonest):
 * 4 pixels at a time, combined, quantised and packed straight into the
 * row, the arithmetic in the scalar path's order. Returns how many
 * pixels it made (all of them, or none where it does not apply). */
static int
combine_rgba8 (float coef[4][5], const float *const *comp, const int *step, const AccelCpuPlane *d, int y, int n)
{
#ifdef __SSE2__
  gboolean nv12 = step[0] == 1 && step[1] == 2 && step[2] == 2 && comp[2] == comp[1] + 1;
  gboolean planar = step[0] == 1 && step[1] == 1 && step[2] == 1;
  if (!d->packed || d->channels != 4 || step[3] != 0 || !(nv12 || planar))
    return 0;
  guint8 *row = d->base + y * d->stride;
  const __m128 zero = _mm_setzero_ps (), top = _mm_set1_ps (255.0f), half = _mm_set1_ps (0.5f);
  const __m128 c3 = _mm_set1_ps (comp[3][0]);
  __m128 m[4][5];
  for (int ch = 0; ch < 4; ch++)
    for (int k = 0; k < 5; k++)
      m[ch][k] = _mm_set1_ps (coef[ch][k]);
  int x = 0;
  for (; x + 4 <= n; x += 4)
    {
      __m128 c0 = _mm_loadu_ps (comp[0] + x), c1, c2;
      if (nv12)
        {
          __m128 a = _mm_loadu_ps (comp[1] + 2 * x), b = _mm_loadu_ps (comp[1] + 2 * x + 4);
          c1 = _mm_shuffle_ps (a, b, _MM_SHUFFLE (2, 0, 2, 0));
          c2 = _mm_shuffle_ps (a, b, _MM_SHUFFLE (3, 1, 3, 1));
        }
      else
        {
          c1 = _mm_loadu_ps (comp[1] + x);
          c2 = _mm_loadu_ps (comp[2] + x);
        }
      __m128 o[4];
      for (int ch = 0; ch < 4; ch++)
        {
          __m128 v = _mm_add_ps (_mm_mul_ps (m[ch][0], c0), _mm_mul_ps (m[ch][1], c1));
          v = _mm_add_ps (v, _mm_mul_ps (m[ch][2], c2));
          v = _mm_add_ps (v, _mm_mul_ps (m[ch][3], c3));
          v = _mm_add_ps (v, m[ch][4]);
          o[ch] = _mm_add_ps (_mm_min_ps (_mm_max_ps (v, zero), top), half);
        }
      _MM_TRANSPOSE4_PS (o[0], o[1], o[2], o[3]);
      __m128i lo = _mm_packs_epi32 (_mm_cvttps_epi32 (o[0]), _mm_cvttps_epi32 (o[1]));
      __m128i hi = _mm_packs_epi32 (_mm_cvttps_epi32 (o[2]), _mm_cvttps_epi32 (o[3]));
      _mm_storeu_si128 ((__m128i *) (row + 4 * x), _mm_packus_epi16 (lo, hi));
    }
  for (; x < n; x++)
    {
      float c[4] = { comp[0][x], comp[1][x * step[1]], comp[2][x * step[2]], comp[3][0] };
      for (int ch = 0; ch < 4; ch++)
        {
          const float *k = coef[ch];
          row[4 * x + ch] = (guint8) accel_image_quantize (k[0] * c[0] + k[1] * c[1] + k[2] * c[2] + k[3] * c[3] + k[4],
                                                           255);
        }
    }
  return n;
#else
  return 0;
#endif
}

static void
target_rows (gint64 begin, gint64 end, gpointer data)
{
  Job *job = data;
  const Target *tg = job->target;
  const AccelImageTarget *plan = tg->plan;
  const AccelCpuPlane *d = &tg->dst;
  int dw = d->width;
  GError *error = NULL;
  gsize src_row = (gsize) job->max_src_row;
  float *scratch = accel_cpu_scratch_alloc (sizeof (float) * (2 * src_row + (gsize) dw * 4 * (plan->n_sources + 1)),
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
  for (int s = 0; s < plan->n_sources; s++)
    res[s] = out + (gsize) dw * 4 * (s + 1);

  /* Each destination channel as (c0, c1, c2, alpha, 1) weighted: the
   * transform's row, alpha, or full opacity. The extra terms add exact
   * zeros, so the sums are those of the plain expressions. */
  float coef[4][5] = { { 0 } };
  const float *t = job->plan->transform;
  for (int ch = 0; ch < d->channels; ch++)
    {
      int take = plan->take[ch];
      if (take < 3)
        {
          coef[ch][0] = t[take * 4], coef[ch][1] = t[take * 4 + 1], coef[ch][2] = t[take * 4 + 2];
          coef[ch][4] = t[take * 4 + 3];
        }
      else if (take == ACCEL_IMAGE_TAKE_ALPHA)
        coef[ch][3] = 1.0f;
      else
        coef[ch][4] = (float) d->maxv;
    }
  static const float zero = 0.0f;
  const float *comp[4];
  int comp_step[4];
  for (int k = 0; k < 4; k++)
    {
      int s = plan->comp_source[k];
      comp[k] = s < 0 ? &zero : res[s] + plan->comp_channel[k];
      comp_step[k] = s < 0 ? 0 : job->src[plan->source[s]].channels;
    }

  for (gint64 y = begin; y < end; y++)
    {
      for (int s = 0; s < plan->n_sources; s++)
        resample_row (job, &tg->sources[s], dw, (int) y, tmp, row, res[s]);

      if (!job->plan->convert)
        {
          accel_cpu_plane_store_row (d, (int) y, res[0]);
          continue;
        }
      int done = combine_rgba8 (coef, comp, comp_step, d, (int) y, dw);
      if (done == dw)
        continue;
      for (int ch = 0; ch < d->channels; ch++)
        combine (coef[ch], comp, comp_step, out + ch, d->channels, dw);
      accel_cpu_plane_store_row (d, (int) y, out);
    }
  accel_cpu_scratch_free (scratch);
}

/* Every destination sample plane of @plan, rows split among threads. */
static gboolean
run_plan (const AccelCpuExec *exec, const AccelImagePlan *plan, AccelBuffer *src, AccelBuffer *dst, GError **error)
{
  Job job = { .exec = exec, .plan = plan };
  Target targets[ACCEL_IMAGE_MAX_PLANES] = { 0 };
  guint8 *src_data = accel_buffer_get_data (src), *dst_data = accel_buffer_get_data (dst);

  for (guint s = 0; s < plan->src.n_samples; s++)
    {
      accel_cpu_plane_init (&job.src[s], src_data, &plan->src.samples[s]);
      job.max_src_row = MAX (job.max_src_row, plan->src.samples[s].width * plan->src.samples[s].channels);
    }
  for (guint t = 0; t < plan->dst.n_samples && !job.failed; t++)
    {
      Target *tg = &targets[t];
      const AccelImageTarget *p = &plan->targets[t];
      tg->plan = p;
      accel_cpu_plane_init (&tg->dst, dst_data, &plan->dst.samples[t]);
      for (int s = 0; s < p->n_sources; s++)
        source_init (&tg->sources[s], p->source[s], p->ax[s], p->ay[s], plan->src.samples[p->source[s]].width,
                     tg->dst.width);
      job.target = tg;
      /* Rows in chunks of a few hundred thousand samples. */
      gint64 per_row = (gint64) tg->dst.width * 4 * 4 + job.max_src_row;
      accel_cpu_parallel_for (exec, tg->dst.height, MAX (1, 65536 / per_row), target_rows, &job);
      for (int s = 0; s < p->n_sources; s++)
        source_clear (&tg->sources[s]);
    }
  if (job.failed)
    {
      g_propagate_error (error, job.error);
      return FALSE;
    }
  return TRUE;
}

/* resize and convert-color alike: their plans differ, not their runs. */
gboolean
accel_cpu_resample_run (AccelOp *op, gpointer context, GError **error)
{
  AccelImagePlan plan;
  AccelBuffer *src, *dst;
  accel_image_plan_of (op, &plan, &src, &dst);
  return run_plan (context, &plan, src, dst, error);
}
