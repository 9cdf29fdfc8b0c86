/* attention on cpu:0 against a binary64 reference written from the op's
 * definition: grouped-query heads, causal (bottom-right aligned) and sliding
 * windows, softcap, explicit scale, lse, rows that see no key, every dtype.
 * The variants against references of their own: ALiBi and sinks through a
 * dense mask and bias matrix, fp8 inputs with descales, attention-varlen
 * against plain attention on each sequence alone, attention-backward with
 * ALiBi and sinks against central differences, and the errors of each.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "cpu-test.h"

typedef struct {
  gint64 B, Hq, Hkv, Sq, Sk, D, Dv;
  gboolean causal;
  int window_left, window_right;
  double scale, softcap;
  gboolean with_lse;
} AttnCase;

/* The variants' cases: ALiBi, sinks, fp8, varlen, backward. */
typedef struct {
  gint64 B, Hq, Hkv, Sq, Sk, D, Dv;
  gboolean causal;
  int window_left, window_right, sinks;
  double scale, softcap;
  int alibi_rank;   /* 0: none, 1: [Hq], 2: [B, Hq] */
} VarCase;

/* q, k, v and out of one case with their shapes; q, k and v hold fresh
 * random values that hq, hk and hv keep for the reference. */
typedef struct {
  gint64 dq[4], dk[4], dv[4], dout[4];
  AccelBuffer *q, *k, *v, *out;
  double *hq, *hk, *hv;
} Operands;

/* Allocates the buffers of the shapes already in @o, of @rank, and fills q,
 * k and v with values in [lo, hi). */
static void
operands_fill (Operands *o, AccelDType in_dtype, AccelDType out_dtype, guint rank, double lo, double hi)
{
  o->q = cpu_test_alloc (in_dtype, o->dq, rank);
  o->k = cpu_test_alloc (in_dtype, o->dk, rank);
  o->v = cpu_test_alloc (in_dtype, o->dv, rank);
  o->out = cpu_test_alloc (out_dtype, o->dout, rank);
  o->hq = cpu_test_fill_random (o->q, lo, hi);
  o->hk = cpu_test_fill_random (o->k, lo, hi);
  o->hv = cpu_test_fill_random (o->v, lo, hi);
}

static void
operands_clear (Operands *o)
{
  g_clear_object (&o->q);
  g_clear_object (&o->k);
  g_clear_object (&o->v);
  g_clear_object (&o->out);
  g_clear_pointer (&o->hq, g_free);
  g_clear_pointer (&o->hk, g_free);
  g_clear_pointer (&o->hv, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Operands, operands_clear)

/* The [B, H, S, D] operands of a variant. */
static Operands
case_operands (const VarCase *c, AccelDType in_dtype, AccelDType out_dtype, double lo, double hi)
{
  Operands o = {
    .dq = { c->B, c->Hq, c->Sq, c->D },
    .dk = { c->B, c->Hkv, c->Sk, c->D },
    .dv = { c->B, c->Hkv, c->Sk, c->Dv },
    .dout = { c->B, c->Hq, c->Sq, c->Dv },
  };
  operands_fill (&o, in_dtype, out_dtype, 4, lo, hi);
  return o;
}

/* The mask, scores and ALiBi properties of a variant, the same on every op
 * of the family. */
static void
set_variant (AccelOp *op, const VarCase *c, AccelBuffer *alibi)
{
  g_object_set (op, "causal", c->causal, "window-left", c->window_left,
                "window-right", c->window_right, "sinks", c->sinks, "scale", c->scale,
                "softcap", c->softcap, "alibi-slopes", alibi, NULL);
}

/* scale 0 stands for 1 / sqrt (D). */
static double
qk_scale (double scale, gint64 D)
{
  return scale > 0 ? scale : 1.0 / sqrt ((double) D);
}

/* Outputs are weighted means of values in [-1, 1]: an absolute bound. */
static double
mean_atol (AccelDType dtype)
{
  double acc_eps = dtype == ACCEL_DTYPE_F64 ? 1e-13 : 2e-5;
  return acc_eps + 2 * cpu_test_eps (dtype);
}

/* The lse beside the output it goes with, named after it. */
static void
assert_lse_close (const char *what, const double *got, const double *want, gsize n, double rtol, double atol)
{
  g_autofree char *lwhat = g_strconcat (what, " (lse)", NULL);
  cpu_test_assert_close (lwhat, got, want, NULL, n, rtol, atol);
}

/* Row @row of a binary64 reference: the softmax of the logits @x over
 * the @n keys that @seen lets through, times their rows of @V (@Dv
 * wide), times @out_scale, into @want and its log-sum-exp into @want_lse.
 * A row that sees no key gets zeros and -inf. */
static void
reference_softmax_row (const double *x, const gboolean *seen, gint64 n, const double *V, gint64 Dv,
                       double out_scale, double *want, double *want_lse)
{
  double m = -INFINITY, sum = 0;
  for (gint64 j = 0; j < n; j++)
    if (seen[j])
      m = MAX (m, x[j]);
  for (gint64 e = 0; e < Dv; e++)
    want[e] = 0;
  if (m == -INFINITY)
    {
      *want_lse = -INFINITY;
      return;
    }
  for (gint64 j = 0; j < n; j++)
    if (seen[j])
      {
        double p = exp (x[j] - m);
        sum += p;
        for (gint64 e = 0; e < Dv; e++)
          want[e] += p * V[j * Dv + e];
      }
  for (gint64 e = 0; e < Dv; e++)
    want[e] *= out_scale / sum;
  *want_lse = m + log (sum);
}

static gboolean
visible (const AttnCase *c, gint64 i, gint64 j)
{
  gint64 base = i + c->Sk - c->Sq;
  if (c->causal && j > base)
    return FALSE;
  if (c->window_left >= 0 && j < base - c->window_left)
    return FALSE;
  if (c->window_right >= 0 && j > base + c->window_right)
    return FALSE;
  return TRUE;
}

static void
check_attention (AccelDType dtype, const AttnCase *c)
{
  g_auto(Operands) o = {
    .dq = { c->B, c->Hq, c->Sq, c->D },
    .dk = { c->B, c->Hkv, c->Sk, c->D },
    .dv = { c->B, c->Hkv, c->Sk, c->Dv },
    .dout = { c->B, c->Hq, c->Sq, c->Dv },
  };
  operands_fill (&o, dtype, dtype, 4, -1, 1);
  g_autoptr(AccelBuffer) lse = c->with_lse ? cpu_test_alloc (ACCEL_DTYPE_F32, o.dout, 3) : NULL;
  g_autofree double *hout = cpu_test_fill_random (o.out, -1, 1);
  const double *hq = o.hq, *hk = o.hk, *hv = o.hv;

  g_autoptr(AccelOp) op = accel_attention_new (o.q, o.k, o.v, o.out);
  g_object_set (op, "lse", lse, "causal", c->causal, "window-left", c->window_left,
                "window-right", c->window_right, "scale", c->scale, "softcap", c->softcap, NULL);
  cpu_test_submit (op);
  g_autofree double *got = cpu_test_read (o.out);
  g_autofree double *got_lse = lse ? cpu_test_read (lse) : NULL;

  gint64 rows = c->B * c->Hq * c->Sq;
  g_autofree double *want = g_new (double, rows * c->Dv);
  g_autofree double *want_lse = g_new (double, rows);
  g_autofree double *s = g_new (double, c->Sk);
  g_autofree gboolean *seen = g_new (gboolean, c->Sk);
  double scale = qk_scale (c->scale, c->D);

  for (gint64 b = 0; b < c->B; b++)
    for (gint64 h = 0; h < c->Hq; h++)
      for (gint64 i = 0; i < c->Sq; i++)
        {
          gint64 row = (b * c->Hq + h) * c->Sq + i;
          gint64 kh = h / (c->Hq / c->Hkv);
          for (gint64 j = 0; j < c->Sk; j++)
            {
              seen[j] = visible (c, i, j);
              if (!seen[j])
                continue;
              double dot = 0;
              for (gint64 e = 0; e < c->D; e++)
                dot += hq[row * c->D + e] * hk[((b * c->Hkv + kh) * c->Sk + j) * c->D + e];
              double x = dot * scale;
              if (c->softcap > 0)
                x = c->softcap * tanh (x / c->softcap);
              s[j] = x;
            }
          reference_softmax_row (s, seen, c->Sk, hv + (b * c->Hkv + kh) * c->Sk * c->Dv, c->Dv, 1.0,
                                 want + row * c->Dv, want_lse + row);
        }

  g_autofree char *what = g_strdup_printf ("attention %s B%" G_GINT64_FORMAT " Hq%" G_GINT64_FORMAT
                                           " Hkv%" G_GINT64_FORMAT " Sq%" G_GINT64_FORMAT " Sk%" G_GINT64_FORMAT
                                           " D%" G_GINT64_FORMAT " Dv%" G_GINT64_FORMAT
                                           " causal %d window %d,%d scale %g softcap %g",
                                           accel_dtype_get_name (dtype), c->B, c->Hq, c->Hkv, c->Sq, c->Sk,
                                           c->D, c->Dv, c->causal, c->window_left, c->window_right,
                                           c->scale, c->softcap);
  cpu_test_assert_close (what, got, want, NULL, rows * c->Dv, 0.0, mean_atol (dtype));
  if (got_lse)
    assert_lse_close (what, got_lse, want_lse, rows, 2e-6, 2e-5);
  (void) hout;
}

static void
test_attention (gconstpointer data)
{
  AccelDType dtype = GPOINTER_TO_INT (data);
  const AttnCase cases[] = {
    /* B  Hq Hkv Sq  Sk  D   Dv  causal wl  wr  scale softcap lse */
    { 1, 1, 1, 1, 1, 1, 1, FALSE, -1, -1, 0, 0, TRUE },
    { 2, 4, 2, 7, 33, 16, 8, FALSE, -1, -1, 0, 0, TRUE },
    { 2, 4, 2, 7, 33, 16, 8, TRUE, -1, -1, 0, 0, TRUE },
    { 1, 6, 3, 33, 33, 7, 9, TRUE, -1, -1, 0.3, 0, TRUE },
    { 1, 2, 1, 33, 7, 8, 8, TRUE, -1, -1, 0, 0, TRUE },       /* Sq > Sk: early rows see nothing */
    { 1, 2, 2, 17, 33, 8, 5, FALSE, 4, 2, 0, 0, TRUE },       /* sliding window both ways */
    { 1, 2, 2, 17, 33, 8, 5, TRUE, 3, -1, 0, 0, TRUE },       /* causal + left window */
    { 1, 2, 2, 17, 17, 8, 5, FALSE, 0, 0, 0, 0, TRUE },       /* each query sees one key */
    { 2, 3, 1, 9, 129, 33, 16, FALSE, -1, -1, 0, 5.0, TRUE }, /* softcap, multi-query */
    { 1, 4, 4, 5, 9, 16, 16, TRUE, -1, 1, 2.0, 3.0, FALSE },  /* no lse; window-right with causal */
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    check_attention (dtype, &cases[i]);
}

/* A larger case that takes the threaded path. */
static void
test_attention_large (void)
{
  const AttnCase c = { 2, 8, 2, 129, 257, 64, 64, TRUE, 100, -1, 0, 30.0, TRUE };
  check_attention (ACCEL_DTYPE_F32, &c);
}

/* ---- variants: ALiBi, sinks, fp8, varlen, backward ---------------------- */

/* The dense mask and ALiBi bias of one (batch, head), straight from the
 * interface's definition: query i sits at p = i + Sk - Sq. */
static void
dense_mask_bias (const VarCase *c, double slope, gboolean *mask, double *bias)
{
  for (gint64 i = 0; i < c->Sq; i++)
    for (gint64 j = 0; j < c->Sk; j++)
      {
        gint64 p = i + c->Sk - c->Sq;
        gboolean seen = TRUE;
        if (c->causal && j > p)
          seen = FALSE;
        if (c->window_right >= 0 && j > p + c->window_right)
          seen = FALSE;
        if (c->window_left >= 0 && j < p - c->window_left && j >= c->sinks)
          seen = FALSE;
        mask[i * c->Sk + j] = seen;
        bias[i * c->Sk + j] = -slope * fabs ((double) (p - j));
      }
}

/* Binary64 forward of [B, H, S, D] data through dense matrices; @slopes is
 * [B, Hq] (NULL: no ALiBi). Empty rows get zeros and -inf. */
static void
dense_attention (const VarCase *c, const double *hq, const double *hk, const double *hv, const double *slopes,
                 double qk_scale, double out_scale, double *want, double *want_lse)
{
  g_autofree gboolean *mask = g_new (gboolean, MAX (c->Sq * c->Sk, 1));
  g_autofree double *bias = g_new (double, MAX (c->Sq * c->Sk, 1));
  g_autofree double *logit = g_new (double, MAX (c->Sq * c->Sk, 1));

  for (gint64 b = 0; b < c->B; b++)
    for (gint64 h = 0; h < c->Hq; h++)
      {
        gint64 kh = h / (c->Hq / c->Hkv);
        const double *K = hk + (b * c->Hkv + kh) * c->Sk * c->D;
        const double *V = hv + (b * c->Hkv + kh) * c->Sk * c->Dv;
        dense_mask_bias (c, slopes ? slopes[b * c->Hq + h] : 0.0, mask, bias);
        for (gint64 i = 0; i < c->Sq; i++)
          {
            gint64 row = (b * c->Hq + h) * c->Sq + i;
            const double *Q = hq + row * c->D;
            for (gint64 j = 0; j < c->Sk; j++)
              {
                double dot = 0;
                for (gint64 e = 0; e < c->D; e++)
                  dot += Q[e] * K[j * c->D + e];
                double x = dot * qk_scale;
                if (c->softcap > 0)
                  x = c->softcap * tanh (x / c->softcap);
                logit[i * c->Sk + j] = x + bias[i * c->Sk + j];
              }
            reference_softmax_row (logit + i * c->Sk, mask + i * c->Sk, c->Sk, V, c->Dv, out_scale,
                                   want + row * c->Dv, want_lse + row);
          }
      }
}

/* Random ALiBi slopes in a buffer of the case's rank; @expanded gets them as [B, Hq]. */
static AccelBuffer *
make_slopes (const VarCase *c, double **expanded)
{
  if (c->alibi_rank == 0)
    {
      *expanded = NULL;
      return NULL;
    }
  gint64 dims[2] = { c->B, c->Hq };
  AccelBuffer *buf = c->alibi_rank == 1 ? cpu_test_alloc (ACCEL_DTYPE_F32, dims + 1, 1)
                                        : cpu_test_alloc (ACCEL_DTYPE_F32, dims, 2);
  g_autofree double *hs = cpu_test_fill_random (buf, 0.01, 0.6);
  *expanded = g_new (double, c->B * c->Hq);
  for (gint64 b = 0; b < c->B; b++)
    for (gint64 h = 0; h < c->Hq; h++)
      (*expanded)[b * c->Hq + h] = hs[c->alibi_rank == 1 ? h : b * c->Hq + h];
  return buf;
}

static char *
describe_case (const char *op, AccelDType dtype, const VarCase *c)
{
  return g_strdup_printf ("%s %s B%" G_GINT64_FORMAT " Hq%" G_GINT64_FORMAT " Hkv%" G_GINT64_FORMAT
                          " Sq%" G_GINT64_FORMAT " Sk%" G_GINT64_FORMAT " D%" G_GINT64_FORMAT " Dv%" G_GINT64_FORMAT
                          " causal %d window %d,%d sinks %d scale %g softcap %g alibi rank %d",
                          op, accel_dtype_get_name (dtype), c->B, c->Hq, c->Hkv, c->Sq, c->Sk, c->D, c->Dv,
                          c->causal, c->window_left, c->window_right, c->sinks, c->scale, c->softcap,
                          c->alibi_rank);
}

static void
check_variant (AccelDType dtype, const VarCase *c)
{
  g_auto(Operands) o = case_operands (c, dtype, dtype, -1, 1);
  g_autoptr(AccelBuffer) lse = cpu_test_alloc (ACCEL_DTYPE_F32, o.dout, 3);
  g_autofree double *slopes = NULL;
  g_autoptr(AccelBuffer) alibi = make_slopes (c, &slopes);

  g_autoptr(AccelOp) op = accel_attention_new (o.q, o.k, o.v, o.out);
  g_object_set (op, "lse", lse, NULL);
  set_variant (op, c, alibi);
  cpu_test_submit (op);
  g_autofree double *got = cpu_test_read (o.out);
  g_autofree double *got_lse = cpu_test_read (lse);

  gint64 rows = c->B * c->Hq * c->Sq;
  g_autofree double *want = g_new (double, MAX (rows * c->Dv, 1));
  g_autofree double *want_lse = g_new (double, MAX (rows, 1));
  dense_attention (c, o.hq, o.hk, o.hv, slopes, qk_scale (c->scale, c->D), 1.0, want, want_lse);

  g_autofree char *what = describe_case ("attention", dtype, c);
  cpu_test_assert_close (what, got, want, NULL, rows * c->Dv, 0.0, mean_atol (dtype));
  assert_lse_close (what, got_lse, want_lse, rows, 2e-6, 2e-5);
}

static const VarCase alibi_sink_cases[] = {
  /* B  Hq Hkv Sq  Sk  D   Dv  causal wl  wr sinks scale softcap alibi */
  { 2, 4, 2, 7, 33, 16, 8, FALSE, -1, -1, 0, 0, 0, 1 },     /* ALiBi both sides of p */
  { 2, 4, 2, 7, 33, 16, 8, TRUE, -1, -1, 0, 0, 0, 2 },      /* per-batch slopes, causal */
  { 1, 6, 3, 13, 29, 7, 9, TRUE, 5, -1, 3, 0.3, 0, 1 },     /* sinks with a left window */
  { 1, 2, 1, 11, 31, 5, 3, FALSE, 2, 3, 4, 0, 4.0, 2 },     /* sinks, both windows, softcap, ALiBi */
  { 2, 3, 3, 9, 9, 8, 5, TRUE, 0, -1, 2, 0, 0, 0 },         /* one key plus two sinks */
  { 1, 2, 2, 17, 17, 8, 5, TRUE, 3, -1, 40, 0, 0, 1 },      /* more sinks than keys: no window */
  { 1, 2, 1, 23, 7, 8, 8, TRUE, 1, -1, 3, 0, 0, 1 },        /* Sq > Sk: empty rows stay empty */
  { 1, 3, 1, 5, 19, 3, 4, FALSE, 4, 0, 1, 0, 2.5, 0 },      /* sinks without ALiBi, right window 0 */
};

static void
test_attention_alibi_sinks (gconstpointer data)
{
  AccelDType dtype = GPOINTER_TO_INT (data);

  for (guint i = 0; i < G_N_ELEMENTS (alibi_sink_cases); i++)
    check_variant (dtype, &alibi_sink_cases[i]);
}

/* sinks with no left window change nothing; sinks = 0 and no ALiBi are the plain op. */
static void
test_attention_sinks_noop (void)
{
  const VarCase c = { 1, 2, 2, 9, 21, 8, 8, TRUE, -1, -1, 5, 0, 0, 0 };
  check_variant (ACCEL_DTYPE_F32, &c);
}

static void
check_fp8 (AccelDType out_dtype, const VarCase *c, double qd, double kd, double vd)
{
  g_auto(Operands) o = case_operands (c, ACCEL_DTYPE_FP8_E4M3, out_dtype, -3, 3);
  g_autoptr(AccelBuffer) lse = cpu_test_alloc (ACCEL_DTYPE_F32, o.dout, 3);
  g_autofree double *slopes = NULL;
  g_autoptr(AccelBuffer) alibi = make_slopes (c, &slopes);

  g_autoptr(AccelOp) op = accel_attention_new (o.q, o.k, o.v, o.out);
  g_object_set (op, "lse", lse, "q-descale", qd, "k-descale", kd, "v-descale", vd, NULL);
  set_variant (op, c, alibi);
  cpu_test_submit (op);
  g_autofree double *got = cpu_test_read (o.out);
  g_autofree double *got_lse = cpu_test_read (lse);

  gint64 rows = c->B * c->Hq * c->Sq;
  g_autofree double *want = g_new (double, rows * c->Dv);
  g_autofree double *want_lse = g_new (double, rows);
  dense_attention (c, o.hq, o.hk, o.hv, slopes, qk_scale (c->scale, c->D) * qd * kd, vd, want, want_lse);

  g_autofree char *base = describe_case ("attention fp8-e4m3 ->", out_dtype, c);
  g_autofree char *what = g_strdup_printf ("%s descales %g %g %g", base, qd, kd, vd);
  /* |out| <= 3 vd: the rounding of out dominates. */
  cpu_test_assert_close (what, got, want, NULL, rows * c->Dv, 0.0, 3 * vd * (2 * cpu_test_eps (out_dtype) + 1e-5));
  assert_lse_close (what, got_lse, want_lse, rows, 2e-6, 5e-5);
}

static void
test_attention_fp8 (void)
{
  const VarCase plain = { 2, 4, 2, 7, 33, 16, 8, FALSE, -1, -1, 0, 0, 0, 0 };
  const VarCase masked = { 1, 6, 3, 13, 29, 7, 9, TRUE, 5, -1, 2, 0.2, 3.0, 2 };

  check_fp8 (ACCEL_DTYPE_BF16, &plain, 1.0, 1.0, 1.0);
  check_fp8 (ACCEL_DTYPE_F16, &plain, 0.37, 1.9, 0.6);
  check_fp8 (ACCEL_DTYPE_BF16, &masked, 0.5, 0.25, 3.5);
  check_fp8 (ACCEL_DTYPE_F16, &masked, 1.3, 0.7, 0.05);
}

/* varlen against plain `attention` run on each sequence alone. */
static void
check_varlen (AccelDType dtype, const VarCase *c, const gint32 *len_q, const gint32 *len_k)
{
  gint64 B = c->B;
  g_autofree gint32 *cu_q = g_new0 (gint32, B + 1);
  g_autofree gint32 *cu_k = g_new0 (gint32, B + 1);
  for (gint64 b = 0; b < B; b++)
    {
      cu_q[b + 1] = cu_q[b] + len_q[b];
      cu_k[b + 1] = cu_k[b] + len_k[b];
    }
  gint64 Tq = cu_q[B], Tk = cu_k[B];
  gint64 dlse[2] = { c->Hq, Tq }, dcu[1] = { B + 1 };
  g_auto(Operands) o = { .dq = { Tq, c->Hq, c->D }, .dk = { Tk, c->Hkv, c->D }, .dv = { Tk, c->Hkv, c->Dv },
                         .dout = { Tq, c->Hq, c->Dv } };
  g_autoptr(AccelBuffer) lse = cpu_test_alloc (ACCEL_DTYPE_F32, dlse, 2);
  g_autoptr(AccelBuffer) bq = cpu_test_alloc (ACCEL_DTYPE_I32, dcu, 1);
  g_autoptr(AccelBuffer) bk = cpu_test_alloc (ACCEL_DTYPE_I32, dcu, 1);
  operands_fill (&o, dtype, dtype, 3, -1, 1);
  const double *hq = o.hq, *hk = o.hk, *hv = o.hv;
  g_autofree double *slopes = NULL;
  g_autoptr(AccelBuffer) alibi = make_slopes (c, &slopes);
  g_autofree double *dcu_q = g_new (double, B + 1), *dcu_k = g_new (double, B + 1);
  for (gint64 b = 0; b <= B; b++)
    {
      dcu_q[b] = cu_q[b];
      dcu_k[b] = cu_k[b];
    }
  cpu_test_write (bq, dcu_q);
  cpu_test_write (bk, dcu_k);

  g_autoptr(AccelOp) op = accel_attention_varlen_new (o.q, o.k, o.v, o.out, bq, bk);
  g_object_set (op, "lse", lse, NULL);
  set_variant (op, c, alibi);
  cpu_test_submit (op);
  g_autofree double *got = cpu_test_read (o.out);
  g_autofree double *got_lse = cpu_test_read (lse);
  g_autofree char *what = describe_case ("attention-varlen", dtype, c);

  for (gint64 b = 0; b < B; b++)
    {
      gint64 Sq = len_q[b], Sk = len_k[b];
      if (Sq == 0)
        continue;
      g_autofree double *want = g_new0 (double, Sq * c->Hq * c->Dv);
      g_autofree double *want_lse = g_new (double, Sq * c->Hq);
      if (Sk == 0)
        {
          /* No keys: zeros and -inf (the plain op has no empty key axis to compare with). */
          for (gint64 r = 0; r < Sq * c->Hq; r++)
            want_lse[r] = -INFINITY;
        }
      else
        {
          gint64 sq4[4] = { 1, c->Hq, Sq, c->D }, sk4[4] = { 1, c->Hkv, Sk, c->D };
          gint64 sv4[4] = { 1, c->Hkv, Sk, c->Dv }, so4[4] = { 1, c->Hq, Sq, c->Dv };
          g_autoptr(AccelBuffer) q1 = cpu_test_alloc (dtype, sq4, 4);
          g_autoptr(AccelBuffer) k1 = cpu_test_alloc (dtype, sk4, 4);
          g_autoptr(AccelBuffer) v1 = cpu_test_alloc (dtype, sv4, 4);
          g_autoptr(AccelBuffer) o1 = cpu_test_alloc (dtype, so4, 4);
          g_autoptr(AccelBuffer) l1 = cpu_test_alloc (ACCEL_DTYPE_F32, so4, 3);
          g_autoptr(AccelBuffer) a1 = NULL;
          g_autofree double *tq = g_new (double, c->Hq * Sq * c->D);
          g_autofree double *tk = g_new (double, c->Hkv * Sk * c->D);
          g_autofree double *tv = g_new (double, c->Hkv * Sk * c->Dv);
          for (gint64 h = 0; h < c->Hq; h++)
            for (gint64 i = 0; i < Sq; i++)
              for (gint64 e = 0; e < c->D; e++)
                tq[(h * Sq + i) * c->D + e] = hq[((cu_q[b] + i) * c->Hq + h) * c->D + e];
          for (gint64 h = 0; h < c->Hkv; h++)
            for (gint64 j = 0; j < Sk; j++)
              {
                for (gint64 e = 0; e < c->D; e++)
                  tk[(h * Sk + j) * c->D + e] = hk[((cu_k[b] + j) * c->Hkv + h) * c->D + e];
                for (gint64 e = 0; e < c->Dv; e++)
                  tv[(h * Sk + j) * c->Dv + e] = hv[((cu_k[b] + j) * c->Hkv + h) * c->Dv + e];
              }
          cpu_test_write (q1, tq);
          cpu_test_write (k1, tk);
          cpu_test_write (v1, tv);
          if (slopes != NULL)
            {
              gint64 dh[1] = { c->Hq };
              a1 = cpu_test_alloc (ACCEL_DTYPE_F32, dh, 1);
              cpu_test_write (a1, slopes + b * c->Hq);
            }
          g_autoptr(AccelOp) one = accel_attention_new (q1, k1, v1, o1);
          g_object_set (one, "lse", l1, NULL);
          set_variant (one, c, a1);
          cpu_test_submit (one);
          g_autofree double *o1h = cpu_test_read (o1);
          g_autofree double *l1h = cpu_test_read (l1);
          for (gint64 h = 0; h < c->Hq; h++)
            for (gint64 i = 0; i < Sq; i++)
              {
                for (gint64 e = 0; e < c->Dv; e++)
                  want[(i * c->Hq + h) * c->Dv + e] = o1h[(h * Sq + i) * c->Dv + e];
                want_lse[i * c->Hq + h] = l1h[h * Sq + i];
              }
        }
      g_autofree double *got_b = g_new (double, Sq * c->Hq * c->Dv);
      g_autofree double *got_lse_b = g_new (double, Sq * c->Hq);
      memcpy (got_b, got + cu_q[b] * c->Hq * c->Dv, Sq * c->Hq * c->Dv * sizeof (double));
      for (gint64 i = 0; i < Sq; i++)
        for (gint64 h = 0; h < c->Hq; h++)
          got_lse_b[i * c->Hq + h] = got_lse[h * Tq + cu_q[b] + i];
      g_autofree char *bwhat = g_strdup_printf ("%s sequence %" G_GINT64_FORMAT " (Sq %" G_GINT64_FORMAT
                                                ", Sk %" G_GINT64_FORMAT ")", what, b, Sq, Sk);
      cpu_test_assert_close (bwhat, got_b, want, NULL, Sq * c->Hq * c->Dv, 0.0,
                             1e-6 + cpu_test_eps (dtype));
      assert_lse_close (bwhat, got_lse_b, want_lse, Sq * c->Hq, 1e-6, 1e-6);
    }
}

static void
test_attention_varlen (gconstpointer data)
{
  AccelDType dtype = GPOINTER_TO_INT (data);
  /* B and the heads, dims and mask of each case; lengths below. */
  const VarCase cases[] = {
    /* B  Hq Hkv Sq Sk D   Dv  causal wl  wr sinks scale softcap alibi */
    { 5, 4, 2, 0, 0, 16, 8, FALSE, -1, -1, 0, 0, 0, 0 },
    { 5, 4, 2, 0, 0, 16, 8, TRUE, -1, -1, 0, 0, 0, 1 },
    { 5, 3, 1, 0, 0, 7, 9, TRUE, 3, -1, 2, 0.4, 0, 2 },
    { 5, 2, 2, 0, 0, 5, 3, FALSE, 2, 1, 1, 0, 3.0, 2 },
  };
  /* An empty sequence, one with no keys, Sq > Sk, Sq < Sk, a single row. */
  const gint32 fixed_q[5] = { 7, 0, 4, 9, 1 }, fixed_k[5] = { 13, 5, 0, 3, 1 };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      gint32 len_q[5], len_k[5];
      check_varlen (dtype, &cases[i], fixed_q, fixed_k);
      for (guint b = 0; b < 5; b++)
        {
          len_q[b] = g_test_rand_int_range (1, 20);
          len_k[b] = g_test_rand_int_range (1, 40);
        }
      check_varlen (dtype, &cases[i], len_q, len_k);
    }
}

/* A larger varlen batch that takes the threaded path. */
static void
test_attention_varlen_large (void)
{
  const VarCase c = { 3, 8, 2, 0, 0, 64, 64, TRUE, 100, -1, 4, 0, 30.0, 1 };
  const gint32 len_q[3] = { 129, 1, 300 }, len_k[3] = { 257, 77, 300 };
  check_varlen (ACCEL_DTYPE_F32, &c, len_q, len_k);
}

/* attention-backward with ALiBi and sinks against central differences of
 * the forward op in binary64: L = sum (dO * out). */
static double
forward_loss (AccelOp *fwd, AccelBuffer *out, const double *hdo, gint64 n)
{
  cpu_test_submit (fwd);
  g_autofree double *o = cpu_test_read (out);
  double l = 0;
  for (gint64 i = 0; i < n; i++)
    l += hdo[i] * o[i];
  return l;
}

static void
check_backward_fd (const VarCase *c)
{
  const AccelDType dtype = ACCEL_DTYPE_F64;
  g_auto(Operands) o = case_operands (c, dtype, dtype, -1, 1);
  g_autoptr(AccelBuffer) dO = cpu_test_alloc (dtype, o.dout, 4);
  g_autoptr(AccelBuffer) lse = cpu_test_alloc (ACCEL_DTYPE_F32, o.dout, 3);
  g_autoptr(AccelBuffer) gq = cpu_test_alloc (dtype, o.dq, 4);
  g_autoptr(AccelBuffer) gk = cpu_test_alloc (dtype, o.dk, 4);
  g_autoptr(AccelBuffer) gv = cpu_test_alloc (dtype, o.dv, 4);
  g_autoptr(AccelBuffer) probe = cpu_test_alloc (dtype, o.dout, 4);
  g_autofree double *hdo = cpu_test_fill_random (dO, -1, 1);
  g_autofree double *slopes = NULL;
  g_autoptr(AccelBuffer) alibi = make_slopes (c, &slopes);

  g_autoptr(AccelOp) fwd = accel_attention_new (o.q, o.k, o.v, o.out);
  g_object_set (fwd, "lse", lse, NULL);
  set_variant (fwd, c, alibi);
  cpu_test_submit (fwd);
  g_autoptr(AccelOp) bwd = accel_attention_backward_new (o.q, o.k, o.v, o.out, dO, lse, gq, gk, gv);
  set_variant (bwd, c, alibi);
  cpu_test_submit (bwd);

  /* The lse is f32: the forward loss below recomputes its own softmax in
   * binary64, so only the rounding of lse separates the two. */
  g_autoptr(AccelOp) probe_op = accel_attention_new (o.q, o.k, o.v, probe);
  set_variant (probe_op, c, alibi);
  gint64 n_out = c->B * c->Hq * c->Sq * c->Dv;
  AccelBuffer *inputs[3] = { o.q, o.k, o.v }, *grads[3] = { gq, gk, gv };
  double *host[3] = { o.hq, o.hk, o.hv };
  const char *names[3] = { "dq", "dk", "dv" };
  g_autofree char *what = describe_case ("attention-backward (finite differences)", dtype, c);

  for (guint t = 0; t < 3; t++)
    {
      gint64 n = accel_buffer_get_n_elements (inputs[t]);
      g_autofree double *got = cpu_test_read (grads[t]);
      g_autofree double *want = g_new (double, n);
      const double step = 1e-5;
      for (gint64 i = 0; i < n; i++)
        {
          double x = host[t][i];
          host[t][i] = x + step;
          cpu_test_write (inputs[t], host[t]);
          double lp = forward_loss (probe_op, probe, hdo, n_out);
          host[t][i] = x - step;
          cpu_test_write (inputs[t], host[t]);
          double lm = forward_loss (probe_op, probe, hdo, n_out);
          host[t][i] = x;
          want[i] = (lp - lm) / (2 * step);
        }
      cpu_test_write (inputs[t], host[t]);
      g_autofree char *gwhat = g_strdup_printf ("%s %s", what, names[t]);
      /* f32 lse: P = exp (s - lse) is off by ~1e-7 relative. */
      cpu_test_assert_close (gwhat, got, want, NULL, n, 1e-5, 1e-6);
    }
}

static void
test_attention_backward_alibi_sinks (void)
{
  const VarCase cases[] = {
    /* B  Hq Hkv Sq Sk D  Dv causal wl  wr sinks scale softcap alibi */
    { 2, 4, 2, 5, 9, 3, 2, TRUE, 2, -1, 2, 0, 0, 2 },
    { 1, 3, 1, 7, 6, 4, 3, FALSE, 1, 2, 1, 0.7, 2.0, 1 },
    { 1, 2, 2, 6, 11, 5, 4, TRUE, 3, -1, 0, 0, 0, 1 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    check_backward_fd (&cases[i]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  cpu_test_add_per_float_dtype ("/cpu/attention", test_attention);
  g_test_add_func ("/cpu/attention/large", test_attention_large);
  cpu_test_add_per_float_dtype ("/cpu/attention/alibi-sinks", test_attention_alibi_sinks);
  g_test_add_func ("/cpu/attention/sinks-without-window", test_attention_sinks_noop);
  g_test_add_func ("/cpu/attention/fp8", test_attention_fp8);
  cpu_test_add_per_float_dtype ("/cpu/attention-varlen", test_attention_varlen);
  g_test_add_func ("/cpu/attention-varlen/large", test_attention_varlen_large);
  g_test_add_func ("/cpu/attention-backward/alibi-sinks", test_attention_backward_alibi_sinks);
  return cpu_test_run ();
}
