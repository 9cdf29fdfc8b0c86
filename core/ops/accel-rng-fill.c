/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"
#include "accel-enum-types.h"

/**
 * AccelRngFill:
 * @dst: the buffer to fill
 * @distribution: uniform or normal
 * @seed: the Philox key
 * @offset: the first Philox counter
 * @low: lower bound of the uniform distribution
 * @high: upper bound of the uniform distribution
 * @mean: mean of the normal distribution
 * @stddev: standard deviation of the normal distribution
 *
 * Fills a contiguous f32, f64, f16 or bf16 buffer with pseudo-random values
 * from the counter-based Philox4x32-10 generator. Each value depends only on
 * (@seed, @offset, its index): the result is the same whatever the thread
 * count or backend (uniform values bit for bit), and a buffer filled in
 * chunks at matching offsets equals one filled at once. One counter gives
 * four f32/f16/bf16 values or two f64 values, so the element `4 k + j` of an
 * f32 fill at @offset equals the element `j` of a fill at `offset + k`. The
 * exact mapping is in `accel-philox.h`.
 *
 * Op name: `rng-fill`.
 */

G_DEFINE_FINAL_TYPE (AccelRngFill, accel_rng_fill, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_DST,
  PROP_DISTRIBUTION,
  PROP_SEED,
  PROP_OFFSET,
  PROP_LOW,
  PROP_HIGH,
  PROP_MEAN,
  PROP_STDDEV,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const AccelDType rng_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

static void
accel_rng_fill_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelRngFill *self = ACCEL_RNG_FILL (object);

  switch (prop_id)
    {
    case PROP_DST:
      accel_op_set_buffer_ (object, &self->dst, value, pspec);
      break;
    case PROP_DISTRIBUTION:
      accel_op_set_enum_ (object, (int *) &self->distribution, value, pspec);
      break;
    case PROP_SEED:
      accel_op_set_uint64_ (object, &self->seed, value, pspec);
      break;
    case PROP_OFFSET:
      accel_op_set_uint64_ (object, &self->offset, value, pspec);
      break;
    case PROP_LOW:
      accel_op_set_double_ (object, &self->low, value, pspec);
      break;
    case PROP_HIGH:
      accel_op_set_double_ (object, &self->high, value, pspec);
      break;
    case PROP_MEAN:
      accel_op_set_double_ (object, &self->mean, value, pspec);
      break;
    case PROP_STDDEV:
      accel_op_set_double_ (object, &self->stddev, value, pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_rng_fill_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelRngFill *self = ACCEL_RNG_FILL (object);

  switch (prop_id)
    {
    case PROP_DST:
      g_value_set_object (value, self->dst);
      break;
    case PROP_DISTRIBUTION:
      g_value_set_enum (value, self->distribution);
      break;
    case PROP_SEED:
      g_value_set_uint64 (value, self->seed);
      break;
    case PROP_OFFSET:
      g_value_set_uint64 (value, self->offset);
      break;
    case PROP_LOW:
      g_value_set_double (value, self->low);
      break;
    case PROP_HIGH:
      g_value_set_double (value, self->high);
      break;
    case PROP_MEAN:
      g_value_set_double (value, self->mean);
      break;
    case PROP_STDDEV:
      g_value_set_double (value, self->stddev);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_rng_fill_dispose (GObject *object)
{
  AccelRngFill *self = ACCEL_RNG_FILL (object);

  g_clear_object (&self->dst);

  G_OBJECT_CLASS (accel_rng_fill_parent_class)->dispose (object);
}

static gboolean
accel_rng_fill_validate (AccelOp *op, GError **error)
{
  AccelRngFill *self = ACCEL_RNG_FILL (op);

  if (!accel_op_require_ ("rng-fill", "dst", self->dst, error))
    return FALSE;
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

static void
accel_rng_fill_class_init (AccelRngFillClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_rng_fill_set_property;
  object_class->get_property = accel_rng_fill_get_property;
  object_class->dispose = accel_rng_fill_dispose;
  op_class->validate = accel_rng_fill_validate;

  accel_op_class_set_metadata (op_class, "rng-fill",
                               "Fill dst with Philox4x32-10 uniform or normal values (seed, offset)");
  accel_op_class_install_buffer (op_class, PROP_DST, "dst",
                                 "Buffer to fill: f32, f64, f16 or bf16, contiguous",
                                 ACCEL_ACCESS_WRITE, TRUE);

  /**
   * AccelRngFill:distribution:
   *
   * The distribution.
   */
  properties[PROP_DISTRIBUTION] =
    g_param_spec_enum ("distribution", NULL, "Distribution of the values",
                       ACCEL_TYPE_RNG_DISTRIBUTION, ACCEL_RNG_UNIFORM, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelRngFill:seed:
   *
   * The generator's 64-bit key.
   */
  properties[PROP_SEED] =
    g_param_spec_uint64 ("seed", NULL, "Philox key",
                         0, G_MAXUINT64, 0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelRngFill:offset:
   *
   * The counter of the first element; each counter makes four f32/f16/bf16
   * values or two f64 values.
   */
  properties[PROP_OFFSET] =
    g_param_spec_uint64 ("offset", NULL, "Philox counter of the first element (4 f32 or 2 f64 values per counter)",
                         0, G_MAXUINT64, 0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelRngFill:low:
   *
   * Lower bound of the uniform distribution (inclusive).
   */
  properties[PROP_LOW] =
    g_param_spec_double ("low", NULL, "Lower bound (uniform)",
                         -G_MAXDOUBLE, G_MAXDOUBLE, 0.0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelRngFill:high:
   *
   * Upper bound of the uniform distribution (exclusive for f32 and f64;
   * f16 and bf16 may round up to it).
   */
  properties[PROP_HIGH] =
    g_param_spec_double ("high", NULL, "Upper bound (uniform)",
                         -G_MAXDOUBLE, G_MAXDOUBLE, 1.0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelRngFill:mean:
   *
   * Mean of the normal distribution.
   */
  properties[PROP_MEAN] =
    g_param_spec_double ("mean", NULL, "Mean (normal)",
                         -G_MAXDOUBLE, G_MAXDOUBLE, 0.0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelRngFill:stddev:
   *
   * Standard deviation of the normal distribution.
   */
  properties[PROP_STDDEV] =
    g_param_spec_double ("stddev", NULL, "Standard deviation (normal)",
                         0.0, G_MAXDOUBLE, 1.0, ACCEL_OP_PARAM_FLAGS);

  for (guint i = PROP_DISTRIBUTION; i < N_PROPS; i++)
    g_object_class_install_property (object_class, i, properties[i]);
}

static void
accel_rng_fill_init (AccelRngFill *self)
{
  self->distribution = ACCEL_RNG_UNIFORM;
  self->low = 0.0;
  self->high = 1.0;
  self->mean = 0.0;
  self->stddev = 1.0;
}

/**
 * accel_rng_fill_new:
 * @dst: (transfer none): the buffer to fill
 * @distribution: the distribution
 * @seed: the key
 *
 * Makes an `rng-fill` op at offset 0 with the default bounds (uniform on
 * [0, 1), or the standard normal).
 *
 * Returns: (transfer full): a new #AccelRngFill
 */
AccelOp *
accel_rng_fill_new (AccelBuffer *dst, AccelRngDistribution distribution, guint64 seed)
{
  g_return_val_if_fail (dst == NULL || ACCEL_IS_BUFFER (dst), NULL);

  return g_object_new (ACCEL_TYPE_RNG_FILL, "dst", dst, "distribution", distribution,
                       "seed", seed, NULL);
}
