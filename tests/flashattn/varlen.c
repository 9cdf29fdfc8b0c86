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
#include <string.h>
#include "flashattn-test.h"

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

/* The packed inputs of one case, the same on both devices. */
typedef struct {
  gint64 Tq, Tk;
  FtTensors t;
  AccelBuffer *cu_q[2], *cu_k[2];   /* [0] cpu, [1] gpu */
} Inputs;

static void
inputs_clear (Inputs *in)
{
  ft_tensors_clear (&in->t);
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
  ft_tensors_init (&in->t, dtype, dtype, 3, dq, dk, dv, dout, dl, c->alibi, c->B, c->Hq);
  for (guint i = 0; i < 2; i++)
    {
      AccelDevice *device = i ? ct_gpu () : ct_cpu ();
      in->cu_q[i] = ft_int_buffer (device, dc, 1, cu_q);
      in->cu_k[i] = ft_int_buffer (device, dc, 1, cu_k);
    }
}

static AccelOp *
make_op (const Case *c, const Inputs *in, gboolean on_gpu)
{
  int i = on_gpu ? 1 : 0;
  AccelOp *op = accel_op_new (OP_NAME, "q", ft_side (in->t.q, on_gpu), "k", ft_side (in->t.k, on_gpu),
                              "v", ft_side (in->t.v, on_gpu), "out", ft_side (in->t.out, on_gpu),
                              "lse", ft_side (in->t.lse, on_gpu),
                              "cu-seqlens-q", in->cu_q[i], "cu-seqlens-k", in->cu_k[i],
                              "causal", c->causal, "window-left", c->window_left,
                              "window-right", c->window_right, "sinks", c->sinks, "softcap", c->softcap, NULL);
  if (in->t.alibi)
    g_object_set (op, "alibi-slopes", ft_side (in->t.alibi, on_gpu), NULL);
  return op;
}

/* The backward op over the same inputs, each side reading its own forward
 * result. */
static AccelOp *
make_backward (const Case *c, const Inputs *in, CtPair *dout, CtPair *dq, CtPair *dk, CtPair *dv, gboolean on_gpu)
{
  int i = on_gpu ? 1 : 0;
  AccelOp *op = accel_attention_varlen_backward_new (ft_side (in->t.q, on_gpu), ft_side (in->t.k, on_gpu),
                                                     ft_side (in->t.v, on_gpu), ft_side (in->t.out, on_gpu),
                                                     ft_side (dout, on_gpu), ft_side (in->t.lse, on_gpu), in->cu_q[i],
                                                     in->cu_k[i], ft_side (dq, on_gpu), ft_side (dk, on_gpu),
                                                     ft_side (dv, on_gpu));
  g_object_set (op, "causal", c->causal, "window-left", c->window_left, "window-right", c->window_right,
                "sinks", c->sinks, "softcap", c->softcap, NULL);
  if (in->t.alibi)
    g_object_set (op, "alibi-slopes", ft_side (in->t.alibi, on_gpu), NULL);
  return op;
}

static void
test_varlen (gconstpointer data)
{
  const FtParam *p = data;
  const Case *c = p->c;
  if (ct_gpu () == NULL || !ft_have_op (OP_NAME))
    return;

  Inputs in;
  inputs_make (&in, c, p->dtype, p->D, p->Dv);
  g_test_message ("%" G_GINT64_FORMAT " query rows, %" G_GINT64_FORMAT " key rows", in.Tq, in.Tk);
  g_autoptr(AccelOp) on_cpu = make_op (c, &in, FALSE);
  g_autoptr(AccelOp) on_gpu = make_op (c, &in, TRUE);
  ft_expect_same_forward ("out", on_cpu, on_gpu, in.t.out, in.t.lse, ft_tolerance (p->dtype));
  inputs_clear (&in);
}

static void
test_varlen_backward (gconstpointer data)
{
  const FtParam *p = data;
  const Case *c = p->c;
  if (ct_gpu () == NULL || !ft_have_op (OP_NAME))
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
  const double tol = 2 * ft_tolerance (p->dtype);
  ft_expect_close ("dq", dq->gpu, dq->cpu, tol);
  ft_expect_close ("dk", dk->gpu, dk->cpu, tol);
  ft_expect_close ("dv", dv->gpu, dv->cpu, tol);
  inputs_clear (&in);
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
  ft_expect_same_forward ("out after the errors", on_cpu, on_gpu, in.t.out, in.t.lse, 1e-2);
  inputs_clear (&in);
}

/* Entry @index of the gpu's cu-seqlens-q (or -k) set to @value. */
static void
run_bad (gboolean keys, int index, double value, const char *where)
{
  Inputs in;
  inputs_make (&in, &bad_case, ACCEL_DTYPE_BF16, 64, 64);
  AccelBuffer *cu = keys ? in.cu_k[1] : in.cu_q[1];
  ft_poke (cu, index, value);
  g_autoptr(AccelOp) op = make_op (&bad_case, &in, TRUE);
  ft_expect_invalid_argument (op, keys ? "cu-seqlens-k" : "cu-seqlens-q", where);
  inputs_clear (&in);
}

static void
test_bad_cu_seqlens (void)
{
  if (ct_gpu () == NULL || !ft_have_op (OP_NAME))
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
  if (ct_gpu () == NULL || !ft_have_op (OP_NAME))
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
      ft_poke (cu, bad[i].index, bad[i].value);
      g_autoptr(AccelOp) op = make_backward (&bad_case, &in, dout, dq, dk, dv, TRUE);
      ft_expect_invalid_argument (op, "attention-varlen-backward", bad[i].where);
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
        ft_add_case_test ("varlen", kinds[t].dtype, kinds[t].D, kinds[t].Dv, cases[i].name, &cases[i], test_varlen);
        ft_add_case_test ("varlen-backward", kinds[t].dtype, kinds[t].D, kinds[t].Dv, cases[i].name, &cases[i],
                          test_varlen_backward);
      }
  g_test_add_func ("/flashattn/varlen/error/cu-seqlens", test_bad_cu_seqlens);
  g_test_add_func ("/flashattn/varlen-backward/error/cu-seqlens", test_bad_cu_seqlens_backward);
  return ct_run ();
}
