/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"

/**
 * AccelFill:
 * @dst: the buffer to fill
 * @value: the value (the real part for complex types)
 * @value_imag: the imaginary part, for complex types
 *
 * Sets every element of @dst (any dtype, strided layouts allowed) to @value,
 * converted as `cast` converts a binary64 value.
 *
 * Op name: `fill`.
 */

G_DEFINE_FINAL_TYPE (AccelFill, accel_fill, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_DST,
  PROP_VALUE,
  PROP_VALUE_IMAG,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
accel_fill_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelFill *self = ACCEL_FILL (object);

  switch (prop_id)
    {
    case PROP_DST:
      accel_op_set_buffer_ (object, &self->dst, value, pspec);
      break;
    case PROP_VALUE:
      accel_op_set_double_ (object, &self->value, value, pspec);
      break;
    case PROP_VALUE_IMAG:
      accel_op_set_double_ (object, &self->value_imag, value, pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_fill_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelFill *self = ACCEL_FILL (object);

  switch (prop_id)
    {
    case PROP_DST:
      g_value_set_object (value, self->dst);
      break;
    case PROP_VALUE:
      g_value_set_double (value, self->value);
      break;
    case PROP_VALUE_IMAG:
      g_value_set_double (value, self->value_imag);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_fill_dispose (GObject *object)
{
  AccelFill *self = ACCEL_FILL (object);

  g_clear_object (&self->dst);

  G_OBJECT_CLASS (accel_fill_parent_class)->dispose (object);
}

static gboolean
accel_fill_validate (AccelOp *op, GError **error)
{
  AccelFill *self = ACCEL_FILL (op);

  if (!accel_op_require_ ("fill", "dst", self->dst, error))
    return FALSE;

  AccelDType dtype = accel_buffer_get_dtype (self->dst);
  if (self->value_imag != 0.0 && !accel_dtype_is_complex (dtype))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "fill: property “value-imag” is %g but “dst” has the real dtype %s",
                   self->value_imag, accel_dtype_get_name (dtype));
      return FALSE;
    }
  return TRUE;
}

static void
accel_fill_class_init (AccelFillClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_fill_set_property;
  object_class->get_property = accel_fill_get_property;
  object_class->dispose = accel_fill_dispose;
  op_class->validate = accel_fill_validate;

  accel_op_class_set_metadata (op_class, "fill", "Set every element of dst to one value");
  accel_op_class_install_buffer (op_class, PROP_DST, "dst",
                                 "Buffer to fill, any dtype", ACCEL_ACCESS_WRITE, TRUE);

  /**
   * AccelFill:value:
   *
   * The value, converted to the dtype of `dst` as `cast` would (for
   * integers: truncated and saturated).
   */
  properties[PROP_VALUE] =
    g_param_spec_double ("value", NULL, "Value (real part for complex dtypes)",
                         -G_MAXDOUBLE, G_MAXDOUBLE, 0.0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelFill:value-imag:
   *
   * The imaginary part; must be 0 unless `dst` is complex.
   */
  properties[PROP_VALUE_IMAG] =
    g_param_spec_double ("value-imag", NULL, "Imaginary part, for complex dtypes",
                         -G_MAXDOUBLE, G_MAXDOUBLE, 0.0, ACCEL_OP_PARAM_FLAGS);

  for (guint i = PROP_VALUE; i < N_PROPS; i++)
    g_object_class_install_property (object_class, i, properties[i]);
}

static void
accel_fill_init (AccelFill *self)
{
}

/**
 * accel_fill_new:
 * @dst: (transfer none): the buffer to fill
 * @value: the value
 *
 * Makes a `fill` op.
 *
 * Returns: (transfer full): a new #AccelFill
 */
AccelOp *
accel_fill_new (AccelBuffer *dst, double value)
{
  g_return_val_if_fail (dst == NULL || ACCEL_IS_BUFFER (dst), NULL);

  return g_object_new (ACCEL_TYPE_FILL, "dst", dst, "value", value, NULL);
}
