/* attention on cpu:0 against a binary64 reference written from the op's
 * definition: grouped-query heads, causal (bottom-right aligned) and sliding
 * windows, softcap, explicit scale, lse, rows that see no key, every dtype.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include "cpu-test.h"

typedef struct {
  gint64 B, Hq, Hkv, Sq, Sk, D, Dv;
  gboolean causal;
  int window_left, window_right;
  double scale, softcap;
  gboolean with_lse;
} AttnCase;

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
  gint64 dq[4] = { c->B, c->Hq, c->Sq, c->D };
  gint64 dk[4] = { c->B, c->Hkv, c->Sk, c->D };
  gint64 dv[4] = { c->B, c->Hkv, c->Sk, c->Dv };
  gint64 dout[4] = { c->B, c->Hq, c->Sq, c->Dv };
  g_autoptr(AccelBuffer) q = cpu_test_alloc (dtype, dq, 4);
  g_autoptr(AccelBuffer) k = cpu_test_alloc (dtype, dk, 4);
  g_autoptr(AccelBuffer) v = cpu_test_alloc (dtype, dv, 4);
  g_autoptr(AccelBuffer) out = cpu_test_alloc (dtype, dout, 4);
  g_autoptr(AccelBuffer) lse = c->with_lse ? cpu_test_alloc (ACCEL_DTYPE_F32, dout, 3) : NULL;
  g_autofree double *hq = cpu_test_fill_random (q, -1, 1);
  g_autofree double *hk = cpu_test_fill_random (k, -1, 1);
  g_autofree double *hv = cpu_test_fill_random (v, -1, 1);
  g_autofree double *hout = cpu_test_fill_random (out, -1, 1);

  g_autoptr(AccelOp) op = accel_attention_new (q, k, v, out);
  g_object_set (op, "lse", lse, "causal", c->causal, "window-left", c->window_left,
                "window-right", c->window_right, "scale", c->scale, "softcap", c->softcap, NULL);
  cpu_test_submit (op);
  g_autofree double *got = cpu_test_read (out);
  g_autofree double *got_lse = lse ? cpu_test_read (lse) : NULL;

  gint64 rows = c->B * c->Hq * c->Sq;
  g_autofree double *want = g_new (double, rows * c->Dv);
  g_autofree double *want_lse = g_new (double, rows);
  g_autofree double *s = g_new (double, c->Sk);
  double scale = c->scale > 0 ? c->scale : 1.0 / sqrt ((double) c->D);

  for (gint64 b = 0; b < c->B; b++)
    for (gint64 h = 0; h < c->Hq; h++)
      for (gint64 i = 0; i < c->Sq; i++)
        {
          gint64 row = (b * c->Hq + h) * c->Sq + i;
          gint64 kh = h / (c->Hq / c->Hkv);
          double m = -INFINITY, sum = 0;
          for (gint64 j = 0; j < c->Sk; j++)
            {
              if (!visible (c, i, j))
                continue;
              double dot = 0;
              for (gint64 e = 0; e < c->D; e++)
                dot += hq[row * c->D + e] * hk[((b * c->Hkv + kh) * c->Sk + j) * c->D + e];
              double x = dot * scale;
              if (c->softcap > 0)
                x = c->softcap * tanh (x / c->softcap);
              s[j] = x;
              m = MAX (m, x);
            }
          for (gint64 e = 0; e < c->Dv; e++)
            want[row * c->Dv + e] = 0;
          if (m == -INFINITY)
            {
              want_lse[row] = -INFINITY;
              continue;
            }
          for (gint64 j = 0; j < c->Sk; j++)
            if (visible (c, i, j))
              {
                double p = exp (s[j] - m);
                sum += p;
                for (gint64 e = 0; e < c->Dv; e++)
                  want[row * c->Dv + e] += p * hv[((b * c->Hkv + kh) * c->Sk + j) * c->Dv + e];
              }
          for (gint64 e = 0; e < c->Dv; e++)
            want[row * c->Dv + e] /= sum;
          want_lse[row] = m + log (sum);
        }

  g_autofree char *what = g_strdup_printf ("attention %s B%" G_GINT64_FORMAT " Hq%" G_GINT64_FORMAT
                                           " Hkv%" G_GINT64_FORMAT " Sq%" G_GINT64_FORMAT " Sk%" G_GINT64_FORMAT
                                           " D%" G_GINT64_FORMAT " Dv%" G_GINT64_FORMAT
                                           " causal %d window %d,%d scale %g softcap %g",
                                           accel_dtype_get_name (dtype), c->B, c->Hq, c->Hkv, c->Sq, c->Sk,
                                           c->D, c->Dv, c->causal, c->window_left, c->window_right,
                                           c->scale, c->softcap);
  /* Outputs are weighted means of values in [-1, 1]: an absolute bound. */
  double acc_eps = dtype == ACCEL_DTYPE_F64 ? 1e-13 : 2e-5;
  cpu_test_assert_close (what, got, want, NULL, rows * c->Dv, 0.0, acc_eps + 2 * cpu_test_eps (dtype));
  if (got_lse)
    {
      g_autofree char *lwhat = g_strconcat (what, " (lse)", NULL);
      cpu_test_assert_close (lwhat, got_lse, want_lse, NULL, rows, 2e-6, 2e-5);
    }
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

int
main (int argc, char **argv)
{
  static const AccelDType types[] = {
    ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
  };

  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    {
      g_autofree char *path = g_strdup_printf ("/cpu/attention/%s", accel_dtype_get_name (types[i]));
      g_test_add_data_func (path, GINT_TO_POINTER (types[i]), test_attention);
    }
  g_test_add_func ("/cpu/attention/large", test_attention_large);
  return cpu_test_run ();
}
