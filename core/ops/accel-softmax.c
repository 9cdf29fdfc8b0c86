/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"
#include "accel-op-check-private.h"

/**
 * AccelSoftmax:
 *
 * Softmax along the last axis: `dst[..., j] = exp (src[..., j] - m) / Σ exp
 * (src[..., k] - m)` with `m` the row's maximum. Types: f32, f64, f16, bf16;
 * contiguous. `dst` may be `src` itself (in place).
 *
 * Op name: `softmax`.
 */

static const AccelDType softmax_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

static gboolean
accel_softmax_validate (AccelOp *op, GError **error)
{
  AccelSoftmax *self = ACCEL_SOFTMAX (op);

  if (!_accel_op_check_dtypes (op, softmax_dtypes, G_N_ELEMENTS (softmax_dtypes), error, "src", "dst", NULL)
      || !accel_op_check_rank (op, "src", 1, ACCEL_SHAPE_MAX_RANK, error)
      || !accel_op_check_contiguous (op, "src", error)
      || !accel_op_check_contiguous (op, "dst", error))
    return FALSE;
  if (!accel_op_check_same_dims_ ("softmax", "src", self->src, "dst", self->dst, error))
    return FALSE;
  return accel_op_check_in_place_ (error, "softmax", "dst", self->dst, "src", self->src);
}

ACCEL_DEFINE_OP_TYPE (AccelSoftmax, accel_softmax, "softmax",
                      "Softmax along the last axis",
                      _accel_softmax_params, accel_softmax_validate)
