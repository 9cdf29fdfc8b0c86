/* accel-cpu-attention-kvcache.c: the reference `attention-kvcache`.
 *
 * Checks the sequence lengths and the block-table entries in use first
 * (nothing is computed for an op with a bad one), then one pass per query
 * row: the row's visible keys follow from its position `L - Sq + i`, each
 * key row is found through the block table, and an exact softmax in
 * binary64 weights the values. f32, f16 and bf16 are widened to binary32
 * working copies and the result rounded back once; f64 is used as it is.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "accel-cpu-kernels.h"

typedef struct {
  gint64 B, Hq, Hkv, Sq, D, Dv, page, max_blocks;
  gboolean causal;
  gint64 window_left, window_right, sinks;
  double scale, softcap;
  gboolean f64;                       /* the arrays below are double, else float */
  const void *q, *k, *v;
  void *out;
  float *lse;
  const gint32 *table, *lens;
  const float *slopes;                /* nullable */
  gboolean slopes_per_batch;
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
  return ((page * job->page + j % job->page) * job->Hkv + hk) * width;
}

static void
kvcache_rows (gint64 begin, gint64 end, gpointer data)
{
  const KvJob *job = data;
  const gint64 group = job->Hq / job->Hkv;
  double *s = NULL, *acc = g_new (double, MAX (job->Dv, 1));
  gint64 s_len = 0;

  for (gint64 row = begin; row < end; row++)
    {
      const gint64 i = row % job->Sq, h = (row / job->Sq) % job->Hq, b = row / (job->Sq * job->Hq);
      const gint64 hk = h / group, L = job->lens[b], p = L - job->Sq + i;
      gint64 lo = 0, hi = L - 1;

      if (job->causal)
        hi = MIN (hi, p);
      if (job->window_right >= 0)
        hi = MIN (hi, p + job->window_right);
      if (job->window_left >= 0)
        lo = MAX (lo, p - job->window_left);
      double slope = 0;
      if (job->slopes)
        slope = job->slopes[job->slopes_per_batch ? b * job->Hq + h : h];

      if (hi + 1 > s_len)
        {
          s_len = hi + 1;
          s = g_renew (double, s, s_len);
        }
      double m = -INFINITY;
      gint64 n_seen = 0;
      for (gint64 j = 0; j <= hi; j++)
        {
          if (j < lo && j >= job->sinks)
            continue;
          gint64 kr = cache_row (job, b, hk, j, job->D);
          double d = 0;
          for (gint64 e = 0; e < job->D; e++)
            d += load (job, job->q, row * job->D + e) * load (job, job->k, kr + e);
          double x = d * job->scale;
          if (job->softcap > 0)
            x = job->softcap * tanh (x / job->softcap);
          x -= slope * fabs ((double) (p - j));
          s[j] = x;
          m = MAX (m, x);
          n_seen++;
        }

      double sum = 0;
      for (gint64 c = 0; c < job->Dv; c++)
        acc[c] = 0;
      for (gint64 j = 0; j <= hi && n_seen > 0; j++)
        {
          if (j < lo && j >= job->sinks)
            continue;
          double w = exp (s[j] - m);
          gint64 vr = cache_row (job, b, hk, j, job->Dv);
          sum += w;
          for (gint64 c = 0; c < job->Dv; c++)
            acc[c] += w * load (job, job->v, vr + c);
        }
      for (gint64 c = 0; c < job->Dv; c++)
        {
          double o = n_seen > 0 ? acc[c] / sum : 0.0;
          if (job->f64)
            ((double *) job->out)[row * job->Dv + c] = o;
          else
            ((float *) job->out)[row * job->Dv + c] = (float) o;
        }
      if (job->lse)
        job->lse[row] = n_seen > 0 ? (float) (m + log (sum)) : -INFINITY;
    }
  g_free (s);
  g_free (acc);
}

static gboolean
check_tables (const KvJob *job, gint64 P, GError **error)
{
  for (gint64 b = 0; b < job->B; b++)
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

static gboolean
kvcache_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAttentionKvcache *self = ACCEL_ATTENTION_KVCACHE (op);
  const AccelShape *sq = accel_buffer_get_shape (self->q), *sk = accel_buffer_get_shape (self->k_cache);
  AccelDType dtype = accel_buffer_get_dtype (self->q);
  KvJob job = {
    .B = accel_shape_get_dim (sq, 0),
    .Hq = accel_shape_get_dim (sq, 1),
    .Sq = accel_shape_get_dim (sq, 2),
    .D = accel_shape_get_dim (sq, 3),
    .page = accel_shape_get_dim (sk, 1),
    .Hkv = accel_shape_get_dim (sk, 2),
    .Dv = accel_shape_get_dim (accel_buffer_get_shape (self->v_cache), 3),
    .max_blocks = accel_shape_get_dim (accel_buffer_get_shape (self->block_table), 1),
    .causal = self->causal,
    .window_left = self->window_left,
    .window_right = self->window_right,
    .sinks = self->sinks,
    .softcap = self->softcap,
    .f64 = dtype == ACCEL_DTYPE_F64,
    .lse = self->lse ? accel_buffer_get_data (self->lse) : NULL,
    .table = accel_buffer_get_data (self->block_table),
    .lens = accel_buffer_get_data (self->seqlens_k),
    .slopes = self->alibi_slopes ? accel_buffer_get_data (self->alibi_slopes) : NULL,
    .slopes_per_batch = self->alibi_slopes
                        && accel_shape_get_rank (accel_buffer_get_shape (self->alibi_slopes)) == 2,
  };
  job.scale = self->scale > 0.0 ? self->scale : (job.D > 0 ? 1.0 / sqrt ((double) job.D) : 1.0);

  if (!check_tables (&job, accel_shape_get_dim (sk, 0), error))
    return FALSE;
  gint64 rows = job.B * job.Hq * job.Sq;
  if (rows == 0)
    return TRUE;

  gint64 nq = accel_buffer_get_n_elements (self->q), nk = accel_buffer_get_n_elements (self->k_cache);
  gint64 nv = accel_buffer_get_n_elements (self->v_cache), no = accel_buffer_get_n_elements (self->out);
  float *fq = NULL, *fk = NULL, *fv = NULL, *fo = NULL;
  gboolean ok = TRUE;

  if (job.f64 || dtype == ACCEL_DTYPE_F32)
    {
      job.q = accel_buffer_get_data (self->q);
      job.k = accel_buffer_get_data (self->k_cache);
      job.v = accel_buffer_get_data (self->v_cache);
      job.out = accel_buffer_get_data (self->out);
    }
  else
    {
      fq = accel_cpu_scratch_alloc (nq * sizeof (float), error);
      fk = fq ? accel_cpu_scratch_alloc (nk * sizeof (float), error) : NULL;
      fv = fk ? accel_cpu_scratch_alloc (nv * sizeof (float), error) : NULL;
      fo = fv ? accel_cpu_scratch_alloc (no * sizeof (float), error) : NULL;
      ok = fo != NULL;
      if (ok)
        {
          accel_cpu_to_f32 (context, dtype, accel_buffer_get_data (self->q), fq, nq);
          accel_cpu_to_f32 (context, dtype, accel_buffer_get_data (self->k_cache), fk, nk);
          accel_cpu_to_f32 (context, dtype, accel_buffer_get_data (self->v_cache), fv, nv);
          job.q = fq;
          job.k = fk;
          job.v = fv;
          job.out = fo;
        }
    }
  if (ok)
    {
      gint64 longest = 0;
      for (gint64 b = 0; b < job.B; b++)
        longest = MAX (longest, job.lens[b]);
      gint64 cost = MAX (longest * (job.D + job.Dv), 1);
      accel_cpu_parallel_for (context, rows, MAX (262144 / cost, 1), kvcache_rows, &job);
      if (fo != NULL)
        accel_cpu_from_f32 (context, dtype, fo, accel_buffer_get_data (self->out), no);
    }
  accel_cpu_scratch_free (fq);
  accel_cpu_scratch_free (fk);
  accel_cpu_scratch_free (fv);
  accel_cpu_scratch_free (fo);
  return ok;
}

static const AccelKernelVTable kvcache_kernel = { .run = kvcache_run };

void
accel_cpu_register_attention_kvcache (AccelPlugin *plugin)
{
  accel_plugin_register_kernel (plugin, "attention-kvcache", "cpu", ACCEL_CPU_KERNEL_RANK, &kvcache_kernel);
}
