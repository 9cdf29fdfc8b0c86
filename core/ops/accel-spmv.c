/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelSpmv:
 *
 * Sparse matrix times dense vector, `y = alpha s x + beta y`.
 *
 * The sparse matrix `s` is `[m, n_cols]` in CSR form: `row-ptr`, `col-ind`
 * and `values`, with 32-bit indices, column indices ascending (no duplicates)
 * within each row. f32 or f64; the dense buffers have the type of `values`.
 * `x` is `[n_cols]`, `y` is `[m]`.
 *
 * Op name: `spmv`.
 */

static gboolean
accel_spmv_validate (AccelOp *op, GError **error)
{
  AccelSpmv *self = ACCEL_SPMV (op);
  gint64 m = 0;

  if (!_accel_csr_check (op, "x", "y", &m, error))
    return FALSE;
  gint64 x_dims[1] = { self->n_cols }, y_dims[1] = { m };
  return accel_op_expect_dims_ (error, "spmv", "x", self->x, x_dims, 1, "“n-cols”")
         && accel_op_expect_dims_ (error, "spmv", "y", self->y, y_dims, 1, "one per row of “row-ptr”")
         && _accel_op_check_results_alias (op, error);
}

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelSpmv, accel_spmv, "spmv",
                                "Sparse (CSR) matrix times dense vector: y = alpha s x + beta y",
                                _accel_spmv_params, accel_spmv_validate,
                                accel_op_class_install_params (op_class, _accel_csr_fields_params,
                                                               G_N_ELEMENTS (_accel_csr_fields_params)))
