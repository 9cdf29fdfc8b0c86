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
  if (!accel_op_check_dtype (op, "a", linalg_dtypes, G_N_ELEMENTS (linalg_dtypes), error)
      || !accel_op_check_same_dtype (op, "a", "w", error)
      || !accel_op_check_same_dtype (op, "a", "v", error)
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

static const AccelOpParam eigh_params[] = {
  ACCEL_OP_BUFFER (AccelEigh, a, "a", "Symmetric matrix [n, n] (or [b, n, n]); f32 or f64",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelEigh, w, "w", "The eigenvalues, `[n]`, ascending.",
                    ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelEigh, v, "v", "The eigenvectors as columns, the shape of `a`.",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BOOLEAN (AccelEigh, lower, "lower", "Whether the lower triangle of `a` is read (else the upper one).", TRUE),
};

ACCEL_DEFINE_OP_TYPE (AccelEigh, accel_eigh, "eigh",
                      "Eigenvalues and eigenvectors of a symmetric matrix (LAPACK syevd)",
                      eigh_params, accel_eigh_validate)

/**
 * accel_eigh_new:
 * @a: (transfer none) (nullable): the symmetric matrix, `[n, n]` or `[batch, n, n]`
 * @w: (transfer none) (nullable): the eigenvalues, `[n]`, ascending
 * @v: (transfer none) (nullable): the eigenvectors as columns, the shape of @a
 *
 * Makes an `eigh` op reading the lower triangle.
 *
 * Returns: (transfer full): a new #AccelEigh
 */
AccelOp *
accel_eigh_new (AccelBuffer *a, AccelBuffer *w, AccelBuffer *v)
{
  return g_object_new (ACCEL_TYPE_EIGH, "a", a,
                       "w", w,
                       "v", v, NULL);
}
