/* accel-cpu-primitives.c: sort, scan, histogram, select and
 * segmented-reduce, written from the definitions so that they give what
 * CUB gives: the sort orders keys as a radix sort does (-0.0 equal to
 * +0.0, every NaN after +inf), histogram bins float samples with CUB's
 * formula in the sample's precision and integer samples exactly, empty
 * segments reduce to CUB's identities.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <accel-half.h>
#include "accel-cpu-kernels.h"

/* sort */

/* A key as an unsigned integer that orders like a radix sort's digits:
 * integers by value, floats by value with the sign handled by flipping
 * (and -0.0 mapped to +0.0, as CUB does), every NaN, whatever its sign,
 * beyond +inf (numpy's and PyTorch's rule). @inf: the bits of +inf. */
static inline guint64
float_bits_key (guint64 bits, guint width, guint64 inf)
{
  guint64 sign = (guint64) 1 << (width - 1);
  guint64 mask = width == 64 ? G_MAXUINT64 : (((guint64) 1 << width) - 1);
  if (bits == sign || (bits & ~sign & mask) > inf)
    bits &= ~sign;
  return (bits & sign) ? (~bits & mask) : (bits | sign);
}

static inline guint64
radix_key (AccelDType dtype, const guint8 *p)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_U8:
      return *p;
    case ACCEL_DTYPE_I8:
      return (guint8) (*p ^ 0x80u);
    case ACCEL_DTYPE_U32:
      return *(const guint32 *) p;
    case ACCEL_DTYPE_I32:
      return *(const guint32 *) p ^ 0x80000000u;
    case ACCEL_DTYPE_I64:
      return *(const guint64 *) p ^ G_GUINT64_CONSTANT (0x8000000000000000);
    case ACCEL_DTYPE_F16:
      return float_bits_key (*(const guint16 *) p, 16, 0x7c00u);
    case ACCEL_DTYPE_BF16:
      return float_bits_key (*(const guint16 *) p, 16, 0x7f80u);
    case ACCEL_DTYPE_F32:
      return float_bits_key (*(const guint32 *) p, 32, 0x7f800000u);
    default:
      return float_bits_key (*(const guint64 *) p, 64, G_GUINT64_CONSTANT (0x7ff0000000000000));
    }
}

typedef struct {
  guint64 key;
  gint64 index;
} KeyIndex;

static int
cmp_ascending (const void *pa, const void *pb)
{
  const KeyIndex *a = pa, *b = pb;
  if (a->key != b->key)
    return a->key < b->key ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

static int
cmp_descending (const void *pa, const void *pb)
{
  const KeyIndex *a = pa, *b = pb;
  if (a->key != b->key)
    return a->key > b->key ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;   /* stable */
}

typedef struct {
  AccelDType key_dtype;
  gsize key_size, value_size;
  gint64 n;
  gboolean descending;
  guint8 *keys;
  guint8 *values;    /* nullable */
} SortJob;

static void
permute_row (guint8 *row, const KeyIndex *order, gint64 n, gsize es, guint8 *tmp)
{
  memcpy (tmp, row, n * es);
  for (gint64 i = 0; i < n; i++)
    memcpy (row + i * es, tmp + order[i].index * es, es);
}

static void
sort_rows (gint64 begin, gint64 end, gpointer data)
{
  SortJob *job = data;
  gint64 n = job->n;
  KeyIndex *order = g_new (KeyIndex, n);
  guint8 *tmp = g_malloc (n * MAX (job->key_size, job->value_size));

  for (gint64 row = begin; row < end; row++)
    {
      guint8 *keys = job->keys + row * n * job->key_size;
      for (gint64 i = 0; i < n; i++)
        {
          order[i].key = radix_key (job->key_dtype, keys + i * job->key_size);
          order[i].index = i;
        }
      qsort (order, n, sizeof (KeyIndex), job->descending ? cmp_descending : cmp_ascending);
      permute_row (keys, order, n, job->key_size, tmp);
      if (job->values)
        permute_row (job->values + row * n * job->value_size, order, n, job->value_size, tmp);
    }
  g_free (order);
  g_free (tmp);
}

gboolean
accel_cpu_sort_run (AccelOp *op, gpointer context, GError **error)
{
  AccelSort *self = ACCEL_SORT (op);
  const AccelShape *s = accel_buffer_get_shape (self->keys);
  AccelDType dt = accel_buffer_get_dtype (self->keys);
  SortJob job = {
    dt, accel_dtype_get_size (dt),
    self->values ? accel_dtype_get_size (accel_buffer_get_dtype (self->values)) : 0,
    accel_shape_get_dim (s, accel_shape_get_rank (s) - 1), self->descending,
    accel_buffer_get_data (self->keys), self->values ? accel_buffer_get_data (self->values) : NULL,
  };
  if (job.n == 0)
    return TRUE;
  accel_cpu_parallel_for (context, accel_buffer_get_n_elements (self->keys) / job.n, 1, sort_rows, &job);
  return TRUE;
}

/* scan: integers add as unsigned (two's complement wrap), floats in f64. */

typedef struct {
  AccelDType dtype;
  gboolean exclusive;
  gint64 n;
  const guint8 *in;
  guint8 *out;
} ScanJob;

#define SCAN(T, U)                                                      \
  G_STMT_START {                                                        \
    const T *x = (const T *) job->in + row * n;                         \
    T *y = (T *) job->out + row * n;                                    \
    U sum = 0;                                                          \
    for (gint64 i = 0; i < n; i++)                                      \
      {                                                                 \
        U v = (U) x[i];                                                 \
        if (!job->exclusive)                                            \
          sum += v;                                                     \
        y[i] = (T) sum;                                                 \
        if (job->exclusive)                                             \
          sum += v;                                                     \
      }                                                                 \
  } G_STMT_END

static void
scan_rows (gint64 begin, gint64 end, gpointer data)
{
  ScanJob *job = data;
  gint64 n = job->n;

  for (gint64 row = begin; row < end; row++)
    switch (job->dtype)
      {
      case ACCEL_DTYPE_I32:
        SCAN (gint32, guint32);
        break;
      case ACCEL_DTYPE_U32:
        SCAN (guint32, guint32);
        break;
      case ACCEL_DTYPE_I64:
        SCAN (gint64, guint64);
        break;
      case ACCEL_DTYPE_F32:
        SCAN (float, double);
        break;
      default:
        SCAN (double, double);
        break;
      }
}

gboolean
accel_cpu_scan_run (AccelOp *op, gpointer context, GError **error)
{
  AccelScan *self = ACCEL_SCAN (op);
  const AccelShape *s = accel_buffer_get_shape (self->input);
  ScanJob job = {
    accel_buffer_get_dtype (self->input), self->kind == ACCEL_SCAN_EXCLUSIVE,
    accel_shape_get_dim (s, accel_shape_get_rank (s) - 1),
    accel_buffer_get_data (self->input), accel_buffer_get_data (self->output),
  };
  if (job.n == 0)
    return TRUE;
  accel_cpu_parallel_for (context, accel_buffer_get_n_elements (self->input) / job.n,
                          MAX (65536 / job.n, 1), scan_rows, &job);
  return TRUE;
}

/* histogram */

gboolean
accel_cpu_histogram_run (AccelOp *op, gpointer context, GError **error)
{
  AccelHistogram *self = ACCEL_HISTOGRAM (op);
  AccelDType dt = accel_buffer_get_dtype (self->samples);
  gint64 n = accel_buffer_get_n_elements (self->samples);
  const void *samples = accel_buffer_get_data (self->samples);
  gint32 *bins = accel_buffer_get_data (self->bins);
  int nb = self->n_bins;

  memset (bins, 0, nb * sizeof (gint32));
  gint64 at_upper = 0;   /* samples equal to upper, for numpy's closed last bin */
  if (dt == ACCEL_DTYPE_F32)
    {
      /* CUB's arithmetic: the scale and the bin in the sample's precision. */
      float lo = (float) self->lower, hi = (float) self->upper;
      float scale = (float) nb / (hi - lo);
      for (gint64 i = 0; i < n; i++)
        {
          float v = ((const float *) samples)[i];
          if (v >= lo && v < hi)
            bins[MIN ((int) ((v - lo) * scale), nb - 1)]++;
          at_upper += v == hi;
        }
    }
  else if (dt == ACCEL_DTYPE_F64)
    {
      double lo = self->lower, hi = self->upper;
      double scale = nb / (hi - lo);
      for (gint64 i = 0; i < n; i++)
        {
          double v = ((const double *) samples)[i];
          if (v >= lo && v < hi)
            bins[MIN ((int) ((v - lo) * scale), nb - 1)]++;
          at_upper += v == hi;
        }
    }
  else
    {
      /* Integers: exact, (v - lo) nb / (hi - lo) fits 64 bits for 32-bit levels. */
      gint64 lo = (gint64) self->lower, hi = (gint64) self->upper;
      for (gint64 i = 0; i < n; i++)
        {
          gint64 v = dt == ACCEL_DTYPE_U8 ? ((const guint8 *) samples)[i] : ((const gint32 *) samples)[i];
          if (v >= lo && v < hi)
            bins[(v - lo) * nb / (hi - lo)]++;
          at_upper += v == hi;
        }
    }
  if (self->include_upper)
    bins[nb - 1] += (gint32) at_upper;
  return TRUE;
}

/* select */

gboolean
accel_cpu_select_run (AccelOp *op, gpointer context, GError **error)
{
  AccelSelect *self = ACCEL_SELECT (op);
  AccelDType ft = accel_buffer_get_dtype (self->flags);
  gsize es = accel_dtype_get_size (accel_buffer_get_dtype (self->input));
  gsize fs = accel_dtype_get_size (ft);
  gint64 n = accel_buffer_get_n_elements (self->input);
  const guint8 *in = accel_buffer_get_data (self->input);
  const guint8 *flags = accel_buffer_get_data (self->flags);
  guint8 *out = accel_buffer_get_data (self->output);
  gint64 count = 0;

  for (gint64 i = 0; i < n; i++)
    {
      const guint8 *f = flags + i * fs;
      gboolean on = fs == 1 ? *f != 0 : *(const guint32 *) f != 0;
      if (on)
        memcpy (out + (count++) * es, in + i * es, es);
    }
  if (accel_buffer_get_dtype (self->count) == ACCEL_DTYPE_I64)
    *(gint64 *) accel_buffer_get_data (self->count) = count;
  else
    *(gint32 *) accel_buffer_get_data (self->count) = (gint32) count;
  return TRUE;
}

/* segmented-reduce */

static gboolean
check_offsets (AccelBuffer *offsets, gint64 n, gint64 *out, GError **error)
{
  gint64 m = accel_buffer_get_n_elements (offsets);
  gboolean wide = accel_buffer_get_dtype (offsets) == ACCEL_DTYPE_I64;
  const void *p = accel_buffer_get_data (offsets);

  for (gint64 i = 0; i < m; i++)
    {
      out[i] = wide ? ((const gint64 *) p)[i] : ((const gint32 *) p)[i];
      if (out[i] < 0 || out[i] > n)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "segmented-reduce: “offsets”[%" G_GINT64_FORMAT "] is %" G_GINT64_FORMAT
                       ", outside [0, %" G_GINT64_FORMAT "] (the length of “input”)", i, out[i], n);
          return FALSE;
        }
      if (i > 0 && out[i] < out[i - 1])
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "segmented-reduce: “offsets” decreases at %" G_GINT64_FORMAT " (%" G_GINT64_FORMAT
                       " after %" G_GINT64_FORMAT ")", i, out[i], out[i - 1]);
          return FALSE;
        }
    }
  return TRUE;
}

/* Sums in U: the unsigned type of the width for integers (so that an
 * overflow wraps instead of being undefined), binary64 for floats. Only
 * floats may ask for the mean (validated). */
#define SEGMENTED_REDUCE(T, U, LOWEST, HIGHEST)                         \
  G_STMT_START {                                                        \
    const T *x = (const T *) in;                                        \
    T *y = (T *) out;                                                   \
    for (gint64 s = 0; s < n_seg; s++)                                  \
      {                                                                 \
        U sum = 0;                                                      \
        T acc = op == ACCEL_REDUCE_MAX ? LOWEST : HIGHEST;              \
        for (gint64 i = off[s]; i < off[s + 1]; i++)                    \
          {                                                             \
            sum += (U) x[i];                                            \
            if (op == ACCEL_REDUCE_MAX ? x[i] > acc : x[i] < acc)       \
              acc = x[i];                                               \
          }                                                             \
        if (op == ACCEL_REDUCE_SUM)                                     \
          y[s] = (T) sum;                                               \
        else if (op == ACCEL_REDUCE_MEAN)                               \
          y[s] = (T) (sum / (double) (off[s + 1] - off[s]));            \
        else                                                            \
          y[s] = acc;                                                   \
      }                                                                 \
  } G_STMT_END

gboolean
accel_cpu_segmented_reduce_run (AccelOp *op_, gpointer context, GError **error)
{
  AccelSegmentedReduce *self = ACCEL_SEGMENTED_REDUCE (op_);
  AccelReduceOp op = self->reduction;
  gint64 n = accel_buffer_get_n_elements (self->input);
  gint64 n_seg = accel_buffer_get_n_elements (self->offsets) - 1;
  const void *in = accel_buffer_get_data (self->input);
  void *out = accel_buffer_get_data (self->output);
  g_autofree gint64 *off = g_new (gint64, n_seg + 1);

  if (!check_offsets (self->offsets, n, off, error))
    return FALSE;
  switch (accel_buffer_get_dtype (self->input))
    {
    case ACCEL_DTYPE_I32:
      SEGMENTED_REDUCE (gint32, guint32, G_MININT32, G_MAXINT32);
      break;
    case ACCEL_DTYPE_U32:
      SEGMENTED_REDUCE (guint32, guint32, 0, G_MAXUINT32);
      break;
    case ACCEL_DTYPE_I64:
      SEGMENTED_REDUCE (gint64, guint64, G_MININT64, G_MAXINT64);
      break;
    case ACCEL_DTYPE_F32:
      SEGMENTED_REDUCE (float, double, -FLT_MAX, FLT_MAX);
      break;
    default:
      SEGMENTED_REDUCE (double, double, -DBL_MAX, DBL_MAX);
      break;
    }
  return TRUE;
}
