/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelCholeskySolve:
 *
 * Solves `a x = b` given the Cholesky factor of `a` made by `cholesky` with
 * the same #AccelCholeskySolve:lower (LAPACK `potrs`). `b` is `[n]` or
 * `[n, nrhs]` (with a leading batch axis when `l` has one); `x` has the shape of
 * `b` and may be `b` itself. f32 or f64.
 *
 * Op name: `cholesky-solve`.
 */

static const AccelDType linalg_dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64 };

static gboolean
accel_cholesky_solve_validate (AccelOp *op, GError **error)
{
  AccelCholeskySolve *self = ACCEL_CHOLESKY_SOLVE (op);

  AccelOpMatrixDims d;
  if (!accel_op_check_dtype (op, "l", linalg_dtypes, G_N_ELEMENTS (linalg_dtypes), error)
      || !accel_op_matrix_dims_ (op, "l", self->l, &d, error))
    return FALSE;
  if (d.rows != d.cols)
    return accel_op_shape_error_ (error, "cholesky-solve", "l", self->l, "a square matrix [n, n]");
  return accel_op_check_rhs_ (op, "l", &d, self->b, self->x, error);
}

ACCEL_DEFINE_OP_TYPE (AccelCholeskySolve, accel_cholesky_solve, "cholesky-solve",
                      "Solves a x = b from the Cholesky factor of a (LAPACK potrs)",
                      _accel_cholesky_solve_params, accel_cholesky_solve_validate)
