/* accel-cpu-linalg.c: qr, lu, lu-solve, cholesky, cholesky-solve, svd and
 * eigh through LAPACKE, f32 and f64.
 *
 * LAPACKE's row-major entry points take the buffers as they are. A batch
 * is a loop over its matrices; when one of them fails (a singular or
 * indefinite matrix) the others are still computed and the op fails with
 * the first bad entry named. Info codes become errors that say what was
 * wrong with the input, never a silent garbage result.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <lapacke.h>
#include "accel-cpu-kernels.h"

/* Calls the s or d variant of a LAPACKE routine; buffer arguments are void *. */
#define LAPACK(dtype, fn, ...) \
  ((dtype) == ACCEL_DTYPE_F32 ? LAPACKE_s##fn (__VA_ARGS__) : LAPACKE_d##fn (__VA_ARGS__))

/* 's' or 'd': the LAPACK routine's prefix for @dtype, as messages name it. */
static char
lapack_prefix (AccelDType dtype)
{
  return dtype == ACCEL_DTYPE_F32 ? 's' : 'd';
}

/* One run of a kernel over its batch: the op's name for messages, the
 * matrices' sizes, and the first error among the entries, kept so that one
 * bad matrix does not stop the others from being computed. */
typedef struct {
  const char *op;
  AccelDType dtype;
  gboolean batched;
  gint64 batch;
  gint64 rows;
  gint64 cols;
  GError *first;
} Batch;

/* Sizes from @matrices, [batch,] rows, cols. */
static Batch
batch_start (const char *op, AccelBuffer *matrices)
{
  const AccelShape *s = accel_buffer_get_shape (matrices);
  guint r = accel_shape_get_rank (s);
  Batch bt = {
    op, accel_buffer_get_dtype (matrices),
    r == 3, r == 3 ? accel_shape_get_dim (s, 0) : 1,
    accel_shape_get_dim (s, r - 2), accel_shape_get_dim (s, r - 1),
    NULL,
  };
  return bt;
}

static guint8 *
entry (AccelBuffer *buffer, gint64 index, gint64 elements)
{
  gsize es = accel_dtype_get_size (accel_buffer_get_dtype (buffer));
  return (guint8 *) accel_buffer_get_data (buffer) + index * elements * es;
}

/* Keeps the first error of a batch; later ones are dropped. */
static void
keep_first (Batch *bt, GError *error)
{
  if (bt->first == NULL)
    bt->first = error;
  else
    g_error_free (error);
}

/* " (batch entry 3)" for batched ops, else "". */
static char *
where (const Batch *bt, gint64 index)
{
  return bt->batched ? g_strdup_printf (" (batch entry %" G_GINT64_FORMAT ")", index) : g_strdup ("");
}

/* Fails entry @index with the message of @format, followed by where(). */
static void
batch_fail (Batch *bt, gint64 index, gint code, const char *format, ...) G_GNUC_PRINTF (4, 5);

static void
batch_fail (Batch *bt, gint64 index, gint code, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_autofree char *at = where (bt, index);
  keep_first (bt, g_error_new (ACCEL_ERROR, code, "%s%s", message, at));
}

/* An info code below zero: LAPACKE's own allocation failed, or an argument
 * was refused (a bug here, or a NaN caught by LAPACKE's NaN check). The
 * entry is named before the hint about NaNs, so not through batch_fail(). */
static void
batch_refused (Batch *bt, gint64 index, const char *routine, lapack_int info)
{
  g_autofree char *at = where (bt, index);
  char prefix = lapack_prefix (bt->dtype);
  if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR)
    keep_first (bt, g_error_new (ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY,
                                 "cpu %s: LAPACKE %c%s could not allocate its workspace%s",
                                 bt->op, prefix, routine, at));
  else
    keep_first (bt, g_error_new (ACCEL_ERROR, ACCEL_ERROR_LIBRARY,
                                 "cpu %s: LAPACKE %c%s refused argument %d (info %d)%s; "
                                 "a NaN in the input is refused this way",
                                 bt->op, prefix, routine, (int) -info, (int) info, at));
}

/* An info code above zero from an iterative routine (gesdd, syevd). */
static void
batch_not_converged (Batch *bt, gint64 index, const char *routine, lapack_int info)
{
  batch_fail (bt, index, ACCEL_ERROR_LIBRARY, "cpu %s: LAPACK %c%s did not converge (info %d)",
              bt->op, lapack_prefix (bt->dtype), routine, (int) info);
}

/* Ends a run: the batch's first error, if any, becomes the op's. */
static gboolean
batch_finish (Batch *bt, GError **error)
{
  if (bt->first != NULL)
    {
      g_propagate_error (error, bt->first);
      return FALSE;
    }
  return TRUE;
}

static void
copy_if_distinct (AccelBuffer *dst, AccelBuffer *src)
{
  void *d = accel_buffer_get_data (dst);
  const void *s = accel_buffer_get_data (src);
  if (d != s)
    memcpy (d, s, accel_buffer_get_size (src));
}

/* Reads the diagonal entry @i of an n x n row-major matrix. */
static double
diag (AccelDType dtype, const guint8 *matrix, gint64 n, gint64 i)
{
  return dtype == ACCEL_DTYPE_F32 ? ((const float *) matrix)[i * n + i]
                                  : ((const double *) matrix)[i * n + i];
}

static gint64
first_zero_diag (AccelDType dtype, const guint8 *matrix, gint64 n)
{
  for (gint64 i = 0; i < n; i++)
    if (diag (dtype, matrix, n, i) == 0.0)
      return i;
  return -1;
}

/* Right-hand sides of a solve: b is [batch,] n or [batch,] n, nrhs. */
static gint64
rhs_columns (AccelBuffer *factor, AccelBuffer *b)
{
  const AccelShape *sf = accel_buffer_get_shape (factor);
  const AccelShape *sb = accel_buffer_get_shape (b);
  guint rb = accel_shape_get_rank (sb);
  return rb == accel_shape_get_rank (sf) ? accel_shape_get_dim (sb, rb - 1) : 1;
}

/* qr */

gboolean
accel_cpu_qr_run (AccelOp *op, gpointer context, GError **error)
{
  AccelQr *self = ACCEL_QR (op);
  Batch bt = batch_start ("qr", self->a);
  gsize es = accel_dtype_get_size (bt.dtype);
  gint64 m = bt.rows, n = bt.cols, k = MIN (m, n);

  if (bt.batch == 0 || k == 0)
    return TRUE;
  guint8 *work = accel_cpu_scratch_alloc ((m * n + k) * es, error);
  if (work == NULL)
    return FALSE;
  guint8 *tau = work + m * n * es;

  for (gint64 b = 0; b < bt.batch; b++)
    {
      guint8 *q = entry (self->q, b, m * k);
      guint8 *r = entry (self->r, b, k * n);
      memcpy (work, entry (self->a, b, m * n), m * n * es);

      lapack_int info = LAPACK (bt.dtype, geqrf, LAPACK_ROW_MAJOR, m, n, (void *) work, n, (void *) tau);
      if (info != 0)
        {
          batch_refused (&bt, b, "geqrf", info);
          continue;
        }
      /* r is the upper triangle of the first k rows. */
      for (gint64 i = 0; i < k; i++)
        {
          memset (r + i * n * es, 0, i * es);
          memcpy (r + (i * n + i) * es, work + (i * n + i) * es, (n - i) * es);
        }
      info = LAPACK (bt.dtype, orgqr, LAPACK_ROW_MAJOR, m, k, k, (void *) work, n, (void *) tau);
      if (info != 0)
        {
          batch_refused (&bt, b, "orgqr", info);
          continue;
        }
      for (gint64 i = 0; i < m; i++)
        memcpy (q + i * k * es, work + i * n * es, k * es);
    }
  accel_cpu_scratch_free (work);
  return batch_finish (&bt, error);
}

/* lu */

gboolean
accel_cpu_lu_run (AccelOp *op, gpointer context, GError **error)
{
  AccelLu *self = ACCEL_LU (op);
  Batch bt = batch_start ("lu", self->a);
  gint64 m = bt.rows, n = bt.cols, k = MIN (m, n);

  G_STATIC_ASSERT (sizeof (lapack_int) == sizeof (gint32));
  copy_if_distinct (self->lu, self->a);
  if (k == 0)
    return TRUE;
  for (gint64 b = 0; b < bt.batch; b++)
    {
      lapack_int *pivots = (lapack_int *) entry (self->pivots, b, k);
      lapack_int info = LAPACK (bt.dtype, getrf, LAPACK_ROW_MAJOR, m, n, (void *) entry (self->lu, b, m * n),
                                n, pivots);
      if (info < 0)
        batch_refused (&bt, b, "getrf", info);
      else if (info > 0)
        batch_fail (&bt, b, ACCEL_ERROR_INVALID_ARGUMENT,
                    "lu: “a” is singular: the pivot u[%d, %d] is exactly zero", (int) info - 1, (int) info - 1);
    }
  return batch_finish (&bt, error);
}

/* Pivots as getrf writes them: 1-based rows, each at least its own row. */
static gboolean
check_pivots (Batch *bt, gint64 b, const gint32 *pivots, gint64 n)
{
  for (gint64 i = 0; i < n; i++)
    if (pivots[i] < 1 || pivots[i] > n)
      {
        batch_fail (bt, b, ACCEL_ERROR_INVALID_ARGUMENT,
                    "lu-solve: “pivots”[%" G_GINT64_FORMAT "] is %d; pivots are 1-based rows 1 to %"
                    G_GINT64_FORMAT, i, pivots[i], n);
        return FALSE;
      }
  return TRUE;
}

gboolean
accel_cpu_lu_solve_run (AccelOp *op, gpointer context, GError **error)
{
  AccelLuSolve *self = ACCEL_LU_SOLVE (op);
  Batch bt = batch_start ("lu-solve", self->lu);
  gint64 n = bt.rows, nrhs = rhs_columns (self->lu, self->b);

  copy_if_distinct (self->x, self->b);
  if (n == 0 || nrhs == 0)
    return TRUE;
  for (gint64 b = 0; b < bt.batch; b++)
    {
      const guint8 *lu = entry (self->lu, b, n * n);
      const gint32 *pivots = (const gint32 *) entry (self->pivots, b, n);
      gint64 zero;

      if (!check_pivots (&bt, b, pivots, n))
        continue;
      if ((zero = first_zero_diag (bt.dtype, lu, n)) >= 0)
        {
          batch_fail (&bt, b, ACCEL_ERROR_INVALID_ARGUMENT,
                      "lu-solve: “lu” is singular: u[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "] is exactly zero",
                      zero, zero);
          continue;
        }
      lapack_int info = LAPACK (bt.dtype, getrs, LAPACK_ROW_MAJOR, 'N', n, nrhs, (const void *) lu, n,
                                (const lapack_int *) pivots, (void *) entry (self->x, b, n * nrhs), nrhs);
      if (info != 0)
        batch_refused (&bt, b, "getrs", info);
    }
  return batch_finish (&bt, error);
}

/* cholesky */

/* Zeroes the triangle of an n x n row-major matrix that the factor does not use. */
static void
zero_other_triangle (guint8 *matrix, gint64 n, gsize es, gboolean lower)
{
  for (gint64 i = 0; i < n; i++)
    {
      if (lower)
        memset (matrix + (i * n + i + 1) * es, 0, (n - i - 1) * es);
      else
        memset (matrix + i * n * es, 0, i * es);
    }
}

gboolean
accel_cpu_cholesky_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCholesky *self = ACCEL_CHOLESKY (op);
  Batch bt = batch_start ("cholesky", self->a);
  gsize es = accel_dtype_get_size (bt.dtype);
  gint64 n = bt.rows;

  copy_if_distinct (self->l, self->a);
  if (n == 0)
    return TRUE;
  for (gint64 b = 0; b < bt.batch; b++)
    {
      guint8 *l = entry (self->l, b, n * n);
      lapack_int info = LAPACK (bt.dtype, potrf, LAPACK_ROW_MAJOR, self->lower ? 'L' : 'U', n, (void *) l, n);
      zero_other_triangle (l, n, es, self->lower);
      if (info < 0)
        batch_refused (&bt, b, "potrf", info);
      else if (info > 0)
        batch_fail (&bt, b, ACCEL_ERROR_INVALID_ARGUMENT,
                    "cholesky: “a” is not positive definite: its leading minor of order %d is not positive",
                    (int) info);
    }
  return batch_finish (&bt, error);
}

gboolean
accel_cpu_cholesky_solve_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCholeskySolve *self = ACCEL_CHOLESKY_SOLVE (op);
  Batch bt = batch_start ("cholesky-solve", self->l);
  gint64 n = bt.rows, nrhs = rhs_columns (self->l, self->b);

  copy_if_distinct (self->x, self->b);
  if (n == 0 || nrhs == 0)
    return TRUE;
  for (gint64 b = 0; b < bt.batch; b++)
    {
      const guint8 *l = entry (self->l, b, n * n);
      gint64 zero = first_zero_diag (bt.dtype, l, n);
      if (zero >= 0)
        {
          batch_fail (&bt, b, ACCEL_ERROR_INVALID_ARGUMENT,
                      "cholesky-solve: “l” is singular: l[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "] is zero",
                      zero, zero);
          continue;
        }
      lapack_int info = LAPACK (bt.dtype, potrs, LAPACK_ROW_MAJOR, self->lower ? 'L' : 'U', n, nrhs,
                                (const void *) l, n, (void *) entry (self->x, b, n * nrhs), nrhs);
      if (info != 0)
        batch_refused (&bt, b, "potrs", info);
    }
  return batch_finish (&bt, error);
}

/* svd */

gboolean
accel_cpu_svd_run (AccelOp *op, gpointer context, GError **error)
{
  AccelSvd *self = ACCEL_SVD (op);
  Batch bt = batch_start ("svd", self->a);
  gsize es = accel_dtype_get_size (bt.dtype);
  gint64 m = bt.rows, n = bt.cols, k = MIN (m, n);

  if (bt.batch == 0 || k == 0)
    return TRUE;
  guint8 *work = accel_cpu_scratch_alloc (m * n * es, error);
  if (work == NULL)
    return FALSE;
  for (gint64 b = 0; b < bt.batch; b++)
    {
      memcpy (work, entry (self->a, b, m * n), m * n * es);
      lapack_int info = LAPACK (bt.dtype, gesdd, LAPACK_ROW_MAJOR, 'S', m, n, (void *) work, n,
                                (void *) entry (self->s, b, k), (void *) entry (self->u, b, m * k), k,
                                (void *) entry (self->vt, b, k * n), n);
      if (info < 0)
        batch_refused (&bt, b, "gesdd", info);
      else if (info > 0)
        batch_not_converged (&bt, b, "gesdd", info);
    }
  accel_cpu_scratch_free (work);
  return batch_finish (&bt, error);
}

/* eigh */

gboolean
accel_cpu_eigh_run (AccelOp *op, gpointer context, GError **error)
{
  AccelEigh *self = ACCEL_EIGH (op);
  Batch bt = batch_start ("eigh", self->a);
  gint64 n = bt.rows;

  copy_if_distinct (self->v, self->a);
  if (n == 0)
    return TRUE;
  for (gint64 b = 0; b < bt.batch; b++)
    {
      lapack_int info = LAPACK (bt.dtype, syevd, LAPACK_ROW_MAJOR, 'V', self->lower ? 'L' : 'U', n,
                                (void *) entry (self->v, b, n * n), n, (void *) entry (self->w, b, n));
      if (info < 0)
        batch_refused (&bt, b, "syevd", info);
      else if (info > 0)
        batch_not_converged (&bt, b, "syevd", info);
    }
  return batch_finish (&bt, error);
}
