/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"
#include "accel-op-check-private.h"

/**
 * AccelCast:
 *
 * Converts every element of `src` to the dtype of `dst` (any dtype to any
 * other; same element count, strided layouts allowed):
 *
 * - to f16, bf16, fp8 and narrower floats: round to nearest, ties to even,
 *   in a single rounding; fp8 E4M3 has no infinity and saturates at ±448,
 *   fp8 E5M2 keeps infinities;
 * - floats to integers: truncate toward zero and saturate; NaN gives 0 (numpy
 *   and PyTorch leave out-of-range and NaN conversions undefined; this is
 *   `numpy.clip (numpy.nan_to_num (x, nan=0), lo, hi).astype (t)` with ±inf
 *   going to the extremes);
 * - integers to integers: saturate;
 * - complex to real keeps the real part; real to complex sets the imaginary
 *   part to 0.
 *
 * Op name: `cast`.
 */

static gboolean
accel_cast_validate (AccelOp *op, GError **error)
{
  AccelCast *self = ACCEL_CAST (op);

  if (!accel_op_check_same_count_ ("cast", "src", self->src, "dst", self->dst, error))
    return FALSE;
  return accel_op_check_no_alias_ (error, "cast", "dst", self->dst, "src", self->src);
}

ACCEL_DEFINE_OP_TYPE (AccelCast, accel_cast, "cast",
                      "Convert src to the dtype of dst (round to nearest even; saturating integers)",
                      _accel_cast_params, accel_cast_validate)
