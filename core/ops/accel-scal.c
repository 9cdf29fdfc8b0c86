/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"

/**
 * AccelScal:
 *
 * `x = alpha x` over a contiguous buffer. Types: f32, f64, c64, c128, f16
 * and bf16 (f32 arithmetic). `alpha` is real.
 *
 * Op name: `scal`.
 */

static const AccelDType scal_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_C64, ACCEL_DTYPE_C128,
  ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

static gboolean
accel_scal_validate (AccelOp *op, GError **error)
{
  return accel_op_check_dtype (op, "x", scal_dtypes, G_N_ELEMENTS (scal_dtypes), error)
         && accel_op_check_contiguous (op, "x", error);
}

ACCEL_DEFINE_OP_TYPE (AccelScal, accel_scal, "scal",
                      "x = alpha x",
                      _accel_scal_params, accel_scal_validate)
