/* accel-cpu-norm.c: layernorm and rmsnorm over the last axis, f32, f16 and
 * bf16 stored, each row widened to f64 (two passes: mean, then variance
 * about it) and the result rounded once to the output type.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <accel-half.h>
#include "accel-cpu-kernels.h"

static inline double
load (AccelDType dtype, const void *p, gint64 i)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F16:
      return accel_f16_to_f32 (((const guint16 *) p)[i]);
    case ACCEL_DTYPE_BF16:
      return accel_bf16_to_f32 (((const guint16 *) p)[i]);
    default:
      return ((const float *) p)[i];
    }
}

static inline void
store (AccelDType dtype, void *p, gint64 i, double v)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F16:
      ((guint16 *) p)[i] = accel_f16_from_f64 (v);
      break;
    case ACCEL_DTYPE_BF16:
      ((guint16 *) p)[i] = accel_bf16_from_f64 (v);
      break;
    default:
      ((float *) p)[i] = (float) v;
    }
}

typedef struct {
  gboolean rms;
  AccelDType dtype;
  gint64 n;
  double eps;
  const void *x, *gamma, *beta;   /* gamma and beta nullable */
  void *y;
} NormJob;

static void
norm_rows (gint64 begin, gint64 end, gpointer data)
{
  NormJob *job = data;
  gint64 n = job->n;
  double *row = g_new (double, MAX (n, 1));

  for (gint64 i = begin; i < end; i++)
    {
      double mean = 0.0, var = 0.0;
      /* Read the whole row before writing: y may be x. */
      for (gint64 j = 0; j < n; j++)
        row[j] = load (job->dtype, job->x, i * n + j);
      if (!job->rms)
        {
          for (gint64 j = 0; j < n; j++)
            mean += row[j];
          mean /= n;
        }
      for (gint64 j = 0; j < n; j++)
        var += (row[j] - mean) * (row[j] - mean);
      double inv = 1.0 / sqrt (var / n + job->eps);
      for (gint64 j = 0; j < n; j++)
        {
          double v = (row[j] - mean) * inv;
          if (job->gamma)
            v *= load (job->dtype, job->gamma, j);
          if (job->beta)
            v += load (job->dtype, job->beta, j);
          store (job->dtype, job->y, i * n + j, v);
        }
    }
  g_free (row);
}

static gboolean
norm_run (gboolean rms, gpointer context, AccelBuffer *x, AccelBuffer *gamma, AccelBuffer *beta,
          AccelBuffer *y, double eps)
{
  const AccelShape *s = accel_buffer_get_shape (x);
  gint64 n = accel_shape_get_dim (s, accel_shape_get_rank (s) - 1);
  NormJob job = {
    rms, accel_buffer_get_dtype (x), n, eps, accel_buffer_get_data (x),
    gamma ? accel_buffer_get_data (gamma) : NULL, beta ? accel_buffer_get_data (beta) : NULL,
    accel_buffer_get_data (y),
  };
  if (n == 0)
    return TRUE;
  gint64 rows = accel_buffer_get_n_elements (x) / n;
  accel_cpu_parallel_for (context, rows, MAX (8192 / n, 1), norm_rows, &job);
  return TRUE;
}

gboolean
accel_cpu_layernorm_run (AccelOp *op, gpointer context, GError **error)
{
  AccelLayernorm *self = ACCEL_LAYERNORM (op);
  return norm_run (FALSE, context, self->x, self->gamma, self->beta, self->y, self->eps);
}

gboolean
accel_cpu_rmsnorm_run (AccelOp *op, gpointer context, GError **error)
{
  AccelRmsnorm *self = ACCEL_RMSNORM (op);
  return norm_run (TRUE, context, self->x, self->gamma, self->beta, self->y, self->eps);
}
