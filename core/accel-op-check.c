/* accel-op-check.c: the checks an op type's validate makes of its buffers
 * (dtype, rank, contiguity), each failing with an error that names the
 * property.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-op-private.h"

static AccelBuffer *
need_buffer (AccelOp *self, const char *property, GError **error)
{
  AccelBuffer *b = accel_op_peek_buffer (self, property);
  if (b == NULL)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 "Op “%s” needs a buffer in property “%s”", accel_op_get_type_name (self), property);
  return b;
}

/**
 * accel_op_check_dtype:
 * @self: an op
 * @property: a buffer property
 * @allowed: (array length=n_allowed): the dtypes accepted
 * @n_allowed: how many
 * @error: return location for a #GError
 *
 * Checks, for a validate implementation, the dtype of the buffer set on
 * @property.
 *
 * Returns: %TRUE if the buffer's dtype is one of @allowed; else
 *   %ACCEL_ERROR_DTYPE_UNSUPPORTED naming the property
 */
gboolean
accel_op_check_dtype (AccelOp *self, const char *property, const AccelDType *allowed, guint n_allowed, GError **error)
{
  AccelBuffer *b = need_buffer (self, property, error);
  if (b == NULL)
    return FALSE;
  AccelDType dt = accel_buffer_get_dtype (b);
  for (guint i = 0; i < n_allowed; i++)
    if (allowed[i] == dt)
      return TRUE;

  g_autoptr(GString) list = g_string_new (NULL);
  for (guint i = 0; i < n_allowed; i++)
    g_string_append_printf (list, "%s%s", i ? ", " : "", accel_dtype_get_name (allowed[i]));
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
               "Property “%s” of “%s” has dtype %s; it takes %s", property,
               accel_op_get_type_name (self), accel_dtype_get_name (dt), list->str);
  return FALSE;
}

/**
 * accel_op_check_same_dtype:
 * @self: an op
 * @property_a: a buffer property
 * @property_b: another
 * @error: return location for a #GError
 *
 * Checks, for a validate implementation, that two buffer properties hold
 * buffers of one dtype.
 *
 * Returns: %TRUE if both buffers have the same dtype; else
 *   %ACCEL_ERROR_DTYPE_UNSUPPORTED naming both properties
 */
gboolean
accel_op_check_same_dtype (AccelOp *self, const char *property_a, const char *property_b, GError **error)
{
  AccelBuffer *a = need_buffer (self, property_a, error);
  if (a == NULL)
    return FALSE;
  AccelBuffer *b = need_buffer (self, property_b, error);
  if (b == NULL)
    return FALSE;
  if (accel_buffer_get_dtype (a) != accel_buffer_get_dtype (b))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "Properties “%s” (%s) and “%s” (%s) of “%s” must have the same dtype",
                   property_a, accel_dtype_get_name (accel_buffer_get_dtype (a)),
                   property_b, accel_dtype_get_name (accel_buffer_get_dtype (b)),
                   accel_op_get_type_name (self));
      return FALSE;
    }
  return TRUE;
}

gboolean
_accel_op_check_dtypes (AccelOp *self,
                        const AccelDType *allowed,
                        guint n_allowed,
                        GError **error,
                        const char *first,
                        ...)
{
  if (!accel_op_check_dtype (self, first, allowed, n_allowed, error))
    return FALSE;
  va_list ap;
  va_start (ap, first);
  gboolean ok = TRUE;
  for (const char *other = va_arg (ap, const char *); ok && other != NULL; other = va_arg (ap, const char *))
    ok = accel_op_check_same_dtype (self, first, other, error);
  va_end (ap);
  return ok;
}

/**
 * accel_op_check_rank:
 * @self: an op
 * @property: a buffer property
 * @min_rank: smallest rank accepted
 * @max_rank: largest rank accepted
 * @error: return location for a #GError
 *
 * Checks, for a validate implementation, the rank of the buffer set on
 * @property.
 *
 * Returns: %TRUE if the buffer's rank is within the bounds; else
 *   %ACCEL_ERROR_SHAPE_MISMATCH naming the property and its shape
 */
gboolean
accel_op_check_rank (AccelOp *self, const char *property, guint min_rank, guint max_rank, GError **error)
{
  AccelBuffer *b = need_buffer (self, property, error);
  if (b == NULL)
    return FALSE;
  guint rank = accel_shape_get_rank (accel_buffer_get_shape (b));
  if (rank < min_rank || rank > max_rank)
    {
      g_autofree char *s = accel_shape_to_string (accel_buffer_get_shape (b));
      if (min_rank == max_rank)
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                     "Property “%s” of “%s” has shape %s; it must have rank %u",
                     property, accel_op_get_type_name (self), s, min_rank);
      else
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                     "Property “%s” of “%s” has shape %s; it must have rank %u to %u",
                     property, accel_op_get_type_name (self), s, min_rank, max_rank);
      return FALSE;
    }
  return TRUE;
}

/**
 * accel_op_check_contiguous:
 * @self: an op
 * @property: a buffer property
 * @error: return location for a #GError
 *
 * Checks, for a validate implementation, that the buffer set on @property
 * is contiguous row-major (an empty one always is).
 *
 * Returns: %TRUE if the buffer's shape is contiguous row-major; else
 *   %ACCEL_ERROR_INVALID_ARGUMENT naming the property and its shape
 */
gboolean
accel_op_check_contiguous (AccelOp *self, const char *property, GError **error)
{
  AccelBuffer *b = need_buffer (self, property, error);
  if (b == NULL)
    return FALSE;
  if (!accel_shape_is_contiguous (accel_buffer_get_shape (b)))
    {
      g_autofree char *s = accel_shape_to_string (accel_buffer_get_shape (b));
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "Property “%s” of “%s” must be contiguous; its shape is %s",
                   property, accel_op_get_type_name (self), s);
      return FALSE;
    }
  return TRUE;
}
