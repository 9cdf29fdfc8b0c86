/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"

/**
 * AccelCopy:
 * @src: the source
 * @dst: the destination
 *
 * Copies @src into @dst element by element in row-major order. Both have
 * the same dtype and element count; either may be strided, and their shapes
 * may differ (a reshape).
 *
 * Op name: `copy`.
 */

G_DEFINE_FINAL_TYPE (AccelCopy, accel_copy, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_SRC,
  PROP_DST,
  N_PROPS
};

static void
accel_copy_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelCopy *self = ACCEL_COPY (object);

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
accel_copy_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelCopy *self = ACCEL_COPY (object);

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
accel_copy_dispose (GObject *object)
{
  AccelCopy *self = ACCEL_COPY (object);

  g_clear_object (&self->src);
  g_clear_object (&self->dst);

  G_OBJECT_CLASS (accel_copy_parent_class)->dispose (object);
}

static gboolean
accel_copy_validate (AccelOp *op, GError **error)
{
  AccelCopy *self = ACCEL_COPY (op);

  if (!accel_op_require_ ("copy", "src", self->src, error)
      || !accel_op_require_ ("copy", "dst", self->dst, error))
    return FALSE;
  if (!accel_op_check_same_dtype (op, "src", "dst", error))
    return FALSE;
  if (!accel_op_check_same_count_ ("copy", "src", self->src, "dst", self->dst, error))
    return FALSE;
  if (accel_op_buffers_overlap_partly_ (self->src, self->dst))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "copy: “src” and “dst” overlap partly");
      return FALSE;
    }
  return TRUE;
}

static void
accel_copy_class_init (AccelCopyClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_copy_set_property;
  object_class->get_property = accel_copy_get_property;
  object_class->dispose = accel_copy_dispose;
  op_class->validate = accel_copy_validate;

  accel_op_class_set_metadata (op_class, "copy",
                               "Copy src into dst (same dtype and element count; strided layouts allowed)");
  accel_op_class_install_buffer (op_class, PROP_SRC, "src",
                                 "Source buffer", ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_DST, "dst",
                                 "Destination buffer, same dtype and element count as src",
                                 ACCEL_ACCESS_WRITE, TRUE);
}

static void
accel_copy_init (AccelCopy *self)
{
}

/**
 * accel_copy_new:
 * @src: (transfer none): the source
 * @dst: (transfer none): the destination
 *
 * Makes a `copy` op.
 *
 * Returns: (transfer full): a new #AccelCopy
 */
AccelOp *
accel_copy_new (AccelBuffer *src, AccelBuffer *dst)
{
  g_return_val_if_fail (src == NULL || ACCEL_IS_BUFFER (src), NULL);
  g_return_val_if_fail (dst == NULL || ACCEL_IS_BUFFER (dst), NULL);

  return g_object_new (ACCEL_TYPE_COPY, "src", src, "dst", dst, NULL);
}
