/* attention-varlen and attention-varlen-backward on cuda:0 (the general
 * instances of the cuda_flashattn kernels) against the CPU oracle on cpu:0
 * (each side differentiating its own forward result), on fresh random packed
 * inputs: ragged sequences with lengths 1, odd, on and beside the 128-row
 * query blocks, a zero-length sequence (queries without keys and keys
 * without queries too), causal, sliding windows, sinks, ALiBi ([Hq] and
 * [B, Hq]), soft cap, grouped and multi-query heads, lse; bf16 and f16 at
 * head dims 64, 128 and 256, bf16 at the general head dims (80, 96, 192
 * with Dv 128), f32 (64, 80, 128). Then the device-side checks of the
 * cu-seqlens: a first offset other than 0, a decreasing offset, a last
 * offset other than the row count, each fails the op with
 * ACCEL_ERROR_INVALID_ARGUMENT naming the buffer and the index, and the
 * device goes on working.
 *
 * The backward's cu-seqlens are checked on the device as the forward's.
 *
 * Tolerances (relative L2 error of the whole output): 1e-2 for bf16, 5e-3
 * for f16, 1e-5 for f32; twice that for the gradients (one more rounding
 * of P and dS); lse within 1e-3 (relative above 1); no NaN anywhere.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "../cuda/cuda-test.h"

#define OP_NAME "attention-varlen"
#define MAX_B 6

typedef struct {
  const char *name;
  gint64 B, Hq, Hkv;
  int lens_q[MAX_B], lens_k[MAX_B];
  gboolean causal;
  int window_left, window_right, sinks;
  int alibi;                /* 0: none, 1: [Hq], 2: [B, Hq] */
  double softcap;
} Case;

static const Case cases[] = {
  { "ragged", 6, 4, 4, { 1, 77, 0, 128, 300, 129 }, { 1, 77, 0, 128, 300, 129 }, FALSE, -1, -1, 0, 0, 0 },
  { "ragged-causal-gqa", 4, 6, 2, { 33, 1, 129, 260 }, { 33, 50, 129, 400 }, TRUE, -1, -1, 0, 0, 0 },
  /* sequence 2 has queries but no keys (zeros, lse -inf); sequence 3 keys but no queries */
  { "window-empty", 4, 2, 2, { 200, 17, 3, 0 }, { 200, 30, 0, 9 }, FALSE, 33, 9, 0, 0, 0 },
  { "causal-long-q", 2, 4, 1, { 203, 5 }, { 77, 5 }, TRUE, -1, -1, 0, 0, 0 },   /* early rows see no key */
  { "causal-window-sinks-alibi", 3, 4, 2, { 150, 64, 1 }, { 300, 64, 2 }, TRUE, 40, -1, 4, 2, 0 },
  { "wide-sinks", 2, 2, 2, { 257, 31 }, { 400, 31 }, FALSE, 30, 10, 70, 0, 0 },
  { "mqa-softcap-alibi", 2, 4, 1, { 65, 191 }, { 111, 191 }, FALSE, -1, -1, 0, 1, 20.0 },
};

typedef struct {
  AccelDType dtype;
  gint64 D, Dv;
  const Case *c;
} Param;

/* Whether the op type and its CPU oracle exist yet; skips otherwise. */
static gboolean
have_op (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelOp) op = accel_op_new_by_name (OP_NAME, &error);
  if (op == NULL)
    {
      g_autofree char *why = g_strdup_printf ("no op type “" OP_NAME "” (%s)", error->message);
      g_test_skip (why);
      return FALSE;
    }
  return TRUE;
}

static double
rel_error (const double *got, const double *want, gsize n, gsize *n_nan)
{
  double e2 = 0, r2 = 0;
  *n_nan = 0;
  for (gsize i = 0; i < n; i++)
    {
      if (!isfinite (got[i]))
        {
          (*n_nan)++;
          continue;
        }
      e2 += (got[i] - want[i]) * (got[i] - want[i]);
      r2 += want[i] * want[i];
    }
  return r2 > 0 ? sqrt (e2 / r2) : sqrt (e2);
}

static void
expect_close (const char *what, AccelBuffer *got_buffer, AccelBuffer *want_buffer, double tol)
{
  g_autofree double *got = ct_read (got_buffer);
  g_autofree double *want = ct_read (want_buffer);
  gsize n = accel_buffer_get_n_elements (want_buffer), n_nan;
  double rel = rel_error (got, want, n, &n_nan);

  g_test_message ("%s: relative error %.3g (tolerance %.3g)", what, rel, tol);
  if (n_nan != 0 || !(rel <= tol))
    g_test_fail_printf ("%s: relative error %.3g (tolerance %.3g), %" G_GSIZE_FORMAT " non-finite of %" G_GSIZE_FORMAT,
                        what, rel, tol, n_nan, n);
}

/* The lse of rows that see no key is -inf on both sides. */
static void
expect_lse_close (AccelBuffer *got_buffer, AccelBuffer *want_buffer)
{
  g_autofree double *got = ct_read (got_buffer);
  g_autofree double *want = ct_read (want_buffer);
  gsize n = accel_buffer_get_n_elements (want_buffer);
  for (gsize i = 0; i < n; i++)
    {
      if (isinf (want[i]) && want[i] < 0)
        {
          if (!(isinf (got[i]) && got[i] < 0))
            {
              g_test_fail_printf ("lse[%" G_GSIZE_FORMAT "] is %g, expected -inf", i, got[i]);
              return;
            }
          continue;
        }
      if (!(fabs (got[i] - want[i]) <= 1e-3 * MAX (1.0, fabs (want[i]))))
        {
          g_test_fail_printf ("lse[%" G_GSIZE_FORMAT "] is %g, expected %g", i, got[i], want[i]);
          return;
        }
    }
}

/* The packed inputs of one case, the same on both devices. */
typedef struct {
  gint64 Tq, Tk;
  CtPair *q, *k, *v, *out, *lse, *alibi;
  AccelBuffer *cu_q[2], *cu_k[2];   /* [0] cpu, [1] gpu */
} Inputs;

static void
inputs_clear (Inputs *in)
{
  g_clear_pointer (&in->q, ct_pair_free);
  g_clear_pointer (&in->k, ct_pair_free);
  g_clear_pointer (&in->v, ct_pair_free);
  g_clear_pointer (&in->out, ct_pair_free);
  g_clear_pointer (&in->lse, ct_pair_free);
  g_clear_pointer (&in->alibi, ct_pair_free);
  for (guint i = 0; i < 2; i++)
    {
      g_clear_object (&in->cu_q[i]);
      g_clear_object (&in->cu_k[i]);
    }
}

static void
inputs_make (Inputs *in, const Case *c, AccelDType dtype, gint64 D, gint64 Dv)
{
  double cu_q[MAX_B + 1], cu_k[MAX_B + 1];
  memset (in, 0, sizeof *in);
  cu_q[0] = cu_k[0] = 0;
  for (gint64 b = 0; b < c->B; b++)
    {
      cu_q[b + 1] = cu_q[b] + c->lens_q[b];
      cu_k[b + 1] = cu_k[b] + c->lens_k[b];
    }
  in->Tq = (gint64) cu_q[c->B];
  in->Tk = (gint64) cu_k[c->B];

  gint64 dq[3] = { in->Tq, c->Hq, D };
  gint64 dk[3] = { in->Tk, c->Hkv, D };
  gint64 dv[3] = { in->Tk, c->Hkv, Dv };
  gint64 dout[3] = { in->Tq, c->Hq, Dv };
  gint64 dl[2] = { c->Hq, in->Tq };
  gint64 dc[1] = { c->B + 1 };
  in->q = ct_pair_new (dtype, dq, 3, -2, 2);
  in->k = ct_pair_new (dtype, dk, 3, -2, 2);
  in->v = ct_pair_new (dtype, dv, 3, -1, 1);
  /* Outputs start as garbage, so unwritten elements show. */
  in->out = ct_pair_new (dtype, dout, 3, -9, 9);
  in->lse = ct_pair_new (ACCEL_DTYPE_F32, dl, 2, -9, 9);
  if (c->alibi == 1)
    in->alibi = ct_pair_new (ACCEL_DTYPE_F32, &c->Hq, 1, 0.01, 0.5);
  else if (c->alibi == 2)
    {
      gint64 da[2] = { c->B, c->Hq };
      in->alibi = ct_pair_new (ACCEL_DTYPE_F32, da, 2, 0.01, 0.5);
    }
  for (guint i = 0; i < 2; i++)
    {
      AccelDevice *device = i ? ct_gpu () : ct_cpu ();
      in->cu_q[i] = ct_alloc (device, ACCEL_DTYPE_I32, dc, 1);
      in->cu_k[i] = ct_alloc (device, ACCEL_DTYPE_I32, dc, 1);
      ct_write (in->cu_q[i], cu_q);
      ct_write (in->cu_k[i], cu_k);
    }
}

static AccelOp *
make_op (const Case *c, const Inputs *in, gboolean on_gpu)
{
  int i = on_gpu ? 1 : 0;
#define SIDE(pair) ((pair) ? (on_gpu ? (pair)->gpu : (pair)->cpu) : NULL)
  AccelOp *op = accel_op_new (OP_NAME, "q", SIDE (in->q), "k", SIDE (in->k), "v", SIDE (in->v),
                              "out", SIDE (in->out), "lse", SIDE (in->lse),
                              "cu-seqlens-q", in->cu_q[i], "cu-seqlens-k", in->cu_k[i],
                              "causal", c->causal, "window-left", c->window_left,
                              "window-right", c->window_right, "sinks", c->sinks, "softcap", c->softcap, NULL);
  if (in->alibi)
    g_object_set (op, "alibi-slopes", SIDE (in->alibi), NULL);
#undef SIDE
  return op;
}

/* The backward op over the same inputs, each side reading its own forward
 * result. */
static AccelOp *
make_backward (const Case *c, const Inputs *in, CtPair *dout, CtPair *dq, CtPair *dk, CtPair *dv, gboolean on_gpu)
{
  int i = on_gpu ? 1 : 0;
#define SIDE(pair) ((pair) ? (on_gpu ? (pair)->gpu : (pair)->cpu) : NULL)
  AccelOp *op = accel_attention_varlen_backward_new (SIDE (in->q), SIDE (in->k), SIDE (in->v), SIDE (in->out),
                                                     SIDE (dout), SIDE (in->lse), in->cu_q[i], in->cu_k[i], SIDE (dq),
                                                     SIDE (dk), SIDE (dv));
  g_object_set (op, "causal", c->causal, "window-left", c->window_left, "window-right", c->window_right,
                "sinks", c->sinks, "softcap", c->softcap, NULL);
  if (in->alibi)
    g_object_set (op, "alibi-slopes", SIDE (in->alibi), NULL);
#undef SIDE
  return op;
}

static double
varlen_tol (AccelDType dtype)
{
  return dtype == ACCEL_DTYPE_BF16 ? 1e-2 : dtype == ACCEL_DTYPE_F16 ? 5e-3 : 1e-5;
}

static void
test_varlen (gconstpointer data)
{
  const Param *p = data;
  const Case *c = p->c;
  if (ct_gpu () == NULL || !have_op ())
    return;

  Inputs in;
  inputs_make (&in, c, p->dtype, p->D, p->Dv);
  g_test_message ("%" G_GINT64_FORMAT " query rows, %" G_GINT64_FORMAT " key rows", in.Tq, in.Tk);
  g_autoptr(AccelOp) on_cpu = make_op (c, &in, FALSE);
  g_autoptr(AccelOp) on_gpu = make_op (c, &in, TRUE);
  ct_submit (ct_cpu (), on_cpu);
  ct_submit (ct_gpu (), on_gpu);
  expect_close ("out", in.out->gpu, in.out->cpu, varlen_tol (p->dtype));
  expect_lse_close (in.lse->gpu, in.lse->cpu);
  inputs_clear (&in);
}

static void
test_varlen_backward (gconstpointer data)
{
  const Param *p = data;
  const Case *c = p->c;
  if (ct_gpu () == NULL || !have_op ())
    return;

  Inputs in;
  inputs_make (&in, c, p->dtype, p->D, p->Dv);
  g_autoptr(AccelOp) fwd_cpu = make_op (c, &in, FALSE);
  g_autoptr(AccelOp) fwd_gpu = make_op (c, &in, TRUE);
  ct_submit (ct_cpu (), fwd_cpu);
  ct_submit (ct_gpu (), fwd_gpu);

  gint64 dq_dims[3] = { in.Tq, c->Hq, p->D }, dk_dims[3] = { in.Tk, c->Hkv, p->D };
  gint64 dv_dims[3] = { in.Tk, c->Hkv, p->Dv }, do_dims[3] = { in.Tq, c->Hq, p->Dv };
  g_autoptr(CtPair) dout = ct_pair_new (p->dtype, do_dims, 3, -1, 1);
  /* Gradients start as garbage, so unwritten elements show. */
  g_autoptr(CtPair) dq = ct_pair_new (p->dtype, dq_dims, 3, -9, 9);
  g_autoptr(CtPair) dk = ct_pair_new (p->dtype, dk_dims, 3, -9, 9);
  g_autoptr(CtPair) dv = ct_pair_new (p->dtype, dv_dims, 3, -9, 9);
  g_autoptr(AccelOp) bwd_cpu = make_backward (c, &in, dout, dq, dk, dv, FALSE);
  g_autoptr(AccelOp) bwd_gpu = make_backward (c, &in, dout, dq, dk, dv, TRUE);
  ct_submit (ct_cpu (), bwd_cpu);
  ct_submit (ct_gpu (), bwd_gpu);
  const double tol = 2 * varlen_tol (p->dtype);
  expect_close ("dq", dq->gpu, dq->cpu, tol);
  expect_close ("dk", dk->gpu, dk->cpu, tol);
  expect_close ("dv", dv->gpu, dv->cpu, tol);
  inputs_clear (&in);
}

static void
expect_gpu_error (AccelOp *op, const char *fragment, const char *fragment2)
{
  g_autoptr(GError) error = NULL;
  gboolean ok = accel_device_submit (ct_gpu (), op, NULL, &error);
  g_assert_false (ok);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_test_message ("refused: %s", error->message);
  if (fragment && !strstr (error->message, fragment))
    g_test_fail_printf ("error '%s' does not mention '%s'", error->message, fragment);
  if (fragment2 && !strstr (error->message, fragment2))
    g_test_fail_printf ("error '%s' does not mention '%s'", error->message, fragment2);
}

static const Case bad_case = { "bad", 4, 4, 2, { 40, 100, 7, 1 }, { 50, 100, 7, 3 }, TRUE, -1, -1, 0, 0, 0 };

/* A good run after refused ones: the device still works. */
static void
expect_device_works (void)
{
  Inputs in;
  inputs_make (&in, &bad_case, ACCEL_DTYPE_BF16, 128, 128);
  g_autoptr(AccelOp) on_cpu = make_op (&bad_case, &in, FALSE);
  g_autoptr(AccelOp) on_gpu = make_op (&bad_case, &in, TRUE);
  ct_submit (ct_cpu (), on_cpu);
  ct_submit (ct_gpu (), on_gpu);
  expect_close ("out after the errors", in.out->gpu, in.out->cpu, 1e-2);
  expect_lse_close (in.lse->gpu, in.lse->cpu);
  inputs_clear (&in);
}

/* Entry @index of the gpu's cu-seqlens-q (or -k) set to @value. */
static void
run_bad (gboolean keys, int index, double value, const char *where)
{
  Inputs in;
  inputs_make (&in, &bad_case, ACCEL_DTYPE_BF16, 64, 64);
  AccelBuffer *cu = keys ? in.cu_k[1] : in.cu_q[1];
  g_autofree double *values = ct_read (cu);
  values[index] = value;
  ct_write (cu, values);
  g_autoptr(AccelOp) op = make_op (&bad_case, &in, TRUE);
  expect_gpu_error (op, keys ? "cu-seqlens-k" : "cu-seqlens-q", where);
  inputs_clear (&in);
}

static void
test_bad_cu_seqlens (void)
{
  if (ct_gpu () == NULL || !have_op ())
    return;
  /* bad_case: cu_q = 0 40 140 147 148, cu_k = 0 50 150 157 160 */
  run_bad (FALSE, 0, 1, "[0]");
  run_bad (FALSE, 2, 30, "[2]");           /* below cu_q[1] = 40 */
  run_bad (FALSE, 4, 147, "[4]");          /* not the 148 rows of q */
  run_bad (FALSE, 1, G_MAXINT32, "[2]");   /* 140 is below it */
  run_bad (TRUE, 0, -5, "[0]");
  run_bad (TRUE, 3, 149, "[3]");           /* below cu_k[2] = 150 */
  run_bad (TRUE, 4, 1000, "[4]");          /* past the 160 rows of k */
  expect_device_works ();
}

/* The backward checks its cu-seqlens on the device too, and names itself. */
static void
test_bad_cu_seqlens_backward (void)
{
  if (ct_gpu () == NULL || !have_op ())
    return;
  static const struct {
    gboolean keys;
    int index;
    double value;
    const char *where;
  } bad[] = { { FALSE, 2, 30, "[2]" }, { TRUE, 4, 1000, "[4]" } };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      Inputs in;
      inputs_make (&in, &bad_case, ACCEL_DTYPE_BF16, 128, 128);
      g_autoptr(AccelOp) fwd = make_op (&bad_case, &in, TRUE);
      ct_submit (ct_gpu (), fwd);
      gint64 dq_dims[3] = { in.Tq, bad_case.Hq, 128 }, dk_dims[3] = { in.Tk, bad_case.Hkv, 128 };
      g_autoptr(CtPair) dout = ct_pair_new (ACCEL_DTYPE_BF16, dq_dims, 3, -1, 1);
      g_autoptr(CtPair) dq = ct_pair_new_empty (ACCEL_DTYPE_BF16, dq_dims, 3);
      g_autoptr(CtPair) dk = ct_pair_new_empty (ACCEL_DTYPE_BF16, dk_dims, 3);
      g_autoptr(CtPair) dv = ct_pair_new_empty (ACCEL_DTYPE_BF16, dk_dims, 3);
      AccelBuffer *cu = bad[i].keys ? in.cu_k[1] : in.cu_q[1];
      g_autofree double *values = ct_read (cu);
      values[bad[i].index] = bad[i].value;
      ct_write (cu, values);
      g_autoptr(AccelOp) op = make_backward (&bad_case, &in, dout, dq, dk, dv, TRUE);
      expect_gpu_error (op, "attention-varlen-backward", bad[i].where);
      inputs_clear (&in);
    }
  expect_device_works ();
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  static const struct {
    AccelDType dtype;
    gint64 D, Dv;
  } kinds[] = {
    { ACCEL_DTYPE_BF16, 64, 64 }, { ACCEL_DTYPE_BF16, 128, 128 }, { ACCEL_DTYPE_BF16, 256, 256 },
    { ACCEL_DTYPE_F16, 64, 64 }, { ACCEL_DTYPE_F16, 128, 128 }, { ACCEL_DTYPE_F16, 256, 256 },
    { ACCEL_DTYPE_BF16, 80, 80 }, { ACCEL_DTYPE_BF16, 96, 96 }, { ACCEL_DTYPE_BF16, 192, 128 },
    { ACCEL_DTYPE_F32, 64, 64 }, { ACCEL_DTYPE_F32, 80, 80 }, { ACCEL_DTYPE_F32, 128, 128 },
  };
  for (guint t = 0; t < G_N_ELEMENTS (kinds); t++)
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      {
        Param *p = g_new (Param, 1);   /* lives as long as the test list */
        p->dtype = kinds[t].dtype;
        p->D = kinds[t].D;
        p->Dv = kinds[t].Dv;
        p->c = &cases[i];
        g_autofree char *dims = p->D == p->Dv ? g_strdup_printf ("d%" G_GINT64_FORMAT, p->D)
                                              : g_strdup_printf ("d%" G_GINT64_FORMAT "-dv%" G_GINT64_FORMAT, p->D, p->Dv);
        g_autofree char *path = g_strdup_printf ("/flashattn/varlen/%s/%s/%s", accel_dtype_get_name (p->dtype), dims,
                                                 cases[i].name);
        g_test_add_data_func_full (path, p, test_varlen, g_free);
        Param *pb = g_memdup2 (p, sizeof *p);
        g_autofree char *bpath = g_strdup_printf ("/flashattn/varlen-backward/%s/%s/%s", accel_dtype_get_name (p->dtype),
                                                  dims, cases[i].name);
        g_test_add_data_func_full (bpath, pb, test_varlen_backward, g_free);
      }
  g_test_add_func ("/flashattn/varlen/error/cu-seqlens", test_bad_cu_seqlens);
  g_test_add_func ("/flashattn/varlen-backward/error/cu-seqlens", test_bad_cu_seqlens_backward);
  return ct_run ();
}
