/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelSvd:
 *
 * Reduced singular value decomposition `a = u diag (s) vt`, with `k = min (m, n)`
 * singular values in `s` (non-negative, descending), `u` `[m, k]` and `vt`
 * `[k, n]` with orthonormal columns and rows. Row-major contiguous f32 or f64,
 * `[m, n]` or a batch `[batch, m, n]`. Singular vectors are unique only up to
 * sign (and rotation within repeated singular values): compare products, not
 * vectors. Failure to converge is %ACCEL_ERROR_LIBRARY.
 *
 * Op name: `svd`.
 */

static const AccelDType linalg_dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64 };

static gboolean
accel_svd_validate (AccelOp *op, GError **error)
{
  AccelSvd *self = ACCEL_SVD (op);

  AccelOpMatrixDims d;
  if (!_accel_op_check_dtypes (op, linalg_dtypes, G_N_ELEMENTS (linalg_dtypes), error, "a", "s", "u", "vt", NULL)
      || !accel_op_matrix_dims_ (op, "a", self->a, &d, error)
      || !accel_op_check_contiguous (op, "s", error)
      || !accel_op_check_contiguous (op, "u", error)
      || !accel_op_check_contiguous (op, "vt", error))
    return FALSE;

  gint64 k = MIN (d.rows, d.cols);
  gint64 s_dims[1] = { k };
  gint64 u_dims[2] = { d.rows, k };
  gint64 vt_dims[2] = { k, d.cols };
  AccelBuffer *outs[3] = { self->s, self->u, self->vt };
  const char *names[3] = { "s", "u", "vt" };
  if (!accel_op_expect_batched_ (error, "svd", "s", self->s, &d, s_dims, 1, "min(m, n) for “a” m x n")
      || !accel_op_expect_batched_ (error, "svd", "u", self->u, &d, u_dims, 2, "m x min(m, n) for “a” m x n")
      || !accel_op_expect_batched_ (error, "svd", "vt", self->vt, &d, vt_dims, 2, "min(m, n) x n for “a” m x n"))
    return FALSE;
  for (guint i = 0; i < 3; i++)
    {
      if (!accel_op_check_no_alias_ (error, "svd", names[i], outs[i], "a", self->a))
        return FALSE;
      for (guint j = 0; j < i; j++)
        if (!accel_op_check_no_alias_ (error, "svd", names[i], outs[i], names[j], outs[j]))
          return FALSE;
    }
  return TRUE;
}

ACCEL_DEFINE_OP_TYPE (AccelSvd, accel_svd, "svd",
                      "Reduced singular value decomposition a = u diag(s) vt",
                      _accel_svd_params, accel_svd_validate)
