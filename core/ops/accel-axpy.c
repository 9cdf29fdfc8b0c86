/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"
#include "accel-op-check-private.h"

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

  if (!_accel_op_check_dtypes (op, axpy_dtypes, G_N_ELEMENTS (axpy_dtypes), error, "x", "y", NULL))
    return FALSE;
  if (!accel_op_check_contiguous (op, "x", error)
      || !accel_op_check_contiguous (op, "y", error))
    return FALSE;
  if (!accel_op_check_same_count_ ("axpy", "x", self->x, "y", self->y, error))
    return FALSE;
  return accel_op_check_in_place_ (error, "axpy", "y", self->y, "x", self->x);
}

ACCEL_DEFINE_OP_TYPE (AccelAxpy, accel_axpy, "axpy",
                      "y = alpha x + y",
                      _accel_axpy_params, accel_axpy_validate)
