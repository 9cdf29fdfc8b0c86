/* accel-op-impl-private.h: what the op types of the portable set share in
 * their property plumbing and validation. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <math.h>
#include <string.h>
#include "accel-private.h"
#include "accel-op-tables-private.h"

G_BEGIN_DECLS

/* The dims of a buffer as "[2, 3]" for error messages. */
static inline char *
accel_op_describe_shape_ (AccelBuffer *buffer)
{
  return accel_shape_to_string (accel_buffer_get_shape (buffer));
}

static inline gboolean
accel_op_shape_error_ (GError **error, const char *op, const char *property, AccelBuffer *buffer, const char *expected)
{
  g_autofree char *shape = accel_op_describe_shape_ (buffer);
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
               "%s: property “%s” has shape %s, expected %s", op, property, shape, expected);
  return FALSE;
}

/* Same number of elements (layouts may differ). */
static inline gboolean
accel_op_check_same_count_ (const char *op,
                            const char *name_a, AccelBuffer *a,
                            const char *name_b, AccelBuffer *b,
                            GError **error)
{
  if (accel_buffer_get_n_elements (a) == accel_buffer_get_n_elements (b))
    return TRUE;
  g_autofree char *sa = accel_op_describe_shape_ (a);
  g_autofree char *sb = accel_op_describe_shape_ (b);
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
               "%s: “%s” %s has %" G_GINT64_FORMAT " elements but “%s” %s has %" G_GINT64_FORMAT,
               op, name_a, sa, accel_buffer_get_n_elements (a), name_b, sb, accel_buffer_get_n_elements (b));
  return FALSE;
}

/* Same dims (each dimension equal). */
static inline gboolean
accel_op_check_same_dims_ (const char *op,
                           const char *name_a, AccelBuffer *a,
                           const char *name_b, AccelBuffer *b,
                           GError **error)
{
  if (accel_shape_same_dims (accel_buffer_get_shape (a), accel_buffer_get_shape (b)))
    return TRUE;
  g_autofree char *sa = accel_op_describe_shape_ (a);
  g_autofree char *sb = accel_op_describe_shape_ (b);
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
               "%s: “%s” has shape %s but “%s” has shape %s", op, name_a, sa, name_b, sb);
  return FALSE;
}

/* Whether two buffers' storage overlaps without being the very same range. */
static inline gboolean
accel_op_buffers_overlap_partly_ (AccelBuffer *a, AccelBuffer *b)
{
  return _accel_buffers_alias (a, b)
         && (accel_buffer_get_offset (a) != accel_buffer_get_offset (b)
             || accel_buffer_get_size (a) != accel_buffer_get_size (b));
}

static inline gboolean
accel_op_buffers_alias_ (AccelBuffer *a, AccelBuffer *b)
{
  return _accel_buffers_alias (a, b);
}

G_END_DECLS
