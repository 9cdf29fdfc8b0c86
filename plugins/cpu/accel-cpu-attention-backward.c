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
#include "accel-cpu-attention.h"


typedef struct {
  AccelCpuAttnProblem problem; /* varlen: the lse is [Hq, Tq] */
  const double *q, *k, *v, *out, *dout;
  const float *lse;
  double *dq, *dk, *dv;
} AttnBwdJob;

/* The row (in units of its head dim) of query @i of head @h in sequence
 * (or batch entry) @b, and of key @j of kv head @hk. */
static inline gint64
q_row (const AccelCpuAttnProblem *pb, gint64 b, gint64 h, gint64 i)
{
  return pb->cu_q ? ((gint64) pb->cu_q[b] + i) * pb->Hq + h : (b * pb->Hq + h) * pb->Sq + i;
}

static inline gint64
k_row (const AccelCpuAttnProblem *pb, gint64 b, gint64 hk, gint64 j)
{
  return pb->cu_k ? ((gint64) pb->cu_k[b] + j) * pb->Hkv + hk : (b * pb->Hkv + hk) * pb->Sk + j;
}

static inline gint64
lse_index (const AccelCpuAttnProblem *pb, gint64 b, gint64 h, gint64 i)
{
  return pb->cu_q ? h * pb->Tq + pb->cu_q[b] + i : (b * pb->Hq + h) * pb->Sq + i;
}

static void
attention_backward_items (gint64 begin, gint64 end, gpointer data)
{
  const AttnBwdJob *job = data;
  const AccelCpuAttnProblem *pb = &job->problem;
  const gint64 group = pb->Hq / pb->Hkv;
  const gint64 D = pb->D, Dv = pb->Dv;

  for (gint64 item = begin; item < end; item++)
    {
      const gint64 b = item / pb->Hkv, hk = item % pb->Hkv;
      const gint64 Sq = pb->cu_q ? pb->cu_q[b + 1] - pb->cu_q[b] : pb->Sq;
      const gint64 Sk = pb->cu_k ? pb->cu_k[b + 1] - pb->cu_k[b] : pb->Sk;

      for (gint64 j = 0; j < Sk; j++)
        {
          memset (job->dk + k_row (pb, b, hk, j) * D, 0, D * sizeof (double));
          memset (job->dv + k_row (pb, b, hk, j) * Dv, 0, Dv * sizeof (double));
        }
      for (gint64 h = hk * group; h < (hk + 1) * group; h++)
        for (gint64 i = 0; i < Sq; i++)
          {
            const gint64 row = q_row (pb, b, h, i);
            const double *q = job->q + row * D;
            const double *o = job->out + row * Dv;
            const double *dO = job->dout + row * Dv;
            double *dq = job->dq + row * D;
            const double lse = job->lse[lse_index (pb, b, h, i)];
            const double slope = pb->alibi ? pb->alibi[b * pb->alibi_batch_stride + h] : 0.0;
            const gint64 pos = i + Sk - Sq;
            gint64 n_sinks, lo, hi;

            memset (dq, 0, D * sizeof (double));
            accel_cpu_attn_visible_keys (pb, Sq, Sk, i, &n_sinks, &lo, &hi);
            if ((n_sinks == 0 && lo > hi) || isinf (lse))
              continue;
            double dsum = 0;
            for (gint64 c = 0; c < Dv; c++)
              dsum += dO[c] * o[c];
            ACCEL_CPU_ATTN_FOR_VISIBLE (j, n_sinks, lo, hi)
              {
                const gint64 kr = k_row (pb, b, hk, j);
                const double *k = job->k + kr * D, *v = job->v + kr * Dv;
                double *dkj = job->dk + kr * D, *dvj = job->dv + kr * Dv;
                double dot = 0, dp = 0;
                for (gint64 e = 0; e < D; e++)
                  dot += q[e] * k[e];
                for (gint64 c = 0; c < Dv; c++)
                  dp += dO[c] * v[c];
                double x = dot * pb->scale, deriv = pb->scale;
                if (pb->softcap > 0)
                  {
                    double t = tanh (x / pb->softcap);
                    x = pb->softcap * t;
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

gboolean
accel_cpu_attention_backward_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAttentionBackward *self = ACCEL_ATTENTION_BACKWARD (op);
  AttnBwdJob job = { .lse = accel_buffer_get_data (self->lse) };
  AccelCpuAttnProblem *problem = &job.problem;

  accel_cpu_attn_problem_init (problem, "attention-backward", self->q, self->k, self->v, NULL, NULL, NULL);
  accel_cpu_attn_problem_set_mask (problem, self->causal, self->window_left, self->window_right, self->sinks,
                                   self->scale, self->softcap, self->alibi_slopes);

  if (problem->B * problem->Hkv == 0)
    return TRUE;
  AccelBuffer *const in[5] = { self->q, self->k, self->v, self->out, self->dout };
  return attention_backward_compute (context, &job, problem->B * problem->Hkv, in, self->dq, self->dk, self->dv,
                                     error);
}

gboolean
accel_cpu_attention_varlen_backward_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAttentionVarlenBackward *self = ACCEL_ATTENTION_VARLEN_BACKWARD (op);
  AttnBwdJob job = { .lse = accel_buffer_get_data (self->lse) };
  AccelCpuAttnProblem *problem = &job.problem;

  if (!accel_cpu_attn_problem_init (problem, "attention-varlen-backward", self->q, self->k, self->v,
                                    self->cu_seqlens_q, self->cu_seqlens_k, error))
    return FALSE;
  accel_cpu_attn_problem_set_mask (problem, self->causal, self->window_left, self->window_right, self->sinks,
                                   self->scale, self->softcap, self->alibi_slopes);

  AccelBuffer *const in[5] = { self->q, self->k, self->v, self->out, self->dout };
  return attention_backward_compute (context, &job, problem->B * problem->Hkv, in, self->dq, self->dk, self->dv,
                                     error);
}
