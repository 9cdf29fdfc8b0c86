/* accel-op-impl-private.h: what the op types of the portable set share in
 * their property plumbing and validation. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <math.h>
#include <string.h>
#include "accel-private.h"

G_BEGIN_DECLS

/* Flags of every non-buffer property of the portable ops. */
#define ACCEL_OP_PARAM_FLAGS (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY)

/* Notifies only where GObject does not already (explicit-notify pspecs). */
static inline void
accel_op_notify_ (GObject *object, GParamSpec *pspec)
{
  if (pspec->flags & G_PARAM_EXPLICIT_NOTIFY)
    g_object_notify_by_pspec (object, pspec);
}

static inline void
accel_op_set_buffer_ (GObject *object, AccelBuffer **field, const GValue *value, GParamSpec *pspec)
{
  if (g_set_object (field, g_value_get_object (value)))
    accel_op_notify_ (object, pspec);
}

static inline void
accel_op_set_double_ (GObject *object, double *field, const GValue *value, GParamSpec *pspec)
{
  double v = g_value_get_double (value);
  /* Compare bit patterns so that NaN and -0.0 still notify. */
  if (memcmp (field, &v, sizeof v) != 0)
    {
      *field = v;
      accel_op_notify_ (object, pspec);
    }
}

static inline void
accel_op_set_boolean_ (GObject *object, gboolean *field, const GValue *value, GParamSpec *pspec)
{
  gboolean v = g_value_get_boolean (value);
  if (*field != v)
    {
      *field = v;
      accel_op_notify_ (object, pspec);
    }
}

static inline void
accel_op_set_int_ (GObject *object, int *field, const GValue *value, GParamSpec *pspec)
{
  int v = g_value_get_int (value);
  if (*field != v)
    {
      *field = v;
      accel_op_notify_ (object, pspec);
    }
}

static inline void
accel_op_set_uint_ (GObject *object, guint *field, const GValue *value, GParamSpec *pspec)
{
  guint v = g_value_get_uint (value);
  if (*field != v)
    {
      *field = v;
      accel_op_notify_ (object, pspec);
    }
}

static inline void
accel_op_set_uint64_ (GObject *object, guint64 *field, const GValue *value, GParamSpec *pspec)
{
  guint64 v = g_value_get_uint64 (value);
  if (*field != v)
    {
      *field = v;
      accel_op_notify_ (object, pspec);
    }
}

static inline void
accel_op_set_enum_ (GObject *object, int *field, const GValue *value, GParamSpec *pspec)
{
  int v = g_value_get_enum (value);
  if (*field != v)
    {
      *field = v;
      accel_op_notify_ (object, pspec);
    }
}

/* Base AccelOp checks the required buffers before validate runs; this keeps
 * a validate that is called on its own from crashing. */
static inline gboolean
accel_op_require_ (const char *op, const char *property, AccelBuffer *buffer, GError **error)
{
  if (buffer != NULL)
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "%s: buffer property “%s” is not set", op, property);
  return FALSE;
}

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
static inline AccelBuffer *
accel_op_root_buffer_ (AccelBuffer *buffer)
{
  AccelBuffer *base = accel_buffer_get_base (buffer);
  return base != NULL ? base : buffer;
}

static inline gboolean
accel_op_buffers_overlap_partly_ (AccelBuffer *a, AccelBuffer *b)
{
  if (accel_op_root_buffer_ (a) != accel_op_root_buffer_ (b))
    return FALSE;
  gsize a0 = accel_buffer_get_offset (a), a1 = a0 + accel_buffer_get_size (a);
  gsize b0 = accel_buffer_get_offset (b), b1 = b0 + accel_buffer_get_size (b);
  if (a0 == b0 && a1 == b1)
    return FALSE;
  return a0 < b1 && b0 < a1;
}

static inline gboolean
accel_op_buffers_alias_ (AccelBuffer *a, AccelBuffer *b)
{
  return _accel_buffers_alias (a, b);
}

G_END_DECLS
