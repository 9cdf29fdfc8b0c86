/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"

/**
 * AccelCast:
 * @src: the source
 * @dst: the destination
 *
 * Converts every element of @src to the dtype of @dst (any dtype to any
 * other; same element count, strided layouts allowed):
 *
 * - to f16, bf16, fp8 and narrower floats: round to nearest, ties to even,
 *   in a single rounding; fp8 E4M3 has no infinity and saturates at ±448,
 *   fp8 E5M2 keeps infinities;
 * - floats to integers: truncate toward zero and saturate; NaN gives 0;
 * - integers to integers: saturate;
 * - complex to real keeps the real part; real to complex sets the imaginary
 *   part to 0.
 *
 * Op name: `cast`.
 */

G_DEFINE_FINAL_TYPE (AccelCast, accel_cast, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_SRC,
  PROP_DST,
  N_PROPS
};

static void
accel_cast_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelCast *self = ACCEL_CAST (object);

  switch (prop_id)
    {
    case PROP_SRC:
      accel_op_set_buffer_ (object, &self->src, value, pspec);
      break;
    case PROP_DST:
      accel_op_set_buffer_ (object, &self->dst, value, pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_cast_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelCast *self = ACCEL_CAST (object);

  switch (prop_id)
    {
    case PROP_SRC:
      g_value_set_object (value, self->src);
      break;
    case PROP_DST:
      g_value_set_object (value, self->dst);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_cast_dispose (GObject *object)
{
  AccelCast *self = ACCEL_CAST (object);

  g_clear_object (&self->src);
  g_clear_object (&self->dst);

  G_OBJECT_CLASS (accel_cast_parent_class)->dispose (object);
}

static gboolean
accel_cast_validate (AccelOp *op, GError **error)
{
  AccelCast *self = ACCEL_CAST (op);

  if (!accel_op_require_ ("cast", "src", self->src, error)
      || !accel_op_require_ ("cast", "dst", self->dst, error))
    return FALSE;
  if (!accel_op_check_same_count_ ("cast", "src", self->src, "dst", self->dst, error))
    return FALSE;
  if (accel_op_buffers_alias_ (self->src, self->dst))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "cast: “src” and “dst” overlap; cast is not done in place");
      return FALSE;
    }
  return TRUE;
}

static void
accel_cast_class_init (AccelCastClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_cast_set_property;
  object_class->get_property = accel_cast_get_property;
  object_class->dispose = accel_cast_dispose;
  op_class->validate = accel_cast_validate;

  accel_op_class_set_metadata (op_class, "cast",
                               "Convert src to the dtype of dst (round to nearest even; saturating integers)");
  accel_op_class_install_buffer (op_class, PROP_SRC, "src",
                                 "Source buffer, any dtype", ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_DST, "dst",
                                 "Destination buffer, any dtype, same element count as src",
                                 ACCEL_ACCESS_WRITE, TRUE);
}

static void
accel_cast_init (AccelCast *self)
{
}

/**
 * accel_cast_new:
 * @src: (transfer none): the source
 * @dst: (transfer none): the destination, whose dtype is the target
 *
 * Makes a `cast` op.
 *
 * Returns: (transfer full): a new #AccelCast
 */
AccelOp *
accel_cast_new (AccelBuffer *src, AccelBuffer *dst)
{
  g_return_val_if_fail (src == NULL || ACCEL_IS_BUFFER (src), NULL);
  g_return_val_if_fail (dst == NULL || ACCEL_IS_BUFFER (dst), NULL);

  return g_object_new (ACCEL_TYPE_CAST, "src", src, "dst", dst, NULL);
}
