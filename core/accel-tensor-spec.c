/* accel-tensor-spec.c: the name, element type and per-item shape of one
 * input or output of a model.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"

#include <string.h>

struct _AccelTensorSpec {
  gint ref_count;
  char *name;
  AccelDType dtype;
  guint n_item_dims;
  gint64 item_dims[ACCEL_SHAPE_MAX_RANK];
};

/**
 * AccelTensorSpec:
 *
 * Describes one input or output of an #AccelModel: its name, element type
 * and the shape of one item. A batch of `n` items has the shape
 * `[n, item dims…]`: axis 0 is the batch axis. Immutable and
 * reference-counted, so it may be shared between threads.
 */
G_DEFINE_BOXED_TYPE (AccelTensorSpec, accel_tensor_spec, accel_tensor_spec_ref, accel_tensor_spec_unref)

/**
 * accel_tensor_spec_new:
 * @name: the input or output name
 * @dtype: its element type
 * @item_dims: (array length=n_item_dims) (nullable): the shape of one item
 *   (without the batch axis); each dimension at least 1
 * @n_item_dims: how many; at most %ACCEL_SHAPE_MAX_RANK - 1 (0 for one
 *   scalar per item)
 *
 * Makes a spec of an input or output whose items have the shape @item_dims.
 *
 * Returns: (transfer full): a new spec
 */
AccelTensorSpec *
accel_tensor_spec_new (const char *name, AccelDType dtype, const gint64 *item_dims, guint n_item_dims)
{
  g_return_val_if_fail (name != NULL && *name != '\0', NULL);
  g_return_val_if_fail ((guint) dtype < ACCEL_DTYPE_N_TYPES, NULL);
  g_return_val_if_fail (n_item_dims < ACCEL_SHAPE_MAX_RANK, NULL);
  g_return_val_if_fail (n_item_dims == 0 || item_dims != NULL, NULL);
  for (guint i = 0; i < n_item_dims; i++)
    g_return_val_if_fail (item_dims[i] >= 1, NULL);

  AccelTensorSpec *self = g_new0 (AccelTensorSpec, 1);
  self->ref_count = 1;
  self->name = g_strdup (name);
  self->dtype = dtype;
  self->n_item_dims = n_item_dims;
  if (n_item_dims)
    memcpy (self->item_dims, item_dims, n_item_dims * sizeof (gint64));
  return self;
}

/**
 * accel_tensor_spec_ref:
 * @self: a spec
 *
 * Takes a reference.
 *
 * Returns: (transfer full): @self
 */
AccelTensorSpec *
accel_tensor_spec_ref (AccelTensorSpec *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_atomic_int_inc (&self->ref_count);
  return self;
}

/**
 * accel_tensor_spec_unref:
 * @self: (transfer full): a spec
 *
 * Drops a reference.
 */
void
accel_tensor_spec_unref (AccelTensorSpec *self)
{
  g_return_if_fail (self != NULL);
  if (!g_atomic_int_dec_and_test (&self->ref_count))
    return;
  g_free (self->name);
  g_free (self);
}

/**
 * accel_tensor_spec_get_name:
 * @self: a spec
 *
 * Gives the name of the input or output.
 *
 * Returns: the name
 */
const char *
accel_tensor_spec_get_name (const AccelTensorSpec *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->name;
}

/**
 * accel_tensor_spec_get_dtype:
 * @self: a spec
 *
 * Gives the element type.
 *
 * Returns: the element type
 */
AccelDType
accel_tensor_spec_get_dtype (const AccelTensorSpec *self)
{
  g_return_val_if_fail (self != NULL, ACCEL_DTYPE_F32);
  return self->dtype;
}

/**
 * accel_tensor_spec_get_item_dims:
 * @self: a spec
 * @n_item_dims: (out): how many dimensions one item has
 *
 * Gives the shape of one item, without the batch axis.
 *
 * Returns: (array length=n_item_dims) (transfer none): the shape of one item
 */
const gint64 *
accel_tensor_spec_get_item_dims (const AccelTensorSpec *self, guint *n_item_dims)
{
  g_return_val_if_fail (self != NULL, NULL);
  if (n_item_dims)
    *n_item_dims = self->n_item_dims;
  return self->item_dims;
}

/**
 * accel_tensor_spec_get_item_elements:
 * @self: a spec
 *
 * Counts the elements of one item.
 *
 * Returns: the number of elements of one item
 */
gint64
accel_tensor_spec_get_item_elements (const AccelTensorSpec *self)
{
  g_return_val_if_fail (self != NULL, 0);
  gint64 n = 1;
  for (guint i = 0; i < self->n_item_dims; i++)
    n *= self->item_dims[i];
  return n;
}

/**
 * accel_tensor_spec_get_item_size:
 * @self: a spec
 *
 * Gives the bytes of one item.
 *
 * Returns: the size of one item in bytes
 */
gsize
accel_tensor_spec_get_item_size (const AccelTensorSpec *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return (gsize) accel_tensor_spec_get_item_elements (self) * accel_dtype_get_size (self->dtype);
}

/**
 * accel_tensor_spec_get_batch_shape:
 * @self: a spec
 * @batch: the number of items, at least 1
 *
 * Makes the shape of a batch of @batch items.
 *
 * Returns: (transfer full): the contiguous shape `[batch, item dims…]`
 */
AccelShape *
accel_tensor_spec_get_batch_shape (const AccelTensorSpec *self, gint64 batch)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (batch >= 1, NULL);
  gint64 dims[ACCEL_SHAPE_MAX_RANK];
  dims[0] = batch;
  for (guint i = 0; i < self->n_item_dims; i++)
    dims[i + 1] = self->item_dims[i];
  return accel_shape_new (dims, self->n_item_dims + 1);
}

/**
 * accel_tensor_spec_equal:
 * @a: a spec
 * @b: another
 *
 * Compares two specs.
 *
 * Returns: whether both have the same name, element type and item shape
 */
gboolean
accel_tensor_spec_equal (const AccelTensorSpec *a, const AccelTensorSpec *b)
{
  g_return_val_if_fail (a != NULL && b != NULL, FALSE);
  return g_str_equal (a->name, b->name) && a->dtype == b->dtype && a->n_item_dims == b->n_item_dims
         && memcmp (a->item_dims, b->item_dims, a->n_item_dims * sizeof (gint64)) == 0;
}

/**
 * accel_tensor_spec_to_string:
 * @self: a spec
 *
 * Describes the spec for messages.
 *
 * Returns: (transfer full): `name: dtype [n, d1, …]`, for messages
 */
char *
accel_tensor_spec_to_string (const AccelTensorSpec *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "%s: %s [n", self->name, accel_dtype_get_name (self->dtype));
  for (guint i = 0; i < self->n_item_dims; i++)
    g_string_append_printf (s, ", %" G_GINT64_FORMAT, self->item_dims[i]);
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}
