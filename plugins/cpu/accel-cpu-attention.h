/* accel-cpu-attention.h: what the CPU attention kernels share.
 *
 * `attention`, `attention-varlen`, their backward ops and `attention-kvcache`
 * read one problem: the dims, the packed-sequence offsets of the varlen ops,
 * and the mask (causal, window, sink keys, scale, soft cap, ALiBi). It is read
 * from the op and checked here once (accel-cpu-attention.c), and the keys a
 * query row sees follow from it the same way in every kernel.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-cpu-kernels.h"

G_BEGIN_DECLS

typedef struct {
  gint64 B, Hq, Hkv, Sq, Sk, D, Dv;
  gint64 Tq;                 /* varlen: total query rows */
  const gint32 *cu_q, *cu_k; /* varlen: packed [T, H, D] rows; NULL for [B, H, S, D] */
  gboolean causal;
  gint64 window_left, window_right;
  gint64 sinks;
  double scale, softcap;
  const float *alibi;        /* nullable: [Hq] or [B, Hq] */
  gint64 alibi_batch_stride; /* 0 for [Hq] */
} AccelCpuAttnProblem;

/* The arrays a kernel reads and writes: the buffers themselves where q is
 * f32 or f64, else binary32 working copies in scratch (q, k and v widened
 * from f16, bf16 or fp8; out rounded back to its own dtype by
 * accel_cpu_attn_arrays_finish()). */
typedef struct {
  const void *q, *k, *v;
  void *out;
  float *scratch[4];
} AccelCpuAttnArrays;

gboolean accel_cpu_attn_arrays_init (AccelCpuAttnArrays *arrays, gpointer context, AccelBuffer *q, AccelBuffer *k,
                                     AccelBuffer *v, AccelBuffer *out, GError **error);
void accel_cpu_attn_arrays_finish (AccelCpuAttnArrays *arrays, gpointer context, AccelBuffer *out);

gboolean accel_cpu_attn_problem_init (AccelCpuAttnProblem *problem, const char *op_name, AccelBuffer *q,
                                      AccelBuffer *k, AccelBuffer *v, AccelBuffer *cu_seqlens_q,
                                      AccelBuffer *cu_seqlens_k, GError **error);
void accel_cpu_attn_problem_set_mask (AccelCpuAttnProblem *problem, gboolean causal, gint64 window_left,
                                      gint64 window_right, gint64 sinks, double scale, double softcap,
                                      AccelBuffer *alibi_slopes);

/* The visible keys of query row @i of a sequence of @Sq queries and @Sk
 * keys: the leading sink keys [0, *n_sinks) that the left window would
 * hide, then [*lo, *hi] (empty when *lo > *hi). */
static inline void
accel_cpu_attn_visible_keys (const AccelCpuAttnProblem *problem, gint64 Sq, gint64 Sk, gint64 i, gint64 *n_sinks,
                             gint64 *lo, gint64 *hi)
{
  gint64 base = i + Sk - Sq;
  gint64 a = 0, b = Sk - 1;

  if (problem->causal)
    b = MIN (b, base);
  if (problem->window_right >= 0)
    b = MIN (b, base + problem->window_right);
  if (problem->window_left >= 0)
    a = MAX (a, base - problem->window_left);
  *n_sinks = MAX (MIN (MIN (problem->sinks, a), b + 1), 0);
  *lo = a;
  *hi = b;
}

/* Walks the keys accel_cpu_attn_visible_keys() gives, in ascending order:
 * the sink keys, then the window. */
#define ACCEL_CPU_ATTN_FOR_VISIBLE(j, n_sinks, lo, hi) \
  for (gint64 j = (n_sinks) > 0 ? 0 : (lo); j <= (hi); j = j + 1 == (n_sinks) ? (lo) : j + 1)

G_END_DECLS
