/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelLu:
 *
 * LU factorisation with partial (row) pivoting, as LAPACK `getrf`:
 * `a = p l u` with `l` unit lower triangular and `u` upper triangular, both
 * stored in `lu` (the unit diagonal of `l` is not stored). `pivots` holds, for
 * each `i`, the 1-based row that row `i + 1` was interchanged with, as LAPACK
 * and cuSOLVER write it (`scipy.linalg.lu_factor` returns the same
 * interchanges 0-based: subtract 1; `torch.linalg.lu_factor` returns them
 * 1-based, as here). Row-major contiguous f32 or f64 buffers, `[m, n]`
 * or a batch `[batch, m, n]`; `lu` may be `a` itself (in place).
 *
 * A matrix with an exactly zero pivot fails with %ACCEL_ERROR_INVALID_ARGUMENT
 * naming the first zero diagonal entry of `u` (the factors are still written).
 *
 * Op name: `lu`.
 */

static const AccelDType linalg_dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64 };

static gboolean
accel_lu_validate (AccelOp *op, GError **error)
{
  AccelLu *self = ACCEL_LU (op);

  static const AccelDType pivot_dtypes[] = { ACCEL_DTYPE_I32 };
  AccelOpMatrixDims d;
  if (!_accel_op_check_dtypes (op, linalg_dtypes, G_N_ELEMENTS (linalg_dtypes), error, "a", "lu", NULL)
      || !accel_op_check_dtype (op, "pivots", pivot_dtypes, G_N_ELEMENTS (pivot_dtypes), error)
      || !accel_op_matrix_dims_ (op, "a", self->a, &d, error)
      || !accel_op_check_contiguous (op, "lu", error)
      || !accel_op_check_contiguous (op, "pivots", error))
    return FALSE;

  gint64 lu_dims[2] = { d.rows, d.cols };
  gint64 pivot_dims[1] = { MIN (d.rows, d.cols) };
  return accel_op_expect_batched_ (error, "lu", "lu", self->lu, &d, lu_dims, 2, "the shape of “a”")
         && accel_op_expect_batched_ (error, "lu", "pivots", self->pivots, &d, pivot_dims, 1, "min(m, n) for “a” m x n")
         && accel_op_check_in_place_ (error, "lu", "lu", self->lu, "a", self->a)
         && accel_op_check_no_alias_ (error, "lu", "pivots", self->pivots, "a", self->a)
         && accel_op_check_no_alias_ (error, "lu", "pivots", self->pivots, "lu", self->lu);
}

ACCEL_DEFINE_OP_TYPE (AccelLu, accel_lu, "lu",
                      "LU factorisation with partial pivoting, p a = l u (LAPACK getrf)",
                      _accel_lu_params, accel_lu_validate)
