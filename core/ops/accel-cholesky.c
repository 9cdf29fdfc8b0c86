/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelCholesky:
 *
 * Cholesky factorisation of a symmetric positive definite matrix: `a = l lᵀ`
 * with `l` lower triangular (#AccelCholesky:lower, the default), or `a = uᵀ u`
 * with `l` upper triangular. Only that triangle of `a` is read, and the other
 * triangle of `l` is set to zero. Row-major contiguous f32 or f64, `[n, n]` or
 * a batch `[batch, n, n]`; `l` may be `a` itself (in place).
 *
 * A matrix that is not positive definite fails with
 * %ACCEL_ERROR_INVALID_ARGUMENT naming the order of the first leading minor
 * that is not positive (and the batch entry).
 *
 * Op name: `cholesky`.
 */

static const AccelDType linalg_dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64 };

static gboolean
accel_cholesky_validate (AccelOp *op, GError **error)
{
  AccelCholesky *self = ACCEL_CHOLESKY (op);

  AccelOpMatrixDims d;
  if (!_accel_op_check_dtypes (op, linalg_dtypes, G_N_ELEMENTS (linalg_dtypes), error, "a", "l", NULL)
      || !accel_op_matrix_dims_ (op, "a", self->a, &d, error)
      || !accel_op_check_contiguous (op, "l", error))
    return FALSE;
  if (d.rows != d.cols)
    return accel_op_shape_error_ (error, "cholesky", "a", self->a, "a square matrix [n, n]");
  return accel_op_check_same_dims_ ("cholesky", "a", self->a, "l", self->l, error)
         && accel_op_check_in_place_ (error, "cholesky", "l", self->l, "a", self->a);
}

ACCEL_DEFINE_OP_TYPE (AccelCholesky, accel_cholesky, "cholesky",
                      "Cholesky factorisation of a symmetric positive definite matrix (LAPACK potrf)",
                      _accel_cholesky_params, accel_cholesky_validate)
