/* accel-cpu-elementwise.c: copy, fill, cast and rng-fill on the CPU.
 *
 * Strided buffers are walked in row-major element order through a small
 * iterator; work is split into element ranges, so every kernel here gives
 * the same bytes for any thread count.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <accel-half.h>
#include <accel-philox.h>
#include "accel-cpu-kernels.h"

/* Elements below which an op stays on one thread. */
#define MIN_PARALLEL_BYTES (256 * 1024)
#define BLOCK 256

gpointer
accel_cpu_scratch_alloc (gsize size, GError **error)
{
  gpointer memory = NULL;
  if (posix_memalign (&memory, 64, MAX (size, 64)) != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY,
                   "cpu: no memory for %" G_GSIZE_FORMAT " bytes of kernel scratch space", size);
      return NULL;
    }
  return memory;
}

void
accel_cpu_scratch_free (gpointer memory)
{
  free (memory);
}

/* Strided walk. */

typedef struct {
  guint rank;
  gsize esize;
  const gint64 *dims;
  const gint64 *strides;
  guint8 *base;
  gint64 idx[ACCEL_SHAPE_MAX_RANK];
  gint64 off;             /* elements from base */
} Walk;

static void
walk_init (Walk *w, AccelBuffer *buffer, gint64 start)
{
  const AccelShape *shape = accel_buffer_get_shape (buffer);
  w->dims = accel_shape_get_dims (shape, &w->rank);
  w->strides = accel_shape_get_strides (shape, NULL);
  w->esize = accel_dtype_get_size (accel_buffer_get_dtype (buffer));
  w->base = accel_buffer_get_data (buffer);
  w->off = 0;
  for (int a = (int) w->rank - 1; a >= 0; a--)
    {
      gint64 d = MAX (w->dims[a], 1);
      w->idx[a] = start % d;
      start /= d;
      w->off += w->idx[a] * w->strides[a];
    }
}

static inline guint8 *
walk_ptr (const Walk *w)
{
  return w->base + w->off * (gint64) w->esize;
}

static inline void
walk_next (Walk *w)
{
  for (int a = (int) w->rank - 1; a >= 0; a--)
    {
      w->off += w->strides[a];
      if (++w->idx[a] < w->dims[a])
        return;
      w->off -= w->idx[a] * w->strides[a];
      w->idx[a] = 0;
    }
}

static inline void
copy_elem (guint8 *dst, const guint8 *src, gsize esize)
{
  switch (esize)
    {
    case 1: *dst = *src; break;
    case 2: memcpy (dst, src, 2); break;
    case 4: memcpy (dst, src, 4); break;
    case 8: memcpy (dst, src, 8); break;
    case 16: memcpy (dst, src, 16); break;
    default: memcpy (dst, src, esize); break;
    }
}

/* Copies @n elements starting at element @start of @buffer into contiguous @out. */
static void
gather (AccelBuffer *buffer, gint64 start, gint64 n, guint8 *out)
{
  Walk w;
  walk_init (&w, buffer, start);
  for (gint64 i = 0; i < n; i++, walk_next (&w))
    copy_elem (out + i * w.esize, walk_ptr (&w), w.esize);
}

static void
scatter (AccelBuffer *buffer, gint64 start, gint64 n, const guint8 *in)
{
  Walk w;
  walk_init (&w, buffer, start);
  for (gint64 i = 0; i < n; i++, walk_next (&w))
    copy_elem (walk_ptr (&w), in + i * w.esize, w.esize);
}

static gint64
min_parallel_elements (gsize esize)
{
  return MAX (MIN_PARALLEL_BYTES / (gint64) MAX (esize, 1), 1);
}

/* copy */

typedef struct {
  AccelBuffer *src, *dst;
  gboolean contiguous;
  gsize esize;
} CopyJob;

static void
copy_range (gint64 begin, gint64 end, gpointer data)
{
  CopyJob *job = data;

  if (job->contiguous)
    {
      memcpy ((guint8 *) accel_buffer_get_data (job->dst) + begin * job->esize,
              (const guint8 *) accel_buffer_get_data (job->src) + begin * job->esize,
              (end - begin) * job->esize);
      return;
    }
  Walk ws, wd;
  walk_init (&ws, job->src, begin);
  walk_init (&wd, job->dst, begin);
  for (gint64 i = begin; i < end; i++, walk_next (&ws), walk_next (&wd))
    copy_elem (walk_ptr (&wd), walk_ptr (&ws), job->esize);
}

gboolean
accel_cpu_copy_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCopy *self = ACCEL_COPY (op);
  CopyJob job = {
    self->src, self->dst,
    accel_shape_is_contiguous (accel_buffer_get_shape (self->src))
      && accel_shape_is_contiguous (accel_buffer_get_shape (self->dst)),
    accel_dtype_get_size (accel_buffer_get_dtype (self->src)),
  };
  gint64 n = accel_buffer_get_n_elements (self->src);

  if (accel_buffer_get_data (self->src) == accel_buffer_get_data (self->dst)
      && accel_shape_equal (accel_buffer_get_shape (self->src), accel_buffer_get_shape (self->dst)))
    return TRUE;
  accel_cpu_parallel_for (context, n, min_parallel_elements (job.esize), copy_range, &job);
  return TRUE;
}

/* Conversions. A source block is decoded to binary64 (real, imaginary) or,
 * for integer sources, to int64, then encoded to the target. */

typedef struct {
  double re[BLOCK];
  double im[BLOCK];
  gint64 iv[BLOCK];
} Decoded;

static void
decode_block (AccelDType dtype, const guint8 *src, gint64 n, Decoded *d)
{
  switch (dtype)
    {
#define DEC_REAL(DT, T, EXPR)                           \
    case DT:                                            \
      for (gint64 i = 0; i < n; i++)                    \
        {                                               \
          T v;                                          \
          memcpy (&v, src + i * sizeof (T), sizeof (T)); \
          d->re[i] = (EXPR);                            \
          d->im[i] = 0.0;                               \
        }                                               \
      break;
    DEC_REAL (ACCEL_DTYPE_F16, guint16, accel_f16_to_f32 (v))
    DEC_REAL (ACCEL_DTYPE_BF16, guint16, accel_bf16_to_f32 (v))
    DEC_REAL (ACCEL_DTYPE_F32, float, v)
    DEC_REAL (ACCEL_DTYPE_F64, double, v)
    DEC_REAL (ACCEL_DTYPE_FP8_E4M3, guint8, accel_fp8_e4m3_to_f32 (v))
    DEC_REAL (ACCEL_DTYPE_FP8_E5M2, guint8, accel_fp8_e5m2_to_f32 (v))
#undef DEC_REAL
    case ACCEL_DTYPE_C64:
      for (gint64 i = 0; i < n; i++)
        {
          float v[2];
          memcpy (v, src + i * 8, 8);
          d->re[i] = v[0];
          d->im[i] = v[1];
        }
      break;
    case ACCEL_DTYPE_C128:
      for (gint64 i = 0; i < n; i++)
        {
          memcpy (&d->re[i], src + i * 16, 8);
          memcpy (&d->im[i], src + i * 16 + 8, 8);
        }
      break;
#define DEC_INT(DT, T)                                  \
    case DT:                                            \
      for (gint64 i = 0; i < n; i++)                    \
        {                                               \
          T v;                                          \
          memcpy (&v, src + i * sizeof (T), sizeof (T)); \
          d->iv[i] = (gint64) v;                        \
        }                                               \
      break;
    DEC_INT (ACCEL_DTYPE_I8, gint8)
    DEC_INT (ACCEL_DTYPE_U8, guint8)
    DEC_INT (ACCEL_DTYPE_I32, gint32)
    DEC_INT (ACCEL_DTYPE_U32, guint32)
    DEC_INT (ACCEL_DTYPE_I64, gint64)
#undef DEC_INT
    default:
      g_assert_not_reached ();
    }
}

static inline gint64
clamp_i64 (gint64 v, gint64 lo, gint64 hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

/* An int64 as a binary64 rounded to odd, so a second rounding to a format
 * of at most 51 significant bits is correctly rounded. */
static inline double
i64_to_f64_odd (gint64 v)
{
  guint64 u = v < 0 ? (guint64) 0 - (guint64) v : (guint64) v;
  if (u >= (G_GUINT64_CONSTANT (1) << 53))
    {
      int drop = 64 - __builtin_clzll (u) - 53;
      guint64 mask = (G_GUINT64_CONSTANT (1) << drop) - 1;
      if (u & mask)
        u = (u & ~mask) | (G_GUINT64_CONSTANT (1) << drop);
    }
  double d = (double) u;
  return v < 0 ? -d : d;
}

static void
encode_block (AccelDType dtype, gboolean from_int, const Decoded *d, gint64 n, guint8 *dst)
{
#define ENC(T, FLOAT_EXPR, INT_EXPR)                    \
  for (gint64 i = 0; i < n; i++)                        \
    {                                                   \
      T v = from_int ? (INT_EXPR) : (FLOAT_EXPR);       \
      memcpy (dst + i * sizeof (T), &v, sizeof (T));    \
    }
  switch (dtype)
    {
    case ACCEL_DTYPE_F16:
      ENC (guint16, accel_f16_from_f64 (d->re[i]), accel_f16_from_f64 (i64_to_f64_odd (d->iv[i])));
      break;
    case ACCEL_DTYPE_BF16:
      ENC (guint16, accel_bf16_from_f64 (d->re[i]), accel_bf16_from_f64 (i64_to_f64_odd (d->iv[i])));
      break;
    case ACCEL_DTYPE_FP8_E4M3:
      ENC (guint8, accel_fp8_e4m3_from_f64 (d->re[i]), accel_fp8_e4m3_from_f64 (i64_to_f64_odd (d->iv[i])));
      break;
    case ACCEL_DTYPE_FP8_E5M2:
      ENC (guint8, accel_fp8_e5m2_from_f64 (d->re[i]), accel_fp8_e5m2_from_f64 (i64_to_f64_odd (d->iv[i])));
      break;
    case ACCEL_DTYPE_F32:
      ENC (float, (float) d->re[i], (float) d->iv[i]);
      break;
    case ACCEL_DTYPE_F64:
      ENC (double, d->re[i], (double) d->iv[i]);
      break;
    case ACCEL_DTYPE_C64:
      for (gint64 i = 0; i < n; i++)
        {
          float v[2] = { from_int ? (float) d->iv[i] : (float) d->re[i], from_int ? 0.0f : (float) d->im[i] };
          memcpy (dst + i * 8, v, 8);
        }
      break;
    case ACCEL_DTYPE_C128:
      for (gint64 i = 0; i < n; i++)
        {
          double v[2] = { from_int ? (double) d->iv[i] : d->re[i], from_int ? 0.0 : d->im[i] };
          memcpy (dst + i * 16, v, 16);
        }
      break;
    case ACCEL_DTYPE_I8:
      ENC (gint8, (gint8) accel_sat_trunc (d->re[i], -128.0, 128.0, G_MININT8, G_MAXINT8),
           (gint8) clamp_i64 (d->iv[i], G_MININT8, G_MAXINT8));
      break;
    case ACCEL_DTYPE_U8:
      ENC (guint8, (guint8) accel_sat_trunc (d->re[i], 0.0, 256.0, 0, G_MAXUINT8),
           (guint8) clamp_i64 (d->iv[i], 0, G_MAXUINT8));
      break;
    case ACCEL_DTYPE_I32:
      ENC (gint32, (gint32) accel_sat_trunc (d->re[i], -2147483648.0, 2147483648.0, G_MININT32, G_MAXINT32),
           (gint32) clamp_i64 (d->iv[i], G_MININT32, G_MAXINT32));
      break;
    case ACCEL_DTYPE_U32:
      ENC (guint32, (guint32) accel_sat_trunc (d->re[i], 0.0, 4294967296.0, 0, G_MAXUINT32),
           (guint32) clamp_i64 (d->iv[i], 0, G_MAXUINT32));
      break;
    case ACCEL_DTYPE_I64:
      ENC (gint64, accel_sat_trunc (d->re[i], -9223372036854775808.0, 9223372036854775808.0, G_MININT64, G_MAXINT64),
           d->iv[i]);
      break;
    default:
      g_assert_not_reached ();
    }
#undef ENC
}

/* Fast paths for the conversions mixed precision lives on. */
static gboolean
convert_fast (AccelDType from, AccelDType to, const guint8 *src, guint8 *dst, gint64 n)
{
  if (from == ACCEL_DTYPE_F32 && to == ACCEL_DTYPE_F16)
    for (gint64 i = 0; i < n; i++)
      ((guint16 *) dst)[i] = accel_f16_from_f32 (((const float *) src)[i]);
  else if (from == ACCEL_DTYPE_F32 && to == ACCEL_DTYPE_BF16)
    for (gint64 i = 0; i < n; i++)
      ((guint16 *) dst)[i] = accel_bf16_from_f32 (((const float *) src)[i]);
  else if (from == ACCEL_DTYPE_F16 && to == ACCEL_DTYPE_F32)
    for (gint64 i = 0; i < n; i++)
      ((float *) dst)[i] = accel_f16_to_f32 (((const guint16 *) src)[i]);
  else if (from == ACCEL_DTYPE_BF16 && to == ACCEL_DTYPE_F32)
    for (gint64 i = 0; i < n; i++)
      ((float *) dst)[i] = accel_bf16_to_f32 (((const guint16 *) src)[i]);
  else if (from == ACCEL_DTYPE_F32 && to == ACCEL_DTYPE_F64)
    for (gint64 i = 0; i < n; i++)
      ((double *) dst)[i] = ((const float *) src)[i];
  else if (from == ACCEL_DTYPE_F64 && to == ACCEL_DTYPE_F32)
    for (gint64 i = 0; i < n; i++)
      ((float *) dst)[i] = (float) ((const double *) src)[i];
  else if (from == to)
    memcpy (dst, src, n * accel_dtype_get_size (from));
  else
    return FALSE;
  return TRUE;
}

/* Converts @n contiguous elements. */
static void
convert_contiguous (AccelDType from, AccelDType to, const guint8 *src, guint8 *dst, gint64 n)
{
  if (convert_fast (from, to, src, dst, n))
    return;

  Decoded *d = g_new (Decoded, 1);
  gsize es = accel_dtype_get_size (from), ed = accel_dtype_get_size (to);
  gboolean from_int = accel_dtype_is_integer (from);
  for (gint64 i = 0; i < n; i += BLOCK)
    {
      gint64 m = MIN (BLOCK, n - i);
      decode_block (from, src + i * es, m, d);
      encode_block (to, from_int, d, m, dst + i * ed);
    }
  g_free (d);
}

typedef struct {
  AccelDType from, to;
  const void *src;
  void *dst;
} ConvertJob;

static void
convert_range (gint64 begin, gint64 end, gpointer data)
{
  ConvertJob *job = data;
  convert_contiguous (job->from, job->to,
                      (const guint8 *) job->src + begin * accel_dtype_get_size (job->from),
                      (guint8 *) job->dst + begin * accel_dtype_get_size (job->to), end - begin);
}

void
accel_cpu_to_f32 (const AccelCpuExec *exec, AccelDType dtype, const void *src, float *dst, gint64 n)
{
  ConvertJob job = { dtype, ACCEL_DTYPE_F32, src, dst };
  accel_cpu_parallel_for (exec, n, 64 * 1024, convert_range, &job);
}

void
accel_cpu_from_f32 (const AccelCpuExec *exec, AccelDType dtype, const float *src, void *dst, gint64 n)
{
  ConvertJob job = { ACCEL_DTYPE_F32, dtype, src, dst };
  accel_cpu_parallel_for (exec, n, 64 * 1024, convert_range, &job);
}

/* The buffer's elements as f32: the buffer itself when it is f32 (not
 * owned), else a converted copy in scratch (owned). */
float *
accel_cpu_widen (const AccelCpuExec *exec, AccelBuffer *buffer, gboolean *owned, GError **error)
{
  AccelDType dt = accel_buffer_get_dtype (buffer);
  gint64 n = accel_buffer_get_n_elements (buffer);

  *owned = dt != ACCEL_DTYPE_F32;
  if (!*owned)
    return accel_buffer_get_data (buffer);
  float *f = accel_cpu_scratch_alloc (MAX (n, 1) * sizeof (float), error);
  if (f != NULL)
    accel_cpu_to_f32 (exec, dt, accel_buffer_get_data (buffer), f, n);
  return f;
}

/* cast */

typedef struct {
  AccelBuffer *src, *dst;
  AccelDType from, to;
  gboolean contiguous;
} CastJob;

static void
cast_range (gint64 begin, gint64 end, gpointer data)
{
  CastJob *job = data;
  gsize es = accel_dtype_get_size (job->from), ed = accel_dtype_get_size (job->to);

  if (job->contiguous)
    {
      convert_contiguous (job->from, job->to,
                          (const guint8 *) accel_buffer_get_data (job->src) + begin * es,
                          (guint8 *) accel_buffer_get_data (job->dst) + begin * ed, end - begin);
      return;
    }

  guint8 in[BLOCK * 16], out[BLOCK * 16];
  for (gint64 i = begin; i < end; i += BLOCK)
    {
      gint64 m = MIN (BLOCK, end - i);
      gather (job->src, i, m, in);
      convert_contiguous (job->from, job->to, in, out, m);
      scatter (job->dst, i, m, out);
    }
}

gboolean
accel_cpu_cast_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCast *self = ACCEL_CAST (op);
  CastJob job = {
    self->src, self->dst,
    accel_buffer_get_dtype (self->src), accel_buffer_get_dtype (self->dst),
    accel_shape_is_contiguous (accel_buffer_get_shape (self->src))
      && accel_shape_is_contiguous (accel_buffer_get_shape (self->dst)),
  };
  gsize widest = MAX (accel_dtype_get_size (job.from), accel_dtype_get_size (job.to));
  accel_cpu_parallel_for (context, accel_buffer_get_n_elements (self->src),
                          min_parallel_elements (widest) / 4, cast_range, &job);
  return TRUE;
}

/* fill */

typedef struct {
  AccelBuffer *dst;
  guint8 pattern[16];
  gsize esize;
  gboolean contiguous;
} FillJob;

/* The contiguous fill of a 2-, 4- or 8-byte pattern, in stores of that
 * width (a copy of a fixed size is a plain store). */
#define FILL_WORDS(T)                                                   \
  G_STMT_START {                                                        \
    T v;                                                                \
    memcpy (&v, job->pattern, sizeof (T));                              \
    for (gint64 i = 0; i < n; i++)                                      \
      memcpy (p + sizeof (T) * i, &v, sizeof (T));                      \
  } G_STMT_END

static void
fill_range (gint64 begin, gint64 end, gpointer data)
{
  FillJob *job = data;

  if (!job->contiguous)
    {
      Walk w;
      walk_init (&w, job->dst, begin);
      for (gint64 i = begin; i < end; i++, walk_next (&w))
        copy_elem (walk_ptr (&w), job->pattern, job->esize);
      return;
    }

  guint8 *p = (guint8 *) accel_buffer_get_data (job->dst) + begin * job->esize;
  gint64 n = end - begin;
  switch (job->esize)
    {
    case 1:
      memset (p, job->pattern[0], n);
      break;
    case 2:
      FILL_WORDS (guint16);
      break;
    case 4:
      FILL_WORDS (guint32);
      break;
    case 8:
      FILL_WORDS (guint64);
      break;
    default:
      for (gint64 i = 0; i < n; i++)
        memcpy (p + job->esize * i, job->pattern, job->esize);
    }
}

gboolean
accel_cpu_fill_run (AccelOp *op, gpointer context, GError **error)
{
  AccelFill *self = ACCEL_FILL (op);
  AccelDType dtype = accel_buffer_get_dtype (self->dst);
  FillJob job = {
    .dst = self->dst,
    .esize = accel_dtype_get_size (dtype),
    .contiguous = accel_shape_is_contiguous (accel_buffer_get_shape (self->dst)),
  };
  gint64 n = accel_buffer_get_n_elements (self->dst);

  /* The common case of a one-element f32 fill is what dispatch latency is
   * measured with: keep it free of the block machinery. */
  if (dtype == ACCEL_DTYPE_F32)
    {
      float v = (float) self->value;
      memcpy (job.pattern, &v, 4);
    }
  else
    {
      Decoded d;
      d.re[0] = self->value;
      d.im[0] = self->value_imag;
      encode_block (dtype, FALSE, &d, 1, job.pattern);
    }
  if (n == 1 && job.contiguous)
    {
      memcpy (accel_buffer_get_data (self->dst), job.pattern, job.esize);
      return TRUE;
    }
  accel_cpu_parallel_for (context, n, min_parallel_elements (job.esize), fill_range, &job);
  return TRUE;
}

/* rng-fill: counters, not elements, are split between threads. */

typedef struct {
  AccelRngFill *op;
  AccelDType dtype;
  gint64 n;
  float lowf, highf;
  guint8 *data;
} RngJob;

static void
rng_range (gint64 begin, gint64 end, gpointer data)
{
  RngJob *job = data;
  const AccelRngFill *op = job->op;
  const gboolean normal = op->distribution == ACCEL_RNG_NORMAL;

  for (gint64 k = begin; k < end; k++)
    {
      guint32 w[4];
      accel_philox_block (op->seed, op->offset + (guint64) k, w);

      if (job->dtype == ACCEL_DTYPE_F64)
        {
          double *out = (double *) job->data;
          for (int j = 0; j < 2; j++)
            {
              gint64 i = 2 * k + j;
              if (i >= job->n)
                break;
              out[i] = normal ? accel_philox_normal_f64 (w, j, op->mean, op->stddev)
                              : accel_philox_uniform_f64 (w[2 * j], w[2 * j + 1], op->low, op->high);
            }
          continue;
        }

      float v[4];
      if (normal)
        for (int j = 0; j < 4; j++)
          v[j] = accel_philox_normal_f32 (w[2 * (j / 2)], w[2 * (j / 2) + 1], j & 1, op->mean, op->stddev);
      else
        for (int j = 0; j < 4; j++)
          v[j] = accel_philox_uniform_f32 (w[j], job->lowf, job->highf);

      gint64 m = MIN (4, job->n - 4 * k);
      switch (job->dtype)
        {
        case ACCEL_DTYPE_F32:
          memcpy ((float *) job->data + 4 * k, v, m * sizeof (float));
          break;
        case ACCEL_DTYPE_F16:
          for (gint64 j = 0; j < m; j++)
            ((guint16 *) job->data)[4 * k + j] = accel_f16_from_f32 (v[j]);
          break;
        case ACCEL_DTYPE_BF16:
          for (gint64 j = 0; j < m; j++)
            ((guint16 *) job->data)[4 * k + j] = accel_bf16_from_f32 (v[j]);
          break;
        default:
          g_assert_not_reached ();
        }
    }
}

gboolean
accel_cpu_rng_fill_run (AccelOp *op, gpointer context, GError **error)
{
  AccelRngFill *self = ACCEL_RNG_FILL (op);
  RngJob job = {
    .op = self,
    .dtype = accel_buffer_get_dtype (self->dst),
    .n = accel_buffer_get_n_elements (self->dst),
    .lowf = (float) self->low,
    .highf = (float) self->high,
    .data = accel_buffer_get_data (self->dst),
  };
  gint64 per_counter = job.dtype == ACCEL_DTYPE_F64 ? 2 : 4;
  gint64 counters = (job.n + per_counter - 1) / per_counter;

  accel_cpu_parallel_for (context, counters, 2048, rng_range, &job);
  return TRUE;
}
