/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"

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

  if (!accel_op_check_dtype (op, "src", softmax_dtypes, G_N_ELEMENTS (softmax_dtypes), error)
      || !accel_op_check_same_dtype (op, "src", "dst", error)
      || !accel_op_check_rank (op, "src", 1, ACCEL_SHAPE_MAX_RANK, error)
      || !accel_op_check_contiguous (op, "src", error)
      || !accel_op_check_contiguous (op, "dst", error))
    return FALSE;
  if (!accel_op_check_same_dims_ ("softmax", "src", self->src, "dst", self->dst, error))
    return FALSE;
  if (accel_op_buffers_overlap_partly_ (self->src, self->dst))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "softmax: “src” and “dst” overlap partly");
      return FALSE;
    }
  return TRUE;
}

static const AccelOpParam softmax_params[] = {
  ACCEL_OP_BUFFER (AccelSoftmax, src, "src", "Input: f32, f64, f16 or bf16, contiguous",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelSoftmax, dst, "dst", "Result, same shape and dtype as src (may be src)",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
};

ACCEL_DEFINE_OP_TYPE (AccelSoftmax, accel_softmax, "softmax",
                      "Softmax along the last axis",
                      softmax_params, accel_softmax_validate)

/**
 * accel_softmax_new:
 * @src: (transfer none): the input
 * @dst: (transfer none): the result
 *
 * Makes a `softmax` op.
 *
 * Returns: (transfer full): a new #AccelSoftmax
 */
AccelOp *
accel_softmax_new (AccelBuffer *src, AccelBuffer *dst)
{
  return g_object_new (ACCEL_TYPE_SOFTMAX, "src", src, "dst", dst, NULL);
}
