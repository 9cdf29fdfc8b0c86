/* accel-cusolver-plugin.c: the `cusolver` plugin: qr, lu, lu-solve,
 * cholesky, cholesky-solve, svd and eigh on the `cuda` backend through
 * cuSOLVER's dense API, f32 and f64.
 *
 * Accel's matrices are row-major, cuSOLVER's column-major. A symmetric
 * matrix reads the same either way (only the triangle flips: the lower
 * triangle of a row-major matrix is the upper one of its column-major
 * view), so cholesky and eigh work on the buffers as they are; the other
 * factorisations transpose into lane workspace first and back after
 * (accel-cusolver-kernels.cu). svd of a wide or square matrix needs no
 * transpose at all: cuSOLVER's U and VT of the column-major view are
 * exactly Accel's vt and u.
 *
 * Info codes: lu (a zero pivot), cholesky (a leading minor that is not
 * positive), svd and eigh (no convergence) must report them without
 * synchronising: a small kernel finds the first batch entry whose devInfo
 * is not 0 and leaves it in the op's check codes
 * (accel_cuda_lane_check_after()), which the device reads once the op's
 * work has run, failing the op with the message. qr, lu-solve and
 * cholesky-solve report only argument errors there, which the call's
 * status already gives. cuSOLVER's getrs and potrs do not check for a
 * singular factor (the cpu kernels do): x then holds infinities or NaNs.
 *
 * Each lane has its own cuSOLVER handle bound to its stream.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cusolverDn.h>
#include "accel-config.h"
#include "accel-cuda.h"
#include "accel-cusolver-kernels.h"

#define KERNEL_RANK 100

/* Calls the S or D variant; buffer arguments are void *. */
#define SOLVER(dtype, fn, ...) \
  ((dtype) == ACCEL_DTYPE_F32 ? cusolverDnS##fn (__VA_ARGS__) : cusolverDnD##fn (__VA_ARGS__))

typedef struct {
  cusolverDnHandle_t handle;
} Solver;

static const char *
status_name (cusolverStatus_t status)
{
  switch (status)
    {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    default: return "CUSOLVER_STATUS_UNKNOWN";
    }
}

static gboolean
check_cusolver (cusolverStatus_t status, const char *what, GError **error)
{
  return accel_cuda_check_library ((int) status, "cuSOLVER", status_name (status),
                                   status == CUSOLVER_STATUS_ALLOC_FAILED, what, error);
}

static void
solver_destroy (gpointer data)
{
  Solver *s = data;
  if (s->handle)
    (void) cusolverDnDestroy (s->handle);
  g_free (s);
}

static gboolean
solver_open (AccelCudaLane *lane, gpointer *handle, GError **error)
{
  Solver *s = *handle = g_new0 (Solver, 1);
  return check_cusolver (cusolverDnCreate (&s->handle), "cusolverDnCreate", error)
         && check_cusolver (cusolverDnSetStream (s->handle, accel_cuda_lane_get_stream (lane)),
                            "cusolverDnSetStream", error);
}

static Solver *
lane_solver (AccelCudaLane *lane, GError **error)
{
  return accel_cuda_lane_open_handle (lane, "cusolver", solver_open, solver_destroy, error);
}

typedef struct {
  gboolean batched;
  gint64 batch, rows, cols;
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

/* What a run works with: the lane and its stream, and the dtype and
 * dimensions of the matrix it factors or solves with. */
typedef struct {
  AccelCudaLane *lane;
  cudaStream_t stream;
  AccelDType dt;
  gsize es;
  Mat d;
} Run;

static Run
run_start (gpointer context, AccelBuffer *matrix)
{
  AccelDType dt = accel_buffer_get_dtype (matrix);
  Run r = { context, accel_cuda_lane_get_stream (context), dt, accel_dtype_get_size (dt), mat_dims (matrix) };
  return r;
}

static guint8 *
entry (gpointer base, gint64 index, gint64 elements, gsize es)
{
  return (guint8 *) base + index * elements * es;
}

static char *
where (const Mat *d, gint64 index)
{
  return d->batched ? g_strdup_printf (" (batch entry %" G_GINT64_FORMAT ")", index) : g_strdup ("");
}

/* @elements elements of the run's dtype from the lane's workspace. */
static guint8 *
scratch (const Run *r, gint64 elements, GError **error)
{
  return accel_cuda_lane_alloc_workspace (r->lane, elements * r->es, error);
}

/* Room for @n devInfo codes from the lane's workspace. */
static int *
infos (const Run *r, gint64 n, GError **error)
{
  return accel_cuda_lane_alloc_workspace (r->lane, n * sizeof (int), error);
}

static gboolean
check_launch (cudaError_t status, const char *what, GError **error)
{
  return accel_cuda_check (status, what, error);
}

/* dst[b] = transpose of src[b], row-major rows x cols -> cols x rows, for
 * @batch matrices of the run's dtype. */
static gboolean
transpose (const Run *r, const void *src, void *dst, int rows, int cols, gint64 batch, GError **error)
{
  return check_launch (accel_cusolver_transpose (src, dst, rows, cols, batch, r->es, r->stream), "transpose", error);
}

static gboolean
copy_if_distinct (AccelBuffer *dst, AccelBuffer *src, cudaStream_t stream, GError **error)
{
  void *d = accel_buffer_get_data (dst);
  const void *s = accel_buffer_get_data (src);
  if (d == s)
    return TRUE;
  return ACCEL_CUDA_CHECK (cudaMemcpyAsync (d, s, accel_buffer_get_size (src), cudaMemcpyDeviceToDevice, stream),
                           error);
}

/* A negative info code: an argument cuSOLVER refused. */
static gboolean
info_refused (const char *op, const char *routine, int info, const Mat *d, gint64 b, GError **error)
{
  g_autofree char *at = where (d, b);
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_LIBRARY,
               "cusolver %s: %s refused argument %d%s", op, routine, -info, at);
  return FALSE;
}

/* What an op's info codes mean, for the check that reads them. */
typedef enum {
  INFO_LU,
  INFO_CHOLESKY,
  INFO_SVD,
  INFO_EIGH,
} InfoKind;

typedef struct {
  InfoKind kind;
  Mat d;
} InfoCheck;

static gboolean
infos_judge (const gint32 *codes, guint n_codes, gpointer data, GError **error)
{
  const InfoCheck *c = data;
  static const char *const ops[] = { "lu", "cholesky", "svd", "eigh" };
  static const char *const routines[] = { "getrf", "potrf", "gesvd", "syevd" };

  if (codes[0] == 0)
    return TRUE;
  gint64 b = codes[0] - 1;
  int info = codes[1];
  if (info < 0)
    return info_refused (ops[c->kind], routines[c->kind], info, &c->d, b, error);
  g_autofree char *at = where (&c->d, b);
  switch (c->kind)
    {
    case INFO_LU:
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "lu: “a” is singular: the pivot u[%d, %d] is exactly zero%s", info - 1, info - 1, at);
      break;
    case INFO_CHOLESKY:
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "cholesky: “a” is not positive definite: its leading minor of order %d is not positive%s",
                   info, at);
      break;
    case INFO_SVD:
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_LIBRARY,
                   "cusolver svd: gesvd did not converge (%d superdiagonals left)%s", info, at);
      break;
    case INFO_EIGH:
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_LIBRARY,
                   "cusolver eigh: syevd did not converge (info %d)%s", info, at);
      break;
    }
  return FALSE;
}

/* Has the op fail, once its work has run, if any of the @r->d.batch
 * devInfo codes at @dev_info is not 0. Enqueued after the routines that
 * write them. */
static gboolean
check_infos_after (const Run *r, const int *dev_info, InfoKind kind, GError **error)
{
  InfoCheck *c = g_new (InfoCheck, 1);
  c->kind = kind;
  c->d = r->d;
  gint32 *codes = accel_cuda_lane_check_after (r->lane, 2, infos_judge, c, g_free, error);
  return codes != NULL
         && check_launch (accel_cusolver_first_bad_info (dev_info, r->d.batch, codes, r->stream),
                          "first_bad_info", error);
}

/* qr */

static gboolean
qr_run (AccelOp *op, gpointer context, GError **error)
{
  AccelQr *self = ACCEL_QR (op);
  Run r = run_start (context, self->a);
  AccelDType dt = r.dt;
  int m = (int) r.d.rows, n = (int) r.d.cols, k = MIN (m, n);
  int lwork_qr = 0, lwork_q = 0;

  if (r.d.batch == 0 || k == 0)
    return TRUE;
  Solver *s = lane_solver (r.lane, error);
  guint8 *work_a = s ? scratch (&r, r.d.batch * m * n, error) : NULL;
  guint8 *tau = work_a ? scratch (&r, k, error) : NULL;
  int *info = tau ? infos (&r, 1, error) : NULL;
  if (info == NULL
      || !check_cusolver (SOLVER (dt, geqrf_bufferSize, s->handle, m, n, (void *) work_a, m, &lwork_qr),
                          "geqrf_bufferSize", error)
      || !check_cusolver (SOLVER (dt, orgqr_bufferSize, s->handle, m, k, k, (void *) work_a, m, (void *) tau,
                                  &lwork_q), "orgqr_bufferSize", error))
    return FALSE;
  void *work = scratch (&r, MAX (lwork_qr, lwork_q), error);
  if (work == NULL || !transpose (&r, accel_buffer_get_data (self->a), work_a, m, n, r.d.batch, error))
    return FALSE;

  for (gint64 b = 0; b < r.d.batch; b++)
    {
      guint8 *a = entry (work_a, b, (gint64) m * n, r.es);
      /* geqrf and orgqr report only argument errors, which their status gives too. */
      if (!check_cusolver (SOLVER (dt, geqrf, s->handle, m, n, (void *) a, m, (void *) tau, work,
                                   MAX (lwork_qr, lwork_q), info), "geqrf", error)
          || !check_launch (accel_cusolver_extract_r (a, m, n, entry (accel_buffer_get_data (self->r), b,
                                                                       (gint64) k * n, r.es), r.es, r.stream),
                            "extract_r", error)
          || !check_cusolver (SOLVER (dt, orgqr, s->handle, m, k, k, (void *) a, m, (void *) tau, work,
                                      MAX (lwork_qr, lwork_q), info), "orgqr", error)
          /* q's columns are the first k columns of a, column-major: transpose them out. */
          || !transpose (&r, a, entry (accel_buffer_get_data (self->q), b, (gint64) m * k, r.es), k, m, 1, error))
        return FALSE;
    }
  return TRUE;
}

/* lu */

static gboolean
lu_run (AccelOp *op, gpointer context, GError **error)
{
  AccelLu *self = ACCEL_LU (op);
  Run r = run_start (context, self->a);
  AccelDType dt = r.dt;
  int m = (int) r.d.rows, n = (int) r.d.cols, k = MIN (m, n);
  int lwork = 0;

  if (r.d.batch == 0 || k == 0)
    return copy_if_distinct (self->lu, self->a, r.stream, error);
  Solver *s = lane_solver (r.lane, error);
  guint8 *work_a = s ? scratch (&r, r.d.batch * m * n, error) : NULL;
  int *info = work_a ? infos (&r, r.d.batch, error) : NULL;
  if (info == NULL
      || !check_cusolver (SOLVER (dt, getrf_bufferSize, s->handle, m, n, (void *) work_a, m, &lwork),
                          "getrf_bufferSize", error))
    return FALSE;
  void *work = scratch (&r, MAX (lwork, 1), error);
  if (work == NULL || !transpose (&r, accel_buffer_get_data (self->a), work_a, m, n, r.d.batch, error))
    return FALSE;
  for (gint64 b = 0; b < r.d.batch; b++)
    if (!check_cusolver (SOLVER (dt, getrf, s->handle, m, n, (void *) entry (work_a, b, (gint64) m * n, r.es), m,
                                 work, (int *) accel_buffer_get_data (self->pivots) + b * k, info + b),
                         "getrf", error))
      return FALSE;
  if (!transpose (&r, work_a, accel_buffer_get_data (self->lu), n, m, r.d.batch, error))
    return FALSE;

  return check_infos_after (&r, info, INFO_LU, error);
}

/* Right-hand sides of a solve, in column-major form: a vector is the same
 * either way; a matrix goes through a transposed copy in @rhs. */
static gint64
rhs_columns (AccelBuffer *factor, AccelBuffer *b)
{
  guint rb = accel_shape_get_rank (accel_buffer_get_shape (b));
  return rb == accel_shape_get_rank (accel_buffer_get_shape (factor))
         ? accel_shape_get_dim (accel_buffer_get_shape (b), rb - 1) : 1;
}

static guint8 *
rhs_in (const Run *r, AccelBuffer *b, AccelBuffer *x, int nrhs, GError **error)
{
  int n = (int) r->d.rows;

  if (nrhs == 1)
    return copy_if_distinct (x, b, r->stream, error) ? accel_buffer_get_data (x) : NULL;
  guint8 *work = scratch (r, r->d.batch * n * nrhs, error);
  if (work == NULL || !transpose (r, accel_buffer_get_data (b), work, n, nrhs, r->d.batch, error))
    return NULL;
  return work;
}

static gboolean
rhs_out (const Run *r, guint8 *work, AccelBuffer *x, int nrhs, GError **error)
{
  if (nrhs == 1)
    return TRUE;
  return transpose (r, work, accel_buffer_get_data (x), nrhs, (int) r->d.rows, r->d.batch, error);
}

/* getrs or potrs of batch entry @index of @op: @factor is that entry's
 * factor as cuSOLVER reads it (column-major), @rhs its right-hand sides,
 * solved in place. */
typedef cusolverStatus_t (*SolveEntry) (const Run *r, Solver *s, AccelOp *op, gint64 index, const void *factor,
                                        void *rhs, int nrhs, int *info);

/* What lu-solve and cholesky-solve share: @b into @x (through a transposed
 * scratch copy when it has several columns), @solve on every batch entry
 * of @factor, transposed into scratch first with @transposed (an LU
 * factor; a Cholesky one is read as its column-major view, see fill_for). */
static gboolean
solve_run (AccelOp *op, gpointer context, AccelBuffer *factor, gboolean transposed, AccelBuffer *b,
           AccelBuffer *x, SolveEntry solve, const char *routine, GError **error)
{
  Run r = run_start (context, factor);
  int n = (int) r.d.rows, nrhs = (int) rhs_columns (factor, b);

  if (r.d.batch == 0 || n == 0 || nrhs == 0)
    return copy_if_distinct (x, b, r.stream, error);
  Solver *s = lane_solver (r.lane, error);
  if (s == NULL)
    return FALSE;
  guint8 *factors = accel_buffer_get_data (factor);
  if (transposed)
    {
      guint8 *work = scratch (&r, r.d.batch * n * n, error);
      if (work == NULL || !transpose (&r, factors, work, n, n, r.d.batch, error))
        return FALSE;
      factors = work;
    }
  int *info = infos (&r, 1, error);
  guint8 *rhs = info ? rhs_in (&r, b, x, nrhs, error) : NULL;
  if (rhs == NULL)
    return FALSE;
  for (gint64 i = 0; i < r.d.batch; i++)
    if (!check_cusolver (solve (&r, s, op, i, entry (factors, i, (gint64) n * n, r.es),
                                entry (rhs, i, (gint64) n * nrhs, r.es), nrhs, info), routine, error))
      return FALSE;
  return rhs_out (&r, rhs, x, nrhs, error);
}

static cusolverStatus_t
getrs_entry (const Run *r, Solver *s, AccelOp *op, gint64 index, const void *lu, void *rhs, int nrhs, int *info)
{
  int n = (int) r->d.rows;
  const int *pivots = (const int *) accel_buffer_get_data (ACCEL_LU_SOLVE (op)->pivots) + index * n;
  return SOLVER (r->dt, getrs, s->handle, CUBLAS_OP_N, n, nrhs, lu, n, pivots, rhs, n, info);
}

static gboolean
lu_solve_run (AccelOp *op, gpointer context, GError **error)
{
  AccelLuSolve *self = ACCEL_LU_SOLVE (op);
  return solve_run (op, context, self->lu, TRUE, self->b, self->x, getrs_entry, "getrs", error);
}

/* cholesky: the lower triangle of a row-major matrix is the upper one of
 * its column-major view. */

static cublasFillMode_t
fill_for (gboolean row_major_lower)
{
  return row_major_lower ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
}

static gboolean
cholesky_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCholesky *self = ACCEL_CHOLESKY (op);
  Run r = run_start (context, self->a);
  int n = (int) r.d.rows, lwork = 0;
  guint8 *l = accel_buffer_get_data (self->l);

  if (!copy_if_distinct (self->l, self->a, r.stream, error))
    return FALSE;
  if (r.d.batch == 0 || n == 0)
    return TRUE;
  Solver *s = lane_solver (r.lane, error);
  int *info = s ? infos (&r, r.d.batch, error) : NULL;
  if (info == NULL
      || !check_cusolver (SOLVER (r.dt, potrf_bufferSize, s->handle, fill_for (self->lower), n, (void *) l, n,
                                  &lwork), "potrf_bufferSize", error))
    return FALSE;
  void *work = scratch (&r, MAX (lwork, 1), error);
  if (work == NULL)
    return FALSE;
  for (gint64 b = 0; b < r.d.batch; b++)
    if (!check_cusolver (SOLVER (r.dt, potrf, s->handle, fill_for (self->lower), n,
                                 (void *) entry (l, b, (gint64) n * n, r.es), n, work, lwork, info + b),
                         "potrf", error))
      return FALSE;
  if (!check_launch (accel_cusolver_zero_triangle (l, n, r.d.batch, self->lower, r.es, r.stream), "zero_triangle",
                     error))
    return FALSE;

  return check_infos_after (&r, info, INFO_CHOLESKY, error);
}

static cusolverStatus_t
potrs_entry (const Run *r, Solver *s, AccelOp *op, gint64 index, const void *l, void *rhs, int nrhs, int *info)
{
  int n = (int) r->d.rows;
  return SOLVER (r->dt, potrs, s->handle, fill_for (ACCEL_CHOLESKY_SOLVE (op)->lower), n, nrhs, l, n, rhs, n, info);
}

static gboolean
cholesky_solve_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCholeskySolve *self = ACCEL_CHOLESKY_SOLVE (op);
  return solve_run (op, context, self->l, FALSE, self->b, self->x, potrs_entry, "potrs", error);
}

/* svd */

static gboolean
svd_run (AccelOp *op, gpointer context, GError **error)
{
  AccelSvd *self = ACCEL_SVD (op);
  Run r = run_start (context, self->a);
  AccelDType dt = r.dt;
  gsize es = r.es;
  int m = (int) r.d.rows, n = (int) r.d.cols, k = MIN (m, n);
  /* gesvd wants at least as many rows as columns: a wide or square a is
   * its column-major view as it is, a tall one is transposed first. */
  gboolean wide = n >= m;
  int rows = wide ? n : m, cols = wide ? m : n;
  int lwork = 0;
  guint8 *u = accel_buffer_get_data (self->u), *vt = accel_buffer_get_data (self->vt);
  guint8 *sv = accel_buffer_get_data (self->s);

  if (r.d.batch == 0 || k == 0)
    return TRUE;
  Solver *s = lane_solver (r.lane, error);
  guint8 *work_a = s ? scratch (&r, r.d.batch * m * n, error) : NULL;
  int *info = work_a ? infos (&r, r.d.batch, error) : NULL;
  guint8 *rwork = info ? scratch (&r, k, error) : NULL;
  if (rwork == NULL
      || !check_cusolver (SOLVER (dt, gesvd_bufferSize, s->handle, rows, cols, &lwork), "gesvd_bufferSize", error))
    return FALSE;
  void *work = scratch (&r, MAX (lwork, 1), error);
  guint8 *work_u = NULL, *work_vt = NULL;
  cudaStream_t stream = r.stream;
  if (work == NULL)
    return FALSE;
  if (wide)
    {
      /* gesvd overwrites its input. */
      if (!ACCEL_CUDA_CHECK (cudaMemcpyAsync (work_a, accel_buffer_get_data (self->a),
                                              accel_buffer_get_size (self->a), cudaMemcpyDeviceToDevice, stream),
                             error))
        return FALSE;
    }
  else
    {
      work_u = scratch (&r, r.d.batch * m * k, error);
      work_vt = work_u ? scratch (&r, r.d.batch * k * n, error) : NULL;
      if (work_vt == NULL || !transpose (&r, accel_buffer_get_data (self->a), work_a, m, n, r.d.batch, error))
        return FALSE;
    }

  for (gint64 b = 0; b < r.d.batch; b++)
    {
      guint8 *a = entry (work_a, b, (gint64) m * n, es);
      guint8 *sb = entry (sv, b, k, es);
      cusolverStatus_t status;
      if (wide)
        /* The column-major view is aᵀ = U S VT, so u = VTᵀ and vt = Uᵀ:
         * VT (k x m, ld k) lands in u [m, k] and U (n x k, ld n) in vt [k, n]. */
        status = SOLVER (dt, gesvd, s->handle, 'S', 'S', rows, cols, (void *) a, rows, (void *) sb,
                         (void *) entry (vt, b, (gint64) k * n, es), rows,
                         (void *) entry (u, b, (gint64) m * k, es), k, work, lwork, (void *) rwork, info + b);
      else
        status = SOLVER (dt, gesvd, s->handle, 'S', 'S', rows, cols, (void *) a, rows, (void *) sb,
                         (void *) entry (work_u, b, (gint64) m * k, es), rows,
                         (void *) entry (work_vt, b, (gint64) k * n, es), k, work, lwork, (void *) rwork, info + b);
      if (!check_cusolver (status, "gesvd", error))
        return FALSE;
    }
  if (!wide
      && (!transpose (&r, work_u, u, k, m, r.d.batch, error) || !transpose (&r, work_vt, vt, n, k, r.d.batch, error)))
    return FALSE;

  return check_infos_after (&r, info, INFO_SVD, error);
}

/* eigh */

static gboolean
eigh_run (AccelOp *op, gpointer context, GError **error)
{
  AccelEigh *self = ACCEL_EIGH (op);
  Run r = run_start (context, self->a);
  cudaStream_t stream = r.stream;
  int n = (int) r.d.rows, lwork = 0;
  guint8 *w = accel_buffer_get_data (self->w);

  if (r.d.batch == 0 || n == 0)
    return TRUE;
  Solver *s = lane_solver (r.lane, error);
  guint8 *work_v = s ? scratch (&r, r.d.batch * n * n, error) : NULL;
  int *info = work_v ? infos (&r, r.d.batch, error) : NULL;
  if (info == NULL
      || !ACCEL_CUDA_CHECK (cudaMemcpyAsync (work_v, accel_buffer_get_data (self->a), accel_buffer_get_size (self->a),
                                             cudaMemcpyDeviceToDevice, stream), error)
      || !check_cusolver (SOLVER (r.dt, syevd_bufferSize, s->handle, CUSOLVER_EIG_MODE_VECTOR,
                                  fill_for (self->lower), n, (const void *) work_v, n, (const void *) w, &lwork),
                          "syevd_bufferSize", error))
    return FALSE;
  void *work = scratch (&r, MAX (lwork, 1), error);
  if (work == NULL)
    return FALSE;
  for (gint64 b = 0; b < r.d.batch; b++)
    if (!check_cusolver (SOLVER (r.dt, syevd, s->handle, CUSOLVER_EIG_MODE_VECTOR, fill_for (self->lower), n,
                                 (void *) entry (work_v, b, (gint64) n * n, r.es), n, (void *) entry (w, b, n, r.es),
                                 work, lwork, info + b), "syevd", error))
      return FALSE;
  /* The eigenvectors are the columns of the column-major result, so the
   * rows of its row-major reading: transpose them into columns. */
  if (!transpose (&r, work_v, accel_buffer_get_data (self->v), n, n, r.d.batch, error))
    return FALSE;

  return check_infos_after (&r, info, INFO_EIGH, error);
}

static const AccelKernelEntry kernels[] = {
  { "qr", { .run = qr_run } },
  { "lu", { .run = lu_run } },
  { "lu-solve", { .run = lu_solve_run } },
  { "cholesky", { .run = cholesky_run } },
  { "cholesky-solve", { .run = cholesky_solve_run } },
  { "svd", { .run = svd_run } },
  { "eigh", { .run = eigh_run } },
};

ACCEL_PLUGIN_DEFINE_KERNELS (cusolver,
                             "cuSOLVER kernels on the cuda backend: qr, lu, lu-solve, cholesky, cholesky-solve, "
                             "svd, eigh (f32, f64; batched)",
                             ACCEL_CUDA_BACKEND_NAME, KERNEL_RANK, kernels, ACCEL_VERSION, "LGPL-2.1-or-later")
