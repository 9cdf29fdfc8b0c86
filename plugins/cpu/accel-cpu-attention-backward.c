/* accel-cpu-attention-backward.c: reference gradients of attention on the CPU.
 *
 * The oracle of the GPU backward kernels, so it follows the op's definition
 * literally and in binary64: P is recomputed from the given lse, and
 *   dV_j += P_ij dO_i,  dS_ij = P_ij (dO_i . v_j - dO_i . O_i) c'(x_ij),
 *   dQ_i = scale sum_j dS_ij k_j,  dK_j += scale dS_ij q_i
 * with c' = 1 - tanh^2 under the soft cap (1 otherwise). The ALiBi bias and
 * the sink keys enter P exactly as in the forward pass (the bias is a
 * constant, so it adds no term to dS). One work item is a
 * (batch, kv head) pair with all of its query heads, so threads never write
 * the same dK/dV row. attention-varlen-backward runs the same items over
 * packed [T, H, D] buffers, a sequence standing for a batch entry.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "accel-cpu-kernels.h"

void accel_cpu_register_attention_backward (AccelPlugin *plugin);

typedef struct {
  gint64 B, Hq, Hkv, Sq, Sk, D, Dv;
  gboolean causal;
  gint64 window_left, window_right;
  double scale, softcap;
  const double *q, *k, *v, *out, *dout;
  const float *lse;
  const float *alibi;        /* nullable: [Hq] or [B, Hq] */
  gint64 alibi_batch_stride; /* 0 for [Hq] */
  gint64 sinks;
  const gint32 *cu_q, *cu_k; /* varlen: packed [T, H, D] rows; NULL for [B, H, S, D] */
  gint64 Tq;                 /* varlen: total query rows (the lse is [Hq, Tq]) */
  double *dq, *dk, *dv;
} AttnBwdJob;

/* The row (in units of its head dim) of query @i of head @h in sequence
 * (or batch entry) @b, and of key @j of kv head @hk. */
static inline gint64
q_row (const AttnBwdJob *job, gint64 b, gint64 h, gint64 i)
{
  return job->cu_q ? ((gint64) job->cu_q[b] + i) * job->Hq + h : (b * job->Hq + h) * job->Sq + i;
}

static inline gint64
k_row (const AttnBwdJob *job, gint64 b, gint64 hk, gint64 j)
{
  return job->cu_k ? ((gint64) job->cu_k[b] + j) * job->Hkv + hk : (b * job->Hkv + hk) * job->Sk + j;
}

static inline gint64
lse_index (const AttnBwdJob *job, gint64 b, gint64 h, gint64 i)
{
  return job->cu_q ? h * job->Tq + job->cu_q[b] + i : (b * job->Hq + h) * job->Sq + i;
}

/* The visible keys of query row @i of a sequence of @Sq queries and @Sk
 * keys: the leading sink keys [0, *n_sinks) that the left window would
 * hide, then [*lo, *hi]. */
static inline void
visible_keys (const AttnBwdJob *job, gint64 Sq, gint64 Sk, gint64 i, gint64 *n_sinks, gint64 *lo, gint64 *hi)
{
  gint64 base = i + Sk - Sq;
  gint64 a = 0, b = Sk - 1;

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

static void
attention_backward_items (gint64 begin, gint64 end, gpointer data)
{
  const AttnBwdJob *job = data;
  const gint64 group = job->Hq / job->Hkv;
  const gint64 D = job->D, Dv = job->Dv;

  for (gint64 item = begin; item < end; item++)
    {
      const gint64 b = item / job->Hkv, hk = item % job->Hkv;
      const gint64 Sq = job->cu_q ? job->cu_q[b + 1] - job->cu_q[b] : job->Sq;
      const gint64 Sk = job->cu_k ? job->cu_k[b + 1] - job->cu_k[b] : job->Sk;

      for (gint64 j = 0; j < Sk; j++)
        {
          memset (job->dk + k_row (job, b, hk, j) * D, 0, D * sizeof (double));
          memset (job->dv + k_row (job, b, hk, j) * Dv, 0, Dv * sizeof (double));
        }
      for (gint64 h = hk * group; h < (hk + 1) * group; h++)
        for (gint64 i = 0; i < Sq; i++)
          {
            const gint64 row = q_row (job, b, h, i);
            const double *q = job->q + row * D;
            const double *o = job->out + row * Dv;
            const double *dO = job->dout + row * Dv;
            double *dq = job->dq + row * D;
            const double lse = job->lse[lse_index (job, b, h, i)];
            const double slope = job->alibi ? job->alibi[b * job->alibi_batch_stride + h] : 0.0;
            const gint64 pos = i + Sk - Sq;
            gint64 n_sinks, lo, hi;

            memset (dq, 0, D * sizeof (double));
            visible_keys (job, Sq, Sk, i, &n_sinks, &lo, &hi);
            if ((n_sinks == 0 && lo > hi) || isinf (lse))
              continue;
            double dsum = 0;
            for (gint64 c = 0; c < Dv; c++)
              dsum += dO[c] * o[c];
            for (gint64 j = n_sinks > 0 ? 0 : lo; j <= hi; j = j + 1 == n_sinks ? MAX (lo, n_sinks) : j + 1)
              {
                const gint64 kr = k_row (job, b, hk, j);
                const double *k = job->k + kr * D, *v = job->v + kr * Dv;
                double *dkj = job->dk + kr * D, *dvj = job->dv + kr * Dv;
                double dot = 0, dp = 0;
                for (gint64 e = 0; e < D; e++)
                  dot += q[e] * k[e];
                for (gint64 c = 0; c < Dv; c++)
                  dp += dO[c] * v[c];
                double x = dot * job->scale, deriv = job->scale;
                if (job->softcap > 0)
                  {
                    double t = tanh (x / job->softcap);
                    x = job->softcap * t;
                    deriv *= 1 - t * t;
                  }
                x -= slope * (double) ABS (pos - j);
                const double p = exp (x - lse);
                const double ds = p * (dp - dsum) * deriv;
                for (gint64 c = 0; c < Dv; c++)
                  dvj[c] += p * dO[c];
                for (gint64 e = 0; e < D; e++)
                  {
                    dq[e] += ds * k[e];
                    dkj[e] += ds * q[e];
                  }
              }
          }
    }
}

/* The buffer's contents as binary64 (f16/bf16/f32 through binary32). */
static double *
widen (const AccelCpuExec *exec, AccelBuffer *buffer, GError **error)
{
  AccelDType dtype = accel_buffer_get_dtype (buffer);
  gint64 n = accel_buffer_get_n_elements (buffer);
  double *out = accel_cpu_scratch_alloc (MAX (n, 1) * sizeof (double), error);

  if (out == NULL)
    return NULL;
  if (dtype == ACCEL_DTYPE_F64)
    {
      memcpy (out, accel_buffer_get_data (buffer), n * sizeof (double));
      return out;
    }
  float *tmp = accel_cpu_scratch_alloc (MAX (n, 1) * sizeof (float), error);
  if (tmp == NULL)
    {
      accel_cpu_scratch_free (out);
      return NULL;
    }
  accel_cpu_to_f32 (exec, dtype, accel_buffer_get_data (buffer), tmp, n);
  for (gint64 i = 0; i < n; i++)
    out[i] = tmp[i];
  accel_cpu_scratch_free (tmp);
  return out;
}

/* Stores binary64 @src into @buffer, rounding to its dtype. */
static gboolean
narrow (const AccelCpuExec *exec, const double *src, AccelBuffer *buffer, GError **error)
{
  AccelDType dtype = accel_buffer_get_dtype (buffer);
  gint64 n = accel_buffer_get_n_elements (buffer);

  if (dtype == ACCEL_DTYPE_F64)
    {
      memcpy (accel_buffer_get_data (buffer), src, n * sizeof (double));
      return TRUE;
    }
  float *tmp = accel_cpu_scratch_alloc (MAX (n, 1) * sizeof (float), error);
  if (tmp == NULL)
    return FALSE;
  for (gint64 i = 0; i < n; i++)
    tmp[i] = (float) src[i];
  accel_cpu_from_f32 (exec, dtype, tmp, accel_buffer_get_data (buffer), n);
  accel_cpu_scratch_free (tmp);
  return TRUE;
}

/* Widens the inputs (q, k, v, out, dout), runs @job's items and rounds
 * the gradients into @gq, @gk, @gv. */
static gboolean
attention_backward_compute (gpointer context, AttnBwdJob *job, gint64 n_items, AccelBuffer *const in[5],
                            AccelBuffer *gq, AccelBuffer *gk, AccelBuffer *gv, GError **error)
{
  double *w[5] = { NULL, };
  double *dq = NULL, *dk = NULL, *dv = NULL;
  gint64 nq = MAX (accel_buffer_get_n_elements (gq), 1);
  gboolean ok = TRUE;

  for (guint i = 0; i < G_N_ELEMENTS (w) && ok; i++)
    ok = (w[i] = widen (context, in[i], error)) != NULL;
  if (ok)
    ok = (dq = accel_cpu_scratch_alloc (nq * sizeof (double), error)) != NULL
         && (dk = accel_cpu_scratch_alloc (MAX (accel_buffer_get_n_elements (gk), 1) * sizeof (double), error)) != NULL
         && (dv = accel_cpu_scratch_alloc (MAX (accel_buffer_get_n_elements (gv), 1) * sizeof (double), error)) != NULL;
  if (ok)
    {
      /* Rows no item writes (the queries of a sequence without keys) are 0. */
      memset (dq, 0, nq * sizeof (double));
      job->q = w[0];
      job->k = w[1];
      job->v = w[2];
      job->out = w[3];
      job->dout = w[4];
      job->dq = dq;
      job->dk = dk;
      job->dv = dv;
      accel_cpu_parallel_for (context, n_items, 1, attention_backward_items, job);
      ok = narrow (context, dq, gq, error) && narrow (context, dk, gk, error) && narrow (context, dv, gv, error);
    }
  for (guint i = 0; i < G_N_ELEMENTS (w); i++)
    accel_cpu_scratch_free (w[i]);
  accel_cpu_scratch_free (dq);
  accel_cpu_scratch_free (dk);
  accel_cpu_scratch_free (dv);
  return ok;
}

/* The mask, scale and lse of either backward op, once @job has its dims. */
static void
job_set_mask (AttnBwdJob *job, gboolean causal, int window_left, int window_right, double scale, double softcap,
              AccelBuffer *lse, AccelBuffer *alibi_slopes, int sinks)
{
  job->causal = causal;
  job->window_left = window_left;
  job->window_right = window_right;
  job->softcap = softcap;
  job->lse = accel_buffer_get_data (lse);
  job->alibi = alibi_slopes ? accel_buffer_get_data (alibi_slopes) : NULL;
  job->sinks = sinks;
  if (alibi_slopes != NULL && accel_shape_get_rank (accel_buffer_get_shape (alibi_slopes)) == 2)
    job->alibi_batch_stride = job->Hq;
  job->scale = scale > 0.0 ? scale : (job->D > 0 ? 1.0 / sqrt ((double) job->D) : 1.0);
}

static gboolean
attention_backward_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAttentionBackward *self = ACCEL_ATTENTION_BACKWARD (op);
  const AccelShape *sq = accel_buffer_get_shape (self->q);
  const AccelShape *sk = accel_buffer_get_shape (self->k);
  const AccelShape *sv = accel_buffer_get_shape (self->v);
  AttnBwdJob job = {
    .B = accel_shape_get_dim (sq, 0),
    .Hq = accel_shape_get_dim (sq, 1),
    .Sq = accel_shape_get_dim (sq, 2),
    .D = accel_shape_get_dim (sq, 3),
    .Hkv = accel_shape_get_dim (sk, 1),
    .Sk = accel_shape_get_dim (sk, 2),
    .Dv = accel_shape_get_dim (sv, 3),
  };
  job_set_mask (&job, self->causal, self->window_left, self->window_right, self->scale, self->softcap, self->lse,
                self->alibi_slopes, self->sinks);

  if (job.B * job.Hkv == 0)
    return TRUE;
  AccelBuffer *const in[5] = { self->q, self->k, self->v, self->out, self->dout };
  return attention_backward_compute (context, &job, job.B * job.Hkv, in, self->dq, self->dk, self->dv, error);
}

static gboolean
attention_varlen_backward_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAttentionVarlenBackward *self = ACCEL_ATTENTION_VARLEN_BACKWARD (op);
  const AccelShape *sq = accel_buffer_get_shape (self->q);
  const AccelShape *sk = accel_buffer_get_shape (self->k);
  const AccelShape *sv = accel_buffer_get_shape (self->v);
  gint64 n_cu = accel_buffer_get_n_elements (self->cu_seqlens_q);
  AttnBwdJob job = {
    .B = n_cu - 1,
    .Tq = accel_shape_get_dim (sq, 0),
    .Hq = accel_shape_get_dim (sq, 1),
    .D = accel_shape_get_dim (sq, 2),
    .Hkv = accel_shape_get_dim (sk, 1),
    .Dv = accel_shape_get_dim (sv, 2),
    .cu_q = accel_buffer_get_data (self->cu_seqlens_q),
    .cu_k = accel_buffer_get_data (self->cu_seqlens_k),
  };
  job_set_mask (&job, self->causal, self->window_left, self->window_right, self->scale, self->softcap, self->lse,
                self->alibi_slopes, self->sinks);

  if (!accel_cpu_check_cu_seqlens ("attention-varlen-backward", job.cu_q, n_cu, job.Tq, "cu-seqlens-q", error)
      || !accel_cpu_check_cu_seqlens ("attention-varlen-backward", job.cu_k, n_cu, accel_shape_get_dim (sk, 0),
                                      "cu-seqlens-k", error))
    return FALSE;
  AccelBuffer *const in[5] = { self->q, self->k, self->v, self->out, self->dout };
  return attention_backward_compute (context, &job, job.B * job.Hkv, in, self->dq, self->dk, self->dv, error);
}

static const AccelKernelVTable attention_backward_kernel = { .run = attention_backward_run };
static const AccelKernelVTable attention_varlen_backward_kernel = { .run = attention_varlen_backward_run };

void
accel_cpu_register_attention_backward (AccelPlugin *plugin)
{
  accel_plugin_register_kernel (plugin, "attention-backward", "cpu", ACCEL_CPU_KERNEL_RANK, &attention_backward_kernel);
  accel_plugin_register_kernel (plugin, "attention-varlen-backward", "cpu", ACCEL_CPU_KERNEL_RANK,
                                &attention_varlen_backward_kernel);
}
