/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"

/**
 * AccelScal:
 * @x: the vector, scaled in place
 * @alpha: the scale
 *
 * `x = alpha x` over a contiguous buffer. Types: f32, f64, c64, c128, f16
 * and bf16 (f32 arithmetic). @alpha is real.
 *
 * Op name: `scal`.
 */

G_DEFINE_FINAL_TYPE (AccelScal, accel_scal, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_X,
  PROP_ALPHA,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const AccelDType scal_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_C64, ACCEL_DTYPE_C128,
  ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

static void
accel_scal_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelScal *self = ACCEL_SCAL (object);

  switch (prop_id)
    {
    case PROP_X:
      accel_op_set_buffer_ (object, &self->x, value, pspec);
      break;
    case PROP_ALPHA:
      accel_op_set_double_ (object, &self->alpha, value, pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_scal_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelScal *self = ACCEL_SCAL (object);

  switch (prop_id)
    {
    case PROP_X:
      g_value_set_object (value, self->x);
      break;
    case PROP_ALPHA:
      g_value_set_double (value, self->alpha);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_scal_dispose (GObject *object)
{
  AccelScal *self = ACCEL_SCAL (object);

  g_clear_object (&self->x);

  G_OBJECT_CLASS (accel_scal_parent_class)->dispose (object);
}

static gboolean
accel_scal_validate (AccelOp *op, GError **error)
{
  AccelScal *self = ACCEL_SCAL (op);

  if (!accel_op_require_ ("scal", "x", self->x, error))
    return FALSE;
  if (!accel_op_check_dtype (op, "x", scal_dtypes, G_N_ELEMENTS (scal_dtypes), error)
      || !accel_op_check_contiguous (op, "x", error))
    return FALSE;
  return TRUE;
}

static void
accel_scal_class_init (AccelScalClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_scal_set_property;
  object_class->get_property = accel_scal_get_property;
  object_class->dispose = accel_scal_dispose;
  op_class->validate = accel_scal_validate;

  accel_op_class_set_metadata (op_class, "scal", "x = alpha x");
  accel_op_class_install_buffer (op_class, PROP_X, "x",
                                 "Vector x (contiguous), scaled in place",
                                 ACCEL_ACCESS_READ_WRITE, TRUE);

  /**
   * AccelScal:alpha:
   *
   * The scale (real, also for complex types).
   */
  properties[PROP_ALPHA] =
    g_param_spec_double ("alpha", NULL, "Scale",
                         -G_MAXDOUBLE, G_MAXDOUBLE, 1.0, ACCEL_OP_PARAM_FLAGS);
  g_object_class_install_property (object_class, PROP_ALPHA, properties[PROP_ALPHA]);
}

static void
accel_scal_init (AccelScal *self)
{
  self->alpha = 1.0;
}

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
  g_return_val_if_fail (x == NULL || ACCEL_IS_BUFFER (x), NULL);

  return g_object_new (ACCEL_TYPE_SCAL, "alpha", alpha, "x", x, NULL);
}
