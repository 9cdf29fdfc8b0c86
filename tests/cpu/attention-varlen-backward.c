/* attention-varlen-backward on cpu:0: in binary64 against central
 * differences of attention-varlen (L = sum (dO * out)), over ragged
 * sequences with an empty one, one without keys, one without queries and
 * single rows, grouped-query heads, Dv != D, causal and sliding windows,
 * sinks, ALiBi ([Hq] and [B, Hq]) and the soft cap; f32, f16 and bf16
 * against the binary64 result on the same values; and the errors: bad
 * cu-seqlens values (named, with the index), gradients whose shape is not
 * their input's, a missing lse.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "cpu-test.h"

#define MAX_B 5

typedef struct {
  gint64 B, Hq, Hkv, D, Dv;
  gint32 len_q[MAX_B], len_k[MAX_B];
  gboolean causal;
  int window_left, window_right, sinks;
  double scale, softcap;
  int alibi;   /* 0: none, 1: [Hq], 2: [B, Hq] */
} Case;

/* The buffers of one case. */
typedef struct {
  gint64 Tq, Tk;
  AccelBuffer *q, *k, *v, *out, *dout, *lse, *cu_q, *cu_k, *dq, *dk, *dv, *alibi;
  double *hq, *hk, *hv, *hdo;
} Inputs;

static void
inputs_clear (Inputs *in)
{
  AccelBuffer **all[] = { &in->q, &in->k, &in->v, &in->out, &in->dout, &in->lse, &in->cu_q, &in->cu_k, &in->dq,
                          &in->dk, &in->dv, &in->alibi };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    g_clear_object (all[i]);
  g_clear_pointer (&in->hq, g_free);
  g_clear_pointer (&in->hk, g_free);
  g_clear_pointer (&in->hv, g_free);
  g_clear_pointer (&in->hdo, g_free);
}

/* Random inputs of @dtype; with @from set, the values of @from's (so that
 * two dtypes see the same numbers where the narrower one holds them). */
static void
inputs_make (Inputs *in, const Case *c, AccelDType dtype, const Inputs *from)
{
  double cu_q[MAX_B + 1] = { 0 }, cu_k[MAX_B + 1] = { 0 };
  memset (in, 0, sizeof *in);
  for (gint64 b = 0; b < c->B; b++)
    {
      cu_q[b + 1] = cu_q[b] + c->len_q[b];
      cu_k[b + 1] = cu_k[b] + c->len_k[b];
    }
  in->Tq = (gint64) cu_q[c->B];
  in->Tk = (gint64) cu_k[c->B];
  gint64 dq[3] = { in->Tq, c->Hq, c->D }, dk[3] = { in->Tk, c->Hkv, c->D }, dv[3] = { in->Tk, c->Hkv, c->Dv };
  gint64 dout[3] = { in->Tq, c->Hq, c->Dv }, dl[2] = { c->Hq, in->Tq }, dc[1] = { c->B + 1 };
  in->q = cpu_test_alloc (dtype, dq, 3);
  in->k = cpu_test_alloc (dtype, dk, 3);
  in->v = cpu_test_alloc (dtype, dv, 3);
  in->out = cpu_test_alloc (dtype, dout, 3);
  in->dout = cpu_test_alloc (dtype, dout, 3);
  in->dq = cpu_test_alloc (dtype, dq, 3);
  in->dk = cpu_test_alloc (dtype, dk, 3);
  in->dv = cpu_test_alloc (dtype, dv, 3);
  in->lse = cpu_test_alloc (ACCEL_DTYPE_F32, dl, 2);
  in->cu_q = cpu_test_alloc (ACCEL_DTYPE_I32, dc, 1);
  in->cu_k = cpu_test_alloc (ACCEL_DTYPE_I32, dc, 1);
  cpu_test_write (in->cu_q, cu_q);
  cpu_test_write (in->cu_k, cu_k);
  AccelBuffer *bufs[4] = { in->q, in->k, in->v, in->dout };
  double **host[4] = { &in->hq, &in->hk, &in->hv, &in->hdo };
  const double *src[4] = { from ? from->hq : NULL, from ? from->hk : NULL, from ? from->hv : NULL,
                           from ? from->hdo : NULL };
  for (guint i = 0; i < 4; i++)
    {
      if (src[i] == NULL)
        *host[i] = cpu_test_fill_random (bufs[i], -1, 1);
      else
        {
          cpu_test_write (bufs[i], src[i]);
          *host[i] = cpu_test_read (bufs[i]);
        }
    }
  if (c->alibi != 0)
    {
      gint64 da[2] = { c->B, c->Hq };
      in->alibi = c->alibi == 1 ? cpu_test_alloc (ACCEL_DTYPE_F32, &c->Hq, 1) : cpu_test_alloc (ACCEL_DTYPE_F32, da, 2);
      if (from != NULL)
        {
          g_autofree double *s = cpu_test_read (from->alibi);
          cpu_test_write (in->alibi, s);
        }
      else
        g_free (cpu_test_fill_random (in->alibi, 0.05, 0.6));
    }
}

static void
set_mask (AccelOp *op, const Case *c, AccelBuffer *alibi)
{
  g_object_set (op, "causal", c->causal, "window-left", c->window_left, "window-right", c->window_right,
                "sinks", c->sinks, "scale", c->scale, "softcap", c->softcap, "alibi-slopes", alibi, NULL);
}

static AccelOp *
make_forward (const Case *c, const Inputs *in, AccelBuffer *out, AccelBuffer *lse)
{
  AccelOp *op = accel_attention_varlen_new (in->q, in->k, in->v, out, in->cu_q, in->cu_k);
  set_mask (op, c, in->alibi);
  if (lse != NULL)
    g_object_set (op, "lse", lse, NULL);
  return op;
}

/* Forward (out, lse), then the backward into dq, dk, dv. */
static void
run_both (const Case *c, const Inputs *in)
{
  g_autoptr(AccelOp) fwd = make_forward (c, in, in->out, in->lse);
  cpu_test_submit (fwd);
  g_autoptr(AccelOp) bwd = accel_attention_varlen_backward_new (in->q, in->k, in->v, in->out, in->dout, in->lse,
                                                                in->cu_q, in->cu_k, in->dq, in->dk, in->dv);
  set_mask (bwd, c, in->alibi);
  cpu_test_submit (bwd);
}

static char *
describe (const Case *c, AccelDType dtype)
{
  return g_strdup_printf ("attention-varlen-backward %s B%" G_GINT64_FORMAT " Hq%" G_GINT64_FORMAT " Hkv%"
                          G_GINT64_FORMAT " D%" G_GINT64_FORMAT " Dv%" G_GINT64_FORMAT "%s wl%d wr%d sinks%d "
                          "softcap%g alibi%d", accel_dtype_get_name (dtype), c->B, c->Hq, c->Hkv, c->D, c->Dv,
                          c->causal ? " causal" : "", c->window_left, c->window_right, c->sinks, c->softcap, c->alibi);
}

static const Case cases[] = {
  /* B  Hq Hkv D  Dv  lengths of q          lengths of k          causal wl  wr sinks scale softcap alibi */
  { 5, 4, 2, 4, 3, { 3, 0, 4, 1, 2 }, { 5, 2, 0, 1, 6 }, FALSE, -1, -1, 0, 0, 0, 0 },
  { 5, 4, 2, 3, 5, { 3, 0, 4, 1, 2 }, { 5, 2, 0, 1, 6 }, TRUE, -1, -1, 0, 0, 0, 1 },
  { 4, 3, 1, 5, 4, { 6, 1, 2, 4 }, { 4, 7, 2, 5 }, TRUE, 2, -1, 1, 0.6, 2.5, 2 },
  { 3, 2, 2, 4, 4, { 5, 3, 1 }, { 7, 3, 1 }, FALSE, 1, 2, 0, 0, 0, 0 },
};

/* dq, dk, dv against central differences of the forward op. */
static void
test_finite_differences (gconstpointer data)
{
  const Case *c = data;
  Inputs in;
  inputs_make (&in, c, ACCEL_DTYPE_F64, NULL);
  run_both (c, &in);

  gint64 dout[3] = { in.Tq, c->Hq, c->Dv };
  g_autoptr(AccelBuffer) probe = cpu_test_alloc (ACCEL_DTYPE_F64, dout, 3);
  g_autoptr(AccelOp) probe_op = make_forward (c, &in, probe, NULL);
  gint64 n_out = in.Tq * c->Hq * c->Dv;
  AccelBuffer *inputs[3] = { in.q, in.k, in.v }, *grads[3] = { in.dq, in.dk, in.dv };
  double *host[3] = { in.hq, in.hk, in.hv };
  const char *names[3] = { "dq", "dk", "dv" };
  g_autofree char *what = describe (c, ACCEL_DTYPE_F64);

  for (guint t = 0; t < 3; t++)
    {
      gint64 n = accel_buffer_get_n_elements (inputs[t]);
      g_autofree double *got = cpu_test_read (grads[t]);
      g_autofree double *want = g_new (double, MAX (n, 1));
      const double step = 1e-5;
      for (gint64 i = 0; i < n; i++)
        {
          double loss[2];
          for (int side = 0; side < 2; side++)
            {
              host[t][i] += side ? -2 * step : step;
              cpu_test_write (inputs[t], host[t]);
              cpu_test_submit (probe_op);
              g_autofree double *o = cpu_test_read (probe);
              loss[side] = 0;
              for (gint64 r = 0; r < n_out; r++)
                loss[side] += in.hdo[r] * o[r];
            }
          host[t][i] += step;
          want[i] = (loss[0] - loss[1]) / (2 * step);
        }
      cpu_test_write (inputs[t], host[t]);
      g_autofree char *gwhat = g_strdup_printf ("%s %s", what, names[t]);
      /* The f32 lse puts P off by ~1e-7 relative. */
      cpu_test_assert_close (gwhat, got, want, NULL, n, 1e-5, 1e-6);
    }
  inputs_clear (&in);
}

/* The narrower dtypes against binary64 on the same (representable) values. */
static void
test_dtypes (void)
{
  static const AccelDType dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16 };
  for (guint t = 0; t < G_N_ELEMENTS (dtypes); t++)
    for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
      {
        const Case *c = &cases[i];
        Inputs narrow, wide;
        inputs_make (&narrow, c, dtypes[t], NULL);
        inputs_make (&wide, c, ACCEL_DTYPE_F64, &narrow);
        run_both (c, &narrow);
        run_both (c, &wide);
        /* The forward pass rounds out to the dtype, and the gradients are
         * rounded once more: a few ulps of the dtype. */
        const double tol = 8 * cpu_test_eps (dtypes[t]);
        AccelBuffer *got[3] = { narrow.dq, narrow.dk, narrow.dv }, *want[3] = { wide.dq, wide.dk, wide.dv };
        const char *names[3] = { "dq", "dk", "dv" };
        g_autofree char *what = describe (c, dtypes[t]);
        for (guint g = 0; g < 3; g++)
          {
            g_autofree double *a = cpu_test_read (got[g]);
            g_autofree double *b = cpu_test_read (want[g]);
            gsize n = accel_buffer_get_n_elements (want[g]);
            g_autofree double *scale = g_new (double, MAX (n, 1));
            double mx = 0;
            for (gsize e = 0; e < n; e++)
              mx = MAX (mx, fabs (b[e]));
            for (gsize e = 0; e < n; e++)
              scale[e] = mx;
            g_autofree char *gwhat = g_strdup_printf ("%s %s", what, names[g]);
            cpu_test_assert_close (gwhat, a, b, scale, n, tol, 0);
          }
        inputs_clear (&narrow);
        inputs_clear (&wide);
      }
}

static void
expect_error (AccelOp *op, AccelError code, const char *needle, const char *needle2)
{
  g_autoptr(GError) error = NULL;
  gboolean ok = accel_device_submit (cpu_test_device (), op, NULL, &error);
  g_assert_false (ok);
  g_assert_error (error, ACCEL_ERROR, (gint) code);
  g_test_message ("refused: %s", error->message);
  g_assert_nonnull (strstr (error->message, needle));
  if (needle2 != NULL)
    g_assert_nonnull (strstr (error->message, needle2));
}

static void
test_errors (void)
{
  const Case *c = &cases[0];   /* cu_q = 0 3 3 7 8 10, cu_k = 0 5 7 7 8 14 */
  Inputs in;
  inputs_make (&in, c, ACCEL_DTYPE_F32, NULL);
  g_autoptr(AccelOp) fwd = make_forward (c, &in, in.out, in.lse);
  cpu_test_submit (fwd);

  static const struct {
    gboolean keys;
    int index;
    double value;
    const char *where;
  } bad[] = {
    { FALSE, 0, 1, "[0]" }, { FALSE, 2, 2, "[2]" }, { FALSE, 5, 9, "[5]" }, { TRUE, 3, 6, "[3]" }, { TRUE, 5, 15, "[5]" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      AccelBuffer *cu = bad[i].keys ? in.cu_k : in.cu_q;
      g_autofree double *values = cpu_test_read (cu);
      double keep = values[bad[i].index];
      values[bad[i].index] = bad[i].value;
      cpu_test_write (cu, values);
      g_autoptr(AccelOp) op = accel_attention_varlen_backward_new (in.q, in.k, in.v, in.out, in.dout, in.lse, in.cu_q,
                                                                   in.cu_k, in.dq, in.dk, in.dv);
      expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, bad[i].keys ? "cu-seqlens-k" : "cu-seqlens-q", bad[i].where);
      values[bad[i].index] = keep;
      cpu_test_write (cu, values);
    }

  /* A gradient that is not its input's shape; dk in place of dq. */
  g_autoptr(AccelOp) wrong = accel_attention_varlen_backward_new (in.q, in.k, in.v, in.out, in.dout, in.lse, in.cu_q,
                                                                  in.cu_k, in.dk, in.dk, in.dv);
  expect_error (wrong, ACCEL_ERROR_SHAPE_MISMATCH, "dq", NULL);

  /* lse is required. */
  g_autoptr(AccelOp) no_lse = accel_attention_varlen_backward_new (in.q, in.k, in.v, in.out, in.dout, NULL, in.cu_q,
                                                                   in.cu_k, in.dq, in.dk, in.dv);
  expect_error (no_lse, ACCEL_ERROR_INVALID_ARGUMENT, "lse", NULL);

  /* After all that, a good run still works. */
  g_autoptr(AccelOp) good = accel_attention_varlen_backward_new (in.q, in.k, in.v, in.out, in.dout, in.lse, in.cu_q,
                                                                 in.cu_k, in.dq, in.dk, in.dv);
  cpu_test_submit (good);
  inputs_clear (&in);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/cpu/attention-varlen-backward/finite-differences/%u", i);
      g_test_add_data_func (path, &cases[i], test_finite_differences);
    }
  g_test_add_func ("/cpu/attention-varlen-backward/dtypes", test_dtypes);
  g_test_add_func ("/cpu/attention-varlen-backward/errors", test_errors);
  return cpu_test_run ();
}
