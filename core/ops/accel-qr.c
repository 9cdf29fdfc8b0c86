/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelQr:
 *
 * Reduced QR factorisation: `a = q r` with `q` `[m, k]` having orthonormal
 * columns and `r` `[k, n]` upper triangular (zero below the diagonal), where
 * `k = min (m, n)`. Row-major contiguous buffers of f32 or f64; a leading
 * axis of rank 3 buffers is a batch. The signs follow the library
 * (Householder reflections as in LAPACK `geqrf`).
 *
 * Op name: `qr`.
 */

static const AccelDType linalg_dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64 };

static gboolean
accel_qr_validate (AccelOp *op, GError **error)
{
  AccelQr *self = ACCEL_QR (op);

  AccelOpMatrixDims d;
  if (!_accel_op_check_dtypes (op, linalg_dtypes, G_N_ELEMENTS (linalg_dtypes), error, "a", "q", "r", NULL)
      || !accel_op_matrix_dims_ (op, "a", self->a, &d, error)
      || !accel_op_check_contiguous (op, "q", error)
      || !accel_op_check_contiguous (op, "r", error))
    return FALSE;

  gint64 k = MIN (d.rows, d.cols);
  gint64 q_dims[2] = { d.rows, k };
  gint64 r_dims[2] = { k, d.cols };
  return accel_op_expect_batched_ (error, "qr", "q", self->q, &d, q_dims, 2, "m x min(m, n) for “a” m x n")
         && accel_op_expect_batched_ (error, "qr", "r", self->r, &d, r_dims, 2, "min(m, n) x n for “a” m x n")
         && accel_op_check_no_alias_ (error, "qr", "q", self->q, "a", self->a)
         && accel_op_check_no_alias_ (error, "qr", "r", self->r, "a", self->a)
         && accel_op_check_no_alias_ (error, "qr", "r", self->r, "q", self->q);
}

ACCEL_DEFINE_OP_TYPE (AccelQr, accel_qr, "qr",
                      "Reduced QR factorisation a = q r of a matrix or a batch of matrices",
                      _accel_qr_params, accel_qr_validate)
