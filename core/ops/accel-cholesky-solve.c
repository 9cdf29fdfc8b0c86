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

static const AccelOpParam cholesky_solve_params[] = {
  ACCEL_OP_BUFFER (AccelCholeskySolve, l, "l", "The Cholesky factor [n, n] (or [b, n, n]) as written by cholesky",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelCholeskySolve, b, "b", "Right-hand side [n] or [n, nrhs] (batched like l)",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelCholeskySolve, x, "x", "The solution, shape of b; may be b",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BOOLEAN (AccelCholeskySolve, lower, "lower",
                    "Whether `l` is the lower factor (`a = l lᵀ`) or the upper one (`a = uᵀ u`); only that triangle "
                    "is read.", TRUE),
};

ACCEL_DEFINE_OP_TYPE (AccelCholeskySolve, accel_cholesky_solve, "cholesky-solve",
                      "Solves a x = b from the Cholesky factor of a (LAPACK potrs)",
                      cholesky_solve_params, accel_cholesky_solve_validate)

/**
 * accel_cholesky_solve_new:
 * @l: (transfer none) (nullable): the factor written by `cholesky`, `[n, n]` or `[batch, n, n]`
 * @b: (transfer none) (nullable): the right-hand side, `[n]` or `[n, nrhs]`
 * @x: (transfer none) (nullable): the solution, the shape of @b
 *
 * Makes a `cholesky-solve` op for the lower factor.
 *
 * Returns: (transfer full): a new #AccelCholeskySolve
 */
AccelOp *
accel_cholesky_solve_new (AccelBuffer *l, AccelBuffer *b, AccelBuffer *x)
{
  return g_object_new (ACCEL_TYPE_CHOLESKY_SOLVE, "l", l,
                       "b", b,
                       "x", x, NULL);
}
