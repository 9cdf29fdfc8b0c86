/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelHistogram:
 * @samples: the samples
 * @bins: the counts, i32 `[n_bins]`
 * @lower: the lower edge of the first bin (inclusive)
 * @upper: the upper edge of the last bin (exclusive)
 * @n_bins: the number of bins
 *
 * Counts the samples into @n_bins bins of equal width over `[lower, upper)`:
 * sample `v` falls in bin `floor ((v − lower) · n_bins / (upper − lower))`;
 * samples outside the range (and NaNs) are not counted. @bins is overwritten.
 * Sample types: u8, i32, f32, f64 (any shape, all elements counted); for the
 * integer types @lower and @upper must be whole numbers and the bin is
 * computed exactly. Float samples within rounding of a bin edge may land on
 * either side of it on different backends.
 *
 * Op name: `histogram`.
 */

G_DEFINE_FINAL_TYPE (AccelHistogram, accel_histogram, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_SAMPLES,
  PROP_BINS,
  PROP_LOWER,
  PROP_UPPER,
  PROP_N_BINS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const AccelDType sample_dtypes[] = {
  ACCEL_DTYPE_U8, ACCEL_DTYPE_I32, ACCEL_DTYPE_F32, ACCEL_DTYPE_F64,
};
static const AccelDType bin_dtypes[] = { ACCEL_DTYPE_I32 };

static void
accel_histogram_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelHistogram *self = ACCEL_HISTOGRAM (object);

  switch (prop_id)
    {
    case PROP_SAMPLES:
      accel_op_set_buffer_ (object, &self->samples, value, pspec);
      break;
    case PROP_BINS:
      accel_op_set_buffer_ (object, &self->bins, value, pspec);
      break;
    case PROP_LOWER:
      accel_op_set_double_ (object, &self->lower, value, pspec);
      break;
    case PROP_UPPER:
      accel_op_set_double_ (object, &self->upper, value, pspec);
      break;
    case PROP_N_BINS:
      accel_op_set_int_ (object, &self->n_bins, value, pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_histogram_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelHistogram *self = ACCEL_HISTOGRAM (object);

  switch (prop_id)
    {
    case PROP_SAMPLES:
      g_value_set_object (value, self->samples);
      break;
    case PROP_BINS:
      g_value_set_object (value, self->bins);
      break;
    case PROP_LOWER:
      g_value_set_double (value, self->lower);
      break;
    case PROP_UPPER:
      g_value_set_double (value, self->upper);
      break;
    case PROP_N_BINS:
      g_value_set_int (value, self->n_bins);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_histogram_dispose (GObject *object)
{
  AccelHistogram *self = ACCEL_HISTOGRAM (object);

  g_clear_object (&self->samples);
  g_clear_object (&self->bins);

  G_OBJECT_CLASS (accel_histogram_parent_class)->dispose (object);
}

static gboolean
accel_histogram_validate (AccelOp *op, GError **error)
{
  AccelHistogram *self = ACCEL_HISTOGRAM (op);

  if (!accel_op_require_ ("histogram", "samples", self->samples, error)
      || !accel_op_require_ ("histogram", "bins", self->bins, error))
    return FALSE;

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

static void
accel_histogram_class_init (AccelHistogramClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_histogram_set_property;
  object_class->get_property = accel_histogram_get_property;
  object_class->dispose = accel_histogram_dispose;
  op_class->validate = accel_histogram_validate;

  accel_op_class_set_metadata (op_class, "histogram",
                               "Histogram of samples into n-bins equal bins over [lower, upper)");

  accel_op_class_install_buffer (op_class, PROP_SAMPLES, "samples",
                                 "Samples of any shape: u8, i32, f32 or f64",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_BINS, "bins",
                                 "Counts, i32 [n-bins]",
                                 ACCEL_ACCESS_WRITE, TRUE);

  /**
   * AccelHistogram:lower:
   *
   * The lower edge of the first bin, inclusive.
   */
  properties[PROP_LOWER] =
    g_param_spec_double ("lower", NULL, "Lower edge of the first bin (inclusive)",
                         -G_MAXDOUBLE, G_MAXDOUBLE, 0.0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelHistogram:upper:
   *
   * The upper edge of the last bin, exclusive.
   */
  properties[PROP_UPPER] =
    g_param_spec_double ("upper", NULL, "Upper edge of the last bin (exclusive)",
                         -G_MAXDOUBLE, G_MAXDOUBLE, 1.0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelHistogram:n-bins:
   *
   * The number of bins; `bins` has this many entries.
   */
  properties[PROP_N_BINS] =
    g_param_spec_int ("n-bins", NULL, "Number of bins",
                      1, G_MAXINT, 1, ACCEL_OP_PARAM_FLAGS);

  for (guint i = PROP_LOWER; i < N_PROPS; i++)
    g_object_class_install_property (object_class, i, properties[i]);
}

static void
accel_histogram_init (AccelHistogram *self)
{
  self->upper = 1.0;
  self->n_bins = 1;
}

/**
 * accel_histogram_new:
 * @samples: (transfer none) (nullable): the samples
 * @bins: (transfer none) (nullable): the counts, i32 `[n_bins]`
 * @lower: the lower edge of the first bin (inclusive)
 * @upper: the upper edge of the last bin (exclusive)
 * @n_bins: the number of bins
 *
 * Makes a `histogram` op.
 *
 * Returns: (transfer full): a new #AccelHistogram
 */
AccelOp *
accel_histogram_new (AccelBuffer *samples, AccelBuffer *bins, double lower, double upper, int n_bins)
{
  g_return_val_if_fail (samples == NULL || ACCEL_IS_BUFFER (samples), NULL);
  g_return_val_if_fail (bins == NULL || ACCEL_IS_BUFFER (bins), NULL);

  return g_object_new (ACCEL_TYPE_HISTOGRAM, "samples", samples,
                       "bins", bins,
                       "lower", lower,
                       "upper", upper,
                       "n-bins", n_bins, NULL);
}
