/* Tests of spmv and spmm: random CSR matrices of odd sizes (empty rows
 * included) against the dense product, f32 and f64, with alpha and beta;
 * then malformed structures and bad shapes.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include "libs-test.h"

typedef struct {
  gint64 m, n, nnz;
  double *row_ptr, *col_ind, *values;   /* as doubles, for lt_new */
  double *dense;                         /* [m, n], zeros off the pattern */
} Csr;

static void
csr_free (Csr *c)
{
  g_free (c->row_ptr);
  g_free (c->col_ind);
  g_free (c->values);
  g_free (c->dense);
}

static void
csr_random (Csr *c, AccelDType dt, gint64 m, gint64 n, double density)
{
  c->m = m;
  c->n = n;
  c->row_ptr = g_new (double, m + 1);
  c->col_ind = g_new (double, MAX (m * n, 1));
  c->values = g_new (double, MAX (m * n, 1));
  c->dense = g_new0 (double, MAX (m * n, 1));
  c->nnz = 0;
  for (gint64 i = 0; i < m; i++)
    {
      c->row_ptr[i] = (double) c->nnz;
      gboolean empty = g_test_rand_int_range (0, 5) == 0;
      for (gint64 j = 0; j < n && !empty; j++)
        if (g_test_rand_double () < density)
          {
            double v = lt_round (dt, g_test_rand_double_range (-1, 1));
            c->col_ind[c->nnz] = (double) j;
            c->values[c->nnz] = v;
            c->dense[i * n + j] = v;
            c->nnz++;
          }
    }
  c->row_ptr[m] = (double) c->nnz;
}

typedef struct {
  AccelBuffer *row_ptr, *col_ind, *values;
} CsrBuffers;

static void
csr_upload (const Csr *c, AccelDType dt, CsrBuffers *b)
{
  gint64 dr[1] = { c->m + 1 }, dn[1] = { c->nnz };
  b->row_ptr = lt_new (ACCEL_DTYPE_I32, dr, 1, c->row_ptr);
  b->col_ind = lt_new (ACCEL_DTYPE_I32, dn, 1, c->col_ind);
  b->values = lt_new (dt, dn, 1, c->values);
}

static void
csr_buffers_clear (CsrBuffers *b)
{
  g_clear_object (&b->row_ptr);
  g_clear_object (&b->col_ind);
  g_clear_object (&b->values);
}

static const AccelDType dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64 };

static void
test_spmv (void)
{
  if (lt_device_for ("spmv", NULL) == NULL)
    return;
  const gint64 sizes[][2] = { { 37, 23 }, { 1, 1 }, { 5, 41 }, { 64, 64 }, { 0, 3 } };
  for (guint t = 0; t < G_N_ELEMENTS (dtypes); t++)
    for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
      {
        AccelDType dt = dtypes[t];
        gint64 m = sizes[s][0], n = sizes[s][1];
        double alpha = s % 2 ? 1.0 : -0.75, beta = s % 2 ? 0.0 : 0.5;
        Csr c;
        CsrBuffers cb;
        csr_random (&c, dt, m, n, 0.2);
        csr_upload (&c, dt, &cb);
        g_autofree double *x = lt_random (dt, n, -1, 1);
        g_autofree double *y0 = lt_random (dt, m, -1, 1);
        gint64 dx[1] = { n }, dy[1] = { m };
        g_autoptr(AccelBuffer) bx = lt_new (dt, dx, 1, x);
        g_autoptr(AccelBuffer) by = lt_new (dt, dy, 1, y0);
        g_autoptr(AccelOp) op = accel_spmv_new (cb.row_ptr, cb.col_ind, cb.values, bx, by, n);
        g_object_set (op, "alpha", alpha, "beta", beta, NULL);

        double t_ = dt == ACCEL_DTYPE_F32 ? 1e-5 : 1e-13;
        lt_submit_compare (op, t_, t_, "*", NULL);
        g_autofree double *y = lt_read (by);
        g_autofree double *want = g_new (double, MAX (m, 1));
        for (gint64 i = 0; i < m; i++)
          {
            double acc = 0;
            for (gint64 j = 0; j < n; j++)
              acc += c.dense[i * n + j] * x[j];
            want[i] = alpha * acc + beta * y0[i];
          }
        lt_assert_close ("spmv", y, want, m, t_, t_ * 4);
        csr_buffers_clear (&cb);
        csr_free (&c);
      }
}

static void
test_spmm (void)
{
  if (lt_device_for ("spmm", NULL) == NULL)
    return;
  const gint64 sizes[][3] = { { 31, 17, 5 }, { 8, 8, 1 }, { 3, 29, 7 }, { 50, 40, 16 } };
  for (guint t = 0; t < G_N_ELEMENTS (dtypes); t++)
    for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
      {
        AccelDType dt = dtypes[t];
        gint64 m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
        double alpha = s % 2 ? 2.0 : 1.0, beta = s % 2 ? -1.0 : 0.0;
        Csr c;
        CsrBuffers cb;
        csr_random (&c, dt, m, n, 0.3);
        csr_upload (&c, dt, &cb);
        g_autofree double *b = lt_random (dt, n * k, -1, 1);
        g_autofree double *c0 = lt_random (dt, m * k, -1, 1);
        gint64 db[2] = { n, k }, dc[2] = { m, k };
        g_autoptr(AccelBuffer) bb = lt_new (dt, db, 2, b);
        g_autoptr(AccelBuffer) bc = lt_new (dt, dc, 2, c0);
        g_autoptr(AccelOp) op = accel_spmm_new (cb.row_ptr, cb.col_ind, cb.values, bb, bc, n);
        g_object_set (op, "alpha", alpha, "beta", beta, NULL);

        double t_ = dt == ACCEL_DTYPE_F32 ? 1e-5 : 1e-13;
        lt_submit_compare (op, t_, t_, "*", NULL);
        g_autofree double *got = lt_read (bc);
        g_autofree double *want = g_new (double, m * k);
        for (gint64 i = 0; i < m; i++)
          for (gint64 j = 0; j < k; j++)
            {
              double acc = 0;
              for (gint64 l = 0; l < n; l++)
                acc += c.dense[i * n + l] * b[l * k + j];
              want[i * k + j] = alpha * acc + beta * c0[i * k + j];
            }
        lt_assert_close ("spmm", got, want, m * k, t_, t_ * 4);
        csr_buffers_clear (&cb);
        csr_free (&c);
      }
}

/* spmv on a 3 x 4 structure given entry by entry. */
static AccelOp *
small_spmv (const double *row_ptr, const double *col_ind, gint64 nnz, AccelBuffer **keep)
{
  gint64 dr[1] = { 4 }, dn[1] = { nnz }, dx[1] = { 4 }, dy[1] = { 3 };
  double ones[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
  keep[0] = lt_new (ACCEL_DTYPE_I32, dr, 1, row_ptr);
  keep[1] = lt_new (ACCEL_DTYPE_I32, dn, 1, col_ind);
  keep[2] = lt_new (ACCEL_DTYPE_F32, dn, 1, ones);
  keep[3] = lt_new (ACCEL_DTYPE_F32, dx, 1, ones);
  keep[4] = lt_new (ACCEL_DTYPE_F32, dy, 1, NULL);
  return accel_spmv_new (keep[0], keep[1], keep[2], keep[3], keep[4], 4);
}

static void
clear_keep (AccelBuffer **keep)
{
  for (guint i = 0; i < 5; i++)
    g_clear_object (&keep[i]);
}

/* A well-formed structure for small_spmv(). */
static const double good_row_ptr[4] = { 0, 2, 3, 5 }, good_col_ind[5] = { 0, 1, 2, 0, 3 };

/* small_spmv() of the good structure with its buffer @property replaced by
 * one of @n elements of @dtype holding @values (NULL: zeros): refused with
 * @code and a message containing @message (nullable). */
static void
expect_refused_buffer (const char *property, AccelDType dtype, gint64 n, const double *values, AccelError code,
                       const char *message)
{
  AccelBuffer *keep[5] = { NULL };
  g_autoptr(AccelOp) op = small_spmv (good_row_ptr, good_col_ind, 5, keep);
  g_autoptr(AccelBuffer) replacement = lt_new (dtype, &n, 1, values);
  g_object_set (op, property, replacement, NULL);
  lt_expect_error (op, code, message);
  clear_keep (keep);
}

static void
test_malformed (void)
{
  if (lt_device_for ("spmv", "spmm", "scan", NULL) == NULL)
    return;
  AccelBuffer *keep[5] = { NULL };
  const struct {
    double row_ptr[4];
    double col_ind[5];
    const char *message;
  } cases[] = {
    { { 0, 2, 3, 5 }, { 1, 0, 2, 0, 3 }, "not ascending" },     /* unsorted in row 0 */
    { { 0, 2, 3, 5 }, { 0, 1, 2, 3, 3 }, "not ascending" },     /* duplicate in row 2 */
    { { 0, 2, 3, 5 }, { 0, 1, 4, 0, 3 }, "outside" },           /* column 4 of 4 */
    { { 0, 2, 3, 5 }, { 0, 1, -1, 0, 3 }, "outside" },
    { { 1, 2, 3, 5 }, { 0, 1, 2, 0, 3 }, "row-ptr" },           /* does not start at 0 */
    { { 0, 3, 2, 5 }, { 0, 1, 2, 0, 3 }, "decreases" },
    { { 0, 2, 3, 4 }, { 0, 1, 2, 0, 3 }, "number of entries" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(AccelOp) op = small_spmv (cases[i].row_ptr, cases[i].col_ind, 5, keep);
      lt_expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, cases[i].message);
      clear_keep (keep);
    }

  /* A structure that passed is trusted only until it is written again:
   * the same buffers, first good, then rewritten with a bad column, then
   * repaired. */
  {
    double bad[5] = { 0, 1, 4, 0, 3 };
    g_autoptr(AccelOp) op = small_spmv (good_row_ptr, good_col_ind, 5, keep);
    for (guint round = 0; round < 2; round++)
      {
        lt_submit (op);
        g_autofree double *y = lt_read (keep[4]);
        g_assert_cmpfloat (y[0], ==, 2.0);
        g_assert_cmpfloat (y[1], ==, 1.0);
        g_assert_cmpfloat (y[2], ==, 2.0);
      }
    lt_write (keep[1], bad);
    lt_expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "outside");
    lt_write (keep[1], good_col_ind);
    lt_submit (op);
    clear_keep (keep);
  }

  /* Shapes and types, refused before launch. */
  {
    g_autoptr(AccelOp) op = small_spmv (good_row_ptr, good_col_ind, 5, keep);
    g_object_set (op, "n-cols", (gint64) 5, NULL);
    lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, "“x”");
    clear_keep (keep);
  }
  expect_refused_buffer ("values", ACCEL_DTYPE_F32, 4, NULL, ACCEL_ERROR_SHAPE_MISMATCH, "“values”");
  expect_refused_buffer ("values", ACCEL_DTYPE_F16, 5, NULL, ACCEL_ERROR_DTYPE_UNSUPPORTED, NULL);
  expect_refused_buffer ("col-ind", ACCEL_DTYPE_I64, 5, good_col_ind, ACCEL_ERROR_DTYPE_UNSUPPORTED, NULL);
  expect_refused_buffer ("y", ACCEL_DTYPE_F64, 3, NULL, ACCEL_ERROR_DTYPE_UNSUPPORTED, NULL);
  {
    /* spmm whose output has the wrong number of columns */
    gint64 dr[1] = { 4 }, dn[1] = { 5 }, db[2] = { 4, 2 }, dc[2] = { 3, 3 };
    g_autoptr(AccelBuffer) rp = lt_new (ACCEL_DTYPE_I32, dr, 1, good_row_ptr);
    g_autoptr(AccelBuffer) ci = lt_new (ACCEL_DTYPE_I32, dn, 1, good_col_ind);
    g_autoptr(AccelBuffer) v = lt_new (ACCEL_DTYPE_F64, dn, 1, NULL);
    g_autoptr(AccelBuffer) b = lt_new (ACCEL_DTYPE_F64, db, 2, NULL);
    g_autoptr(AccelBuffer) c = lt_new (ACCEL_DTYPE_F64, dc, 2, NULL);
    g_autoptr(AccelOp) op = accel_spmm_new (rp, ci, v, b, c, 4);
    lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, "“c”");
  }
}

const LtTest lt_tests[] = {
  { "/libs/sparse/spmv", test_spmv },
  { "/libs/sparse/spmm", test_spmm },
  { "/libs/sparse/malformed", test_malformed },
  { NULL, NULL },
};
