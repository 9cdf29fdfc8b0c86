/* accel-rendezvous-wire.c: messages of the rendezvous on a socket.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "accel-rendezvous-private.h"

const char *
_accel_wire_payload_type (AccelWireKind kind)
{
  switch (kind)
    {
    case ACCEL_WIRE_HELLO: return "(suu)";
    case ACCEL_WIRE_WELCOME: return "(su)";
    case ACCEL_WIRE_PING: return "()";
    case ACCEL_WIRE_PONG: return "()";
    case ACCEL_WIRE_EXCHANGE: return "(sauay)";
    case ACCEL_WIRE_RESULT: return "aay";
    case ACCEL_WIRE_ABORT: return "(ss)";
    case ACCEL_WIRE_NOTICE: return "(usus)";
    case ACCEL_WIRE_ERROR: return "(us)";
    default: return NULL;
    }
}

/* Waits until @condition holds or @deadline_us passes. */
static gboolean
wait_for (GSocket *socket, GIOCondition condition, gint64 deadline_us, GCancellable *cancellable, GError **error)
{
  gint64 timeout = -1;
  if (deadline_us > 0)
    {
      timeout = deadline_us - g_get_monotonic_time ();
      if (timeout <= 0)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "the peer stayed silent too long");
          return FALSE;
        }
    }
  return g_socket_condition_timed_wait (socket, condition, timeout, cancellable, error);
}

static gboolean
read_full (GSocket *socket, guint8 *buffer, gsize n, gint64 deadline_us, GCancellable *cancellable,
           gsize *got, GError **error)
{
  *got = 0;
  while (*got < n)
    {
      if (!wait_for (socket, G_IO_IN, deadline_us, cancellable, error))
        return FALSE;
      GError *local = NULL;
      gssize r = g_socket_receive (socket, (char *) buffer + *got, n - *got, cancellable, &local);
      if (r < 0)
        {
          if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
            {
              g_clear_error (&local);
              continue;
            }
          g_propagate_error (error, local);
          return FALSE;
        }
      if (r == 0)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED, "the peer closed the connection");
          return FALSE;
        }
      *got += (gsize) r;
    }
  return TRUE;
}

gboolean
_accel_wire_read (GSocket *socket,
                  gsize max_message,
                  gint64 deadline_us,
                  GCancellable *cancellable,
                  AccelWireKind *kind,
                  guint64 *request,
                  GVariant **payload,
                  GError **error)
{
  guint8 header[4];
  gsize got = 0;
  GError *local = NULL;

  if (!read_full (socket, header, 4, deadline_us, cancellable, &got, &local))
    {
      if (got > 0 && g_error_matches (local, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
        {
          g_clear_error (&local);
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "a message stopped half-way");
          return FALSE;
        }
      g_propagate_error (error, local);
      return FALSE;
    }
  guint32 len = ((guint32) header[0] << 24) | ((guint32) header[1] << 16) | ((guint32) header[2] << 8) | header[3];
  if (len == 0 || len > max_message)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                   "a message of %u bytes (the limit is %" G_GSIZE_FORMAT ")", len, max_message);
      return FALSE;
    }
  /* The rest of a message must follow soon, whatever the idle allowance. */
  guint8 *body = g_malloc (len);
  if (!read_full (socket, body, len, deadline_us ? MAX (deadline_us, g_get_monotonic_time () + 2 * G_USEC_PER_SEC)
                                                 : 0,
                  cancellable, &got, error))
    {
      g_free (body);
      if (error && *error && g_error_matches (*error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
        {
          g_clear_error (error);
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "a message stopped half-way");
        }
      return FALSE;
    }
  g_autoptr(GBytes) bytes = g_bytes_new_take (body, len);
  g_autoptr(GVariant) v = g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE ("(utv)"), bytes, FALSE));
  if (!g_variant_is_normal_form (v))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "a message is not a well-formed (utv)");
      return FALSE;
    }
  guint32 k;
  g_autoptr(GVariant) inner = NULL;
  g_variant_get (v, "(utv)", &k, request, &inner);
  const char *type = _accel_wire_payload_type ((AccelWireKind) k);
  if (type == NULL || !g_variant_is_of_type (inner, G_VARIANT_TYPE (type)))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "a message of kind %u with a payload of type %s", k, g_variant_get_type_string (inner));
      return FALSE;
    }
  *kind = (AccelWireKind) k;
  *payload = g_steal_pointer (&inner);
  return TRUE;
}

gboolean
_accel_wire_write (GSocket *socket,
                   AccelWireKind kind,
                   guint64 request,
                   GVariant *payload,
                   gint64 deadline_us,
                   GError **error)
{
  g_autoptr(GVariant) v = g_variant_ref_sink (g_variant_new ("(utv)", (guint32) kind, request, payload));
  gsize len = g_variant_get_size (v);
  g_autofree guint8 *buffer = g_malloc (len + 4);
  buffer[0] = (guint8) (len >> 24), buffer[1] = (guint8) (len >> 16);
  buffer[2] = (guint8) (len >> 8), buffer[3] = (guint8) len;
  /* Not g_variant_store(): it wants an aligned destination. */
  memcpy (buffer + 4, g_variant_get_data (v), len);

  gsize sent = 0;
  while (sent < len + 4)
    {
      if (!wait_for (socket, G_IO_OUT, deadline_us, NULL, error))
        return FALSE;
      GError *local = NULL;
      gssize w = g_socket_send_with_blocking (socket, (const char *) buffer + sent, len + 4 - sent, FALSE, NULL,
                                              &local);
      if (w < 0)
        {
          if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
            {
              g_clear_error (&local);
              continue;
            }
          g_propagate_error (error, local);
          return FALSE;
        }
      sent += (gsize) w;
    }
  return TRUE;
}

gboolean
_accel_wire_token_equal (const char *a, const char *b)
{
  gsize la = strlen (a), lb = strlen (b);
  guint diff = la != lb;
  for (gsize i = 0; i < la; i++)
    diff |= (guint8) a[i] ^ (i < lb ? (guint8) b[i] : 0);
  return diff == 0;
}

gboolean
_accel_wire_env_uint (const char *name, guint64 max, guint64 fallback, guint64 *value, GError **error)
{
  const char *text = g_getenv (name);
  if (text == NULL || *text == '\0')
    {
      *value = fallback;
      return TRUE;
    }
  char *end = NULL;
  guint64 v = g_ascii_strtoull (text, &end, 10);
  guint64 unit = 1;
  if (end && (*end == 'K' || *end == 'k'))
    unit = 1024, end++;
  else if (end && (*end == 'M' || *end == 'm'))
    unit = 1024 * 1024, end++;
  else if (end && (*end == 'G' || *end == 'g'))
    unit = 1024 * 1024 * 1024, end++;
  if (end == text || *end != '\0' || !g_ascii_isdigit (text[0]) || v > max / unit)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s=“%s” is not a number from 0 to %" G_GUINT64_FORMAT, name, text, max);
      return FALSE;
    }
  *value = v * unit;
  return TRUE;
}
