/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelLuSolve:
 *
 * Solves `a x = b` given the factors of a square `a` made by `lu` (LAPACK
 * `getrs`). `b` is `[n]` or `[n, nrhs]` (with a leading batch axis when `lu` has
 * one); `x` has the shape of `b` and may be `b` itself. f32 or f64.
 *
 * An exactly zero diagonal entry of `u` fails with %ACCEL_ERROR_INVALID_ARGUMENT
 * on backends that check it before solving (cpu). cuSOLVER's `getrs` does not
 * check: there `x` then holds infinities or NaNs; the `lu` op reports singular
 * matrices on every backend.
 *
 * Op name: `lu-solve`.
 */

static const AccelDType linalg_dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64 };

static gboolean
accel_lu_solve_validate (AccelOp *op, GError **error)
{
  AccelLuSolve *self = ACCEL_LU_SOLVE (op);

  static const AccelDType pivot_dtypes[] = { ACCEL_DTYPE_I32 };
  AccelOpMatrixDims d;
  if (!accel_op_check_dtype (op, "lu", linalg_dtypes, G_N_ELEMENTS (linalg_dtypes), error)
      || !accel_op_check_dtype (op, "pivots", pivot_dtypes, G_N_ELEMENTS (pivot_dtypes), error)
      || !accel_op_matrix_dims_ (op, "lu", self->lu, &d, error)
      || !accel_op_check_contiguous (op, "pivots", error))
    return FALSE;
  if (d.rows != d.cols)
    return accel_op_shape_error_ (error, "lu-solve", "lu", self->lu, "a square matrix [n, n]");

  gint64 pivot_dims[1] = { d.rows };
  return accel_op_expect_batched_ (error, "lu-solve", "pivots", self->pivots, &d, pivot_dims, 1, "n for “lu” n x n")
         && accel_op_check_rhs_ (op, "lu", &d, self->b, self->x, error)
         && accel_op_check_no_alias_ (error, "lu-solve", "x", self->x, "pivots", self->pivots);
}

ACCEL_DEFINE_OP_TYPE (AccelLuSolve, accel_lu_solve, "lu-solve",
                      "Solves a x = b from the LU factors of a square a (LAPACK getrs)",
                      _accel_lu_solve_params, accel_lu_solve_validate)
