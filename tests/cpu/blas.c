/* gemm, axpy and scal on cpu:0 against binary64 references, every dtype
 * each op claims, odd sizes, transposes, batches, alpha and beta.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include "cpu-test.h"

static const AccelDType gemm_types[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_C64, ACCEL_DTYPE_C128,
  ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

/* The precision arithmetic happens in. */
static double
compute_eps (AccelDType dtype)
{
  return dtype == ACCEL_DTYPE_F16 || dtype == ACCEL_DTYPE_BF16 ? 0x1p-24 : cpu_test_eps (dtype);
}

typedef struct {
  gint64 batch, m, n, k;
  gboolean transa, transb;
  double alpha, beta;
  gboolean nan_in_c;   /* with beta 0, c holds NaN that must not leak */
} GemmCase;

static void
check_gemm (AccelDType dtype, const GemmCase *gc)
{
  guint cc = cpu_test_components (dtype);
  gboolean batched = gc->batch > 0;
  gint64 batch = batched ? gc->batch : 1;
  gint64 m = gc->m, n = gc->n, k = gc->k;
  gint64 da[3] = { batch, gc->transa ? k : m, gc->transa ? m : k };
  gint64 db[3] = { batch, gc->transb ? n : k, gc->transb ? k : n };
  gint64 dc[3] = { batch, m, n };
  guint rank = batched ? 3 : 2;
  guint skip = batched ? 0 : 1;

  g_autoptr(AccelBuffer) a = cpu_test_alloc (dtype, da + skip, rank);
  g_autoptr(AccelBuffer) b = cpu_test_alloc (dtype, db + skip, rank);
  g_autoptr(AccelBuffer) c = cpu_test_alloc (dtype, dc + skip, rank);
  g_autofree double *ha = cpu_test_fill_random (a, -1, 1);
  g_autofree double *hb = cpu_test_fill_random (b, -1, 1);
  g_autofree double *hc = cpu_test_fill_random (c, -1, 1);
  if (gc->nan_in_c)
    {
      for (gint64 i = 0; i < batch * m * n * cc; i++)
        hc[i] = NAN;
      cpu_test_write (c, hc);
    }

  g_autoptr(AccelOp) op = accel_gemm_new (a, b, c);
  g_object_set (op, "transa", gc->transa, "transb", gc->transb,
                "alpha", gc->alpha, "beta", gc->beta, NULL);
  cpu_test_submit (op);
  g_autofree double *got = cpu_test_read (c);

  gsize nc = batch * m * n * cc;
  g_autofree double *want = g_new0 (double, nc);
  g_autofree double *scale = g_new0 (double, nc);
  for (gint64 p = 0; p < batch; p++)
    for (gint64 i = 0; i < m; i++)
      for (gint64 j = 0; j < n; j++)
        {
          double re = 0, im = 0, mag = 0;
          for (gint64 l = 0; l < k; l++)
            {
              gint64 ia = p * m * k + (gc->transa ? l * m + i : i * k + l);
              gint64 ib = p * k * n + (gc->transb ? j * k + l : l * n + j);
              if (cc == 1)
                {
                  re += ha[ia] * hb[ib];
                  mag += fabs (ha[ia] * hb[ib]);
                }
              else
                {
                  double ar = ha[2 * ia], ai = ha[2 * ia + 1], br = hb[2 * ib], bi = hb[2 * ib + 1];
                  re += ar * br - ai * bi;
                  im += ar * bi + ai * br;
                  mag += hypot (ar, ai) * hypot (br, bi);
                }
            }
          gint64 ic = (p * m + i) * n + j;
          for (guint q = 0; q < cc; q++)
            {
              double old = gc->beta != 0.0 ? hc[ic * cc + q] : 0.0;
              double v = gc->alpha * (q == 0 ? re : im) + gc->beta * old;
              want[ic * cc + q] = v;
              scale[ic * cc + q] = fabs (gc->alpha) * mag + fabs (gc->beta * old) + fabs (v);
            }
        }

  g_autofree char *what = g_strdup_printf ("gemm %s b=%" G_GINT64_FORMAT " m=%" G_GINT64_FORMAT
                                           " n=%" G_GINT64_FORMAT " k=%" G_GINT64_FORMAT " ta=%d tb=%d",
                                           accel_dtype_get_name (dtype), gc->batch, m, n, k,
                                           gc->transa, gc->transb);
  double rtol = 2.0 * (k + 4) * compute_eps (dtype) + cpu_test_eps (dtype);
  cpu_test_assert_close (what, got, want, scale, nc, rtol, cpu_test_tiny (dtype));
}

static void
test_gemm (gconstpointer data)
{
  AccelDType dtype = GPOINTER_TO_INT (data);
  static const gint64 sizes[][3] = {
    { 1, 1, 1 }, { 7, 33, 129 }, { 129, 7, 33 }, { 33, 129, 7 }, { 1, 33, 1 },
  };

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (int t = 0; t < 4; t++)
      {
        GemmCase gc = {
          0, sizes[s][0], sizes[s][1], sizes[s][2], t & 1, (t >> 1) & 1,
          g_test_rand_double_range (0.5, 2.0), t == 0 ? 0.0 : g_test_rand_double_range (-1.5, 1.5),
        };
        check_gemm (dtype, &gc);
      }

  GemmCase batched = { 3, 7, 17, 33, FALSE, TRUE, 1.0, 0.5 };
  check_gemm (dtype, &batched);
  GemmCase batched_t = { 2, 33, 7, 9, TRUE, FALSE, -0.75, 0.0 };
  check_gemm (dtype, &batched_t);
  GemmCase nan_c = { 0, 7, 7, 7, FALSE, FALSE, 1.0, 0.0, TRUE };
  check_gemm (dtype, &nan_c);
}

static const AccelDType l1_types[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_C64, ACCEL_DTYPE_C128,
  ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

static const gint64 l1_sizes[] = { 1, 7, 33, 129, 100003 };

static void
test_axpy (gconstpointer data)
{
  AccelDType dtype = GPOINTER_TO_INT (data);
  guint cc = cpu_test_components (dtype);

  for (guint s = 0; s < G_N_ELEMENTS (l1_sizes); s++)
    {
      gint64 n = l1_sizes[s];
      g_autoptr(AccelBuffer) x = cpu_test_alloc (dtype, &n, 1);
      g_autoptr(AccelBuffer) y = cpu_test_alloc (dtype, &n, 1);
      g_autofree double *hx = cpu_test_fill_random (x, -1, 1);
      g_autofree double *hy = cpu_test_fill_random (y, -1, 1);
      double alpha = g_test_rand_double_range (-2, 2);

      g_autoptr(AccelOp) op = accel_axpy_new (alpha, x, y);
      cpu_test_submit (op);
      g_autofree double *got = cpu_test_read (y);
      g_autofree double *want = g_new (double, n * cc);
      g_autofree double *scale = g_new (double, n * cc);
      for (gint64 i = 0; i < n * cc; i++)
        {
          want[i] = alpha * hx[i] + hy[i];
          scale[i] = fabs (alpha * hx[i]) + fabs (hy[i]);
        }
      g_autofree char *what = g_strdup_printf ("axpy %s n=%" G_GINT64_FORMAT, accel_dtype_get_name (dtype), n);
      cpu_test_assert_close (what, got, want, scale, n * cc, 4 * cpu_test_eps (dtype), cpu_test_tiny (dtype));
    }
}

static void
test_scal (gconstpointer data)
{
  AccelDType dtype = GPOINTER_TO_INT (data);
  guint cc = cpu_test_components (dtype);

  for (guint s = 0; s < G_N_ELEMENTS (l1_sizes); s++)
    {
      gint64 n = l1_sizes[s];
      g_autoptr(AccelBuffer) x = cpu_test_alloc (dtype, &n, 1);
      g_autofree double *hx = cpu_test_fill_random (x, -1, 1);
      double alpha = g_test_rand_double_range (-2, 2);

      g_autoptr(AccelOp) op = accel_scal_new (alpha, x);
      cpu_test_submit (op);
      g_autofree double *got = cpu_test_read (x);
      g_autofree double *want = g_new (double, n * cc);
      for (gint64 i = 0; i < n * cc; i++)
        want[i] = alpha * hx[i];
      g_autofree char *what = g_strdup_printf ("scal %s n=%" G_GINT64_FORMAT, accel_dtype_get_name (dtype), n);
      cpu_test_assert_close (what, got, want, NULL, n * cc, 2 * cpu_test_eps (dtype), cpu_test_tiny (dtype));
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (gemm_types); i++)
    {
      g_autofree char *path = g_strdup_printf ("/cpu/gemm/%s", accel_dtype_get_name (gemm_types[i]));
      g_test_add_data_func (path, GINT_TO_POINTER (gemm_types[i]), test_gemm);
    }
  for (guint i = 0; i < G_N_ELEMENTS (l1_types); i++)
    {
      g_autofree char *p1 = g_strdup_printf ("/cpu/axpy/%s", accel_dtype_get_name (l1_types[i]));
      g_autofree char *p2 = g_strdup_printf ("/cpu/scal/%s", accel_dtype_get_name (l1_types[i]));
      g_test_add_data_func (p1, GINT_TO_POINTER (l1_types[i]), test_axpy);
      g_test_add_data_func (p2, GINT_TO_POINTER (l1_types[i]), test_scal);
    }
  return cpu_test_run ();
}
