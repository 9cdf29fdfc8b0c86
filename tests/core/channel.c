/* Tests of the device-host channel's reader (core/accel-channel.c, built
 * into this program as into accel-device-host): messages of random bodies
 * round-trip; what a hostile peer writes (bodies of types no value can
 * have, records longer than what was published) is refused, never
 * trusted. Cases found by fuzzing (fuzz/) are here as unit tests too.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <unistd.h>
#include <accel.h>
#include "accel-channel.h"

typedef struct {
  AccelChannel *app;
  AccelChannel *host;
} Pair;

static void
pair_open (Pair *p)
{
  g_autoptr(GError) error = NULL;
  p->app = _accel_channel_new (1 << 16, 4096, &error);
  g_assert_no_error (error);
  p->host = _accel_channel_attach (dup (_accel_channel_get_fd (p->app)), &error);
  g_assert_no_error (error);
}

static void
pair_close (Pair *p)
{
  _accel_channel_free (p->host);
  _accel_channel_free (p->app);
}

static void
test_round_trip (void)
{
  Pair p;
  pair_open (&p);
  for (guint i = 0; i < 200; i++)
    {
      g_autoptr(GError) error = NULL;
      gsize n = g_test_rand_int_range (0, 300);
      g_autofree gint64 *values = g_new (gint64, n ? n : 1);
      for (gsize k = 0; k < n; k++)
        values[k] = (gint64) ((guint64) (guint32) g_test_rand_int () << 20 ^ (guint32) g_test_rand_int ());
      guint32 kind = g_test_rand_int_range (1, 100);
      guint64 id = (guint64) (guint32) g_test_rand_int () << 32 | (guint32) g_test_rand_int ();
      g_autoptr(GVariant) body = g_variant_ref_sink (
        g_variant_new ("(s@ax)", "body", g_variant_new_fixed_array (G_VARIANT_TYPE_INT64, values, n, sizeof (gint64))));
      gboolean to_host = i % 2 == 0;
      g_assert_true (_accel_channel_send (to_host ? p.app : p.host, kind, id, body, 0, &error));
      g_assert_no_error (error);
      g_autoptr(GVariant) msg = _accel_channel_receive (to_host ? p.host : p.app, &error);
      g_assert_no_error (error);
      g_assert_nonnull (msg);
      guint32 got_kind;
      guint64 got_id;
      g_autoptr(GVariant) got = NULL;
      _accel_channel_parse (msg, &got_kind, &got_id, &got);
      g_assert_cmpuint (got_kind, ==, kind);
      g_assert_cmpuint (got_id, ==, id);
      g_assert_true (g_variant_equal (got, body));
    }
  pair_close (&p);
}

/* A record as the sender frames one, with @type after the body's bytes. */
static GBytes *
record (guint32 kind, guint64 id, const void *body, gsize body_size, const char *type)
{
  GByteArray *a = g_byte_array_new ();
  guint32 zero = 0;
  g_byte_array_append (a, (guint8 *) &kind, 4);
  g_byte_array_append (a, (guint8 *) &zero, 4);
  g_byte_array_append (a, (guint8 *) &id, 8);
  g_byte_array_append (a, body, body_size);
  g_byte_array_append (a, (guint8 *) "", 1);
  g_byte_array_append (a, (guint8 *) type, strlen (type));
  return g_byte_array_free_to_bytes (a);
}

/* Types that scan but name no value (fuzz/corpus/app-replies/crash-indefinite-body-type):
 * GLib aborts if asked to make a value of one. The body reads as (). */
static void
test_indefinite_types (void)
{
  const char *types[] = { "*", "r", "?", "m*", "a?", "(s*)", "{?v}", "ar", "mr" };
  Pair p;
  pair_open (&p);
  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    {
      g_autoptr(GError) error = NULL;
      guint8 junk[24];
      for (guint k = 0; k < sizeof junk; k++)
        junk[k] = g_test_rand_int_range (1, 256);
      guint64 id = g_test_rand_int ();
      g_autoptr(GBytes) rec = record (ACCEL_CHANNEL_REPLY, id, junk, sizeof junk, types[i]);
      gsize size;
      const guint8 *data = g_bytes_get_data (rec, &size);
      g_assert_true (_accel_channel_fuzz_peer_send (p.app, data, size));
      g_autoptr(GVariant) msg = _accel_channel_receive (p.app, &error);
      g_assert_no_error (error);
      guint32 kind;
      guint64 got_id;
      g_autoptr(GVariant) body = NULL;
      _accel_channel_parse (msg, &kind, &got_id, &body);
      g_assert_cmpuint (kind, ==, ACCEL_CHANNEL_REPLY);
      g_assert_cmpuint (got_id, ==, id);
      g_assert_cmpstr (g_variant_get_type_string (body), ==, "()");
    }
  pair_close (&p);
}

/* A record longer than what the peer published, or a head that is not on
 * a record boundary: the ring is corrupt, and said to be. */
static void
test_corrupt_ring (void)
{
  for (guint i = 0; i < 3; i++)
    {
      Pair p;
      pair_open (&p);
      g_autoptr(GError) error = NULL;
      guint32 len = i == 0 ? 4000 : i == 1 ? 0 : 16;
      guint8 bytes[32] = { 0 };
      memcpy (bytes, &len, 4);
      _accel_channel_fuzz_peer_write (p.app, bytes, sizeof bytes, i == 2 ? 12 : 24);
      g_autoptr(GVariant) msg = _accel_channel_receive (p.app, &error);
      g_assert_null (msg);
      g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED);
      g_assert_nonnull (strstr (error->message, "corrupt"));
      pair_close (&p);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/channel/round-trip", test_round_trip);
  g_test_add_func ("/channel/indefinite-types", test_indefinite_types);
  g_test_add_func ("/channel/corrupt-ring", test_corrupt_ring);
  return g_test_run ();
}
