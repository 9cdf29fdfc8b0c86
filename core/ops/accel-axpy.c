/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"

/**
 * AccelAxpy:
 *
 * `y = alpha x + y` over contiguous buffers of the same dtype and element
 * count (their shapes may differ). Types: f32, f64, c64, c128, f16 and bf16
 * (f32 arithmetic). `alpha` is real.
 *
 * Op name: `axpy`.
 */

static const AccelDType axpy_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_C64, ACCEL_DTYPE_C128,
  ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

static gboolean
accel_axpy_validate (AccelOp *op, GError **error)
{
  AccelAxpy *self = ACCEL_AXPY (op);

  if (!accel_op_check_dtype (op, "x", axpy_dtypes, G_N_ELEMENTS (axpy_dtypes), error)
      || !accel_op_check_same_dtype (op, "x", "y", error))
    return FALSE;
  if (!accel_op_check_contiguous (op, "x", error)
      || !accel_op_check_contiguous (op, "y", error))
    return FALSE;
  if (!accel_op_check_same_count_ ("axpy", "x", self->x, "y", self->y, error))
    return FALSE;
  if (accel_op_buffers_overlap_partly_ (self->x, self->y))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "axpy: “x” and “y” overlap partly");
      return FALSE;
    }
  return TRUE;
}

static const AccelOpParam axpy_params[] = {
  ACCEL_OP_BUFFER (AccelAxpy, x, "x", "Vector x (contiguous)", ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAxpy, y, "y", "Vector y, updated in place; same dtype and element count as x",
                   ACCEL_ACCESS_READ_WRITE, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_DOUBLE (AccelAxpy, alpha, "alpha", "The scale of `x` (real, also for complex types).",
                   -G_MAXDOUBLE, G_MAXDOUBLE, 1.0, 0),
};

ACCEL_DEFINE_OP_TYPE (AccelAxpy, accel_axpy, "axpy",
                      "y = alpha x + y",
                      axpy_params, accel_axpy_validate)

/**
 * accel_axpy_new:
 * @alpha: the scale of @x
 * @x: (transfer none): the added vector
 * @y: (transfer none): the accumulated vector
 *
 * Makes an `axpy` op.
 *
 * Returns: (transfer full): a new #AccelAxpy
 */
AccelOp *
accel_axpy_new (double alpha, AccelBuffer *x, AccelBuffer *y)
{
  return g_object_new (ACCEL_TYPE_AXPY, "alpha", alpha, "x", x, "y", y, NULL);
}
