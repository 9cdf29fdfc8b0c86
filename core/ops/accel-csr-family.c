/* accel-csr-family.c: what `spmv` and `spmm` share: the CSR matrix and
 * its parameters (the same fields, laid out alike) and their checks.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-op-check-private.h"

#define CSR_LAYOUT_CHECK(T, in, out)                                                          \
  G_STATIC_ASSERT (sizeof (T) == sizeof (AccelCsrFields)                                      \
                   && G_STRUCT_OFFSET (T, in) == G_STRUCT_OFFSET (AccelCsrFields, dense_in)   \
                   && G_STRUCT_OFFSET (T, out) == G_STRUCT_OFFSET (AccelCsrFields, dense_out) \
                   && G_STRUCT_OFFSET (T, check_structure) == G_STRUCT_OFFSET (AccelCsrFields, check_structure))
CSR_LAYOUT_CHECK (AccelSpmv, x, y);
CSR_LAYOUT_CHECK (AccelSpmm, b, c);

const AccelOpParam _accel_csr_params[7] = {
  ACCEL_OP_BUFFER (AccelCsrFields, row_ptr, "row-ptr",
                   "CSR row offsets, i32 [m + 1]: row i holds entries row-ptr[i] to row-ptr[i + 1] - 1.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelCsrFields, col_ind, "col-ind",
                   "CSR column indices, i32 [nnz], ascending within each row, each in [0, n-cols).",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelCsrFields, values, "values", "CSR values [nnz]: f32 or f64.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_INT64 (AccelCsrFields, n_cols, "n-cols",
                  "The number of columns of the sparse matrix; its rows are the entries of `row-ptr` less one.",
                  0, G_MAXINT64, 0),
  ACCEL_OP_DOUBLE (AccelCsrFields, alpha, "alpha", "Scale of the product of the sparse matrix and the dense operand.",
                   -G_MAXDOUBLE, G_MAXDOUBLE, 1.0, 0),
  ACCEL_OP_DOUBLE (AccelCsrFields, beta, "beta",
                   "Scale of the old contents of the output; with 0 the output is not read (so NaNs there do not "
                   "propagate).",
                   -G_MAXDOUBLE, G_MAXDOUBLE, 0.0, 0),
  ACCEL_OP_BOOLEAN (AccelCsrFields, check_structure, "check-structure",
                    "Whether the kernel verifies the CSR structure first (row offsets non-decreasing from 0 to nnz, "
                    "column indices ascending within each row and below `n-cols`) and fails with "
                    "ACCEL_ERROR_INVALID_ARGUMENT naming the first bad entry. On cuda this costs a pass over the "
                    "indices and one stream synchronisation; set it to FALSE for a structure already checked, which "
                    "is then trusted (a malformed one gives undefined results or a device fault there). The cpu "
                    "backend always checks.", TRUE),
};

/* The CSR matrix of @op and its dense operands @in and @out: structure
 * sizes (the entries are the kernels' to check), one dtype for values and
 * the dense buffers, contiguous dense buffers. Sets @m, the rows. */
gboolean
_accel_csr_check (AccelOp *op, const char *in, const char *out, gint64 *m, GError **error)
{
  const AccelCsrFields *self = (const AccelCsrFields *) op;
  return accel_op_check_csr_ (op, self->row_ptr, self->col_ind, self->values, self->n_cols, m, error)
         && accel_op_check_same_dtype (op, "values", in, error)
         && accel_op_check_same_dtype (op, "values", out, error)
         && accel_op_check_contiguous (op, in, error)
         && accel_op_check_contiguous (op, out, error);
}
