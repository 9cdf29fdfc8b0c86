/* fuzz-host-requests.c: the device host's reader of requests
 * (core/accel-channel.c on the host's side, and
 * tools/accel-host-requests.c), fed by a hostile application.
 *
 * The input plays the application: records, well framed or not, in the
 * request ring (see accel_fuzz_feed_channel()). The host side of a fresh
 * channel reads them and serves each with cpu:0, as accel-device-host
 * does, except HANG, which the program acts on by itself. Answers are
 * checked (each one a REPLY or a FAILED with an AccelError naming what was
 * wrong) and dropped.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <unistd.h>

#include "fuzz-env.h"
#include "accel-host-requests.h"

#define ARENA_SIZE (1 << 20)

/* A success with no body is what the host puts in a reply slot. */
static void
send_answer (AccelChannelKind kind, guint64 id, GVariant *body, gpointer data)
{
  g_autoptr(GVariant) owned = body ? g_variant_ref_sink (body) : NULL;
  g_assert (kind == ACCEL_CHANNEL_REPLY || kind == ACCEL_CHANNEL_FAILED);
  g_assert (owned != NULL || kind == ACCEL_CHANNEL_REPLY);
  if (kind == ACCEL_CHANNEL_FAILED)
    {
      g_assert (g_variant_is_of_type (owned, ACCEL_CHANNEL_ERROR_TYPE));
      g_autoptr(GError) error = _accel_channel_error_from_variant (owned);
      g_assert (error->domain == ACCEL_ERROR);
    }
}

static void
context_lost (guint64 id, const GError *error, gpointer data)
{
  g_error ("cpu:0 lost its context serving request %" G_GUINT64_FORMAT ": %s", id, error->message);
}

/* See ACCEL_FUZZ_MAX_ELEMENTS. */
static gboolean
too_much_work (guint32 kind, GVariant *body)
{
  if (kind != ACCEL_CHANNEL_OP || !g_variant_is_of_type (body, ACCEL_CHANNEL_OP_BODY_TYPE))
    return FALSE;
  g_autoptr(GVariant) table = g_variant_get_child_value (body, 1);
  return accel_fuzz_table_too_big (table, 4);
}

static void
handle (GVariant *message, gpointer data)
{
  AccelHostRequests *requests = data;
  guint32 kind;
  guint64 id;
  g_autoptr(GVariant) body = NULL;

  _accel_channel_parse (message, &kind, &id, &body);
  g_assert (body != NULL);
  if (kind != ACCEL_CHANNEL_HANG && !too_much_work (kind, body))
    _accel_host_requests_handle (requests, kind, id, body);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autoptr(GError) error = NULL;
  AccelChannel *app = _accel_channel_new (1 << 16, ARENA_SIZE, &error);
  g_assert_no_error (error);
  AccelChannel *host = _accel_channel_attach (dup (_accel_channel_get_fd (app)), &error);
  g_assert_no_error (error);

  gsize arena_size;
  guint8 *arena = _accel_channel_get_arena (host, &arena_size);
  AccelHostRequests *requests = _accel_host_requests_new (accel_fuzz_get_cpu (), arena, arena_size,
                                                          send_answer, context_lost, NULL);
  AccelFuzzInput in = { data, size, 0 };
  accel_fuzz_feed_channel (host, &in, handle, requests);
  _accel_host_requests_free (requests);

  g_assert_cmpint (accel_device_get_state (accel_fuzz_get_cpu ()), ==, ACCEL_DEVICE_STATE_READY);
  _accel_channel_free (host);
  _accel_channel_free (app);
  return 0;
}
