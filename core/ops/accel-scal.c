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

static const AccelOpParam scal_params[] = {
  ACCEL_OP_BUFFER (AccelScal, x, "x", "Vector x (contiguous), scaled in place",
                   ACCEL_ACCESS_READ_WRITE, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_DOUBLE (AccelScal, alpha, "alpha", "The scale (real, also for complex types).",
                   -G_MAXDOUBLE, G_MAXDOUBLE, 1.0, 0),
};

ACCEL_DEFINE_OP_TYPE (AccelScal, accel_scal, "scal",
                      "x = alpha x",
                      scal_params, accel_scal_validate)

/**
 * accel_scal_new:
 * @alpha: the scale
 * @x: (transfer none): the vector
 *
 * Makes a `scal` op.
 *
 * Returns: (transfer full): a new #AccelScal
 */
AccelOp *
accel_scal_new (double alpha, AccelBuffer *x)
{
  return g_object_new (ACCEL_TYPE_SCAL, "alpha", alpha, "x", x, NULL);
}
