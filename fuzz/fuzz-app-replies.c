/* fuzz-app-replies.c: the application's reader of what its device host
 * sends (core/accel-channel.c on the application's side, and
 * core/accel-remote-replies.c), fed by a hostile host.
 *
 * The input plays the host: records, well framed or not, in the reply
 * ring (see accel_fuzz_feed_channel()). Each message the application's
 * side reads is taken as every reader that could meet it takes it: the
 * first as the handshake's HELLO, and then each REPLY as the answer to an
 * allocation and to a memory query, each FAILED or POISONED as an error;
 * the HELLO's description is read as AccelRemoteDevice and the CUDA
 * backend read it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "fuzz-env.h"
#include "accel-remote-private.h"

typedef struct {
  guint n;
} Session;

static void
read_info (GVariant *info)
{
  const char *name = NULL;
  guint64 total = 0, free_bytes = 0;
  gint32 major = 0, minor = 0, sm = 0;
  guint32 lanes = 0;

  g_variant_lookup (info, "name", "&s", &name);
  g_variant_lookup (info, "device-name", "&s", &name);
  g_variant_lookup (info, "memory-total", "t", &total);
  g_variant_lookup (info, "memory-free", "t", &free_bytes);
  g_variant_lookup (info, "lanes", "u", &lanes);
  g_variant_lookup (info, "compute-capability-major", "i", &major);
  g_variant_lookup (info, "compute-capability-minor", "i", &minor);
  g_variant_lookup (info, "sm-count", "i", &sm);
  g_autofree char *text = g_variant_print (info, FALSE);
  g_assert (text != NULL);
}

static void
check_error (GError *error)
{
  g_assert (error != NULL && error->message != NULL);
  g_error_free (error);
}

static void
handle (GVariant *message, gpointer data)
{
  Session *session = data;
  guint32 kind;
  guint64 id;
  g_autoptr(GVariant) body = NULL;
  GError *error = NULL;

  _accel_channel_parse (message, &kind, &id, &body);
  g_assert (body != NULL);
  if (session->n++ == 0)
    {
      g_autoptr(GVariant) info = NULL;
      if (_accel_remote_read_hello (kind, body, &info, &error))
        read_info (info);
      else
        check_error (error);
      return;
    }

  switch (kind)
    {
    case ACCEL_CHANNEL_REPLY:
      {
        guint64 alloc, total, free_bytes;
        if (!_accel_remote_read_alloc (body, "remote-cpu:0", &alloc, &error))
          check_error (g_steal_pointer (&error));
        else
          g_assert (alloc != 0);
        if (!_accel_remote_read_memory (body, &total, &free_bytes, &error))
          check_error (g_steal_pointer (&error));
      }
      break;
    case ACCEL_CHANNEL_FAILED:
    case ACCEL_CHANNEL_POISONED:
      check_error (_accel_channel_error_from_variant (body));
      break;
    default:
      break;
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr(GError) error = NULL;
  AccelChannel *app = _accel_channel_new (1 << 16, 4096, &error);
  g_assert_no_error (error);

  Session session = { 0 };
  AccelFuzzInput in = { data, size, 0 };
  accel_fuzz_feed_channel (app, &in, handle, &session);
  _accel_channel_free (app);
  return 0;
}
