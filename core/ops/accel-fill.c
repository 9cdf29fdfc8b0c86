/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"

/**
 * AccelFill:
 *
 * Sets every element of `dst` (any dtype, strided layouts allowed) to `value`,
 * converted as `cast` converts a binary64 value. Every binary64 value is
 * taken, NaN and ±infinity included (`np.full (shape, np.nan)`, a `-inf`
 * mask): into a float type they stay what they are (fp8-e4m3, which has no
 * infinity, saturates to ±448 and keeps NaN); into an integer type NaN
 * gives 0 and ±infinity the type's extremes, as `cast` saturates.
 *
 * Op name: `fill`.
 */

static gboolean
accel_fill_validate (AccelOp *op, GError **error)
{
  AccelFill *self = ACCEL_FILL (op);

  AccelDType dtype = accel_buffer_get_dtype (self->dst);
  if (!(self->value_imag == 0.0) && !accel_dtype_is_complex (dtype))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "fill: property “value-imag” is %g but “dst” has the real dtype %s",
                   self->value_imag, accel_dtype_get_name (dtype));
      return FALSE;
    }
  return TRUE;
}

ACCEL_DEFINE_OP_TYPE (AccelFill, accel_fill, "fill",
                      "Set every element of dst to one value",
                      _accel_fill_params, accel_fill_validate)
