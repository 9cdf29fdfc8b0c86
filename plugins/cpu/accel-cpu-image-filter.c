/* accel-cpu-image-filter.c: filter and morphology on the CPU, each sample
 * plane on its own.
 *
 * filter: separable kinds filter each source row needed by a band of
 * output rows along the row (into binary32, the border applied through an
 * extended row), then sum down the columns; the 2-D kernel sums rows of
 * the kernel in order. morphology works on the plane's code values as
 * integers: exact, so any order gives the same result. Bands of rows are
 * split among threads.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cpu-kernels.h"
#include "accel-cpu-image.h"

typedef struct {
  AccelCpuPlane src, dst;
  int border;
  float border_value;
  float scale, delta;
  gboolean separable;
  const float *kx, *ky;    /* separable: [nx], [ny] */
  int nx, ny;
  const float *k2;         /* 2-D: [ny][nx] */
  GError *error;
  gint failed;             /* atomic */
} FilterJob;

static void
job_fail (GError **slot, gint *failed, GError *error)
{
  if (g_atomic_int_compare_and_exchange (failed, 0, 1))
    *slot = error;
  else
    g_error_free (error);
}

/* Source row @r (any integer) extended by the border: ext[(x + ax) ch + c]
 * is the value at column x, for x from -ax to width + n - 1 - ax. */
static void
extended_row (const FilterJob *job, int r, int n, float *row, float *ext)
{
  const AccelCpuPlane *p = &job->src;
  int ch = p->channels, ax = n / 2;
  int br = accel_image_border_index (r, p->height, job->border);
  int len = p->width + n - 1;

  if (br < 0)
    {
      for (int i = 0; i < len * ch; i++)
        ext[i] = job->border_value;
      return;
    }
  accel_cpu_plane_load_row (p, br, row);
  /* The row itself, then what lies beyond either edge. */
  memcpy (ext + (gsize) ax * ch, row, sizeof (float) * p->width * ch);
  for (int e = 0; e < len; e++)
    {
      if (e == ax)
        e = ax + p->width;
      if (e >= len)
        break;
      int x = accel_image_border_index (e - ax, p->width, job->border);
      for (int c = 0; c < ch; c++)
        ext[e * ch + c] = x < 0 ? job->border_value : row[x * ch + c];
    }
}

/* @out[j] = sum over taps i of @k[i] @in[j + i @step], for j below @n:
 * tap by tap over the whole row, so each sum keeps its order and the
 * loops vectorise. @out is added to, or set with @set. */
static void
taps_along (const float *restrict k, int taps, const float *restrict in, gint64 step, float *restrict out, gint64 n,
            gboolean set)
{
  for (int i = 0; i < taps; i++)
    {
      const float *src = in + i * step;
      float w = k[i];
      if (i == 0 && set)
        for (gint64 j = 0; j < n; j++)
          out[j] = 0.0f + w * src[j];
      else
        for (gint64 j = 0; j < n; j++)
          out[j] += w * src[j];
    }
}

static void
filter_band (gint64 begin, gint64 end, gpointer data)
{
  FilterJob *job = data;
  const AccelCpuPlane *p = &job->src;
  int ch = p->channels, w = p->width;
  int ay = job->ny / 2;
  gint64 rows = job->separable ? end - begin + job->ny - 1 : 1;
  gsize row_floats = (gsize) (w + job->nx - 1) * ch;
  GError *error = NULL;
  float *scratch = accel_cpu_scratch_alloc (sizeof (float) * (2 * row_floats + (gsize) rows * w * ch), &error);
  if (scratch == NULL)
    {
      job_fail (&job->error, &job->failed, error);
      return;
    }
  float *row = scratch, *ext = row + row_floats, *inter = ext + row_floats;

  gint64 n = (gint64) w * ch;
  if (job->separable)
    {
      /* Along the rows, for every source row the band reads. */
      for (gint64 r = 0; r < rows; r++)
        {
          extended_row (job, (int) (begin - ay + r), job->nx, row, ext);
          taps_along (job->kx, job->nx, ext, ch, inter + r * n, n, TRUE);
        }
      /* Down the columns. */
      for (gint64 y = begin; y < end; y++)
        {
          taps_along (job->ky, job->ny, inter + (y - begin) * n, n, row, n, TRUE);
          for (gint64 i = 0; i < n; i++)
            row[i] = row[i] * job->scale + job->delta;
          accel_cpu_plane_store_row (&job->dst, (int) y, row);
        }
    }
  else
    {
      for (gint64 y = begin; y < end; y++)
        {
          float *acc = inter;
          for (gint64 i = 0; i < n; i++)
            acc[i] = 0.0f;
          for (int j = 0; j < job->ny; j++)
            {
              extended_row (job, (int) (y - ay + j), job->nx, row, ext);
              taps_along (job->k2 + (gsize) j * job->nx, job->nx, ext, ch, acc, n, FALSE);
            }
          for (gint64 i = 0; i < n; i++)
            row[i] = acc[i] * job->scale + job->delta;
          accel_cpu_plane_store_row (&job->dst, (int) y, row);
        }
    }
  accel_cpu_scratch_free (scratch);
}

gboolean
accel_cpu_filter_run (AccelOp *op, gpointer context, GError **error)
{
  AccelFilter *self = ACCEL_FILTER (op);
  AccelImageLayout ls, ld;
  float kx[ACCEL_FILTER_MAX_KSIZE], ky[ACCEL_FILTER_MAX_KSIZE];
  guint nx = 0, ny = 0;
  FilterJob job = {
    .border = self->border, .border_value = (float) self->border_value,
    .scale = (float) self->scale, .delta = (float) self->delta,
  };

  accel_cpu_image_layout (&self->src, NULL, &ls);
  accel_cpu_image_layout (&self->dst, &self->src, &ld);
  if (accel_filter_get_separable_kernel (self, kx, &nx, ky, &ny))
    {
      job.separable = TRUE;
      job.kx = kx, job.nx = (int) nx;
      job.ky = ky, job.ny = (int) ny;
    }
  else if (self->kind == ACCEL_FILTER_SEPARABLE)
    {
      job.separable = TRUE;
      job.kx = accel_buffer_get_data (self->kernel);
      job.nx = (int) accel_buffer_get_n_elements (self->kernel);
      job.ky = accel_buffer_get_data (self->kernel_y);
      job.ny = (int) accel_buffer_get_n_elements (self->kernel_y);
    }
  else
    {
      const AccelShape *shape = accel_buffer_get_shape (self->kernel);
      job.k2 = accel_buffer_get_data (self->kernel);
      job.ny = (int) accel_shape_get_dim (shape, 0);
      job.nx = (int) accel_shape_get_dim (shape, 1);
    }

  guint8 *src = accel_buffer_get_data (self->src.buffer), *dst = accel_buffer_get_data (self->dst.buffer);
  for (guint s = 0; s < ls.n_samples && !job.failed; s++)
    {
      accel_cpu_plane_init (&job.src, src, &ls.samples[s]);
      accel_cpu_plane_init (&job.dst, dst, &ld.samples[s]);
      gint64 per_row = (gint64) job.src.width * job.src.channels * MAX (job.nx, job.ny);
      accel_cpu_parallel_for (context, job.src.height, MAX (8, 262144 / MAX (per_row, 1)), filter_band, &job);
    }
  if (job.failed)
    {
      g_propagate_error (error, job.error);
      return FALSE;
    }
  return TRUE;
}

/* morphology */

typedef struct {
  int w, h, ch;
  const int *in;
  int *out;
  const guint8 *mask;
  int kw, kh;
  gboolean dilate;
} MorphJob;

static void
morph_band (gint64 begin, gint64 end, gpointer data)
{
  const MorphJob *job = data;
  int w = job->w, h = job->h, ch = job->ch, ax = job->kw / 2, ay = job->kh / 2;

  for (gint64 y = begin; y < end; y++)
    for (int x = 0; x < w; x++)
      for (int c = 0; c < ch; c++)
        {
          int m = job->dilate ? G_MININT : G_MAXINT;
          for (int j = 0; j < job->kh; j++)
            {
              gint64 r = y + j - ay;
              if (r < 0 || r >= h)
                continue;
              const int *src = job->in + r * w * ch;
              const guint8 *mrow = job->mask + (gsize) j * job->kw;
              int i0 = MAX (0, ax - x), i1 = MIN (job->kw, w + ax - x);
              for (int i = i0; i < i1; i++)
                if (mrow[i])
                  {
                    int v = src[(x + i - ax) * ch + c];
                    m = job->dilate ? MAX (m, v) : MIN (m, v);
                  }
            }
          job->out[(y * w + x) * ch + c] = m;
        }
}

gboolean
accel_cpu_morphology_run (AccelOp *op, gpointer context, GError **error)
{
  AccelMorphology *self = ACCEL_MORPHOLOGY (op);
  AccelImageLayout ls, ld;
  MorphJob job = { 0 };
  guint8 mask[ACCEL_FILTER_MAX_KSIZE * ACCEL_FILTER_MAX_KSIZE];

  accel_cpu_image_layout (&self->src, NULL, &ls);
  accel_cpu_image_layout (&self->dst, &self->src, &ld);
  accel_morphology_get_element (self, mask, &job.kw, &job.kh);
  job.mask = mask;

  gboolean two = self->operation == ACCEL_MORPHOLOGY_OPEN || self->operation == ACCEL_MORPHOLOGY_CLOSE;
  gboolean first_dilate = self->operation == ACCEL_MORPHOLOGY_DILATE || self->operation == ACCEL_MORPHOLOGY_CLOSE;
  guint8 *src = accel_buffer_get_data (self->src.buffer), *dst = accel_buffer_get_data (self->dst.buffer);

  for (guint s = 0; s < ls.n_samples; s++)
    {
      AccelCpuPlane ps, pd;
      accel_cpu_plane_init (&ps, src, &ls.samples[s]);
      accel_cpu_plane_init (&pd, dst, &ld.samples[s]);
      job.w = ps.width, job.h = ps.height, job.ch = ps.channels;
      gsize n = (gsize) ps.width * ps.height * ps.channels;
      int *a = accel_cpu_scratch_alloc (2 * n * sizeof (int), error);
      if (a == NULL)
        return FALSE;
      int *b = a + n;
      for (int y = 0; y < ps.height; y++)
        for (int x = 0; x < ps.width; x++)
          for (int c = 0; c < ps.channels; c++)
            a[((gsize) y * ps.width + x) * ps.channels + c] = accel_cpu_plane_get (&ps, x, y, c);

      gint64 min_rows = MAX (1, 65536 / ((gint64) ps.width * ps.channels * job.kw * job.kh));
      job.in = a, job.out = b, job.dilate = first_dilate;
      accel_cpu_parallel_for (context, ps.height, min_rows, morph_band, &job);
      if (two)
        {
          job.in = b, job.out = a, job.dilate = !first_dilate;
          accel_cpu_parallel_for (context, ps.height, min_rows, morph_band, &job);
        }
      const int *result = two ? a : b;
      for (int y = 0; y < pd.height; y++)
        for (int x = 0; x < pd.width; x++)
          for (int c = 0; c < pd.channels; c++)
            accel_cpu_plane_put (&pd, x, y, c, result[((gsize) y * pd.width + x) * pd.channels + c]);
      accel_cpu_scratch_free (a);
    }
  return TRUE;
}
