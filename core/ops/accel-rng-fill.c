/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"
#include "accel-enum-types.h"

/**
 * AccelRngFill:
 *
 * Fills a contiguous f32, f64, f16 or bf16 buffer with pseudo-random values
 * from the counter-based Philox4x32-10 generator. Each value depends only on
 * (`seed`, `offset`, its index): the result is the same whatever the thread
 * count or backend (uniform values bit for bit), and a buffer filled in
 * chunks at matching offsets equals one filled at once. One counter gives
 * four f32/f16/bf16 values or two f64 values, so the element `4 k + j` of an
 * f32 fill at `offset` equals the element `j` of a fill at `offset + k`. The
 * exact mapping is in `accel-philox.h`.
 *
 * Op name: `rng-fill`.
 */

static const AccelDType rng_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

static gboolean
accel_rng_fill_validate (AccelOp *op, GError **error)
{
  AccelRngFill *self = ACCEL_RNG_FILL (op);

  if (!accel_op_check_dtype (op, "dst", rng_dtypes, G_N_ELEMENTS (rng_dtypes), error)
      || !accel_op_check_contiguous (op, "dst", error))
    return FALSE;

  if (self->distribution == ACCEL_RNG_UNIFORM)
    {
      if (!isfinite (self->low) || !isfinite (self->high) || !(self->low <= self->high))
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "rng-fill: properties “low” (%g) and “high” (%g) must be finite with low <= high",
                       self->low, self->high);
          return FALSE;
        }
    }
  else
    {
      if (!isfinite (self->mean) || !isfinite (self->stddev) || self->stddev < 0.0)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "rng-fill: property “mean” (%g) must be finite and “stddev” (%g) finite and >= 0",
                       self->mean, self->stddev);
          return FALSE;
        }
    }

  /* The counters of the last element must not wrap around 2^64. */
  guint64 per_counter = accel_buffer_get_dtype (self->dst) == ACCEL_DTYPE_F64 ? 2 : 4;
  guint64 n = (guint64) accel_buffer_get_n_elements (self->dst);
  guint64 counters = n / per_counter + (n % per_counter != 0);
  if (counters > 0 && self->offset > G_MAXUINT64 - (counters - 1))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "rng-fill: property “offset” (%" G_GUINT64_FORMAT ") plus the %" G_GUINT64_FORMAT
                   " counters “dst” needs overflows 2^64", self->offset, counters);
      return FALSE;
    }
  return TRUE;
}

ACCEL_DEFINE_OP_TYPE (AccelRngFill, accel_rng_fill, "rng-fill",
                      "Fill dst with Philox4x32-10 uniform or normal values (seed, offset)",
                      _accel_rng_fill_params, accel_rng_fill_validate)
