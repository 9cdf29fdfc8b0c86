/* accel-cpu-reduce.c: reduce and softmax on the CPU.
 *
 * Work is split over output elements, never along the reduced axis, so
 * results do not depend on the thread count. Sums accumulate in binary64.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <accel-half.h>
#include "accel-cpu-kernels.h"

/* Values per inner block: a reduction over a middle axis walks rows of
 * this many contiguous elements at a time. */
#define INNER_BLOCK 256

static inline double
load_elem (AccelDType dtype, const void *base, gint64 i)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F32: return ((const float *) base)[i];
    case ACCEL_DTYPE_F64: return ((const double *) base)[i];
    case ACCEL_DTYPE_F16: return accel_f16_to_f32 (((const guint16 *) base)[i]);
    case ACCEL_DTYPE_BF16: return accel_bf16_to_f32 (((const guint16 *) base)[i]);
    default: g_assert_not_reached ();
    }
}

static inline void
store_elem (AccelDType dtype, void *base, gint64 i, double v)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F32: ((float *) base)[i] = (float) v; break;
    case ACCEL_DTYPE_F64: ((double *) base)[i] = v; break;
    case ACCEL_DTYPE_F16: ((guint16 *) base)[i] = accel_f16_from_f64 (v); break;
    case ACCEL_DTYPE_BF16: ((guint16 *) base)[i] = accel_bf16_from_f64 (v); break;
    default: g_assert_not_reached ();
    }
}

typedef struct {
  AccelDType dtype;
  AccelReduceOp reduction;
  const void *src;
  void *dst;
  gint64 outer, len, inner;
  gint64 inner_blocks;
} ReduceJob;

static inline double
combine (AccelReduceOp op, double acc, double v)
{
  switch (op)
    {
    case ACCEL_REDUCE_MAX:
      /* NaN wins, once seen. */
      return isnan (acc) ? acc : (isnan (v) || v > acc) ? v : acc;
    case ACCEL_REDUCE_MIN:
      return isnan (acc) ? acc : (isnan (v) || v < acc) ? v : acc;
    default:
      return acc + v;
    }
}

static double
reduce_identity (AccelReduceOp op)
{
  switch (op)
    {
    case ACCEL_REDUCE_MAX: return -INFINITY;
    case ACCEL_REDUCE_MIN: return INFINITY;
    default: return 0.0;
    }
}

/* Items are (outer index, block of inner indices). */
static void
reduce_range (gint64 begin, gint64 end, gpointer data)
{
  ReduceJob *job = data;
  double acc[INNER_BLOCK];
  const double init = reduce_identity (job->reduction);

  for (gint64 item = begin; item < end; item++)
    {
      gint64 o = item / job->inner_blocks;
      gint64 i0 = (item % job->inner_blocks) * INNER_BLOCK;
      gint64 m = MIN (INNER_BLOCK, job->inner - i0);

      for (gint64 j = 0; j < m; j++)
        acc[j] = init;
      for (gint64 r = 0; r < job->len; r++)
        {
          gint64 row = (o * job->len + r) * job->inner + i0;
          if (job->dtype == ACCEL_DTYPE_F32 && job->reduction == ACCEL_REDUCE_SUM)
            {
              const float *p = (const float *) job->src + row;
              for (gint64 j = 0; j < m; j++)
                acc[j] += p[j];
            }
          else
            for (gint64 j = 0; j < m; j++)
              acc[j] = combine (job->reduction, acc[j], load_elem (job->dtype, job->src, row + j));
        }
      for (gint64 j = 0; j < m; j++)
        {
          double v = acc[j];
          if (job->reduction == ACCEL_REDUCE_MEAN)
            v = job->len > 0 ? v / (double) job->len : NAN;
          store_elem (job->dtype, job->dst, o * job->inner + i0 + j, v);
        }
    }
}

gboolean
accel_cpu_reduce_run (AccelOp *op, gpointer context, GError **error)
{
  AccelReduce *self = ACCEL_REDUCE (op);
  const AccelShape *shape = accel_buffer_get_shape (self->src);
  int rank = (int) accel_shape_get_rank (shape);
  int axis = self->axis < 0 ? self->axis + rank : self->axis;
  ReduceJob job = {
    .dtype = accel_buffer_get_dtype (self->src),
    .reduction = self->reduction,
    .src = accel_buffer_get_data (self->src),
    .dst = accel_buffer_get_data (self->dst),
    .outer = 1,
    .len = accel_shape_get_dim (shape, axis),
    .inner = 1,
  };

  for (int i = 0; i < axis; i++)
    job.outer *= accel_shape_get_dim (shape, i);
  for (int i = axis + 1; i < rank; i++)
    job.inner *= accel_shape_get_dim (shape, i);
  if (job.outer == 0 || job.inner == 0)
    return TRUE;
  job.inner_blocks = (job.inner + INNER_BLOCK - 1) / INNER_BLOCK;

  gint64 items = job.outer * job.inner_blocks;
  gint64 work_per_item = MAX (job.len * MIN (job.inner, INNER_BLOCK), 1);
  accel_cpu_parallel_for (context, items, MAX (65536 / work_per_item, 1), reduce_range, &job);
  return TRUE;
}

/* softmax: one row of the last axis per item. */

typedef struct {
  AccelDType dtype;
  const void *src;
  void *dst;
  gint64 len;
} SoftmaxJob;

static void
softmax_range (gint64 begin, gint64 end, gpointer data)
{
  SoftmaxJob *job = data;
  gint64 len = job->len;

  if (job->dtype == ACCEL_DTYPE_F64)
    {
      for (gint64 r = begin; r < end; r++)
        {
          const double *x = (const double *) job->src + r * len;
          double *y = (double *) job->dst + r * len;
          double m = -INFINITY, s = 0.0;
          for (gint64 j = 0; j < len; j++)
            m = fmax (m, x[j]);
          for (gint64 j = 0; j < len; j++)
            {
              y[j] = exp (x[j] - m);
              s += y[j];
            }
          for (gint64 j = 0; j < len; j++)
            y[j] /= s;
        }
      return;
    }

  float *tmp = job->dtype == ACCEL_DTYPE_F32 ? NULL : g_new (float, len);
  for (gint64 r = begin; r < end; r++)
    {
      const float *x;
      float *y;
      if (tmp == NULL)
        {
          x = (const float *) job->src + r * len;
          y = (float *) job->dst + r * len;
        }
      else
        {
          for (gint64 j = 0; j < len; j++)
            tmp[j] = (float) load_elem (job->dtype, job->src, r * len + j);
          x = y = tmp;
        }

      float m = -INFINITY;
      double s = 0.0;
      for (gint64 j = 0; j < len; j++)
        m = fmaxf (m, x[j]);
      for (gint64 j = 0; j < len; j++)
        {
          y[j] = expf (x[j] - m);
          s += y[j];
        }
      float inv = (float) (1.0 / s);
      for (gint64 j = 0; j < len; j++)
        y[j] *= inv;

      if (tmp != NULL)
        for (gint64 j = 0; j < len; j++)
          store_elem (job->dtype, job->dst, r * len + j, tmp[j]);
    }
  g_free (tmp);
}

gboolean
accel_cpu_softmax_run (AccelOp *op, gpointer context, GError **error)
{
  AccelSoftmax *self = ACCEL_SOFTMAX (op);
  const AccelShape *shape = accel_buffer_get_shape (self->src);
  guint rank = accel_shape_get_rank (shape);
  SoftmaxJob job = {
    .dtype = accel_buffer_get_dtype (self->src),
    .src = accel_buffer_get_data (self->src),
    .dst = accel_buffer_get_data (self->dst),
    .len = accel_shape_get_dim (shape, rank - 1),
  };
  if (job.len == 0)
    return TRUE;
  gint64 rows = accel_shape_get_n_elements (shape) / job.len;
  accel_cpu_parallel_for (context, rows, MAX (32768 / job.len, 1), softmax_range, &job);
  return TRUE;
}
