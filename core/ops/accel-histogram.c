/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelHistogram:
 *
 * Counts the samples into `n-bins` bins of equal width over `[lower, upper]`:
 * sample `v` falls in bin `floor ((v − lower) · n_bins / (upper − lower))`,
 * and a sample equal to `upper` in the last bin, as `numpy.histogram`
 * counts it (with `include-upper` %FALSE the range is `[lower, upper)`, as
 * CUB's `HistogramEven` counts); samples outside the range (and NaNs) are
 * not counted. `bins` is overwritten.
 * Sample types: u8, i32, f32, f64 (any shape, all elements counted); for the
 * integer types `lower` and `upper` must be whole numbers and the bin is
 * computed exactly. Float samples within rounding of a bin edge may land on
 * either side of it on different backends.
 *
 * Op name: `histogram`.
 */

static const AccelDType sample_dtypes[] = {
  ACCEL_DTYPE_U8, ACCEL_DTYPE_I32, ACCEL_DTYPE_F32, ACCEL_DTYPE_F64,
};
static const AccelDType bin_dtypes[] = { ACCEL_DTYPE_I32 };

static gboolean
accel_histogram_validate (AccelOp *op, GError **error)
{
  AccelHistogram *self = ACCEL_HISTOGRAM (op);

  if (!accel_op_check_dtype (op, "samples", sample_dtypes, G_N_ELEMENTS (sample_dtypes), error)
      || !accel_op_check_dtype (op, "bins", bin_dtypes, G_N_ELEMENTS (bin_dtypes), error)
      || !accel_op_check_contiguous (op, "samples", error)
      || !accel_op_check_contiguous (op, "bins", error))
    return FALSE;
  if (self->n_bins < 1)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "histogram: property “n-bins” is %d; it must be at least 1", self->n_bins);
      return FALSE;
    }
  if (!accel_op_check_finite_ (error, "histogram", "lower", self->lower)
      || !accel_op_check_finite_ (error, "histogram", "upper", self->upper))
    return FALSE;
  if (!(self->lower < self->upper))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "histogram: property “upper” (%g) must be above “lower” (%g)", self->upper, self->lower);
      return FALSE;
    }
  if (accel_dtype_is_integer (accel_buffer_get_dtype (self->samples))
      && (self->lower != floor (self->lower) || self->upper != floor (self->upper)
          || self->lower < G_MININT || self->upper > G_MAXINT))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "histogram: “samples” is %s, so “lower” (%g) and “upper” (%g) must be whole numbers in the i32 range",
                   accel_dtype_get_name (accel_buffer_get_dtype (self->samples)), self->lower, self->upper);
      return FALSE;
    }
  gint64 want[1] = { self->n_bins };
  if (accel_buffer_get_n_elements (self->samples) > G_MAXINT)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "histogram: “samples” has more than %d elements", G_MAXINT);
      return FALSE;
    }
  return accel_op_expect_dims_ (error, "histogram", "bins", self->bins, want, 1, "“n-bins”")
         && accel_op_check_no_alias_ (error, "histogram", "bins", self->bins, "samples", self->samples);
}

ACCEL_DEFINE_OP_TYPE (AccelHistogram, accel_histogram, "histogram",
                      "Histogram of samples into n-bins equal bins over [lower, upper)",
                      _accel_histogram_params, accel_histogram_validate)
