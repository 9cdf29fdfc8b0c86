/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelScan:
 *
 * Prefix sums along the last axis (each row of a rank 2+ buffer on its own),
 * inclusive or exclusive. Types: i32, u32, i64 (wrapping on overflow, as two's
 * complement), f32 and f64 (the order of the additions is the backend's, so
 * float results differ in rounding between backends). `output` has the type
 * and dims of `input` and may be `input` itself (in place).
 *
 * Op name: `scan`.
 */

static const AccelDType scan_dtypes[] = {
  ACCEL_DTYPE_I32, ACCEL_DTYPE_U32, ACCEL_DTYPE_I64, ACCEL_DTYPE_F32, ACCEL_DTYPE_F64,
};

static gboolean
accel_scan_validate (AccelOp *op, GError **error)
{
  AccelScan *self = ACCEL_SCAN (op);

  if (self->kind != ACCEL_SCAN_INCLUSIVE && self->kind != ACCEL_SCAN_EXCLUSIVE)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "scan: property “kind” has the unknown value %d", self->kind);
      return FALSE;
    }
  return _accel_op_check_dtypes (op, scan_dtypes, G_N_ELEMENTS (scan_dtypes), error, "input", "output", NULL)
         && accel_op_check_rank (op, "input", 1, ACCEL_SHAPE_MAX_RANK, error)
         && accel_op_check_contiguous (op, "input", error)
         && accel_op_check_contiguous (op, "output", error)
         && accel_op_check_same_dims_ ("scan", "input", self->input, "output", self->output, error)
         && accel_op_check_in_place_ (error, "scan", "output", self->output, "input", self->input);
}

ACCEL_DEFINE_OP_TYPE (AccelScan, accel_scan, "scan",
                      "Inclusive or exclusive prefix sum along the last axis",
                      _accel_scan_params, accel_scan_validate)
