/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelEigh:
 *
 * Eigendecomposition of a symmetric matrix, `a = v diag (w) vᵀ`: the
 * eigenvalues in `w` in ascending order and the orthonormal eigenvectors as the
 * columns of `v` (as `numpy.linalg.eigh`). Only the triangle of `a` chosen by
 * #AccelEigh:lower is read. Row-major contiguous f32 or f64, `[n, n]` or a
 * batch `[batch, n, n]`; `v` may be `a` itself (in place). Eigenvectors are
 * unique only up to sign (and rotation within repeated eigenvalues). Failure
 * to converge is %ACCEL_ERROR_LIBRARY.
 *
 * Op name: `eigh`.
 */

static const AccelDType linalg_dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64 };

static gboolean
accel_eigh_validate (AccelOp *op, GError **error)
{
  AccelEigh *self = ACCEL_EIGH (op);

  AccelOpMatrixDims d;
  if (!_accel_op_check_dtypes (op, linalg_dtypes, G_N_ELEMENTS (linalg_dtypes), error, "a", "w", "v", NULL)
      || !accel_op_matrix_dims_ (op, "a", self->a, &d, error)
      || !accel_op_check_contiguous (op, "w", error)
      || !accel_op_check_contiguous (op, "v", error))
    return FALSE;
  if (d.rows != d.cols)
    return accel_op_shape_error_ (error, "eigh", "a", self->a, "a square matrix [n, n]");

  gint64 w_dims[1] = { d.rows };
  return accel_op_expect_batched_ (error, "eigh", "w", self->w, &d, w_dims, 1, "n for “a” n x n")
         && accel_op_check_same_dims_ ("eigh", "a", self->a, "v", self->v, error)
         && accel_op_check_in_place_ (error, "eigh", "v", self->v, "a", self->a)
         && accel_op_check_no_alias_ (error, "eigh", "w", self->w, "a", self->a)
         && accel_op_check_no_alias_ (error, "eigh", "w", self->w, "v", self->v);
}

ACCEL_DEFINE_OP_TYPE (AccelEigh, accel_eigh, "eigh",
                      "Eigenvalues and eigenvectors of a symmetric matrix (LAPACK syevd)",
                      _accel_eigh_params, accel_eigh_validate)
