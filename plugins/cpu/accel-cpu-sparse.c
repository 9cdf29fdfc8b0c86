/* accel-cpu-sparse.c: spmv and spmm on CSR matrices, f32 and f64, written
 * from the definitions with f64 accumulation.
 *
 * The CSR structure is always checked first (the check costs a fraction
 * of the product, and a bad index would read out of bounds here): row
 * offsets from 0 to nnz, non-decreasing; column indices below n-cols and
 * ascending within each row. The first bad entry is named in the error.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cpu-kernels.h"

static gboolean
check_csr (const char *op,
           const gint32 *row_ptr,
           gint64 m,
           const gint32 *col_ind,
           gint64 nnz,
           gint64 n_cols,
           GError **error)
{
  if (row_ptr[0] != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “row-ptr”[0] is %d; it must be 0", op, row_ptr[0]);
      return FALSE;
    }
  if (row_ptr[m] != nnz)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “row-ptr”[%" G_GINT64_FORMAT "] is %d; it must be the number of entries, %" G_GINT64_FORMAT,
                   op, m, row_ptr[m], nnz);
      return FALSE;
    }
  /* The offsets first, all of them: a row's entries are walked only once
   * every offset is known to lie within the entries. */
  for (gint64 i = 0; i < m; i++)
    {
      if (row_ptr[i + 1] < row_ptr[i])
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "%s: “row-ptr” decreases after row %" G_GINT64_FORMAT " (%d, then %d)",
                       op, i, row_ptr[i], row_ptr[i + 1]);
          return FALSE;
        }
      if (row_ptr[i + 1] > nnz)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "%s: “row-ptr”[%" G_GINT64_FORMAT "] is %d, past the %" G_GINT64_FORMAT " entries",
                       op, i + 1, row_ptr[i + 1], nnz);
          return FALSE;
        }
    }
  for (gint64 i = 0; i < m; i++)
    for (gint32 e = row_ptr[i]; e < row_ptr[i + 1]; e++)
      {
        if (col_ind[e] < 0 || col_ind[e] >= n_cols)
          {
            g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                         "%s: “col-ind”[%d] is %d, outside [0, n-cols = %" G_GINT64_FORMAT ") (row %"
                         G_GINT64_FORMAT ")", op, e, col_ind[e], n_cols, i);
            return FALSE;
          }
        if (e > row_ptr[i] && col_ind[e] <= col_ind[e - 1])
          {
            g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                         "%s: “col-ind” is not ascending in row %" G_GINT64_FORMAT
                         ": entry %d has column %d after column %d", op, i, e, col_ind[e], col_ind[e - 1]);
            return FALSE;
          }
      }
  return TRUE;
}

typedef struct {
  gboolean is_double;
  const gint32 *row_ptr;
  const gint32 *col_ind;
  const void *values;
  const void *dense;      /* x, or b [n_cols, k] */
  void *out;              /* y, or c [m, k] */
  gint64 k;               /* 1 for spmv */
  double alpha, beta;
} SpJob;

static inline double
load (gboolean is_double, const void *p, gint64 i)
{
  return is_double ? ((const double *) p)[i] : ((const float *) p)[i];
}

static inline void
store (gboolean is_double, void *p, gint64 i, double v)
{
  if (is_double)
    ((double *) p)[i] = v;
  else
    ((float *) p)[i] = (float) v;
}

static void
sp_rows (gint64 begin, gint64 end, gpointer data)
{
  SpJob *job = data;
  gint64 k = job->k;
  double *acc = g_new (double, MAX (k, 1));

  for (gint64 i = begin; i < end; i++)
    {
      for (gint64 j = 0; j < k; j++)
        acc[j] = 0.0;
      for (gint32 e = job->row_ptr[i]; e < job->row_ptr[i + 1]; e++)
        {
          double v = load (job->is_double, job->values, e);
          gint64 row = (gint64) job->col_ind[e] * k;
          for (gint64 j = 0; j < k; j++)
            acc[j] += v * load (job->is_double, job->dense, row + j);
        }
      for (gint64 j = 0; j < k; j++)
        {
          double r = job->alpha * acc[j];
          /* With beta 0 the output is not read, as BLAS does. */
          if (job->beta != 0.0)
            r += job->beta * load (job->is_double, job->out, i * k + j);
          store (job->is_double, job->out, i * k + j, r);
        }
    }
  g_free (acc);
}

static gboolean
sp_run (const char *op,
        gpointer context,
        AccelBuffer *row_ptr,
        AccelBuffer *col_ind,
        AccelBuffer *values,
        gint64 n_cols,
        AccelBuffer *dense,
        AccelBuffer *out,
        gint64 k,
        double alpha,
        double beta,
        GError **error)
{
  gint64 m = accel_buffer_get_n_elements (row_ptr) - 1;
  gint64 nnz = accel_buffer_get_n_elements (col_ind);
  SpJob job = {
    accel_buffer_get_dtype (values) == ACCEL_DTYPE_F64,
    accel_buffer_get_data (row_ptr), accel_buffer_get_data (col_ind),
    accel_buffer_get_data (values), accel_buffer_get_data (dense),
    accel_buffer_get_data (out), k, alpha, beta,
  };

  if (!check_csr (op, job.row_ptr, m, job.col_ind, nnz, n_cols, error))
    return FALSE;
  gint64 per_row = MAX (nnz / MAX (m, 1), 1) * MAX (k, 1);
  accel_cpu_parallel_for (context, m, MAX (4096 / per_row, 1), sp_rows, &job);
  return TRUE;
}

gboolean
accel_cpu_spmv_run (AccelOp *op, gpointer context, GError **error)
{
  AccelSpmv *self = ACCEL_SPMV (op);
  return sp_run ("spmv", context, self->row_ptr, self->col_ind, self->values, self->n_cols,
                 self->x, self->y, 1, self->alpha, self->beta, error);
}

gboolean
accel_cpu_spmm_run (AccelOp *op, gpointer context, GError **error)
{
  AccelSpmm *self = ACCEL_SPMM (op);
  gint64 k = accel_shape_get_dim (accel_buffer_get_shape (self->b), 1);
  return sp_run ("spmm", context, self->row_ptr, self->col_ind, self->values, self->n_cols,
                 self->b, self->c, k, self->alpha, self->beta, error);
}
