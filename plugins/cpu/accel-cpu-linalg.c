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
#include "accel-cpu-lib-kernels.h"

/* Calls the s or d variant of a LAPACKE routine; buffer arguments are void *. */
#define LAPACK(dtype, fn, ...) \
  ((dtype) == ACCEL_DTYPE_F32 ? LAPACKE_s##fn (__VA_ARGS__) : LAPACKE_d##fn (__VA_ARGS__))

typedef struct {
  gboolean batched;
  gint64 batch;
  gint64 rows;
  gint64 cols;
} Mat;

static Mat
mat_dims (AccelBuffer *buffer)
{
  const AccelShape *s = accel_buffer_get_shape (buffer);
  guint r = accel_shape_get_rank (s);
  Mat m = {
    r == 3, r == 3 ? accel_shape_get_dim (s, 0) : 1,
    accel_shape_get_dim (s, r - 2), accel_shape_get_dim (s, r - 1),
  };
  return m;
}

static guint8 *
entry (AccelBuffer *buffer, gint64 index, gint64 elements)
{
  gsize es = accel_dtype_get_size (accel_buffer_get_dtype (buffer));
  return (guint8 *) accel_buffer_get_data (buffer) + index * elements * es;
}

/* " (batch entry 3)" for batched ops, else "". */
static char *
where (const Mat *d, gint64 index)
{
  return d->batched ? g_strdup_printf (" (batch entry %" G_GINT64_FORMAT ")", index) : g_strdup ("");
}

/* Keeps the first error of a batch; later ones are dropped. */
static void
keep_first (GError **first, GError *error)
{
  if (*first == NULL)
    *first = error;
  else
    g_error_free (error);
}

/* An info code below zero: LAPACKE's own allocation failed, or an argument
 * was refused (a bug here, or a NaN caught by LAPACKE's NaN check). */
static GError *
lapack_refused (const char *op, AccelDType dtype, const char *routine, lapack_int info,
                const Mat *d, gint64 index)
{
  g_autofree char *at = where (d, index);
  if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR)
    return g_error_new (ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY,
                        "cpu %s: LAPACKE %c%s could not allocate its workspace%s",
                        op, dtype == ACCEL_DTYPE_F32 ? 's' : 'd', routine, at);
  return g_error_new (ACCEL_ERROR, ACCEL_ERROR_LIBRARY,
                      "cpu %s: LAPACKE %c%s refused argument %d (info %d)%s; "
                      "a NaN in the input is refused this way",
                      op, dtype == ACCEL_DTYPE_F32 ? 's' : 'd', routine, (int) -info, (int) info, at);
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

static gboolean
qr_run (AccelOp *op, gpointer context, GError **error)
{
  AccelQr *self = ACCEL_QR (op);
  AccelDType dt = accel_buffer_get_dtype (self->a);
  gsize es = accel_dtype_get_size (dt);
  Mat d = mat_dims (self->a);
  gint64 m = d.rows, n = d.cols, k = MIN (m, n);
  GError *first = NULL;

  if (d.batch == 0 || k == 0)
    return TRUE;
  guint8 *work = accel_cpu_scratch_alloc ((m * n + k) * es, error);
  if (work == NULL)
    return FALSE;
  guint8 *tau = work + m * n * es;

  for (gint64 b = 0; b < d.batch; b++)
    {
      guint8 *q = entry (self->q, b, m * k);
      guint8 *r = entry (self->r, b, k * n);
      memcpy (work, entry (self->a, b, m * n), m * n * es);

      lapack_int info = LAPACK (dt, geqrf, LAPACK_ROW_MAJOR, m, n, (void *) work, n, (void *) tau);
      if (info != 0)
        {
          keep_first (&first, lapack_refused ("qr", dt, "geqrf", info, &d, b));
          continue;
        }
      /* r is the upper triangle of the first k rows. */
      for (gint64 i = 0; i < k; i++)
        {
          memset (r + i * n * es, 0, i * es);
          memcpy (r + (i * n + i) * es, work + (i * n + i) * es, (n - i) * es);
        }
      info = LAPACK (dt, orgqr, LAPACK_ROW_MAJOR, m, k, k, (void *) work, n, (void *) tau);
      if (info != 0)
        {
          keep_first (&first, lapack_refused ("qr", dt, "orgqr", info, &d, b));
          continue;
        }
      for (gint64 i = 0; i < m; i++)
        memcpy (q + i * k * es, work + i * n * es, k * es);
    }
  accel_cpu_scratch_free (work);
  if (first != NULL)
    {
      g_propagate_error (error, first);
      return FALSE;
    }
  return TRUE;
}

/* lu */

static gboolean
lu_run (AccelOp *op, gpointer context, GError **error)
{
  AccelLu *self = ACCEL_LU (op);
  AccelDType dt = accel_buffer_get_dtype (self->a);
  Mat d = mat_dims (self->a);
  gint64 m = d.rows, n = d.cols, k = MIN (m, n);
  GError *first = NULL;

  G_STATIC_ASSERT (sizeof (lapack_int) == sizeof (gint32));
  copy_if_distinct (self->lu, self->a);
  if (k == 0)
    return TRUE;
  for (gint64 b = 0; b < d.batch; b++)
    {
      lapack_int *pivots = (lapack_int *) entry (self->pivots, b, k);
      lapack_int info = LAPACK (dt, getrf, LAPACK_ROW_MAJOR, m, n, (void *) entry (self->lu, b, m * n),
                                n, pivots);
      if (info < 0)
        keep_first (&first, lapack_refused ("lu", dt, "getrf", info, &d, b));
      else if (info > 0)
        {
          g_autofree char *at = where (&d, b);
          keep_first (&first, g_error_new (ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                                           "lu: “a” is singular: the pivot u[%d, %d] is exactly zero%s",
                                           (int) info - 1, (int) info - 1, at));
        }
    }
  if (first != NULL)
    {
      g_propagate_error (error, first);
      return FALSE;
    }
  return TRUE;
}

/* Pivots as getrf writes them: 1-based rows, each at least its own row. */
static gboolean
check_pivots (const gint32 *pivots, gint64 n, const Mat *d, gint64 b, GError **error)
{
  for (gint64 i = 0; i < n; i++)
    if (pivots[i] < 1 || pivots[i] > n)
      {
        g_autofree char *at = where (d, b);
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "lu-solve: “pivots”[%" G_GINT64_FORMAT "] is %d; pivots are 1-based rows 1 to %"
                     G_GINT64_FORMAT "%s", i, pivots[i], n, at);
        return FALSE;
      }
  return TRUE;
}

static gboolean
lu_solve_run (AccelOp *op, gpointer context, GError **error)
{
  AccelLuSolve *self = ACCEL_LU_SOLVE (op);
  AccelDType dt = accel_buffer_get_dtype (self->lu);
  Mat d = mat_dims (self->lu);
  gint64 n = d.rows, nrhs = rhs_columns (self->lu, self->b);
  GError *first = NULL;

  copy_if_distinct (self->x, self->b);
  if (n == 0 || nrhs == 0)
    return TRUE;
  for (gint64 b = 0; b < d.batch; b++)
    {
      const guint8 *lu = entry (self->lu, b, n * n);
      const gint32 *pivots = (const gint32 *) entry (self->pivots, b, n);
      GError *local = NULL;
      gint64 zero;

      if (!check_pivots (pivots, n, &d, b, &local))
        {
          keep_first (&first, local);
          continue;
        }
      if ((zero = first_zero_diag (dt, lu, n)) >= 0)
        {
          g_autofree char *at = where (&d, b);
          keep_first (&first, g_error_new (ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                                           "lu-solve: “lu” is singular: u[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                                           "] is exactly zero%s", zero, zero, at));
          continue;
        }
      lapack_int info = LAPACK (dt, getrs, LAPACK_ROW_MAJOR, 'N', n, nrhs, (const void *) lu, n,
                                (const lapack_int *) pivots, (void *) entry (self->x, b, n * nrhs), nrhs);
      if (info != 0)
        keep_first (&first, lapack_refused ("lu-solve", dt, "getrs", info, &d, b));
    }
  if (first != NULL)
    {
      g_propagate_error (error, first);
      return FALSE;
    }
  return TRUE;
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

static gboolean
cholesky_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCholesky *self = ACCEL_CHOLESKY (op);
  AccelDType dt = accel_buffer_get_dtype (self->a);
  gsize es = accel_dtype_get_size (dt);
  Mat d = mat_dims (self->a);
  gint64 n = d.rows;
  GError *first = NULL;

  copy_if_distinct (self->l, self->a);
  if (n == 0)
    return TRUE;
  for (gint64 b = 0; b < d.batch; b++)
    {
      guint8 *l = entry (self->l, b, n * n);
      lapack_int info = LAPACK (dt, potrf, LAPACK_ROW_MAJOR, self->lower ? 'L' : 'U', n, (void *) l, n);
      zero_other_triangle (l, n, es, self->lower);
      if (info < 0)
        keep_first (&first, lapack_refused ("cholesky", dt, "potrf", info, &d, b));
      else if (info > 0)
        {
          g_autofree char *at = where (&d, b);
          keep_first (&first, g_error_new (ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                                           "cholesky: “a” is not positive definite: its leading minor "
                                           "of order %d is not positive%s", (int) info, at));
        }
    }
  if (first != NULL)
    {
      g_propagate_error (error, first);
      return FALSE;
    }
  return TRUE;
}

static gboolean
cholesky_solve_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCholeskySolve *self = ACCEL_CHOLESKY_SOLVE (op);
  AccelDType dt = accel_buffer_get_dtype (self->l);
  Mat d = mat_dims (self->l);
  gint64 n = d.rows, nrhs = rhs_columns (self->l, self->b);
  GError *first = NULL;

  copy_if_distinct (self->x, self->b);
  if (n == 0 || nrhs == 0)
    return TRUE;
  for (gint64 b = 0; b < d.batch; b++)
    {
      const guint8 *l = entry (self->l, b, n * n);
      gint64 zero = first_zero_diag (dt, l, n);
      if (zero >= 0)
        {
          g_autofree char *at = where (&d, b);
          keep_first (&first, g_error_new (ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                                           "cholesky-solve: “l” is singular: l[%" G_GINT64_FORMAT ", %"
                                           G_GINT64_FORMAT "] is zero%s", zero, zero, at));
          continue;
        }
      lapack_int info = LAPACK (dt, potrs, LAPACK_ROW_MAJOR, self->lower ? 'L' : 'U', n, nrhs,
                                (const void *) l, n, (void *) entry (self->x, b, n * nrhs), nrhs);
      if (info != 0)
        keep_first (&first, lapack_refused ("cholesky-solve", dt, "potrs", info, &d, b));
    }
  if (first != NULL)
    {
      g_propagate_error (error, first);
      return FALSE;
    }
  return TRUE;
}

/* svd */

static gboolean
svd_run (AccelOp *op, gpointer context, GError **error)
{
  AccelSvd *self = ACCEL_SVD (op);
  AccelDType dt = accel_buffer_get_dtype (self->a);
  gsize es = accel_dtype_get_size (dt);
  Mat d = mat_dims (self->a);
  gint64 m = d.rows, n = d.cols, k = MIN (m, n);
  GError *first = NULL;

  if (d.batch == 0 || k == 0)
    return TRUE;
  guint8 *work = accel_cpu_scratch_alloc (m * n * es, error);
  if (work == NULL)
    return FALSE;
  for (gint64 b = 0; b < d.batch; b++)
    {
      memcpy (work, entry (self->a, b, m * n), m * n * es);
      lapack_int info = LAPACK (dt, gesdd, LAPACK_ROW_MAJOR, 'S', m, n, (void *) work, n,
                                (void *) entry (self->s, b, k), (void *) entry (self->u, b, m * k), k,
                                (void *) entry (self->vt, b, k * n), n);
      if (info < 0)
        keep_first (&first, lapack_refused ("svd", dt, "gesdd", info, &d, b));
      else if (info > 0)
        {
          g_autofree char *at = where (&d, b);
          keep_first (&first, g_error_new (ACCEL_ERROR, ACCEL_ERROR_LIBRARY,
                                           "cpu svd: LAPACK %cgesdd did not converge (info %d)%s",
                                           dt == ACCEL_DTYPE_F32 ? 's' : 'd', (int) info, at));
        }
    }
  accel_cpu_scratch_free (work);
  if (first != NULL)
    {
      g_propagate_error (error, first);
      return FALSE;
    }
  return TRUE;
}

/* eigh */

static gboolean
eigh_run (AccelOp *op, gpointer context, GError **error)
{
  AccelEigh *self = ACCEL_EIGH (op);
  AccelDType dt = accel_buffer_get_dtype (self->a);
  Mat d = mat_dims (self->a);
  gint64 n = d.rows;
  GError *first = NULL;

  copy_if_distinct (self->v, self->a);
  if (n == 0)
    return TRUE;
  for (gint64 b = 0; b < d.batch; b++)
    {
      lapack_int info = LAPACK (dt, syevd, LAPACK_ROW_MAJOR, 'V', self->lower ? 'L' : 'U', n,
                                (void *) entry (self->v, b, n * n), n, (void *) entry (self->w, b, n));
      if (info < 0)
        keep_first (&first, lapack_refused ("eigh", dt, "syevd", info, &d, b));
      else if (info > 0)
        {
          g_autofree char *at = where (&d, b);
          keep_first (&first, g_error_new (ACCEL_ERROR, ACCEL_ERROR_LIBRARY,
                                           "cpu eigh: LAPACK %csyevd did not converge (info %d)%s",
                                           dt == ACCEL_DTYPE_F32 ? 's' : 'd', (int) info, at));
        }
    }
  if (first != NULL)
    {
      g_propagate_error (error, first);
      return FALSE;
    }
  return TRUE;
}

static const AccelKernelVTable qr_kernel = { .run = qr_run };
static const AccelKernelVTable lu_kernel = { .run = lu_run };
static const AccelKernelVTable lu_solve_kernel = { .run = lu_solve_run };
static const AccelKernelVTable cholesky_kernel = { .run = cholesky_run };
static const AccelKernelVTable cholesky_solve_kernel = { .run = cholesky_solve_run };
static const AccelKernelVTable svd_kernel = { .run = svd_run };
static const AccelKernelVTable eigh_kernel = { .run = eigh_run };

void
accel_cpu_register_linalg (AccelPlugin *plugin)
{
  accel_plugin_register_kernel (plugin, "qr", "cpu", ACCEL_CPU_KERNEL_RANK, &qr_kernel);
  accel_plugin_register_kernel (plugin, "lu", "cpu", ACCEL_CPU_KERNEL_RANK, &lu_kernel);
  accel_plugin_register_kernel (plugin, "lu-solve", "cpu", ACCEL_CPU_KERNEL_RANK, &lu_solve_kernel);
  accel_plugin_register_kernel (plugin, "cholesky", "cpu", ACCEL_CPU_KERNEL_RANK, &cholesky_kernel);
  accel_plugin_register_kernel (plugin, "cholesky-solve", "cpu", ACCEL_CPU_KERNEL_RANK, &cholesky_solve_kernel);
  accel_plugin_register_kernel (plugin, "svd", "cpu", ACCEL_CPU_KERNEL_RANK, &svd_kernel);
  accel_plugin_register_kernel (plugin, "eigh", "cpu", ACCEL_CPU_KERNEL_RANK, &eigh_kernel);
}
