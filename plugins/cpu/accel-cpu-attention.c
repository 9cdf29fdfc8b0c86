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
#include "accel-cpu-attention.h"

typedef struct {
  AccelCpuAttnProblem problem;
  AccelCpuAttnArrays arrays;
  double out_scale;          /* v-descale of fp8; 1 otherwise */
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
attention_row (const AccelCpuAttnProblem *pb, gint64 row, AttnRow *r)
{
  const gint64 group = pb->Hq / pb->Hkv;

  if (pb->cu_q == NULL)
    {
      r->i = row % pb->Sq;
      r->h = (row / pb->Sq) % pb->Hq;
      r->b = row / (pb->Sq * pb->Hq);
      r->Sq = pb->Sq;
      r->Sk = pb->Sk;
      r->q = row * pb->D;
      r->o = row * pb->Dv;
      r->lse = row;
      r->k = (r->b * pb->Hkv + r->h / group) * pb->Sk * pb->D;
      r->v = (r->b * pb->Hkv + r->h / group) * pb->Sk * pb->Dv;
      r->k_stride = pb->D;
      r->v_stride = pb->Dv;
      return;
    }

  /* varlen: row = t * Hq + h; the sequence of t by bisection of cu_q. */
  const gint64 t = row / pb->Hq;
  gint64 lo = 0, hi = pb->B - 1;
  while (lo < hi)
    {
      gint64 mid = (lo + hi + 1) / 2;
      if (pb->cu_q[mid] <= t)
        lo = mid;
      else
        hi = mid - 1;
    }
  /* Empty sequences share their start with the next one; take the last. */
  r->b = lo;
  r->h = row % pb->Hq;
  r->i = t - pb->cu_q[lo];
  r->Sq = pb->cu_q[lo + 1] - pb->cu_q[lo];
  r->Sk = pb->cu_k[lo + 1] - pb->cu_k[lo];
  r->q = row * pb->D;
  r->o = row * pb->Dv;
  r->lse = r->h * pb->Tq + t;
  r->k = ((gint64) pb->cu_k[lo] * pb->Hkv + r->h / group) * pb->D;
  r->v = ((gint64) pb->cu_k[lo] * pb->Hkv + r->h / group) * pb->Dv;
  r->k_stride = pb->Hkv * pb->D;
  r->v_stride = pb->Hkv * pb->Dv;
}

#define DEFINE_ATTENTION_ROWS(NAME, T, EXP, LOG, TANH)                                     \
static void                                                                                \
NAME (gint64 begin, gint64 end, gpointer data)                                             \
{                                                                                          \
  const AttnJob *job = data;                                                               \
  const AccelCpuAttnProblem *pb = &job->problem;                                           \
  const T *Q = job->arrays.q, *K = job->arrays.k, *V = job->arrays.v;                      \
  T *O = job->arrays.out;                                                                  \
  gint64 max_sk = pb->Sk;                                                                  \
  if (pb->cu_k != NULL)                                                                    \
    for (gint64 b = 0; b < pb->B; b++)                                                     \
      max_sk = MAX (max_sk, (gint64) (pb->cu_k[b + 1] - pb->cu_k[b]));                     \
  T *s = g_new (T, MAX (max_sk, 1));                                                       \
  T *acc = g_new (T, MAX (pb->Dv, 1));                                                     \
                                                                                           \
  for (gint64 row = begin; row < end; row++)                                               \
    {                                                                                      \
      AttnRow r;                                                                           \
      attention_row (pb, row, &r);                                                         \
      const T *q = Q + r.q;                                                                \
      const T *kh = K + r.k;                                                               \
      const T *vh = V + r.v;                                                               \
      T *o = O + r.o;                                                                      \
      gint64 n_sinks, lo, hi;                                                              \
                                                                                           \
      accel_cpu_attn_visible_keys (pb, r.Sq, r.Sk, r.i, &n_sinks, &lo, &hi);               \
      if (n_sinks == 0 && lo > hi)                                                         \
        {                                                                                  \
          memset (o, 0, pb->Dv * sizeof (T));                                              \
          if (job->lse)                                                                    \
            job->lse[r.lse] = -INFINITY;                                                   \
          continue;                                                                        \
        }                                                                                  \
                                                                                           \
      const T scale = (T) pb->scale, cap = (T) pb->softcap;                                \
      const T slope = pb->alibi ? (T) pb->alibi[r.b * pb->alibi_batch_stride + r.h] : 0;   \
      const gint64 pos = r.i + r.Sk - r.Sq;                                                \
      T m = -INFINITY;                                                                     \
      ACCEL_CPU_ATTN_FOR_VISIBLE (j, n_sinks, lo, hi)                                      \
        {                                                                                  \
          const T *k = kh + j * r.k_stride;                                                \
          T d0 = 0, d1 = 0, d2 = 0, d3 = 0;                                                \
          gint64 e = 0;                                                                    \
          for (; e + 4 <= pb->D; e += 4)                                                   \
            {                                                                              \
              d0 += q[e] * k[e];                                                           \
              d1 += q[e + 1] * k[e + 1];                                                   \
              d2 += q[e + 2] * k[e + 2];                                                   \
              d3 += q[e + 3] * k[e + 3];                                                   \
            }                                                                              \
          for (; e < pb->D; e++)                                                           \
            d0 += q[e] * k[e];                                                             \
          T x = ((d0 + d1) + (d2 + d3)) * scale;                                           \
          if (cap > 0)                                                                     \
            x = cap * TANH (x / cap);                                                      \
          if (pb->alibi)                                                                   \
            x -= slope * (T) ABS (pos - j);                                                \
          s[j] = x;                                                                        \
          if (x > m)                                                                       \
            m = x;                                                                         \
        }                                                                                  \
                                                                                           \
      T sum = 0;                                                                           \
      for (gint64 c = 0; c < pb->Dv; c++)                                                  \
        acc[c] = 0;                                                                        \
      ACCEL_CPU_ATTN_FOR_VISIBLE (j, n_sinks, lo, hi)                                      \
        {                                                                                  \
          const T p = EXP (s[j] - m);                                                      \
          const T *v = vh + j * r.v_stride;                                                \
          sum += p;                                                                        \
          for (gint64 c = 0; c < pb->Dv; c++)                                              \
            acc[c] += p * v[c];                                                            \
        }                                                                                  \
      const T inv = (T) job->out_scale / sum;                                              \
      for (gint64 c = 0; c < pb->Dv; c++)                                                  \
        o[c] = acc[c] * inv;                                                               \
      if (job->lse)                                                                        \
        job->lse[r.lse] = (float) (m + LOG (sum));                                         \
    }                                                                                      \
  g_free (s);                                                                              \
  g_free (acc);                                                                            \
}

DEFINE_ATTENTION_ROWS (attention_rows_f32, float, expf, logf, tanhf)
DEFINE_ATTENTION_ROWS (attention_rows_f64, double, exp, log, tanh)

/**
 * accel_cpu_attn_arrays_init:
 * @arrays: (out caller-allocates): the arrays to set
 * @context: the #AccelCpuExec the kernel runs with, or %NULL
 * @q: the queries; its dtype decides
 * @k: the keys
 * @v: the values
 * @out: the result
 * @error: return location for a #GError
 *
 * Points @arrays at the data of @q, @k, @v and @out where @q is f32 or
 * f64 (validation makes the others match), else at binary32 copies:
 * @q, @k and @v widened, @out to be rounded back by
 * accel_cpu_attn_arrays_finish().
 *
 * Returns: %TRUE, or %FALSE with @error set (and nothing held) where
 *   scratch memory ran out
 */
gboolean
accel_cpu_attn_arrays_init (AccelCpuAttnArrays *arrays, gpointer context, AccelBuffer *q, AccelBuffer *k,
                            AccelBuffer *v, AccelBuffer *out, GError **error)
{
  AccelDType dtype = accel_buffer_get_dtype (q);
  AccelBuffer *buffers[4] = { q, k, v, out };

  memset (arrays, 0, sizeof *arrays);
  if (dtype == ACCEL_DTYPE_F32 || dtype == ACCEL_DTYPE_F64)
    {
      arrays->q = accel_buffer_get_data (q);
      arrays->k = accel_buffer_get_data (k);
      arrays->v = accel_buffer_get_data (v);
      arrays->out = accel_buffer_get_data (out);
      return TRUE;
    }
  for (guint i = 0; i < G_N_ELEMENTS (buffers); i++)
    {
      gint64 n = accel_buffer_get_n_elements (buffers[i]);
      arrays->scratch[i] = accel_cpu_scratch_alloc (MAX (n, 1) * sizeof (float), error);
      if (arrays->scratch[i] == NULL)
        {
          for (guint j = 0; j < i; j++)
            g_clear_pointer (&arrays->scratch[j], accel_cpu_scratch_free);
          return FALSE;
        }
    }
  for (guint i = 0; i < 3; i++)
    accel_cpu_to_f32 (context, accel_buffer_get_dtype (buffers[i]), accel_buffer_get_data (buffers[i]),
                      arrays->scratch[i], accel_buffer_get_n_elements (buffers[i]));
  arrays->q = arrays->scratch[0];
  arrays->k = arrays->scratch[1];
  arrays->v = arrays->scratch[2];
  arrays->out = arrays->scratch[3];
  return TRUE;
}

/**
 * accel_cpu_attn_arrays_finish:
 * @arrays: arrays set by accel_cpu_attn_arrays_init()
 * @context: the #AccelCpuExec the kernel ran with, or %NULL
 * @out: the result buffer @arrays was set for
 *
 * Rounds a working copy of the result into @out and frees the copies.
 */
void
accel_cpu_attn_arrays_finish (AccelCpuAttnArrays *arrays, gpointer context, AccelBuffer *out)
{
  if (arrays->scratch[3] != NULL)
    accel_cpu_from_f32 (context, accel_buffer_get_dtype (out), arrays->scratch[3], accel_buffer_get_data (out),
                        accel_buffer_get_n_elements (out));
  for (guint i = 0; i < G_N_ELEMENTS (arrays->scratch); i++)
    g_clear_pointer (&arrays->scratch[i], accel_cpu_scratch_free);
}

/* Runs @job over @rows rows, in place for f32 and f64, else through
 * binary32 working copies. */
static gboolean
attention_compute (gpointer context, AttnJob *job, gint64 rows, AccelBuffer *q, AccelBuffer *k,
                   AccelBuffer *v, AccelBuffer *out, GError **error)
{
  if (rows == 0)
    return TRUE;
  /* A row costs about Sk (D + Dv) multiply-adds. */
  gint64 cost = MAX (job->problem.Sk * (job->problem.D + job->problem.Dv), 1);
  gint64 min_rows = MAX (262144 / cost, 1);

  if (!accel_cpu_attn_arrays_init (&job->arrays, context, q, k, v, out, error))
    return FALSE;
  accel_cpu_parallel_for (context, rows, min_rows,
                          accel_buffer_get_dtype (q) == ACCEL_DTYPE_F64 ? attention_rows_f64 : attention_rows_f32,
                          job);
  accel_cpu_attn_arrays_finish (&job->arrays, context, out);
  return TRUE;
}

/* Checks that the @n offsets @cu of the buffer @name start at 0, do not
 * decrease and end at the @total packed rows; the error names the first
 * bad index. */
static gboolean
check_cu_seqlens (const char *op_name, const gint32 *cu, gint64 n, gint64 total, const char *name, GError **error)
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

/**
 * accel_cpu_attn_problem_init:
 * @problem: (out caller-allocates): the problem to fill; its mask is zeroed
 * @op_name: the op, for the messages
 * @q: the queries, [B, Hq, Sq, D], or packed [Tq, Hq, D] with @cu_seqlens_q
 * @k: the keys, [B, Hkv, Sk, D] or packed [Tk, Hkv, D]
 * @v: the values, [B, Hkv, Sk, Dv] or packed [Tk, Hkv, Dv]
 * @cu_seqlens_q: (nullable): the varlen ops' query offsets, [B + 1]
 * @cu_seqlens_k: (nullable): the varlen ops' key offsets, [B + 1]; given
 *   with @cu_seqlens_q
 * @error: return location for a #GError
 *
 * Reads the dims of @q, @k and @v. For the varlen ops it checks both
 * offset buffers (nothing may be computed for a bad one) and sets Sk to the
 * longest key sequence, which sizes the per-thread work and logit row; Sq
 * is 0 there, each sequence having its own.
 *
 * Returns: %TRUE, or %FALSE with @error set where an offset is bad
 */
gboolean
accel_cpu_attn_problem_init (AccelCpuAttnProblem *problem, const char *op_name, AccelBuffer *q, AccelBuffer *k,
                             AccelBuffer *v, AccelBuffer *cu_seqlens_q, AccelBuffer *cu_seqlens_k, GError **error)
{
  const AccelShape *sq = accel_buffer_get_shape (q);
  const AccelShape *sk = accel_buffer_get_shape (k);
  const AccelShape *sv = accel_buffer_get_shape (v);

  memset (problem, 0, sizeof *problem);
  if (cu_seqlens_q == NULL)
    {
      problem->B = accel_shape_get_dim (sq, 0);
      problem->Hq = accel_shape_get_dim (sq, 1);
      problem->Sq = accel_shape_get_dim (sq, 2);
      problem->D = accel_shape_get_dim (sq, 3);
      problem->Hkv = accel_shape_get_dim (sk, 1);
      problem->Sk = accel_shape_get_dim (sk, 2);
      problem->Dv = accel_shape_get_dim (sv, 3);
      return TRUE;
    }

  gint64 n_cu = accel_buffer_get_n_elements (cu_seqlens_q);
  problem->B = n_cu - 1;
  problem->Tq = accel_shape_get_dim (sq, 0);
  problem->Hq = accel_shape_get_dim (sq, 1);
  problem->D = accel_shape_get_dim (sq, 2);
  problem->Hkv = accel_shape_get_dim (sk, 1);
  problem->Dv = accel_shape_get_dim (sv, 2);
  problem->cu_q = accel_buffer_get_data (cu_seqlens_q);
  problem->cu_k = accel_buffer_get_data (cu_seqlens_k);
  if (!check_cu_seqlens (op_name, problem->cu_q, n_cu, problem->Tq, "cu-seqlens-q", error)
      || !check_cu_seqlens (op_name, problem->cu_k, n_cu, accel_shape_get_dim (sk, 0), "cu-seqlens-k", error))
    return FALSE;
  for (gint64 b = 0; b < problem->B; b++)
    problem->Sk = MAX (problem->Sk, (gint64) (problem->cu_k[b + 1] - problem->cu_k[b]));
  return TRUE;
}

/**
 * accel_cpu_attn_problem_set_mask:
 * @problem: a problem whose dims are set
 * @causal: the op's `causal`
 * @window_left: the op's `window-left` (-1: unbounded)
 * @window_right: the op's `window-right` (-1: unbounded)
 * @sinks: the op's `sinks`
 * @scale: the op's `scale`; 0 or less means `1 / sqrt (D)`
 * @softcap: the op's `softcap` (0: none)
 * @alibi_slopes: (nullable): the op's `alibi-slopes`, [Hq] or [B, Hq]
 *
 * Sets the mask and logit scale of @problem from the op's parameters.
 */
void
accel_cpu_attn_problem_set_mask (AccelCpuAttnProblem *problem, gboolean causal, gint64 window_left,
                                 gint64 window_right, gint64 sinks, double scale, double softcap,
                                 AccelBuffer *alibi_slopes)
{
  problem->causal = causal;
  problem->window_left = window_left;
  problem->window_right = window_right;
  problem->sinks = sinks;
  problem->softcap = softcap;
  problem->scale = scale > 0.0 ? scale : (problem->D > 0 ? 1.0 / sqrt ((double) problem->D) : 1.0);
  problem->alibi = alibi_slopes ? accel_buffer_get_data (alibi_slopes) : NULL;
  problem->alibi_batch_stride = 0;
  if (alibi_slopes != NULL && accel_shape_get_rank (accel_buffer_get_shape (alibi_slopes)) == 2)
    problem->alibi_batch_stride = problem->Hq;
}

gboolean
accel_cpu_attention_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAttention *self = ACCEL_ATTENTION (op);
  AttnJob job = {
    .out_scale = self->v_descale,
    .lse = self->lse ? accel_buffer_get_data (self->lse) : NULL,
  };
  AccelCpuAttnProblem *problem = &job.problem;

  accel_cpu_attn_problem_init (problem, "attention", self->q, self->k, self->v, NULL, NULL, NULL);
  accel_cpu_attn_problem_set_mask (problem, self->causal, self->window_left, self->window_right, self->sinks,
                                   self->scale, self->softcap, self->alibi_slopes);
  /* The descales are 1.0 unless the inputs are fp8 (validated). */
  problem->scale *= self->q_descale * self->k_descale;

  return attention_compute (context, &job, problem->B * problem->Hq * problem->Sq, self->q, self->k, self->v,
                            self->out, error);
}

gboolean
accel_cpu_attention_varlen_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAttentionVarlen *self = ACCEL_ATTENTION_VARLEN (op);
  AttnJob job = {
    .out_scale = 1.0,
    .lse = self->lse ? accel_buffer_get_data (self->lse) : NULL,
  };
  AccelCpuAttnProblem *problem = &job.problem;

  if (!accel_cpu_attn_problem_init (problem, "attention-varlen", self->q, self->k, self->v, self->cu_seqlens_q,
                                    self->cu_seqlens_k, error))
    return FALSE;
  accel_cpu_attn_problem_set_mask (problem, self->causal, self->window_left, self->window_right, self->sinks,
                                   self->scale, self->softcap, self->alibi_slopes);

  return attention_compute (context, &job, problem->Tq * problem->Hq, self->q, self->k, self->v, self->out, error);
}
