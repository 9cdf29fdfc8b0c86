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
