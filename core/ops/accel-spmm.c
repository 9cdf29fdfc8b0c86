/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelSpmm:
 *
 * Sparse matrix times dense matrix, `c = alpha s b + beta c`.
 *
 * The sparse matrix `s` is `[m, n_cols]` in CSR form: `row-ptr`, `col-ind`
 * and `values`, with 32-bit indices, column indices ascending (no duplicates)
 * within each row. f32 or f64; the dense buffers have the type of `values`.
 * `b` is `[n_cols, k]` and `c` `[m, k]`, row-major.
 *
 * Op name: `spmm`.
 */

static gboolean
accel_spmm_validate (AccelOp *op, GError **error)
{
  AccelSpmm *self = ACCEL_SPMM (op);
  gint64 m = 0;

  if (!_accel_csr_check (op, "b", "c", &m, error) || !accel_op_check_rank (op, "b", 2, 2, error))
    return FALSE;
  gint64 k = accel_shape_get_dim (accel_buffer_get_shape (self->b), 1);
  gint64 b_dims[2] = { self->n_cols, k }, c_dims[2] = { m, k };
  if (!accel_op_expect_dims_ (error, "spmm", "b", self->b, b_dims, 2, "“n-cols” rows")
      || !accel_op_expect_dims_ (error, "spmm", "c", self->c, c_dims, 2, "one row per row of “row-ptr”, the columns of “b”"))
    return FALSE;
  if (k > G_MAXINT)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "spmm: “b” has %" G_GINT64_FORMAT " columns; at most %d", k, G_MAXINT);
      return FALSE;
    }
  return _accel_op_check_results_alias (op, error);
}

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelSpmm, accel_spmm, "spmm",
                                "Sparse (CSR) matrix times dense matrix: c = alpha s b + beta c",
                                _accel_spmm_params, accel_spmm_validate,
                                accel_op_class_install_params (op_class, _accel_csr_fields_params,
                                                               G_N_ELEMENTS (_accel_csr_fields_params)))
