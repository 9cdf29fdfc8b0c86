/* accel-cpu-attention.c: reference scaled dot-product attention on the CPU.
 *
 * One pass per query row: the visible key range follows from the mask
 * parameters, the row's logits are scaled (and soft-capped), then an exact
 * softmax weights the values. f16 and bf16 are widened to f32 first and the
 * result rounded back; accumulation is in f32 (f64 for f64). Rows are split
 * between threads, each computed the same way whatever the split.
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
  double scale, softcap;
  const void *q, *k, *v;     /* f32 (or f64) working arrays */
  void *out;                 /* f32 (or f64) */
  float *lse;                /* nullable */
} AttnJob;

/* The visible keys [*lo, *hi] of query row @i; empty when *lo > *hi. */
static inline void
visible_keys (const AttnJob *job, gint64 i, gint64 *lo, gint64 *hi)
{
  gint64 base = i + job->Sk - job->Sq;
  gint64 a = 0, b = job->Sk - 1;

  if (job->causal)
    b = MIN (b, base);
  if (job->window_right >= 0)
    b = MIN (b, base + job->window_right);
  if (job->window_left >= 0)
    a = MAX (a, base - job->window_left);
  *lo = a;
  *hi = b;
}

#define DEFINE_ATTENTION_ROWS(NAME, T, EXP, LOG, TANH)                                     \
static void                                                                               \
NAME (gint64 begin, gint64 end, gpointer data)                                            \
{                                                                                         \
  const AttnJob *job = data;                                                              \
  const T *Q = job->q, *K = job->k, *V = job->v;                                          \
  T *O = job->out;                                                                        \
  const gint64 group = job->Hq / job->Hkv;                                                \
  T *s = g_new (T, MAX (job->Sk, 1));                                                     \
  T *acc = g_new (T, MAX (job->Dv, 1));                                                   \
                                                                                          \
  for (gint64 row = begin; row < end; row++)                                              \
    {                                                                                     \
      const gint64 i = row % job->Sq;                                                     \
      const gint64 h = (row / job->Sq) % job->Hq;                                         \
      const gint64 b = row / (job->Sq * job->Hq);                                         \
      const gint64 hk = h / group;                                                        \
      const T *q = Q + row * job->D;                                                      \
      const T *kh = K + (b * job->Hkv + hk) * job->Sk * job->D;                           \
      const T *vh = V + (b * job->Hkv + hk) * job->Sk * job->Dv;                          \
      T *o = O + row * job->Dv;                                                           \
      gint64 lo, hi;                                                                      \
                                                                                          \
      visible_keys (job, i, &lo, &hi);                                                    \
      if (lo > hi)                                                                        \
        {                                                                                 \
          memset (o, 0, job->Dv * sizeof (T));                                            \
          if (job->lse)                                                                   \
            job->lse[row] = -INFINITY;                                                    \
          continue;                                                                       \
        }                                                                                 \
                                                                                          \
      const T scale = (T) job->scale, cap = (T) job->softcap;                             \
      T m = -INFINITY;                                                                    \
      for (gint64 j = lo; j <= hi; j++)                                                   \
        {                                                                                 \
          const T *k = kh + j * job->D;                                                   \
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
          s[j - lo] = x;                                                                  \
          if (x > m)                                                                      \
            m = x;                                                                        \
        }                                                                                 \
                                                                                          \
      T sum = 0;                                                                          \
      for (gint64 c = 0; c < job->Dv; c++)                                                \
        acc[c] = 0;                                                                       \
      for (gint64 j = lo; j <= hi; j++)                                                   \
        {                                                                                 \
          const T p = EXP (s[j - lo] - m);                                                \
          const T *v = vh + j * job->Dv;                                                  \
          sum += p;                                                                       \
          for (gint64 c = 0; c < job->Dv; c++)                                            \
            acc[c] += p * v[c];                                                           \
        }                                                                                 \
      const T inv = 1 / sum;                                                              \
      for (gint64 c = 0; c < job->Dv; c++)                                                \
        o[c] = acc[c] * inv;                                                              \
      if (job->lse)                                                                       \
        job->lse[row] = (float) (m + LOG (sum));                                          \
    }                                                                                     \
  g_free (s);                                                                             \
  g_free (acc);                                                                           \
}

DEFINE_ATTENTION_ROWS (attention_rows_f32, float, expf, logf, tanhf)
DEFINE_ATTENTION_ROWS (attention_rows_f64, double, exp, log, tanh)

static gboolean
attention_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAttention *self = ACCEL_ATTENTION (op);
  const AccelShape *sq = accel_buffer_get_shape (self->q);
  const AccelShape *sk = accel_buffer_get_shape (self->k);
  const AccelShape *sv = accel_buffer_get_shape (self->v);
  AccelDType dtype = accel_buffer_get_dtype (self->q);
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
    .softcap = self->softcap,
    .lse = self->lse ? accel_buffer_get_data (self->lse) : NULL,
  };
  job.scale = self->scale > 0.0 ? self->scale : (job.D > 0 ? 1.0 / sqrt ((double) job.D) : 1.0);

  gint64 rows = job.B * job.Hq * job.Sq;
  if (rows == 0)
    return TRUE;
  /* A row costs about Sk (D + Dv) multiply-adds. */
  gint64 cost = MAX (job.Sk * (job.D + job.Dv), 1);
  gint64 min_rows = MAX (262144 / cost, 1);

  if (dtype == ACCEL_DTYPE_F32 || dtype == ACCEL_DTYPE_F64)
    {
      job.q = accel_buffer_get_data (self->q);
      job.k = accel_buffer_get_data (self->k);
      job.v = accel_buffer_get_data (self->v);
      job.out = accel_buffer_get_data (self->out);
      accel_cpu_parallel_for (context, rows, min_rows,
                              dtype == ACCEL_DTYPE_F32 ? attention_rows_f32 : attention_rows_f64, &job);
      return TRUE;
    }

  /* f16 / bf16: f32 working copies. */
  gint64 nq = accel_buffer_get_n_elements (self->q);
  gint64 nk = accel_buffer_get_n_elements (self->k);
  gint64 nv = accel_buffer_get_n_elements (self->v);
  gint64 no = accel_buffer_get_n_elements (self->out);
  float *fq = accel_cpu_scratch_alloc (nq * sizeof (float), error);
  float *fk = fq ? accel_cpu_scratch_alloc (nk * sizeof (float), error) : NULL;
  float *fv = fk ? accel_cpu_scratch_alloc (nv * sizeof (float), error) : NULL;
  float *fo = fv ? accel_cpu_scratch_alloc (no * sizeof (float), error) : NULL;
  if (fo != NULL)
    {
      accel_cpu_to_f32 (context, dtype, accel_buffer_get_data (self->q), fq, nq);
      accel_cpu_to_f32 (context, dtype, accel_buffer_get_data (self->k), fk, nk);
      accel_cpu_to_f32 (context, dtype, accel_buffer_get_data (self->v), fv, nv);
      job.q = fq;
      job.k = fk;
      job.v = fv;
      job.out = fo;
      accel_cpu_parallel_for (context, rows, min_rows, attention_rows_f32, &job);
      accel_cpu_from_f32 (context, dtype, fo, accel_buffer_get_data (self->out), no);
    }
  accel_cpu_scratch_free (fq);
  accel_cpu_scratch_free (fk);
  accel_cpu_scratch_free (fv);
  accel_cpu_scratch_free (fo);
  return fo != NULL;
}

static const AccelKernelVTable attention_kernel = { .run = attention_run };

void
accel_cpu_register_attention_kernels (AccelPlugin *plugin)
{
  accel_plugin_register_kernel (plugin, "attention", "cpu", ACCEL_CPU_KERNEL_RANK, &attention_kernel);
}
