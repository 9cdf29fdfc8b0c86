/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"
#include "accel-enum-types.h"

static void accel_module_load_finalize (GObject *object);

static gboolean
accel_module_load_validate (AccelOp *op, GError **error)
{
  AccelModuleLoad *self = ACCEL_MODULE_LOAD (op);

  if (self->unload)
    return TRUE;
  gsize len = self->chunk ? g_bytes_get_size (self->chunk) : 0;
  if (len == 0 || len > ACCEL_MODULE_LOAD_CHUNK)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "module-load: the chunk has %" G_GSIZE_FORMAT " bytes; it must have 1 to %d",
                   len, ACCEL_MODULE_LOAD_CHUNK);
      return FALSE;
    }
  if (self->image_offset > self->image_size || len > self->image_size - self->image_offset)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "module-load: %" G_GSIZE_FORMAT " bytes at “image-offset” %" G_GUINT64_FORMAT
                   " go past “image-size” %" G_GUINT64_FORMAT, len, self->image_offset, self->image_size);
      return FALSE;
    }
  return TRUE;
}

static GVariant *
accel_module_load_serialize_extra (AccelOp *op)
{
  AccelModuleLoad *self = ACCEL_MODULE_LOAD (op);
  return self->chunk ? g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, self->chunk, TRUE) : NULL;
}

static gboolean
accel_module_load_deserialize_extra (AccelOp *op, GVariant *extra, AccelBufferResolveFunc resolve,
                                     gpointer user_data, GError **error)
{
  AccelModuleLoad *self = ACCEL_MODULE_LOAD (op);

  if (!g_variant_is_of_type (extra, G_VARIANT_TYPE_BYTESTRING))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "module-load: the serialised chunk has type %s, not ay", g_variant_get_type_string (extra));
      return FALSE;
    }
  g_clear_pointer (&self->chunk, g_bytes_unref);
  self->chunk = g_variant_get_data_as_bytes (extra);
  return TRUE;
}

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelModuleLoad, accel_module_load, "module-load",
                                "Loads a chunk of a run-time module's image into the device (AccelModule submits it)",
                                _accel_module_load_params, accel_module_load_validate,
                                {
                                  G_OBJECT_CLASS (klass)->finalize = accel_module_load_finalize;
                                  op_class->serialize_extra = accel_module_load_serialize_extra;
                                  op_class->deserialize_extra = accel_module_load_deserialize_extra;
                                })

static void
accel_module_load_finalize (GObject *object)
{
  g_clear_pointer (&ACCEL_MODULE_LOAD (object)->chunk, g_bytes_unref);
  G_OBJECT_CLASS (accel_module_load_parent_class)->finalize (object);
}

/**
 * accel_module_load_new:
 * @module: the module's handle
 * @image_kind: what the image holds
 * @image_size: the whole image's size in bytes
 * @image_offset: where @chunk starts in the image
 * @chunk: (nullable) (transfer none): at most %ACCEL_MODULE_LOAD_CHUNK
 *   bytes of the image
 *
 * A new `module-load` op.
 *
 * Returns: (transfer full): a new `module-load` op
 */
AccelOp *
accel_module_load_new (guint64 module,
                       AccelModuleImageKind image_kind,
                       guint64 image_size,
                       guint64 image_offset,
                       GBytes *chunk)
{
  AccelModuleLoad *self = g_object_new (ACCEL_TYPE_MODULE_LOAD, "module", module, "image-kind", image_kind,
                                        "image-size", image_size, "image-offset", image_offset, NULL);
  self->chunk = chunk ? g_bytes_ref (chunk) : NULL;
  return ACCEL_OP (self);
}
