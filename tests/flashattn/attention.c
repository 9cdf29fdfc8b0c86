/* The cuda_flashattn kernels (attention and attention-backward on cuda:0)
 * against the CPU oracle on cpu:0, on fresh random inputs with odd
 * lengths (1, 7, 129, 1000 among them): the specialised head dims (64, 128,
 * 256) in bf16 and f16, causal, sliding windows, grouped and multi-query
 * heads, soft cap, lse; the variants of docs/attention-variants.md: ALiBi
 * slopes ([Hq] and [B, Hq]) and attention sinks under a left window
 * (forward and backward; sinks that span more than one key block, so that
 * the skipped first blocks must come back), fp8 e4m3 inputs with descales
 * (forward); the general head dims (32, 40, 80, 96, 160, 192, and Dv != D:
 * 192/128, 64/128) and f32 inputs on a subset of the cases; and the errors
 * of what the kernels refuse (head dims that are not multiples of 8 up to
 * 256, f64), which name the supported set. The variant cases skip until
 * the op type has their properties.
 *
 * Tolerances (relative L2 error of the whole tensor): 1e-2 for bf16, 5e-3
 * for f16, 1e-5 for f32 (f32 arithmetic on both sides) in the forward
 * pass; the gradients, which go through one more rounding of P and dS to
 * the input type, get twice that. No NaN anywhere.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "flashattn-test.h"

typedef struct {
  const char *name;
  gint64 B, Hq, Hkv, Sq, Sk;
  gboolean causal;
  int window_left, window_right;
  double softcap;
  int sinks;
  int alibi;                /* 0: none, 1: [Hq], 2: [B, Hq] */
} Case;

static const Case cases[] = {
  { "plain", 2, 4, 4, 97, 97, FALSE, -1, -1, 0, 0, 0 },
  { "causal-gqa", 1, 6, 2, 181, 263, TRUE, -1, -1, 0, 0, 0 },
  { "causal-mqa-long-q", 1, 4, 1, 203, 77, TRUE, -1, -1, 0, 0, 0 },   /* early rows see no key */
  { "window", 1, 2, 2, 150, 150, FALSE, 33, 9, 0, 0, 0 },
  { "causal-window", 2, 2, 1, 129, 170, TRUE, 40, -1, 0, 0, 0 },
  { "softcap", 1, 3, 3, 65, 111, FALSE, -1, -1, 20.0, 0, 0 },
  { "single-query", 2, 2, 2, 1, 300, TRUE, -1, -1, 0, 0, 0 },
  { "alibi", 2, 4, 4, 97, 130, FALSE, -1, -1, 0, 0, 1 },
  { "alibi-causal-gqa", 2, 6, 2, 181, 263, TRUE, -1, -1, 0, 0, 2 },
  /* the window leaves the first key blocks out; the sinks bring them back */
  { "sinks-causal-window", 1, 4, 2, 300, 330, TRUE, 40, -1, 0, 4, 0 },
  { "sinks-wide-window", 1, 2, 2, 257, 400, FALSE, 30, 10, 0, 70, 0 },   /* sinks over two key blocks */
  { "sinks-window-long-q", 1, 2, 1, 203, 77, TRUE, 20, -1, 0, 5, 0 },   /* early rows see no key, sinks included */
  { "alibi-softcap-sinks", 1, 3, 1, 150, 190, TRUE, 50, -1, 20.0, 3, 1 },
  { "single-query-window", 2, 4, 2, 1, 300, TRUE, 16, -1, 0, 0, 0 },
  { "single-query-sinks", 2, 4, 2, 1, 300, TRUE, 16, -1, 0, 2, 0 },
  { "single-query-alibi", 2, 4, 2, 1, 300, TRUE, -1, -1, 0, 0, 2 },
  { "few-queries-sinks", 2, 4, 2, 5, 300, TRUE, 16, -1, 0, 2, 0 },
  { "single-query-sinks-alibi", 2, 4, 2, 1, 300, TRUE, 16, -1, 0, 2, 2 },
  { "odd-7", 3, 2, 1, 7, 7, TRUE, -1, -1, 0, 0, 0 },
  { "odd-1000", 1, 2, 2, 1000, 1000, FALSE, -1, -1, 0, 0, 0 },
};

/* The subset run at the general head dims and in f32. */
static const char *const general_cases[] = {
  "plain", "causal-gqa", "causal-mqa-long-q", "causal-window", "softcap", "single-query", "alibi-softcap-sinks",
  "odd-7", "odd-1000",
};

/* Whether the attention op types have @property yet; skips otherwise. */
static gboolean
have_property (const char *property)
{
  g_autoptr(GTypeClass) fwd = g_type_class_ref (ACCEL_TYPE_ATTENTION);
  g_autoptr(GTypeClass) bwd = g_type_class_ref (ACCEL_TYPE_ATTENTION_BACKWARD);
  if (g_object_class_find_property (G_OBJECT_CLASS (fwd), property) == NULL
      || (strstr (property, "descale") == NULL && g_object_class_find_property (G_OBJECT_CLASS (bwd), property) == NULL))
    {
      g_autofree char *why = g_strdup_printf ("the attention op types have no “%s” property yet", property);
      g_test_skip (why);
      return FALSE;
    }
  return TRUE;
}

/* The variant properties, set only where used (the op types may not have
 * them yet: the plain cases must run regardless). */
static void
set_variants (AccelOp *op, const Case *c, AccelBuffer *alibi)
{
  if (c->sinks != 0)
    g_object_set (op, "sinks", c->sinks, NULL);
  if (alibi != NULL)
    g_object_set (op, "alibi-slopes", alibi, NULL);
}

static AccelOp *
make_forward (const Case *c, AccelBuffer *q, AccelBuffer *k, AccelBuffer *v, AccelBuffer *out, AccelBuffer *lse,
              AccelBuffer *alibi)
{
  AccelOp *op = accel_attention_new (q, k, v, out);
  g_object_set (op, "lse", lse, "causal", c->causal, "window-left", c->window_left,
                "window-right", c->window_right, "softcap", c->softcap, NULL);
  set_variants (op, c, alibi);
  return op;
}

static void
test_attention (gconstpointer data)
{
  const FtParam *p = data;
  const Case *c = p->c;
  if (ct_gpu () == NULL)
    return;
  if ((c->sinks != 0 && !have_property ("sinks")) || (c->alibi != 0 && !have_property ("alibi-slopes")))
    return;

  gint64 dq[4] = { c->B, c->Hq, c->Sq, p->D };
  gint64 dk[4] = { c->B, c->Hkv, c->Sk, p->D };
  gint64 dv[4] = { c->B, c->Hkv, c->Sk, p->Dv };
  gint64 dout_dims[4] = { c->B, c->Hq, c->Sq, p->Dv };
  gint64 dl[3] = { c->B, c->Hq, c->Sq };
  g_auto(FtTensors) t = { 0 };
  ft_tensors_init (&t, p->dtype, p->dtype, 4, dq, dk, dv, dout_dims, dl, c->alibi, c->B, c->Hq);
  g_autoptr(CtPair) dout = ct_pair_new (p->dtype, dout_dims, 4, -1, 1);
  /* Gradients start as random garbage, so unwritten elements show. */
  g_autoptr(CtPair) gq = ct_pair_new (p->dtype, dq, 4, -9, 9);
  g_autoptr(CtPair) gk = ct_pair_new (p->dtype, dk, 4, -9, 9);
  g_autoptr(CtPair) gv = ct_pair_new (p->dtype, dv, 4, -9, 9);
  const double tol = ft_tolerance (p->dtype);

  g_autoptr(AccelOp) fwd_cpu = make_forward (c, t.q->cpu, t.k->cpu, t.v->cpu, t.out->cpu, t.lse->cpu,
                                             ft_side (t.alibi, FALSE));
  g_autoptr(AccelOp) fwd_gpu = make_forward (c, t.q->gpu, t.k->gpu, t.v->gpu, t.out->gpu, t.lse->gpu,
                                             ft_side (t.alibi, TRUE));
  ft_expect_same_forward ("out", fwd_cpu, fwd_gpu, t.out, t.lse, tol);

  /* Each side differentiates its own forward result. */
  g_autoptr(AccelOp) bwd_cpu = accel_attention_backward_new (t.q->cpu, t.k->cpu, t.v->cpu, t.out->cpu, dout->cpu,
                                                             t.lse->cpu, gq->cpu, gk->cpu, gv->cpu);
  g_autoptr(AccelOp) bwd_gpu = accel_attention_backward_new (t.q->gpu, t.k->gpu, t.v->gpu, t.out->gpu, dout->gpu,
                                                             t.lse->gpu, gq->gpu, gk->gpu, gv->gpu);
  g_object_set (bwd_cpu, "causal", c->causal, "window-left", c->window_left, "window-right", c->window_right,
                "softcap", c->softcap, NULL);
  g_object_set (bwd_gpu, "causal", c->causal, "window-left", c->window_left, "window-right", c->window_right,
                "softcap", c->softcap, NULL);
  set_variants (bwd_cpu, c, ft_side (t.alibi, FALSE));
  set_variants (bwd_gpu, c, ft_side (t.alibi, TRUE));
  ct_submit (ct_cpu (), bwd_cpu);
  ct_submit (ct_gpu (), bwd_gpu);
  ft_expect_close ("dq", gq->gpu, gq->cpu, 2 * tol);
  ft_expect_close ("dk", gk->gpu, gk->cpu, 2 * tol);
  ft_expect_close ("dv", gv->gpu, gv->cpu, 2 * tol);
}

/* fp8 forward: q, k, v fp8-e4m3 with descales, out bf16 or f16. */
typedef struct {
  const char *name;
  gint64 B, Hq, Hkv, Sq, Sk;
  gboolean causal;
  int window_left;
  double q_descale, k_descale, v_descale;
} Fp8Case;

static const Fp8Case fp8_cases[] = {
  { "plain", 2, 4, 4, 97, 130, FALSE, -1, 1.0, 1.0, 1.0 },
  { "descales", 1, 4, 4, 150, 150, FALSE, -1, 0.5, 1.5, 0.3 },
  { "causal-gqa-descales", 2, 6, 2, 181, 263, TRUE, -1, 0.25, 0.8, 2.5 },
  { "causal-window", 1, 2, 1, 129, 170, TRUE, 40, 1.2, 0.7, 0.9 },
};

typedef struct {
  AccelDType out_dtype;
  gint64 D;
  const Fp8Case *c;
} Fp8Param;

static AccelOp *
make_fp8_forward (const Fp8Case *c, AccelBuffer *q, AccelBuffer *k, AccelBuffer *v, AccelBuffer *out, AccelBuffer *lse)
{
  AccelOp *op = accel_attention_new (q, k, v, out);
  g_object_set (op, "lse", lse, "causal", c->causal, "window-left", c->window_left, "q-descale", c->q_descale,
                "k-descale", c->k_descale, "v-descale", c->v_descale, NULL);
  return op;
}

static void
test_fp8 (gconstpointer data)
{
  const Fp8Param *p = data;
  const Fp8Case *c = p->c;
  if (ct_gpu () == NULL || !have_property ("q-descale"))
    return;

  gint64 dq[4] = { c->B, c->Hq, c->Sq, p->D };
  gint64 dk[4] = { c->B, c->Hkv, c->Sk, p->D };
  gint64 dl[3] = { c->B, c->Hq, c->Sq };
  /* e4m3 holds these ranges with 3 mantissa bits; both sides get the same bytes. */
  g_auto(FtTensors) t = { 0 };
  ft_tensors_init (&t, ACCEL_DTYPE_FP8_E4M3, p->out_dtype, 4, dq, dk, dk, dq, dl, 0, c->B, c->Hq);

  g_autoptr(AccelOp) on_cpu = make_fp8_forward (c, t.q->cpu, t.k->cpu, t.v->cpu, t.out->cpu, t.lse->cpu);
  g_autoptr(AccelOp) on_gpu = make_fp8_forward (c, t.q->gpu, t.k->gpu, t.v->gpu, t.out->gpu, t.lse->gpu);
  ft_expect_same_forward ("out", on_cpu, on_gpu, t.out, t.lse, ft_tolerance (p->out_dtype));
}

static void
expect_gpu_error (AccelOp *op, const char *fragment)
{
  g_autoptr(GError) error = ft_gpu_refusal (op);
  ft_expect_mention (error, fragment);
}

/* cuda:0 refuses an attention of @dtype over q [@dq], k [@dk], v [@dv] and
 * out [@dout] (each of rank 4), in a message that mentions @fragment. */
static void
expect_attention_refused (AccelDType dtype, const gint64 *dq, const gint64 *dk, const gint64 *dv, const gint64 *dout,
                          const char *fragment)
{
  g_autoptr(AccelBuffer) q = ct_alloc (ct_gpu (), dtype, dq, 4);
  g_autoptr(AccelBuffer) k = ct_alloc (ct_gpu (), dtype, dk, 4);
  g_autoptr(AccelBuffer) v = ct_alloc (ct_gpu (), dtype, dv, 4);
  g_autoptr(AccelBuffer) out = ct_alloc (ct_gpu (), dtype, dout, 4);
  g_autoptr(AccelOp) op = accel_attention_new (q, k, v, out);
  expect_gpu_error (op, fragment);
}

static void
test_bad_heads (void)
{
  if (ct_gpu () == NULL)
    return;
  gint64 dq[4] = { 1, 3, 17, 64 }, dk[4] = { 1, 2, 17, 64 };
  expect_attention_refused (ACCEL_DTYPE_BF16, dq, dk, dk, dq, "heads");
}

/* Head dims with no kernel (not multiples of 8, or above 256, in q/k or
 * in v): refused, naming the supported set, never a wrong result. */
static void
test_bad_head_dim (void)
{
  if (ct_gpu () == NULL)
    return;
  static const gint64 bad[][2] = { { 100, 100 }, { 264, 264 }, { 128, 36 }, { 4, 4 } };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      gint64 dq[4] = { 1, 2, 33, bad[i][0] }, dv[4] = { 1, 2, 33, bad[i][1] };
      expect_attention_refused (ACCEL_DTYPE_BF16, dq, dq, dv, dv, "multiples of 8");
    }
}

static void
test_bad_dtype (void)
{
  if (ct_gpu () == NULL)
    return;
  gint64 dq[4] = { 1, 2, 33, 64 };
  expect_attention_refused (ACCEL_DTYPE_F64, dq, dq, dq, dq, "f16, bf16, f32");
}

static void
test_backward_needs_lse_shape (void)
{
  if (ct_gpu () == NULL)
    return;
  gint64 dq[4] = { 1, 2, 33, 64 }, dl[3] = { 1, 2, 32 };
  g_autoptr(AccelBuffer) q = ct_alloc (ct_gpu (), ACCEL_DTYPE_BF16, dq, 4);
  g_autoptr(AccelBuffer) k = ct_alloc (ct_gpu (), ACCEL_DTYPE_BF16, dq, 4);
  g_autoptr(AccelBuffer) v = ct_alloc (ct_gpu (), ACCEL_DTYPE_BF16, dq, 4);
  g_autoptr(AccelBuffer) out = ct_alloc (ct_gpu (), ACCEL_DTYPE_BF16, dq, 4);
  g_autoptr(AccelBuffer) dout = ct_alloc (ct_gpu (), ACCEL_DTYPE_BF16, dq, 4);
  g_autoptr(AccelBuffer) lse = ct_alloc (ct_gpu (), ACCEL_DTYPE_F32, dl, 3);
  g_autoptr(AccelBuffer) gq = ct_alloc (ct_gpu (), ACCEL_DTYPE_BF16, dq, 4);
  g_autoptr(AccelBuffer) gk = ct_alloc (ct_gpu (), ACCEL_DTYPE_BF16, dq, 4);
  g_autoptr(AccelBuffer) gv = ct_alloc (ct_gpu (), ACCEL_DTYPE_BF16, dq, 4);
  g_autoptr(AccelOp) op = accel_attention_backward_new (q, k, v, out, dout, lse, gq, gk, gv);
  expect_gpu_error (op, "lse");
}

static void
add_attention_test (AccelDType dtype, gint64 D, gint64 Dv, const Case *c)
{
  ft_add_case_test (NULL, dtype, D, Dv, c->name, c, test_attention);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (guint k = 0; k < G_N_ELEMENTS (ft_specialised_kinds); k++)
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      add_attention_test (ft_specialised_kinds[k].dtype, ft_specialised_kinds[k].D, ft_specialised_kinds[k].D,
                          &cases[i]);
  /* The general head dims in bf16 (two in f16 too), f32 at every kind. */
  static const gint64 general[][2] = { { 32, 32 }, { 40, 40 }, { 80, 80 }, { 96, 96 }, { 160, 160 }, { 192, 192 },
                                       { 192, 128 }, { 64, 128 } };
  static const gint64 f32_dims[][2] = { { 64, 64 }, { 80, 80 }, { 128, 128 }, { 192, 128 }, { 256, 256 } };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      gboolean in_subset = FALSE;
      for (guint j = 0; j < G_N_ELEMENTS (general_cases); j++)
        in_subset |= strcmp (cases[i].name, general_cases[j]) == 0;
      if (!in_subset)
        continue;
      for (guint d = 0; d < G_N_ELEMENTS (general); d++)
        add_attention_test (ACCEL_DTYPE_BF16, general[d][0], general[d][1], &cases[i]);
      add_attention_test (ACCEL_DTYPE_F16, 80, 80, &cases[i]);
      add_attention_test (ACCEL_DTYPE_F16, 192, 128, &cases[i]);
      for (guint d = 0; d < G_N_ELEMENTS (f32_dims); d++)
        add_attention_test (ACCEL_DTYPE_F32, f32_dims[d][0], f32_dims[d][1], &cases[i]);
    }
  /* fp8 inputs, converted to the output's type at the specialised kinds. */
  for (guint k = 0; k < G_N_ELEMENTS (ft_specialised_kinds); k++)
    for (guint i = 0; i < G_N_ELEMENTS (fp8_cases); i++)
      {
        const FtKind *kind = &ft_specialised_kinds[k];
        Fp8Param *p = g_new (Fp8Param, 1);   /* lives as long as the test list */
        p->out_dtype = kind->dtype;
        p->D = kind->D;
        p->c = &fp8_cases[i];
        g_autofree char *path = g_strdup_printf ("/flashattn/fp8-e4m3-to-%s/d%" G_GINT64_FORMAT "/%s",
                                                 accel_dtype_get_name (kind->dtype), kind->D, fp8_cases[i].name);
        g_test_add_data_func_full (path, p, test_fp8, g_free);
      }
  g_test_add_func ("/flashattn/error/heads-not-multiple", test_bad_heads);
  g_test_add_func ("/flashattn/error/head-dim", test_bad_head_dim);
  g_test_add_func ("/flashattn/error/dtype", test_bad_dtype);
  g_test_add_func ("/flashattn/error/backward-lse-shape", test_backward_needs_lse_shape);
  return ct_run ();
}
