/* accel-remote-replies.c: what the application makes of the bodies its
 * device host sends (read with _accel_channel_parse()). The host is not
 * trusted: each body's type is checked before anything is read from it.
 * The connection and the fuzzer of this reader (fuzz/) come through here.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-remote-private.h"
#include "accel-channel.h"

/* The first message of a host: HELLO with the hosted device's description
 * (a{sv}), or HELLO with an error, or something else (refused). */
gboolean
_accel_remote_read_hello (guint32 kind, GVariant *body, GVariant **info, GError **error)
{
  if (kind == ACCEL_CHANNEL_HELLO && g_variant_is_of_type (body, G_VARIANT_TYPE_VARDICT))
    {
      *info = g_variant_ref (body);
      return TRUE;
    }
  g_propagate_error (error, kind == ACCEL_CHANNEL_HELLO
                              ? _accel_channel_error_from_variant (body)
                              : g_error_new (ACCEL_ERROR, ACCEL_ERROR_FAILED,
                                             "it sent a message of kind %u first", kind));
  return FALSE;
}

/* The answer to ALLOC: a nonzero allocation id that fits a pointer. */
gboolean
_accel_remote_read_alloc (GVariant *reply, const char *device_name, guint64 *alloc, GError **error)
{
  guint64 id = g_variant_is_of_type (reply, G_VARIANT_TYPE_UINT64) ? g_variant_get_uint64 (reply) : 0;
  if (id == 0 || id > G_MAXSIZE)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                   "%s: the device host answered an allocation with “%s”%s",
                   device_name, g_variant_get_type_string (reply), id ? " out of range" : "");
      return FALSE;
    }
  *alloc = id;
  return TRUE;
}

/* The answer to MEMORY: (tt) total and free bytes. */
gboolean
_accel_remote_read_memory (GVariant *reply, guint64 *total, guint64 *free_bytes, GError **error)
{
  if (!g_variant_is_of_type (reply, G_VARIANT_TYPE ("(tt)")))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                   "malformed answer to a memory query (of type %s)", g_variant_get_type_string (reply));
      return FALSE;
    }
  g_variant_get (reply, "(tt)", total, free_bytes);
  return TRUE;
}
