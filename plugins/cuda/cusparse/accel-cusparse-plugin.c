/* accel-cusparse-plugin.c: the `cusparse` plugin: spmv and spmm on CSR
 * matrices (32-bit indices; f32 and f64) on the `cuda` backend through
 * cuSPARSE's generic API, with row-major dense operands.
 *
 * cuSPARSE trusts its input: an out-of-range column index reads out of
 * bounds. So with `check-structure` (the default) the structure is checked
 * on the device first (accel-cusparse-kernels.cu); the lowest bad row comes
 * back through pinned memory after a stream synchronisation, and the host
 * reads that one row to name the exact fault, in the words of the cpu
 * kernels. With `check-structure` off nothing waits. A structure that
 * passed is remembered per lane by the write serials of its two buffers, so
 * the repeated products of an iterative method check it once.
 *
 * Each lane has its own cuSPARSE handle bound to its stream; the
 * descriptors are made for each run (host-side objects, cheap).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <cusparse.h>
#include "accel-config.h"
#include "accel-cuda.h"
#include "accel-cusparse-kernels.h"

#define KERNEL_RANK 100

/* A structure that passed the check, named by the write serials of its
 * buffers (accel_cuda_lane_get_write_serial()): while neither buffer has
 * been written since, it needs no new check. */
typedef struct {
  guint64 row_ptr_serial, col_ind_serial;
  gconstpointer row_ptr, col_ind;
  gint64 m, nnz, n_cols;
} Checked;

#define N_CHECKED 16

typedef struct {
  cusparseHandle_t handle;
  int *host;               /* pinned: the bad row, then that row's data */
  gsize host_len;          /* ints */
  Checked checked[N_CHECKED];
  guint next_checked;
} Sparse;

static gboolean
check_cusparse (cusparseStatus_t status, const char *what, GError **error)
{
  return accel_cuda_check_library ((int) status, "cuSPARSE", cusparseGetErrorName (status),
                                   status == CUSPARSE_STATUS_ALLOC_FAILED, what, error);
}

static void
sparse_destroy (gpointer data)
{
  Sparse *s = data;
  if (s->handle)
    (void) cusparseDestroy (s->handle);
  if (s->host)
    (void) cudaFreeHost (s->host);
  g_free (s);
}

static gboolean
sparse_open (AccelCudaLane *lane, gpointer *handle, GError **error)
{
  Sparse *s = *handle = g_new0 (Sparse, 1);
  return check_cusparse (cusparseCreate (&s->handle), "cusparseCreate", error)
         && check_cusparse (cusparseSetStream (s->handle, accel_cuda_lane_get_stream (lane)),
                            "cusparseSetStream", error)
         && check_cusparse (cusparseSetPointerMode (s->handle, CUSPARSE_POINTER_MODE_HOST),
                            "cusparseSetPointerMode", error);
}

/* Pinned room for @n ints. */
static int *
host_ints (Sparse *s, gsize n, GError **error)
{
  if (s->host_len >= n)
    return s->host;
  if (s->host)
    (void) cudaFreeHost (s->host);
  s->host = NULL;
  s->host_len = 0;
  if (!ACCEL_CUDA_CHECK (cudaMallocHost ((void **) &s->host, MAX (n, 64) * sizeof (int)), error))
    return NULL;
  s->host_len = MAX (n, 64);
  return s->host;
}

/* Copies @n ints from the device and waits for the stream. */
static const int *
fetch (Sparse *s, cudaStream_t stream, const int *device, gsize n, GError **error)
{
  int *host = host_ints (s, n, error);
  if (host == NULL
      || !ACCEL_CUDA_CHECK (cudaMemcpyAsync (host, device, n * sizeof (int), cudaMemcpyDeviceToHost, stream), error)
      || !ACCEL_CUDA_CHECK (cudaStreamSynchronize (stream), error))
    return NULL;
  return host;
}

/* Names the fault of row @r, which the device found bad. */
static gboolean
describe_bad_row (const char *op, Sparse *s, cudaStream_t stream, const int *row_ptr, const int *col_ind,
                  gint64 m, gint64 nnz, gint64 n_cols, int r, GError **error)
{
  const int *p;
  int first, last, begin, end;

  if ((p = fetch (s, stream, row_ptr, 1, error)) == NULL)
    return FALSE;
  first = p[0];
  if ((p = fetch (s, stream, row_ptr + m, 1, error)) == NULL)
    return FALSE;
  last = p[0];
  if (first != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “row-ptr”[0] is %d; it must be 0", op, first);
      return FALSE;
    }
  if (last != nnz)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “row-ptr”[%" G_GINT64_FORMAT "] is %d; it must be the number of entries, %" G_GINT64_FORMAT,
                   op, m, last, nnz);
      return FALSE;
    }
  if ((p = fetch (s, stream, row_ptr + r, 2, error)) == NULL)
    return FALSE;
  begin = p[0];
  end = p[1];
  if (end > nnz || begin < 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “row-ptr”[%d] is %d, outside the %" G_GINT64_FORMAT " entries",
                   op, end > nnz ? r + 1 : r, end > nnz ? end : begin, nnz);
      return FALSE;
    }
  if (end < begin)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “row-ptr” decreases after row %d (%d, then %d)", op, r, begin, end);
      return FALSE;
    }
  if (end > begin && (p = fetch (s, stream, col_ind + begin, end - begin, error)) == NULL)
    return FALSE;
  for (int e = 0; e < end - begin; e++)
    {
      if (p[e] < 0 || p[e] >= n_cols)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "%s: “col-ind”[%d] is %d, outside [0, n-cols = %" G_GINT64_FORMAT ") (row %d)",
                       op, begin + e, p[e], n_cols, r);
          return FALSE;
        }
      if (e > 0 && p[e] <= p[e - 1])
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "%s: “col-ind” is not ascending in row %d: entry %d has column %d after column %d",
                       op, r, begin + e, p[e], p[e - 1]);
          return FALSE;
        }
    }
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "%s: the CSR structure is malformed at row %d",
               op, r);
  return FALSE;
}

/* The structure check; see the top of the file. */
static gboolean
check_structure (const char *op, AccelCudaLane *lane, Sparse *s, AccelBuffer *row_ptr, AccelBuffer *col_ind,
                 gint64 n_cols, GError **error)
{
  cudaStream_t stream = accel_cuda_lane_get_stream (lane);
  gint64 m = accel_buffer_get_n_elements (row_ptr) - 1;
  gint64 nnz = accel_buffer_get_n_elements (col_ind);
  const int *rp = accel_buffer_get_data (row_ptr), *ci = accel_buffer_get_data (col_ind);
  Checked key = {
    accel_cuda_lane_get_write_serial (lane, row_ptr), accel_cuda_lane_get_write_serial (lane, col_ind),
    rp, ci, m, nnz, n_cols,
  };

  if (key.row_ptr_serial != 0 && key.col_ind_serial != 0)
    for (guint i = 0; i < N_CHECKED; i++)
      if (memcmp (&s->checked[i], &key, sizeof key) == 0)
        return TRUE;

  /* bad[0]: the first row with wrong offsets; bad[1]: with wrong columns.
   * Offsets are named first, as the cpu kernel names them. */
  int *bad = accel_cuda_lane_alloc_workspace (lane, 2 * sizeof (int), error);
  if (bad == NULL
      || !ACCEL_CUDA_CHECK (cudaMemsetAsync (bad, 0x7f, 2 * sizeof (int), stream), error)
      || !accel_cuda_check (accel_cusparse_check_csr (rp, ci, m, nnz, n_cols, bad, stream), "check_csr", error))
    return FALSE;
  const int *rows = fetch (s, stream, bad, 2, error);
  if (rows == NULL)
    return FALSE;
  int row = rows[0] < MAX (m, 1) ? rows[0] : rows[1];
  if (row >= MAX (m, 1))
    {
      if (key.row_ptr_serial != 0 && key.col_ind_serial != 0)
        s->checked[s->next_checked++ % N_CHECKED] = key;
      return TRUE;
    }
  return describe_bad_row (op, s, stream, rp, ci, m, nnz, n_cols, row, error);
}

typedef union {
  float f;
  double d;
} Scalar;

static Scalar
scalar (gboolean is_double, double v)
{
  Scalar s;
  if (is_double)
    s.d = v;
  else
    s.f = (float) v;
  return s;
}

static gboolean
product (const char *op,
         AccelCudaLane *lane,
         AccelBuffer *row_ptr, AccelBuffer *col_ind, AccelBuffer *values, gint64 n_cols, gboolean check,
         AccelBuffer *dense, AccelBuffer *out, gboolean matrix, double alpha_v, double beta_v,
         GError **error)
{
  cudaStream_t stream = accel_cuda_lane_get_stream (lane);
  gint64 m = accel_buffer_get_n_elements (row_ptr) - 1;
  gint64 nnz = accel_buffer_get_n_elements (col_ind);
  gboolean is_double = accel_buffer_get_dtype (values) == ACCEL_DTYPE_F64;
  cudaDataType type = is_double ? CUDA_R_64F : CUDA_R_32F;
  gint64 k = matrix ? accel_shape_get_dim (accel_buffer_get_shape (dense), 1) : 1;
  Scalar alpha = scalar (is_double, alpha_v), beta = scalar (is_double, beta_v);
  gboolean ok = FALSE;

  Sparse *s = accel_cuda_lane_open_handle (lane, "cusparse", sparse_open, sparse_destroy, error);
  if (s == NULL || (check && !check_structure (op, lane, s, row_ptr, col_ind, n_cols, error)))
    return FALSE;
  if (m == 0 || k == 0)
    return TRUE;
  if (nnz == 0 || n_cols == 0)
    return accel_cuda_check (accel_cusparse_scale (accel_buffer_get_data (out), m * k, beta_v, is_double ? 8 : 4,
                                                   stream), "scale", error);

  cusparseConstSpMatDescr_t a = NULL;
  cusparseConstDnVecDescr_t x = NULL;
  cusparseDnVecDescr_t y = NULL;
  cusparseConstDnMatDescr_t b = NULL;
  cusparseDnMatDescr_t c = NULL;
  size_t size = 0;
  void *work;

  if (!check_cusparse (cusparseCreateConstCsr (&a, m, n_cols, nnz, accel_buffer_get_data (row_ptr),
                                               accel_buffer_get_data (col_ind), accel_buffer_get_data (values),
                                               CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                               type), "cusparseCreateConstCsr", error))
    goto out;
  if (!matrix)
    {
      if (!check_cusparse (cusparseCreateConstDnVec (&x, n_cols, accel_buffer_get_data (dense), type),
                           "cusparseCreateConstDnVec", error)
          || !check_cusparse (cusparseCreateDnVec (&y, m, accel_buffer_get_data (out), type),
                              "cusparseCreateDnVec", error)
          || !check_cusparse (cusparseSpMV_bufferSize (s->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, x,
                                                       &beta, y, type, CUSPARSE_SPMV_ALG_DEFAULT, &size),
                              "cusparseSpMV_bufferSize", error)
          || (work = accel_cuda_lane_alloc_workspace (lane, MAX (size, 1), error)) == NULL
          || !check_cusparse (cusparseSpMV (s->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, x, &beta, y,
                                            type, CUSPARSE_SPMV_ALG_DEFAULT, work), "cusparseSpMV", error))
        goto out;
    }
  else
    {
      if (!check_cusparse (cusparseCreateConstDnMat (&b, n_cols, k, k, accel_buffer_get_data (dense), type,
                                                     CUSPARSE_ORDER_ROW), "cusparseCreateConstDnMat", error)
          || !check_cusparse (cusparseCreateDnMat (&c, m, k, k, accel_buffer_get_data (out), type,
                                                   CUSPARSE_ORDER_ROW), "cusparseCreateDnMat", error)
          || !check_cusparse (cusparseSpMM_bufferSize (s->handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                       CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, b, &beta, c,
                                                       type, CUSPARSE_SPMM_ALG_DEFAULT, &size),
                              "cusparseSpMM_bufferSize", error)
          || (work = accel_cuda_lane_alloc_workspace (lane, MAX (size, 1), error)) == NULL
          || !check_cusparse (cusparseSpMM (s->handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                            CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, b, &beta, c, type,
                                            CUSPARSE_SPMM_ALG_DEFAULT, work), "cusparseSpMM", error))
        goto out;
    }
  ok = TRUE;

out:
  /* Destroying descriptors does not wait for the work that uses them. */
  if (a)
    (void) cusparseDestroySpMat (a);
  if (x)
    (void) cusparseDestroyDnVec (x);
  if (y)
    (void) cusparseDestroyDnVec (y);
  if (b)
    (void) cusparseDestroyDnMat (b);
  if (c)
    (void) cusparseDestroyDnMat (c);
  return ok;
}

static gboolean
spmv_run (AccelOp *op, gpointer context, GError **error)
{
  AccelSpmv *self = ACCEL_SPMV (op);
  return product ("spmv", context, self->row_ptr, self->col_ind, self->values, self->n_cols,
                  self->check_structure, self->x, self->y, FALSE, self->alpha, self->beta, error);
}

static gboolean
spmm_run (AccelOp *op, gpointer context, GError **error)
{
  AccelSpmm *self = ACCEL_SPMM (op);
  return product ("spmm", context, self->row_ptr, self->col_ind, self->values, self->n_cols,
                  self->check_structure, self->b, self->c, TRUE, self->alpha, self->beta, error);
}

static const AccelKernelEntry kernels[] = {
  { "spmv", { .run = spmv_run } },
  { "spmm", { .run = spmm_run } },
};

ACCEL_PLUGIN_DEFINE_KERNELS (cusparse,
                             "cuSPARSE kernels on the cuda backend: spmv and spmm on CSR matrices (f32, f64), "
                             "with an on-device structure check",
                             ACCEL_CUDA_BACKEND_NAME, KERNEL_RANK, kernels, ACCEL_VERSION, "LGPL-2.1-or-later")
