/* Tests of qr, lu, lu-solve, cholesky, cholesky-solve, svd and eigh: each
 * result put back together and compared with its input on fresh random
 * matrices of odd sizes, f32 and f64, batched and not; then bad input.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "libs-test.h"

static const AccelDType dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64 };

/* Tolerance for a reconstruction of n-sized products in @dt. */
static double
tol (AccelDType dt, gint64 n)
{
  return (dt == ACCEL_DTYPE_F32 ? 2e-5 : 1e-12) * MAX (n, 4);
}

/* c[m, n] = op(a) op(b) for row-major matrices; ta: a is [k, m]. */
static void
matmul (const double *a, gboolean ta, const double *b, gboolean tb, double *c, gint64 m, gint64 n, gint64 k)
{
  for (gint64 i = 0; i < m; i++)
    for (gint64 j = 0; j < n; j++)
      {
        double s = 0;
        for (gint64 l = 0; l < k; l++)
          s += (ta ? a[l * m + i] : a[i * k + l]) * (tb ? b[j * k + l] : b[l * n + j]);
        c[i * n + j] = s;
      }
}

/* That the k columns of q [len, k] (@columns) or the k rows of q [k, len]
 * are orthonormal: qᵀ q, or q qᵀ, is the identity. */
static void
assert_orthonormal (const char *what, const double *q, gboolean columns, gint64 len, gint64 k, double t)
{
  g_autofree double *gram = g_new (double, MAX (k * k, 1));
  g_autofree double *eye = g_new0 (double, MAX (k * k, 1));
  matmul (q, columns, q, !columns, gram, k, k, len);
  for (gint64 i = 0; i < k; i++)
    eye[i * k + i] = 1;
  lt_assert_close (what, gram, eye, k * k, 0, t);
}

/* An SPD matrix: M Mᵀ + n I. */
static double *
random_spd (AccelDType dt, gint64 n)
{
  g_autofree double *m = lt_random (dt, n * n, -1, 1);
  double *a = g_new (double, n * n);
  matmul (m, FALSE, m, TRUE, a, n, n, n);
  for (gint64 i = 0; i < n; i++)
    a[i * n + i] += n;
  for (gint64 i = 0; i < n * n; i++)
    a[i] = lt_round (dt, a[i]);
  /* Rounding keeps it symmetric: both halves round the same sum. */
  return a;
}

static void
test_qr (void)
{
  if (lt_device_for ("qr", NULL) == NULL)
    return;
  const gint64 shapes[][3] = { { 1, 7, 5 }, { 1, 5, 7 }, { 1, 1, 1 }, { 3, 6, 4 }, { 2, 13, 13 } };
  for (guint t = 0; t < G_N_ELEMENTS (dtypes); t++)
    for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
      {
        AccelDType dt = dtypes[t];
        gint64 batch = shapes[s][0], m = shapes[s][1], n = shapes[s][2], k = MIN (m, n);
        gboolean batched = batch > 1;
        gint64 da[3] = { batch, m, n }, dq[3] = { batch, m, k }, dr[3] = { batch, k, n };
        g_autofree double *a = lt_random (dt, batch * m * n, -1, 1);
        g_autoptr(AccelBuffer) ba = lt_new (dt, da + !batched, 2 + batched, a);
        g_autoptr(AccelBuffer) bq = lt_alloc (dt, dq + !batched, 2 + batched);
        g_autoptr(AccelBuffer) br = lt_alloc (dt, dr + !batched, 2 + batched);
        g_autoptr(AccelOp) op = accel_qr_new (ba, bq, br);

        lt_submit (op);
        g_autofree double *q = lt_read (bq);
        g_autofree double *r = lt_read (br);
        g_autofree double *qr = g_new (double, m * n);
        for (gint64 b = 0; b < batch; b++)
          {
            matmul (q + b * m * k, FALSE, r + b * k * n, FALSE, qr, m, n, k);
            lt_assert_close ("qr: q r", qr, a + b * m * n, m * n, 0, tol (dt, k));
            assert_orthonormal ("qr: qᵀ q", q + b * m * k, TRUE, m, k, tol (dt, m));
            for (gint64 i = 0; i < k; i++)
              for (gint64 j = 0; j < MIN (i, n); j++)
                g_assert_cmpfloat (r[b * k * n + i * n + j], ==, 0.0);
          }
      }
}

/* Applies LAPACK's row interchanges to a copy of a and compares with l u. */
static void
check_lu (AccelDType dt, const double *a, const double *lu, const double *pivots, gint64 m, gint64 n)
{
  gint64 k = MIN (m, n);
  g_autofree double *pa = g_memdup2 (a, m * n * sizeof (double));
  g_autofree double *l = g_new0 (double, m * k);
  g_autofree double *u = g_new0 (double, k * n);
  g_autofree double *prod = g_new (double, m * n);

  for (gint64 i = 0; i < k; i++)
    {
      gint64 p = (gint64) pivots[i] - 1;
      g_assert_cmpint (p, >=, i);
      g_assert_cmpint (p, <, m);
      for (gint64 j = 0; j < n; j++)
        {
          double t = pa[i * n + j];
          pa[i * n + j] = pa[p * n + j];
          pa[p * n + j] = t;
        }
    }
  for (gint64 i = 0; i < m; i++)
    for (gint64 j = 0; j < n; j++)
      {
        if (j < i && j < k)
          l[i * k + j] = lu[i * n + j];
        else if (i < k)
          u[i * n + j] = lu[i * n + j];
        if (i == j && i < k)
          l[i * k + i] = 1;
      }
  matmul (l, FALSE, u, FALSE, prod, m, n, k);
  lt_assert_close ("lu: p a = l u", prod, pa, m * n, 0, tol (dt, k));
}

static void
test_lu (void)
{
  if (lt_device_for ("lu", NULL) == NULL)
    return;
  const gint64 shapes[][3] = { { 1, 7, 7 }, { 1, 5, 8 }, { 1, 8, 5 }, { 4, 9, 9 }, { 1, 1, 1 } };
  for (guint t = 0; t < G_N_ELEMENTS (dtypes); t++)
    for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
      {
        AccelDType dt = dtypes[t];
        gint64 batch = shapes[s][0], m = shapes[s][1], n = shapes[s][2], k = MIN (m, n);
        gboolean batched = batch > 1, in_place = s == 3;
        gint64 da[3] = { batch, m, n }, dp[2] = { batch, k };
        g_autofree double *a = lt_random (dt, batch * m * n, -1, 1);
        g_autoptr(AccelBuffer) ba = lt_new (dt, da + !batched, 2 + batched, a);
        g_autoptr(AccelBuffer) blu = in_place ? g_object_ref (ba) : lt_alloc (dt, da + !batched, 2 + batched);
        g_autoptr(AccelBuffer) bp = lt_alloc (ACCEL_DTYPE_I32, dp + !batched, 1 + batched);
        g_autoptr(AccelOp) op = accel_lu_new (ba, blu, bp);

        lt_submit_compare (op, 0, tol (dt, k), "*", NULL);
        g_autofree double *lu = lt_read (blu);
        g_autofree double *piv = lt_read (bp);
        for (gint64 b = 0; b < batch; b++)
          check_lu (dt, a + b * m * n, lu + b * m * n, piv + b * k, m, n);
      }
}

/* Solves with @solve_op's factor, checking a x = b. */
static void
check_solution (AccelDType dt, const double *a, const double *b, const double *x, gint64 n, gint64 nrhs)
{
  g_autofree double *ax = g_new (double, n * nrhs);
  matmul (a, FALSE, x, FALSE, ax, n, nrhs, n);
  lt_assert_close ("solve: a x = b", ax, b, n * nrhs, 0, tol (dt, n) * 10);
}

static void
test_lu_solve (void)
{
  if (lt_device_for ("lu", "lu-solve", NULL) == NULL)
    return;
  for (guint t = 0; t < G_N_ELEMENTS (dtypes); t++)
    for (guint variant = 0; variant < 3; variant++)
      {
        /* 0: matrix rhs; 1: vector rhs, in place; 2: batched */
        AccelDType dt = dtypes[t];
        gint64 n = 11, nrhs = variant == 1 ? 1 : 3, batch = variant == 2 ? 3 : 1;
        gboolean batched = batch > 1;
        gint64 da[3] = { batch, n, n }, dp[2] = { batch, n }, db[3] = { batch, n, nrhs };
        g_autofree double *a = lt_random (dt, batch * n * n, -1, 1);
        for (gint64 b = 0; b < batch; b++)
          for (gint64 i = 0; i < n; i++)
            a[b * n * n + i * n + i] = lt_round (dt, a[b * n * n + i * n + i] + 4);  /* well conditioned */
        g_autofree double *rhs = lt_random (dt, batch * n * nrhs, -1, 1);
        g_autoptr(AccelBuffer) ba = lt_new (dt, da + !batched, 2 + batched, a);
        g_autoptr(AccelBuffer) blu = lt_alloc (dt, da + !batched, 2 + batched);
        g_autoptr(AccelBuffer) bp = lt_alloc (ACCEL_DTYPE_I32, dp + !batched, 1 + batched);
        guint rb = (variant == 1 ? 1 : 2) + batched;
        g_autoptr(AccelBuffer) bb = lt_new (dt, db + !batched, rb, rhs);
        g_autoptr(AccelBuffer) bx = variant == 1 ? g_object_ref (bb) : lt_alloc (dt, db + !batched, rb);
        g_autoptr(AccelOp) factor = accel_lu_new (ba, blu, bp);
        g_autoptr(AccelOp) solve = accel_lu_solve_new (blu, bp, bb, bx);

        lt_submit (factor);
        lt_submit_compare (solve, 1e-3, tol (dt, n), "x", NULL);
        g_autofree double *x = lt_read (bx);
        for (gint64 b = 0; b < batch; b++)
          check_solution (dt, a + b * n * n, rhs + b * n * nrhs, x + b * n * nrhs, n, nrhs);
      }
}

static void
test_cholesky (void)
{
  if (lt_device_for ("cholesky", "cholesky-solve", NULL) == NULL)
    return;
  for (guint t = 0; t < G_N_ELEMENTS (dtypes); t++)
    for (guint variant = 0; variant < 4; variant++)
      {
        /* lower or upper; in place or not; 3: batched */
        AccelDType dt = dtypes[t];
        gboolean lower = variant % 2 == 0, in_place = variant == 1, batched = variant == 3;
        gint64 n = variant == 2 ? 1 : 9, batch = batched ? 2 : 1;
        gint64 da[3] = { batch, n, n };
        g_autofree double *a = g_new (double, batch * n * n);
        for (gint64 b = 0; b < batch; b++)
          {
            g_autofree double *spd = random_spd (dt, n);
            memcpy (a + b * n * n, spd, n * n * sizeof (double));
          }
        /* The triangle not read holds garbage. */
        g_autofree double *input = g_memdup2 (a, batch * n * n * sizeof (double));
        for (gint64 b = 0; b < batch; b++)
          for (gint64 i = 0; i < n; i++)
            for (gint64 j = 0; j < n; j++)
              if (lower ? j > i : j < i)
                input[b * n * n + i * n + j] = -1000;
        g_autoptr(AccelBuffer) ba = lt_new (dt, da + !batched, 2 + batched, input);
        g_autoptr(AccelBuffer) bl = in_place ? g_object_ref (ba) : lt_alloc (dt, da + !batched, 2 + batched);
        g_autoptr(AccelOp) op = accel_cholesky_new (ba, bl);
        g_object_set (op, "lower", lower, NULL);

        lt_submit_compare (op, 0, tol (dt, n), "*", NULL);
        g_autofree double *l = lt_read (bl);
        g_autofree double *llt = g_new (double, n * n);
        for (gint64 b = 0; b < batch; b++)
          {
            const double *f = l + b * n * n;
            for (gint64 i = 0; i < n; i++)
              for (gint64 j = 0; j < n; j++)
                if (lower ? j > i : j < i)
                  g_assert_cmpfloat (f[i * n + j], ==, 0.0);
            if (lower)
              matmul (f, FALSE, f, TRUE, llt, n, n, n);
            else
              matmul (f, TRUE, f, FALSE, llt, n, n, n);
            lt_assert_close ("cholesky: l lᵀ", llt, a + b * n * n, n * n, 1e-5, tol (dt, n));
          }

        /* And solve with the factor. */
        gint64 db[3] = { batch, n, 2 };
        g_autofree double *rhs = lt_random (dt, batch * n * 2, -1, 1);
        g_autoptr(AccelBuffer) bb = lt_new (dt, db + !batched, 2 + batched, rhs);
        g_autoptr(AccelBuffer) bx = lt_alloc (dt, db + !batched, 2 + batched);
        g_autoptr(AccelOp) solve = accel_cholesky_solve_new (bl, bb, bx);
        g_object_set (solve, "lower", lower, NULL);
        lt_submit_compare (solve, 1e-3, tol (dt, n), "x", NULL);
        g_autofree double *x = lt_read (bx);
        for (gint64 b = 0; b < batch; b++)
          check_solution (dt, a + b * n * n, rhs + b * n * 2, x + b * n * 2, n, 2);
      }
}

static void
test_svd (void)
{
  if (lt_device_for ("svd", NULL) == NULL)
    return;
  const gint64 shapes[][3] = { { 1, 9, 5 }, { 1, 5, 9 }, { 1, 6, 6 }, { 3, 7, 4 }, { 2, 3, 8 }, { 1, 1, 3 } };
  for (guint t = 0; t < G_N_ELEMENTS (dtypes); t++)
    for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
      {
        AccelDType dt = dtypes[t];
        gint64 batch = shapes[s][0], m = shapes[s][1], n = shapes[s][2], k = MIN (m, n);
        gboolean batched = batch > 1;
        gint64 da[3] = { batch, m, n }, ds[2] = { batch, k }, du[3] = { batch, m, k }, dv[3] = { batch, k, n };
        g_autofree double *a = lt_random (dt, batch * m * n, -1, 1);
        g_autoptr(AccelBuffer) ba = lt_new (dt, da + !batched, 2 + batched, a);
        g_autoptr(AccelBuffer) bs = lt_alloc (dt, ds + !batched, 1 + batched);
        g_autoptr(AccelBuffer) bu = lt_alloc (dt, du + !batched, 2 + batched);
        g_autoptr(AccelBuffer) bvt = lt_alloc (dt, dv + !batched, 2 + batched);
        g_autoptr(AccelOp) op = accel_svd_new (ba, bs, bu, bvt);

        /* Singular values are unique; the vectors only up to sign. */
        lt_submit_compare (op, 0, tol (dt, m + n), "s", NULL);
        g_autofree double *sv = lt_read (bs);
        g_autofree double *u = lt_read (bu);
        g_autofree double *vt = lt_read (bvt);
        g_autofree double *us = g_new (double, m * k);
        g_autofree double *prod = g_new (double, m * n);
        for (gint64 b = 0; b < batch; b++)
          {
            const double *sb = sv + b * k;
            for (gint64 i = 0; i < k; i++)
              {
                g_assert_cmpfloat (sb[i], >=, 0.0);
                if (i > 0)
                  g_assert_cmpfloat (sb[i], <=, sb[i - 1]);
              }
            for (gint64 i = 0; i < m; i++)
              for (gint64 j = 0; j < k; j++)
                us[i * k + j] = u[b * m * k + i * k + j] * sb[j];
            matmul (us, FALSE, vt + b * k * n, FALSE, prod, m, n, k);
            lt_assert_close ("svd: u diag(s) vt", prod, a + b * m * n, m * n, 0, tol (dt, m + n));
            assert_orthonormal ("svd: uᵀ u", u + b * m * k, TRUE, m, k, tol (dt, m));
            assert_orthonormal ("svd: vt vtᵀ", vt + b * k * n, FALSE, n, k, tol (dt, n));
          }
      }
}

static void
test_eigh (void)
{
  if (lt_device_for ("eigh", NULL) == NULL)
    return;
  for (guint t = 0; t < G_N_ELEMENTS (dtypes); t++)
    for (guint variant = 0; variant < 4; variant++)
      {
        /* lower or upper triangle read; in place; batched */
        AccelDType dt = dtypes[t];
        gboolean lower = variant != 1, in_place = variant == 2, batched = variant == 3;
        gint64 n = variant == 0 ? 13 : 8, batch = batched ? 3 : 1;
        gint64 da[3] = { batch, n, n }, dw[2] = { batch, n };
        g_autofree double *a = lt_random (dt, batch * n * n, -1, 1);
        for (gint64 b = 0; b < batch; b++)
          for (gint64 i = 0; i < n; i++)
            for (gint64 j = 0; j < i; j++)
              a[b * n * n + j * n + i] = a[b * n * n + i * n + j];
        g_autofree double *input = g_memdup2 (a, batch * n * n * sizeof (double));
        for (gint64 b = 0; b < batch; b++)
          for (gint64 i = 0; i < n; i++)
            for (gint64 j = 0; j < n; j++)
              if (lower ? j > i : j < i)
                input[b * n * n + i * n + j] = 99;
        g_autoptr(AccelBuffer) ba = lt_new (dt, da + !batched, 2 + batched, input);
        g_autoptr(AccelBuffer) bw = lt_alloc (dt, dw + !batched, 1 + batched);
        g_autoptr(AccelBuffer) bv = in_place ? g_object_ref (ba) : lt_alloc (dt, da + !batched, 2 + batched);
        g_autoptr(AccelOp) op = accel_eigh_new (ba, bw, bv);
        g_object_set (op, "lower", lower, NULL);

        lt_submit_compare (op, 0, tol (dt, n), "w", NULL);
        g_autofree double *w = lt_read (bw);
        g_autofree double *v = lt_read (bv);
        g_autofree double *av = g_new (double, n * n);
        g_autofree double *vw = g_new (double, n * n);
        for (gint64 b = 0; b < batch; b++)
          {
            const double *vb = v + b * n * n, *wb = w + b * n;
            for (gint64 i = 1; i < n; i++)
              g_assert_cmpfloat (wb[i], >=, wb[i - 1]);
            matmul (a + b * n * n, FALSE, vb, FALSE, av, n, n, n);
            for (gint64 i = 0; i < n; i++)
              for (gint64 j = 0; j < n; j++)
                vw[i * n + j] = vb[i * n + j] * wb[j];
            lt_assert_close ("eigh: a v = v diag(w)", av, vw, n * n, 0, tol (dt, n) * 4);
            assert_orthonormal ("eigh: vᵀ v", vb, TRUE, n, n, tol (dt, n));
          }
      }
}

static void
test_bad_input (void)
{
  if (lt_device_for ("qr", "cholesky", "eigh", "lu", "lu-solve", "scan", NULL) == NULL)
    return;
  gint64 d33[2] = { 3, 3 }, d32[2] = { 3, 2 }, d23[2] = { 2, 3 }, d3[1] = { 3 };

  /* Wrong shapes and dtypes: refused before launch. */
  {
    g_autoptr(AccelBuffer) a = lt_new (ACCEL_DTYPE_F32, d33, 2, NULL);
    g_autoptr(AccelBuffer) q = lt_alloc (ACCEL_DTYPE_F32, d32, 2);
    g_autoptr(AccelBuffer) r = lt_alloc (ACCEL_DTYPE_F32, d33, 2);
    g_autoptr(AccelOp) op = accel_qr_new (a, q, r);
    lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, "“q”");
  }
  {
    g_autoptr(AccelBuffer) a = lt_new (ACCEL_DTYPE_I32, d33, 2, NULL);
    g_autoptr(AccelBuffer) l = lt_alloc (ACCEL_DTYPE_I32, d33, 2);
    g_autoptr(AccelOp) op = accel_cholesky_new (a, l);
    lt_expect_error (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, NULL);
  }
  {
    g_autoptr(AccelBuffer) a = lt_new (ACCEL_DTYPE_F64, d23, 2, NULL);
    g_autoptr(AccelBuffer) l = lt_alloc (ACCEL_DTYPE_F64, d23, 2);
    g_autoptr(AccelOp) op = accel_cholesky_new (a, l);
    lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, "square");
  }
  {
    g_autoptr(AccelBuffer) a = lt_new (ACCEL_DTYPE_F64, d33, 2, NULL);
    g_autoptr(AccelBuffer) w = lt_alloc (ACCEL_DTYPE_F32, d3, 1);
    g_autoptr(AccelBuffer) v = lt_alloc (ACCEL_DTYPE_F64, d33, 2);
    g_autoptr(AccelOp) op = accel_eigh_new (a, w, v);
    lt_expect_error (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, NULL);
  }
  {
    gint64 d4[1] = { 4 };
    g_autoptr(AccelBuffer) lu = lt_new (ACCEL_DTYPE_F32, d33, 2, NULL);
    g_autoptr(AccelBuffer) p = lt_new (ACCEL_DTYPE_I32, d3, 1, NULL);
    g_autoptr(AccelBuffer) b = lt_new (ACCEL_DTYPE_F32, d4, 1, NULL);
    g_autoptr(AccelBuffer) x = lt_alloc (ACCEL_DTYPE_F32, d4, 1);
    g_autoptr(AccelOp) op = accel_lu_solve_new (lu, p, b, x);
    lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, "“b”");
  }

  /* Singular and indefinite matrices: refused by the kernel, naming where. */
  for (guint t = 0; t < G_N_ELEMENTS (dtypes); t++)
    {
      AccelDType dt = dtypes[t];
      /* Exactly singular in any arithmetic: a zero column. */
      double zero_column[9] = { 1, 0, 3, 4, 0, 6, 7, 0, 10 };
      g_autoptr(AccelBuffer) a = lt_new (dt, d33, 2, zero_column);
      g_autoptr(AccelBuffer) lu = lt_alloc (dt, d33, 2);
      g_autoptr(AccelBuffer) p = lt_alloc (ACCEL_DTYPE_I32, d3, 1);
      g_autoptr(AccelOp) op = accel_lu_new (a, lu, p);
      lt_expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "singular");

      /* Solving with that factor is refused too where the backend checks. */
      if (lt_device_is_cpu ())
        {
          g_autoptr(AccelBuffer) b = lt_new (dt, d3, 1, zero_column);
          g_autoptr(AccelBuffer) x = lt_alloc (dt, d3, 1);
          g_autoptr(AccelOp) solve = accel_lu_solve_new (lu, p, b, x);
          lt_expect_error (solve, ACCEL_ERROR_INVALID_ARGUMENT, "singular");
        }

      /* Positive definite up to order 2, not at order 3. */
      double indefinite[9] = { 4, 2, 0, 2, 5, 3, 0, 3, 1 };
      g_autoptr(AccelBuffer) s = lt_new (dt, d33, 2, indefinite);
      g_autoptr(AccelBuffer) l = lt_alloc (dt, d33, 2);
      g_autoptr(AccelOp) chol = accel_cholesky_new (s, l);
      lt_expect_error (chol, ACCEL_ERROR_INVALID_ARGUMENT, "leading minor of order 3");

      /* Batched: the second entry is the bad one, and is named. */
      gint64 d233[3] = { 2, 3, 3 };
      double two[18] = { 4, 0, 0, 0, 4, 0, 0, 0, 4, 1, 2, 0, 2, 1, 0, 0, 0, 1 };
      g_autoptr(AccelBuffer) sb = lt_new (dt, d233, 3, two);
      g_autoptr(AccelBuffer) lb = lt_alloc (dt, d233, 3);
      g_autoptr(AccelOp) cholb = accel_cholesky_new (sb, lb);
      lt_expect_error (cholb, ACCEL_ERROR_INVALID_ARGUMENT, "batch entry 1");
    }
}

const LtTest lt_tests[] = {
  { "/libs/linalg/qr", test_qr },
  { "/libs/linalg/lu", test_lu },
  { "/libs/linalg/lu-solve", test_lu_solve },
  { "/libs/linalg/cholesky", test_cholesky },
  { "/libs/linalg/svd", test_svd },
  { "/libs/linalg/eigh", test_eigh },
  { "/libs/linalg/bad-input", test_bad_input },
  { NULL, NULL },
};
