/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelSpmv:
 * @row_ptr: i32 `[m + 1]`: row `i` holds the entries `row_ptr[i]` to `row_ptr[i + 1] - 1`
 * @col_ind: i32 `[nnz]`: the column of each entry, ascending within a row
 * @values: f32 or f64 `[nnz]`: the value of each entry
 * @x: the dense vector, `[n_cols]`
 * @y: the result, `[m]`
 * @n_cols: the number of columns of the sparse matrix
 * @alpha: the scale of the product
 * @beta: the scale of the old output
 * @check_structure: whether the structure is verified before the product
 *
 * Sparse matrix times dense vector, `y = alpha s x + beta y`.
 *
 * The sparse matrix `s` is `[m, n_cols]` in CSR form: @row_ptr, @col_ind
 * and @values, with 32-bit indices, column indices ascending (no duplicates)
 * within each row. f32 or f64; the dense buffers have the type of @values.
 * @x is `[n_cols]`, @y is `[m]`.
 *
 * Op name: `spmv`.
 */

static gboolean
accel_spmv_validate (AccelOp *op, GError **error)
{
  AccelSpmv *self = ACCEL_SPMV (op);

  gint64 m = 0;
  if (!accel_op_check_csr_ (op, self->row_ptr, self->col_ind, self->values, self->n_cols, &m, error)
      || !accel_op_check_same_dtype (op, "values", "x", error)
      || !accel_op_check_same_dtype (op, "values", "y", error)
      || !accel_op_check_contiguous (op, "x", error)
      || !accel_op_check_contiguous (op, "y", error))
    return FALSE;

  gint64 x_dims[1] = { self->n_cols };
  gint64 y_dims[1] = { m };
  if (!accel_op_expect_dims_ (error, "spmv", "x", self->x, x_dims, 1, "“n-cols”")
      || !accel_op_expect_dims_ (error, "spmv", "y", self->y, y_dims, 1, "one per row of “row-ptr”")
      || !accel_op_check_finite_ (error, "spmv", "alpha", self->alpha)
      || !accel_op_check_finite_ (error, "spmv", "beta", self->beta))
    return FALSE;
  return accel_op_check_no_alias_ (error, "spmv", "y", self->y, "x", self->x)
         && accel_op_check_no_alias_ (error, "spmv", "y", self->y, "values", self->values)
         && accel_op_check_no_alias_ (error, "spmv", "y", self->y, "row-ptr", self->row_ptr)
         && accel_op_check_no_alias_ (error, "spmv", "y", self->y, "col-ind", self->col_ind);
}

static const AccelOpParam spmv_params[] = {
  ACCEL_OP_BUFFER (AccelSpmv, row_ptr, "row-ptr", "CSR row offsets, i32 [m + 1]: row i holds entries row-ptr[i] to row-ptr[i + 1] - 1",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelSpmv, col_ind, "col-ind", "CSR column indices, i32 [nnz], ascending within each row, each in [0, n-cols)",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelSpmv, values, "values", "CSR values [nnz]: f32 or f64",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelSpmv, x, "x", "Dense vector [n-cols]",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelSpmv, y, "y", "Result [m]; read when beta is not 0",
                   ACCEL_ACCESS_READ_WRITE, ACCEL_OP_PARAM_REQUIRED),
  /**
   * AccelSpmv:n-cols:
   *
   * The number of columns of the sparse matrix; its rows are the entries of
   * `row-ptr` less one.
   */
  ACCEL_OP_INT64 (AccelSpmv, n_cols, "n-cols", "Number of columns of the sparse matrix",
                  0, G_MAXINT64, 0),
  /**
   * AccelSpmv:alpha:
   *
   * Scale of the product of the sparse matrix and `x`.
   */
  ACCEL_OP_DOUBLE (AccelSpmv, alpha, "alpha", "Scale of the product",
                   -G_MAXDOUBLE, G_MAXDOUBLE, 1.0, 0),
  /**
   * AccelSpmv:beta:
   *
   * Scale of the old contents of the output; with 0 the output is not read
   * (so NaNs there do not propagate).
   */
  ACCEL_OP_DOUBLE (AccelSpmv, beta, "beta", "Scale of the old output (0: it is not read)",
                   -G_MAXDOUBLE, G_MAXDOUBLE, 0.0, 0),
  /**
   * AccelSpmv:check-structure:
   *
   * Whether the kernel verifies the CSR structure first (row offsets
   * non-decreasing from 0 to nnz, column indices ascending within each row and
   * below `n-cols`) and fails with %ACCEL_ERROR_INVALID_ARGUMENT naming the
   * first bad entry. On cuda this costs a pass over the indices and one
   * stream synchronisation; set it to %FALSE for a structure already
   * checked, which is then trusted (a malformed one gives undefined results
   * or a device fault there). The cpu backend always checks.
   */
  ACCEL_OP_BOOLEAN (AccelSpmv, check_structure, "check-structure", "Verify that column indices are sorted and in range first", TRUE),
};

ACCEL_DEFINE_OP_TYPE (AccelSpmv, accel_spmv, "spmv",
                      "Sparse (CSR) matrix times dense vector: y = alpha s x + beta y",
                      spmv_params, accel_spmv_validate)

/**
 * accel_spmv_new:
 * @row_ptr: (transfer none) (nullable): i32 `[m + 1]`: row `i` holds the entries `row_ptr[i]` to `row_ptr[i + 1] - 1`
 * @col_ind: (transfer none) (nullable): i32 `[nnz]`: the column of each entry, ascending within a row
 * @values: (transfer none) (nullable): f32 or f64 `[nnz]`: the value of each entry
 * @x: (transfer none) (nullable): the dense vector, `[n_cols]`
 * @y: (transfer none) (nullable): the result, `[m]`
 * @n_cols: the number of columns of the sparse matrix
 *
 * Makes an `spmv` op computing `y = s x`.
 *
 * Returns: (transfer full): a new #AccelSpmv
 */
AccelOp *
accel_spmv_new (AccelBuffer *row_ptr, AccelBuffer *col_ind, AccelBuffer *values, AccelBuffer *x, AccelBuffer *y, gint64 n_cols)
{
  g_return_val_if_fail (row_ptr == NULL || ACCEL_IS_BUFFER (row_ptr), NULL);
  g_return_val_if_fail (col_ind == NULL || ACCEL_IS_BUFFER (col_ind), NULL);
  g_return_val_if_fail (values == NULL || ACCEL_IS_BUFFER (values), NULL);
  g_return_val_if_fail (x == NULL || ACCEL_IS_BUFFER (x), NULL);
  g_return_val_if_fail (y == NULL || ACCEL_IS_BUFFER (y), NULL);

  return g_object_new (ACCEL_TYPE_SPMV, "row-ptr", row_ptr,
                       "col-ind", col_ind,
                       "values", values,
                       "x", x,
                       "y", y,
                       "n-cols", n_cols, NULL);
}
