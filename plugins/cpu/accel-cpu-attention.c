/* accel-cpu-attention.c: reference scaled dot-product attention on the CPU.
 *
 * One pass per query row: the visible key range follows from the mask
 * parameters (the sink keys, then the window), the row's logits are scaled
 * (and soft-capped, then given the ALiBi bias), then an exact softmax weights
 * the values. f16, bf16 and fp8 are widened to f32 first and the result
 * rounded back to the dtype of out; accumulation is in f32 (f64 for f64).
 * Rows are split between threads, each computed the same way whatever the
 * split. attention-varlen uses the same rows over packed [T, H, D] buffers,
 * one (token, head) pair a row.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "accel-cpu-kernels.h"

typedef struct {
  gint64 B, Hq, Hkv, Sq, Sk, D, Dv;
  gboolean causal;
  gint64 window_left, window_right;
  gint64 sinks;
  double scale, softcap;
  double out_scale;          /* v-descale of fp8; 1 otherwise */
  const float *alibi;        /* nullable: [Hq] or [B, Hq] */
  gint64 alibi_batch_stride; /* 0 for [Hq] */
  const gint32 *cu_q, *cu_k; /* varlen: packed [T, H, D] rows; NULL for [B, H, S, D] */
  gint64 Tq;                 /* varlen: total query rows */
  const void *q, *k, *v;     /* f32 (or f64) working arrays */
  void *out;                 /* f32 (or f64) */
  float *lse;                /* nullable */
} AttnJob;

/* Where one (sequence, head, query) row lives. Elements of key row j are at
 * k + j * k_stride, of value row j at v + j * v_stride. */
typedef struct {
  gint64 b, h, i, Sq, Sk;
  gint64 q, k, v, o, lse;   /* element offsets */
  gint64 k_stride, v_stride;
} AttnRow;

static inline void
attention_row (const AttnJob *job, gint64 row, AttnRow *r)
{
  const gint64 group = job->Hq / job->Hkv;

  if (job->cu_q == NULL)
    {
      r->i = row % job->Sq;
      r->h = (row / job->Sq) % job->Hq;
      r->b = row / (job->Sq * job->Hq);
      r->Sq = job->Sq;
      r->Sk = job->Sk;
      r->q = row * job->D;
      r->o = row * job->Dv;
      r->lse = row;
      r->k = (r->b * job->Hkv + r->h / group) * job->Sk * job->D;
      r->v = (r->b * job->Hkv + r->h / group) * job->Sk * job->Dv;
      r->k_stride = job->D;
      r->v_stride = job->Dv;
      return;
    }

  /* varlen: row = t * Hq + h; the sequence of t by bisection of cu_q. */
  const gint64 t = row / job->Hq;
  gint64 lo = 0, hi = job->B - 1;
  while (lo < hi)
    {
      gint64 mid = (lo + hi + 1) / 2;
      if (job->cu_q[mid] <= t)
        lo = mid;
      else
        hi = mid - 1;
    }
  /* Empty sequences share their start with the next one; take the last. */
  r->b = lo;
  r->h = row % job->Hq;
  r->i = t - job->cu_q[lo];
  r->Sq = job->cu_q[lo + 1] - job->cu_q[lo];
  r->Sk = job->cu_k[lo + 1] - job->cu_k[lo];
  r->q = row * job->D;
  r->o = row * job->Dv;
  r->lse = r->h * job->Tq + t;
  r->k = ((gint64) job->cu_k[lo] * job->Hkv + r->h / group) * job->D;
  r->v = ((gint64) job->cu_k[lo] * job->Hkv + r->h / group) * job->Dv;
  r->k_stride = job->Hkv * job->D;
  r->v_stride = job->Hkv * job->Dv;
}

/* The visible keys of a row: the leading sink keys [0, *n_sinks) that the
 * left window would hide, then [*lo, *hi] (empty when *lo > *hi). */
static inline void
visible_keys (const AttnJob *job, const AttnRow *r, gint64 *n_sinks, gint64 *lo, gint64 *hi)
{
  gint64 base = r->i + r->Sk - r->Sq;
  gint64 a = 0, b = r->Sk - 1;

  if (job->causal)
    b = MIN (b, base);
  if (job->window_right >= 0)
    b = MIN (b, base + job->window_right);
  if (job->window_left >= 0)
    a = MAX (a, base - job->window_left);
  *n_sinks = MAX (MIN (MIN (job->sinks, a), b + 1), 0);
  *lo = a;
  *hi = b;
}

/* Walks the sink keys, then the window. */
#define FOR_VISIBLE(j, n_sinks, lo, hi) \
  for (gint64 j = (n_sinks) > 0 ? 0 : (lo); j <= (hi); j = j + 1 == (n_sinks) ? (lo) : j + 1)

#define DEFINE_ATTENTION_ROWS(NAME, T, EXP, LOG, TANH)                                     \
static void                                                                               \
NAME (gint64 begin, gint64 end, gpointer data)                                            \
{                                                                                         \
  const AttnJob *job = data;                                                              \
  const T *Q = job->q, *K = job->k, *V = job->v;                                          \
  T *O = job->out;                                                                        \
  gint64 max_sk = job->Sk;                                                                \
  if (job->cu_k != NULL)                                                                  \
    for (gint64 b = 0; b < job->B; b++)                                                   \
      max_sk = MAX (max_sk, (gint64) (job->cu_k[b + 1] - job->cu_k[b]));                  \
  T *s = g_new (T, MAX (max_sk, 1));                                                      \
  T *acc = g_new (T, MAX (job->Dv, 1));                                                   \
                                                                                          \
  for (gint64 row = begin; row < end; row++)                                              \
    {                                                                                     \
      AttnRow r;                                                                          \
      attention_row (job, row, &r);                                                       \
      const T *q = Q + r.q;                                                               \
      const T *kh = K + r.k;                                                              \
      const T *vh = V + r.v;                                                              \
      T *o = O + r.o;                                                                     \
      gint64 n_sinks, lo, hi;                                                             \
                                                                                          \
      visible_keys (job, &r, &n_sinks, &lo, &hi);                                         \
      if (n_sinks == 0 && lo > hi)                                                        \
        {                                                                                 \
          memset (o, 0, job->Dv * sizeof (T));                                            \
          if (job->lse)                                                                   \
            job->lse[r.lse] = -INFINITY;                                                  \
          continue;                                                                       \
        }                                                                                 \
                                                                                          \
      const T scale = (T) job->scale, cap = (T) job->softcap;                             \
      const T slope = job->alibi ? (T) job->alibi[r.b * job->alibi_batch_stride + r.h] : 0; \
      const gint64 pos = r.i + r.Sk - r.Sq;                                               \
      T m = -INFINITY;                                                                    \
      FOR_VISIBLE (j, n_sinks, lo, hi)                                                    \
        {                                                                                 \
          const T *k = kh + j * r.k_stride;                                               \
          T d0 = 0, d1 = 0, d2 = 0, d3 = 0;                                               \
          gint64 e = 0;                                                                   \
          for (; e + 4 <= job->D; e += 4)                                                 \
            {                                                                             \
              d0 += q[e] * k[e];                                                          \
              d1 += q[e + 1] * k[e + 1];                                                  \
              d2 += q[e + 2] * k[e + 2];                                                  \
              d3 += q[e + 3] * k[e + 3];                                                  \
            }                                                                             \
          for (; e < job->D; e++)                                                         \
            d0 += q[e] * k[e];                                                            \
          T x = ((d0 + d1) + (d2 + d3)) * scale;                                          \
          if (cap > 0)                                                                    \
            x = cap * TANH (x / cap);                                                     \
          if (job->alibi)                                                                 \
            x -= slope * (T) ABS (pos - j);                                               \
          s[j] = x;                                                                       \
          if (x > m)                                                                      \
            m = x;                                                                        \
        }                                                                                 \
                                                                                          \
      T sum = 0;                                                                          \
      for (gint64 c = 0; c < job->Dv; c++)                                                \
        acc[c] = 0;                                                                       \
      FOR_VISIBLE (j, n_sinks, lo, hi)                                                    \
        {                                                                                 \
          const T p = EXP (s[j] - m);                                                     \
          const T *v = vh + j * r.v_stride;                                               \
          sum += p;                                                                       \
          for (gint64 c = 0; c < job->Dv; c++)                                            \
            acc[c] += p * v[c];                                                           \
        }                                                                                 \
      const T inv = (T) job->out_scale / sum;                                             \
      for (gint64 c = 0; c < job->Dv; c++)                                                \
        o[c] = acc[c] * inv;                                                              \
      if (job->lse)                                                                       \
        job->lse[r.lse] = (float) (m + LOG (sum));                                        \
    }                                                                                     \
  g_free (s);                                                                             \
  g_free (acc);                                                                           \
}

DEFINE_ATTENTION_ROWS (attention_rows_f32, float, expf, logf, tanhf)
DEFINE_ATTENTION_ROWS (attention_rows_f64, double, exp, log, tanh)

/* Runs @job over @rows rows: in place for f32 and f64, else through f32
 * working copies of @q, @k, @v (widened from f16, bf16 or fp8) and @out
 * (rounded to its own dtype). */
static gboolean
attention_compute (gpointer context, AttnJob *job, gint64 rows, AccelBuffer *q, AccelBuffer *k,
                   AccelBuffer *v, AccelBuffer *out, GError **error)
{
  AccelDType dtype = accel_buffer_get_dtype (q);

  if (rows == 0)
    return TRUE;
  /* A row costs about Sk (D + Dv) multiply-adds. */
  gint64 cost = MAX (job->Sk * (job->D + job->Dv), 1);
  gint64 min_rows = MAX (262144 / cost, 1);

  if (dtype == ACCEL_DTYPE_F32 || dtype == ACCEL_DTYPE_F64)
    {
      job->q = accel_buffer_get_data (q);
      job->k = accel_buffer_get_data (k);
      job->v = accel_buffer_get_data (v);
      job->out = accel_buffer_get_data (out);
      accel_cpu_parallel_for (context, rows, min_rows,
                              dtype == ACCEL_DTYPE_F32 ? attention_rows_f32 : attention_rows_f64, job);
      return TRUE;
    }

  gint64 nq = accel_buffer_get_n_elements (q);
  gint64 nk = accel_buffer_get_n_elements (k);
  gint64 nv = accel_buffer_get_n_elements (v);
  gint64 no = accel_buffer_get_n_elements (out);
  float *fq = accel_cpu_scratch_alloc (MAX (nq, 1) * sizeof (float), error);
  float *fk = fq ? accel_cpu_scratch_alloc (MAX (nk, 1) * sizeof (float), error) : NULL;
  float *fv = fk ? accel_cpu_scratch_alloc (MAX (nv, 1) * sizeof (float), error) : NULL;
  float *fo = fv ? accel_cpu_scratch_alloc (MAX (no, 1) * sizeof (float), error) : NULL;
  if (fo != NULL)
    {
      accel_cpu_to_f32 (context, dtype, accel_buffer_get_data (q), fq, nq);
      accel_cpu_to_f32 (context, accel_buffer_get_dtype (k), accel_buffer_get_data (k), fk, nk);
      accel_cpu_to_f32 (context, accel_buffer_get_dtype (v), accel_buffer_get_data (v), fv, nv);
      job->q = fq;
      job->k = fk;
      job->v = fv;
      job->out = fo;
      accel_cpu_parallel_for (context, rows, min_rows, attention_rows_f32, job);
      accel_cpu_from_f32 (context, accel_buffer_get_dtype (out), fo, accel_buffer_get_data (out), no);
    }
  accel_cpu_scratch_free (fq);
  accel_cpu_scratch_free (fk);
  accel_cpu_scratch_free (fv);
  accel_cpu_scratch_free (fo);
  return fo != NULL;
}

static gboolean
attention_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAttention *self = ACCEL_ATTENTION (op);
  const AccelShape *sq = accel_buffer_get_shape (self->q);
  const AccelShape *sk = accel_buffer_get_shape (self->k);
  const AccelShape *sv = accel_buffer_get_shape (self->v);
  AttnJob job = {
    .B = accel_shape_get_dim (sq, 0),
    .Hq = accel_shape_get_dim (sq, 1),
    .Sq = accel_shape_get_dim (sq, 2),
    .D = accel_shape_get_dim (sq, 3),
    .Hkv = accel_shape_get_dim (sk, 1),
    .Sk = accel_shape_get_dim (sk, 2),
    .Dv = accel_shape_get_dim (sv, 3),
    .causal = self->causal,
    .window_left = self->window_left,
    .window_right = self->window_right,
    .sinks = self->sinks,
    .softcap = self->softcap,
    .out_scale = self->v_descale,
    .alibi = self->alibi_slopes ? accel_buffer_get_data (self->alibi_slopes) : NULL,
    .lse = self->lse ? accel_buffer_get_data (self->lse) : NULL,
  };
  job.scale = self->scale > 0.0 ? self->scale : (job.D > 0 ? 1.0 / sqrt ((double) job.D) : 1.0);
  /* The descales are 1.0 unless the inputs are fp8 (validated). */
  job.scale *= self->q_descale * self->k_descale;
  if (self->alibi_slopes != NULL && accel_shape_get_rank (accel_buffer_get_shape (self->alibi_slopes)) == 2)
    job.alibi_batch_stride = job.Hq;

  return attention_compute (context, &job, job.B * job.Hq * job.Sq, self->q, self->k, self->v, self->out, error);
}

/**
 * accel_cpu_check_cu_seqlens:
 * @op_name: the op, for the message
 * @cu: the @n values of a cu-seqlens buffer
 * @n: how many (B + 1, at least 1)
 * @total: the packed rows they must end at
 * @name: the buffer's property name
 * @error: return location for a #GError
 *
 * Checks cu[0] == 0, cu non-decreasing and cu[n - 1] == @total.
 *
 * Returns: %TRUE if they hold; else an error naming the first bad index
 */
gboolean
accel_cpu_check_cu_seqlens (const char *op_name, const gint32 *cu, gint64 n, gint64 total, const char *name,
                            GError **error)
{
  if (cu[0] != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “%s”[0] is %d, expected 0", op_name, name, cu[0]);
      return FALSE;
    }
  for (gint64 b = 1; b < n; b++)
    if (cu[b] < cu[b - 1])
      {
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "%s: “%s”[%" G_GINT64_FORMAT "] is %d, below “%s”[%" G_GINT64_FORMAT "] = %d;"
                     " the offsets must not decrease", op_name, name, b, cu[b], name, b - 1, cu[b - 1]);
        return FALSE;
      }
  if (cu[n - 1] != total)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “%s”[%" G_GINT64_FORMAT "] is %d, expected the %" G_GINT64_FORMAT
                   " packed rows", op_name, name, n - 1, cu[n - 1], total);
      return FALSE;
    }
  return TRUE;
}

static gboolean
attention_varlen_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAttentionVarlen *self = ACCEL_ATTENTION_VARLEN (op);
  const AccelShape *sq = accel_buffer_get_shape (self->q);
  const AccelShape *sk = accel_buffer_get_shape (self->k);
  const AccelShape *sv = accel_buffer_get_shape (self->v);
  gint64 n_cu = accel_buffer_get_n_elements (self->cu_seqlens_q);
  AttnJob job = {
    .B = n_cu - 1,
    .Tq = accel_shape_get_dim (sq, 0),
    .Hq = accel_shape_get_dim (sq, 1),
    .D = accel_shape_get_dim (sq, 2),
    .Hkv = accel_shape_get_dim (sk, 1),
    .Dv = accel_shape_get_dim (sv, 2),
    .causal = self->causal,
    .window_left = self->window_left,
    .window_right = self->window_right,
    .sinks = self->sinks,
    .softcap = self->softcap,
    .out_scale = 1.0,
    .alibi = self->alibi_slopes ? accel_buffer_get_data (self->alibi_slopes) : NULL,
    .cu_q = accel_buffer_get_data (self->cu_seqlens_q),
    .cu_k = accel_buffer_get_data (self->cu_seqlens_k),
    .lse = self->lse ? accel_buffer_get_data (self->lse) : NULL,
  };
  job.scale = self->scale > 0.0 ? self->scale : (job.D > 0 ? 1.0 / sqrt ((double) job.D) : 1.0);
  if (self->alibi_slopes != NULL && accel_shape_get_rank (accel_buffer_get_shape (self->alibi_slopes)) == 2)
    job.alibi_batch_stride = job.Hq;

  if (!accel_cpu_check_cu_seqlens ("attention-varlen", job.cu_q, n_cu, job.Tq, "cu-seqlens-q", error)
      || !accel_cpu_check_cu_seqlens ("attention-varlen", job.cu_k, n_cu, accel_shape_get_dim (sk, 0), "cu-seqlens-k",
                                      error))
    return FALSE;
  /* The longest sequence sizes the per-thread work estimate and logit row. */
  job.Sk = 0;
  job.Sq = 0;
  for (gint64 b = 0; b < job.B; b++)
    job.Sk = MAX (job.Sk, (gint64) (job.cu_k[b + 1] - job.cu_k[b]));

  return attention_compute (context, &job, job.Tq * job.Hq, self->q, self->k, self->v, self->out, error);
}

static const AccelKernelVTable attention_kernel = { .run = attention_run };
static const AccelKernelVTable attention_varlen_kernel = { .run = attention_varlen_run };

void
accel_cpu_register_attention_kernels (AccelPlugin *plugin)
{
  accel_plugin_register_kernel (plugin, "attention", "cpu", ACCEL_CPU_KERNEL_RANK, &attention_kernel);
  accel_plugin_register_kernel (plugin, "attention-varlen", "cpu", ACCEL_CPU_KERNEL_RANK, &attention_varlen_kernel);
}
