/* accel-cpu-attention-kvcache.c: the reference `attention-kvcache`.
 *
 * Checks the sequence lengths and the block-table entries in use first
 * (nothing is computed for an op with a bad one), then one pass per query
 * row: the row's visible keys follow from its position `L - Sq + i`, each
 * key row is found through the block table, and an exact softmax in
 * binary64 weights the values. f16 and bf16 are widened to binary32
 * working copies and the result rounded back once; f32 and f64 are used
 * as they are.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "accel-cpu-attention.h"

typedef struct {
  AccelCpuAttnProblem problem;        /* Sk: each sequence has its own */
  gint64 page, max_blocks;
  gboolean f64;                       /* the arrays are double, else float */
  AccelCpuAttnArrays arrays;
  float *lse;
  const gint32 *table, *lens;
} KvJob;

static inline double
load (const KvJob *job, const void *base, gint64 i)
{
  return job->f64 ? ((const double *) base)[i] : (double) ((const float *) base)[i];
}

/* Element offset of key row @j of KV head @hk of sequence @b. */
static inline gint64
cache_row (const KvJob *job, gint64 b, gint64 hk, gint64 j, gint64 width)
{
  gint64 page = job->table[b * job->max_blocks + j / job->page];
  return ((page * job->page + j % job->page) * job->problem.Hkv + hk) * width;
}

static void
kvcache_rows (gint64 begin, gint64 end, gpointer data)
{
  const KvJob *job = data;
  const AccelCpuAttnProblem *pb = &job->problem;
  const gint64 group = pb->Hq / pb->Hkv;
  double *s = NULL, *acc = g_new (double, MAX (pb->Dv, 1));
  gint64 s_len = 0;

  for (gint64 row = begin; row < end; row++)
    {
      const gint64 i = row % pb->Sq, h = (row / pb->Sq) % pb->Hq, b = row / (pb->Sq * pb->Hq);
      const gint64 hk = h / group, L = job->lens[b], p = L - pb->Sq + i;
      gint64 n_sinks, lo, hi;

      accel_cpu_attn_visible_keys (pb, pb->Sq, L, i, &n_sinks, &lo, &hi);
      const gboolean empty = n_sinks == 0 && lo > hi;
      const double slope = pb->alibi ? pb->alibi[b * pb->alibi_batch_stride + h] : 0;

      if (hi + 1 > s_len)
        {
          s_len = hi + 1;
          s = g_renew (double, s, s_len);
        }
      double m = -INFINITY;
      ACCEL_CPU_ATTN_FOR_VISIBLE (j, n_sinks, lo, hi)
        {
          gint64 kr = cache_row (job, b, hk, j, pb->D);
          double d = 0;
          for (gint64 e = 0; e < pb->D; e++)
            d += load (job, job->arrays.q, row * pb->D + e) * load (job, job->arrays.k, kr + e);
          double x = d * pb->scale;
          if (pb->softcap > 0)
            x = pb->softcap * tanh (x / pb->softcap);
          x -= slope * fabs ((double) (p - j));
          s[j] = x;
          m = MAX (m, x);
        }

      double sum = 0;
      for (gint64 c = 0; c < pb->Dv; c++)
        acc[c] = 0;
      ACCEL_CPU_ATTN_FOR_VISIBLE (j, n_sinks, lo, hi)
        {
          double w = exp (s[j] - m);
          gint64 vr = cache_row (job, b, hk, j, pb->Dv);
          sum += w;
          for (gint64 c = 0; c < pb->Dv; c++)
            acc[c] += w * load (job, job->arrays.v, vr + c);
        }
      for (gint64 c = 0; c < pb->Dv; c++)
        {
          double o = empty ? 0.0 : acc[c] / sum;
          if (job->f64)
            ((double *) job->arrays.out)[row * pb->Dv + c] = o;
          else
            ((float *) job->arrays.out)[row * pb->Dv + c] = (float) o;
        }
      if (job->lse)
        job->lse[row] = empty ? -INFINITY : (float) (m + log (sum));
    }
  g_free (s);
  g_free (acc);
}

static gboolean
check_tables (const KvJob *job, gint64 P, GError **error)
{
  for (gint64 b = 0; b < job->problem.B; b++)
    {
      gint64 L = job->lens[b];
      if (L < 0 || L > job->max_blocks * job->page)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "attention-kvcache: “seqlens-k” of sequence %" G_GINT64_FORMAT " is %" G_GINT64_FORMAT
                       ", outside [0, %" G_GINT64_FORMAT "] (max_blocks × page)",
                       b, L, job->max_blocks * job->page);
          return FALSE;
        }
      for (gint64 n = 0; n < (L + job->page - 1) / job->page; n++)
        {
          gint64 page = job->table[b * job->max_blocks + n];
          if (page < 0 || page >= P)
            {
              g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                           "attention-kvcache: “block-table” entry [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                           "] (sequence %" G_GINT64_FORMAT ", block %" G_GINT64_FORMAT ") is %" G_GINT64_FORMAT
                           ", not a page index in [0, %" G_GINT64_FORMAT ")", b, n, b, n, page, P);
              return FALSE;
            }
        }
    }
  return TRUE;
}

gboolean
accel_cpu_attention_kvcache_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAttentionKvcache *self = ACCEL_ATTENTION_KVCACHE (op);
  const AccelShape *sq = accel_buffer_get_shape (self->q), *sk = accel_buffer_get_shape (self->k_cache);
  AccelDType dtype = accel_buffer_get_dtype (self->q);
  KvJob job = {
    .problem = {
      .B = accel_shape_get_dim (sq, 0),
      .Hq = accel_shape_get_dim (sq, 1),
      .Sq = accel_shape_get_dim (sq, 2),
      .D = accel_shape_get_dim (sq, 3),
      .Hkv = accel_shape_get_dim (sk, 2),
      .Dv = accel_shape_get_dim (accel_buffer_get_shape (self->v_cache), 3),
    },
    .page = accel_shape_get_dim (sk, 1),
    .max_blocks = accel_shape_get_dim (accel_buffer_get_shape (self->block_table), 1),
    .f64 = dtype == ACCEL_DTYPE_F64,
    .lse = self->lse ? accel_buffer_get_data (self->lse) : NULL,
    .table = accel_buffer_get_data (self->block_table),
    .lens = accel_buffer_get_data (self->seqlens_k),
  };
  AccelCpuAttnProblem *problem = &job.problem;

  accel_cpu_attn_problem_set_mask (problem, self->causal, self->window_left, self->window_right, self->sinks,
                                   self->scale, self->softcap, self->alibi_slopes);
  if (!check_tables (&job, accel_shape_get_dim (sk, 0), error))
    return FALSE;
  gint64 rows = problem->B * problem->Hq * problem->Sq;
  if (rows == 0)
    return TRUE;

  if (!accel_cpu_attn_arrays_init (&job.arrays, context, self->q, self->k_cache, self->v_cache, self->out, error))
    return FALSE;
  gint64 longest = 0;
  for (gint64 b = 0; b < problem->B; b++)
    longest = MAX (longest, job.lens[b]);
  gint64 cost = MAX (longest * (problem->D + problem->Dv), 1);
  accel_cpu_parallel_for (context, rows, MAX (262144 / cost, 1), kvcache_rows, &job);
  accel_cpu_attn_arrays_finish (&job.arrays, context, self->out);
  return TRUE;
}
