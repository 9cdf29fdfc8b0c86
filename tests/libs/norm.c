/* Tests of layernorm and rmsnorm against the definitions computed in f64,
 * f32, f16 and bf16, with and without gamma and beta, in place; then bad
 * input.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include "libs-test.h"

static void
check (gboolean rms)
{
  if (lt_device_for ("layernorm", "rmsnorm", NULL) == NULL)
    return;
  const AccelDType dts[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16 };
  const gint64 shapes[][3] = { { 2, 5, 33 }, { 1, 7, 1 }, { 3, 1, 1000 } };
  for (guint d = 0; d < G_N_ELEMENTS (dts); d++)
    for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
      for (guint variant = 0; variant < 3; variant++)
        {
          /* 0: gamma and beta; 1: neither; 2: gamma only, in place */
          AccelDType dt = dts[d];
          gint64 n = shapes[s][2], total = shapes[s][0] * shapes[s][1] * n;
          double eps = variant == 1 ? 1e-3 : 1e-5;
          g_autofree double *x = lt_random (dt, total, -3, 5);
          g_autofree double *gamma = lt_random (dt, n, 0.5, 1.5);
          g_autofree double *beta = lt_random (dt, n, -1, 1);
          gint64 dn[1] = { n };
          g_autoptr(AccelBuffer) bx = lt_new (dt, shapes[s], 3, x);
          g_autoptr(AccelBuffer) bg = variant != 1 ? lt_new (dt, dn, 1, gamma) : NULL;
          g_autoptr(AccelBuffer) bb = variant == 0 ? lt_new (dt, dn, 1, beta) : NULL;
          g_autoptr(AccelBuffer) by = variant == 2 ? g_object_ref (bx) : lt_alloc (dt, shapes[s], 3);
          g_autoptr(AccelOp) op = rms ? accel_rmsnorm_new (bx, bg, bb, by) : accel_layernorm_new (bx, bg, bb, by);
          g_object_set (op, "eps", eps, NULL);

          double rtol = dt == ACCEL_DTYPE_F32 ? 1e-5 : 2 * lt_eps (dt);
          lt_submit_compare (op, rtol, rtol, "*", NULL);
          g_autofree double *y = lt_read (by);
          g_autofree double *want = g_new (double, total);
          for (gint64 row = 0; row < total / n; row++)
            {
              const double *xr = x + row * n;
              double mean = 0, var = 0;
              if (!rms)
                {
                  for (gint64 j = 0; j < n; j++)
                    mean += xr[j];
                  mean /= n;
                }
              for (gint64 j = 0; j < n; j++)
                var += (xr[j] - mean) * (xr[j] - mean);
              var /= n;
              for (gint64 j = 0; j < n; j++)
                {
                  double v = (xr[j] - mean) / sqrt (var + eps);
                  if (bg)
                    v *= gamma[j];
                  if (bb)
                    v += beta[j];
                  want[row * n + j] = lt_round (dt, v);
                }
            }
          lt_assert_close (rms ? "rmsnorm" : "layernorm", y, want, total, rtol, rtol);
        }
}

static void
test_layernorm (void)
{
  check (FALSE);
}

static void
test_rmsnorm (void)
{
  check (TRUE);
}

static void
test_bad_input (void)
{
  if (lt_device_for ("layernorm", "rmsnorm", "scan", NULL) == NULL)
    return;
  gint64 dx[2] = { 4, 6 }, d5[1] = { 5 };
  g_autoptr(AccelBuffer) x = lt_new (ACCEL_DTYPE_F32, dx, 2, NULL);
  g_autoptr(AccelBuffer) y = lt_alloc (ACCEL_DTYPE_F32, dx, 2);
  {
    g_autoptr(AccelBuffer) gamma = lt_new (ACCEL_DTYPE_F32, d5, 1, NULL);
    g_autoptr(AccelOp) op = accel_layernorm_new (x, gamma, NULL, y);
    lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, "“gamma”");
  }
  {
    gint64 d6[1] = { 6 };
    g_autoptr(AccelBuffer) beta = lt_new (ACCEL_DTYPE_BF16, d6, 1, NULL);
    g_autoptr(AccelOp) op = accel_rmsnorm_new (x, NULL, beta, y);
    lt_expect_error (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, NULL);
  }
  {
    g_autoptr(AccelBuffer) x64 = lt_new (ACCEL_DTYPE_F64, dx, 2, NULL);
    g_autoptr(AccelBuffer) y64 = lt_alloc (ACCEL_DTYPE_F64, dx, 2);
    g_autoptr(AccelOp) op = accel_layernorm_new (x64, NULL, NULL, y64);
    lt_expect_error (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, NULL);
  }
  {
    gint64 d64[2] = { 6, 4 };
    g_autoptr(AccelBuffer) yt = lt_alloc (ACCEL_DTYPE_F32, d64, 2);
    g_autoptr(AccelOp) op = accel_rmsnorm_new (x, NULL, NULL, yt);
    lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, NULL);
  }
  {
    g_autoptr(AccelOp) op = accel_layernorm_new (x, NULL, NULL, y);
    ACCEL_LAYERNORM (op)->eps = -1;
    lt_expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "eps");
  }
}

int
main (int argc, char **argv)
{
  lt_init (&argc, &argv);
  g_test_add_func ("/libs/norm/layernorm", test_layernorm);
  g_test_add_func ("/libs/norm/rmsnorm", test_rmsnorm);
  g_test_add_func ("/libs/norm/bad-input", test_bad_input);
  return lt_run ();
}
