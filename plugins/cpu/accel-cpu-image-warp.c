/* accel-cpu-image-warp.c: warp-affine and warp-perspective on the CPU.
 *
 * Every destination sample maps its centre through the inverse map in
 * binary32 (an affine map is a homography with a last row of 0, 0, 1),
 * then sums its taps along each source row and those row sums down the
 * column, in the order the CUDA kernel does. Rows are split among
 * threads.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cpu-kernels.h"
#include "accel-cpu-image.h"

typedef struct {
  AccelCpuPlane src, dst;
  float m[9];
  gboolean perspective;
  int method;
  int border;
  float border_value;
  int sub_x, sub_y;
} WarpJob;

/* Fetches channel @c at (@x, @y) of the source through the border. */
static inline float
fetch (const WarpJob *job, int x, int y, int c)
{
  int bx = accel_image_border_index (x, job->src.width, job->border);
  int by = accel_image_border_index (y, job->src.height, job->border);
  if (bx < 0 || by < 0)
    return job->border_value;
  return (float) accel_cpu_plane_get (&job->src, bx, by, c);
}

static void
warp_rows (gint64 begin, gint64 end, gpointer data)
{
  const WarpJob *job = data;
  const AccelCpuPlane *d = &job->dst;
  const float *m = job->m;

  for (gint64 y = begin; y < end; y++)
    for (int x = 0; x < d->width; x++)
      {
        float sx, sy;
        gboolean outside = !accel_image_warp_point (m, job->perspective, job->sub_x, job->sub_y, x, (int) y,
                                                    job->src.width, job->src.height, &sx, &sy);
        for (int c = 0; c < d->channels; c++)
          {
            float acc = job->border_value;
            if (!outside)
              {
                float wx[4], wy[4];
                int fx, fy;
                int nx = accel_image_warp_taps (job->method, sx, wx, &fx);
                int ny = accel_image_warp_taps (job->method, sy, wy, &fy);
                acc = 0.0f;
                for (int j = 0; j < ny; j++)
                  {
                    float r = 0.0f;
                    for (int i = 0; i < nx; i++)
                      r += wx[i] * fetch (job, fx + i, fy + j, c);
                    acc += wy[j] * r;
                  }
              }
            accel_cpu_plane_put (d, x, (int) y, c, accel_image_quantize (acc, d->maxv));
          }
      }
}

static gboolean
warp_run (AccelImage *src, AccelImage *dst, const double *matrix, gboolean perspective, int method, int border,
          double border_value, gpointer context)
{
  AccelImageLayout ls, ld;
  WarpJob job = { .perspective = perspective, .method = method, .border = border,
                  .border_value = (float) border_value };

  accel_cpu_image_layout (src, NULL, &ls);
  accel_cpu_image_layout (dst, NULL, &ld);
  for (int i = 0; i < 9; i++)
    job.m[i] = i < 6 || perspective ? (float) matrix[i] : (i == 8 ? 1.0f : 0.0f);

  guint8 *s = accel_buffer_get_data (src->buffer), *d = accel_buffer_get_data (dst->buffer);
  for (guint p = 0; p < ls.n_samples; p++)
    {
      accel_cpu_plane_init (&job.src, s, &ls.samples[p]);
      accel_cpu_plane_init (&job.dst, d, &ld.samples[p]);
      job.sub_x = ls.samples[p].sub_x;
      job.sub_y = ls.samples[p].sub_y;
      accel_cpu_parallel_for (context, job.dst.height, MAX (1, 16384 / job.dst.width), warp_rows, &job);
    }
  return TRUE;
}

gboolean
accel_cpu_warp_affine_run (AccelOp *op, gpointer context, GError **error)
{
  AccelWarpAffine *self = ACCEL_WARP_AFFINE (op);
  return warp_run (&self->src, &self->dst, self->matrix, FALSE, self->method, self->border, self->border_value,
                   context);
}

gboolean
accel_cpu_warp_perspective_run (AccelOp *op, gpointer context, GError **error)
{
  AccelWarpPerspective *self = ACCEL_WARP_PERSPECTIVE (op);
  return warp_run (&self->src, &self->dst, self->matrix, TRUE, self->method, self->border, self->border_value,
                   context);
}
