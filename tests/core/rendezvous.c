/* The rendezvous of a job of several processes, on loopback.
 *
 * /rendezvous/job: three processes (this program started again with
 * ACCEL_TEST_RENDEZVOUS_CHILD set), two CPU devices each, join through the
 * environment (ACCEL_RANK, ACCEL_WORLD_SIZE, ACCEL_MASTER_ADDR,
 * ACCEL_MASTER_PORT, ACCEL_RENDEZVOUS_TOKEN) and run collectives over all
 * six ranks, with messages small enough that the data moves in several
 * chunks; each process checks its results against a reference made from
 * every rank's inputs, which it can make itself (they come from a seed
 * and the rank).
 * /rendezvous/rank-death: the third process dies while the others run a
 * collective: both fail it with an error, and do not hang.
 * /rendezvous/store/...: the store as a network listener: garbage, an
 * oversized or half message, a wrong token or world size, a silent peer,
 * too many connections: each refused with an error and a closed
 * connection, and the store still serves a proper job afterwards.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_PROCS 3
#define LOCAL 2
#define TIMEOUT_MS 20000

static const char *self_path;

/* Children. */

static double
input (guint32 seed, guint rank, gsize i)
{
  /* A value per (seed, rank, index) that every process can make. */
  guint32 h = seed ^ (rank * 0x9e3779b9u) ^ ((guint32) i * 0x85ebca6bu);
  h ^= h >> 13, h *= 0xc2b2ae35u, h ^= h >> 16;
  return (double) (h % 2001) - 1000.0 + (rank + 1) / 8.0;
}

static AccelBuffer *
child_buffer (AccelDevice *device, gsize count, guint32 seed, int rank)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelShape) shape = accel_shape_new_1d (count);
  AccelBuffer *b = accel_device_alloc (device, ACCEL_DTYPE_F64, shape, &error);
  g_assert_no_error (error);
  g_autofree double *v = g_new (double, count);
  for (gsize i = 0; i < count; i++)
    v[i] = rank >= 0 ? input (seed, rank, i) : -1.0;
  accel_buffer_write (b, (const guint8 *) v, count * sizeof (double), &error);
  g_assert_no_error (error);
  return b;
}

static double *
child_read (AccelBuffer *b)
{
  g_autoptr(GError) error = NULL;
  gsize n = accel_buffer_get_n_elements (b);
  double *v = g_new (double, n);
  accel_buffer_read (b, (guint8 *) v, n * sizeof (double), &error);
  g_assert_no_error (error);
  return v;
}

static int
child_job (AccelRendezvous *rv, AccelSystem *system, guint32 seed, gboolean die)
{
  g_autoptr(GError) error = NULL;
  AccelDevice *devs[LOCAL];
  for (guint i = 0; i < LOCAL; i++)
    {
      g_autofree char *name = g_strdup_printf ("cpu:%u", i);
      devs[i] = accel_system_get_device (system, name, &error);
      g_assert_no_error (error);
    }
  g_autoptr(AccelCommunicator) comm = accel_communicator_new_distributed (rv, devs, LOCAL, &error);
  g_assert_no_error (error);
  guint n = accel_communicator_get_n_ranks (comm), first = accel_communicator_get_first_rank (comm);
  g_assert_cmpuint (n, ==, N_PROCS * LOCAL);
  g_assert_cmpuint (first, ==, accel_rendezvous_get_rank (rv) * LOCAL);

  /* all-reduce, large enough for several chunks of 64 KiB messages. */
  const gsize count = 20011;
  AccelBuffer *src[LOCAL], *dst[LOCAL];
  AccelOp *ops[LOCAL];
  for (guint i = 0; i < LOCAL; i++)
    {
      src[i] = child_buffer (devs[i], count, seed, first + i);
      dst[i] = child_buffer (devs[i], count, seed, -1);
      ops[i] = accel_all_reduce_new (src[i], dst[i], ACCEL_REDUCTION_SUM);
    }
  g_assert_true (accel_communicator_submit (comm, ops, LOCAL, NULL, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < LOCAL; i++)
    {
      g_autofree double *got = child_read (dst[i]);
      for (gsize e = 0; e < count; e++)
        {
          double want = 0;
          for (guint r = 0; r < n; r++)
            want += input (seed, r, e);
          if (got[e] != want)
            g_error ("all-reduce across processes, rank %u element %zu: %.17g, expected %.17g", first + i, e,
                     got[e], want);
        }
      g_object_unref (ops[i]);
    }

  if (die)
    {
      /* The third process goes away while the others run a collective. */
      if (accel_rendezvous_get_rank (rv) == N_PROCS - 1)
        {
          g_usleep (300 * 1000);
          _exit (0);
        }
      for (guint i = 0; i < LOCAL; i++)
        ops[i] = accel_all_reduce_new (src[i], dst[i], ACCEL_REDUCTION_MAX);
      gint64 t0 = g_get_monotonic_time ();
      g_assert_false (accel_communicator_submit (comm, ops, LOCAL, NULL, &error));
      g_assert_nonnull (error);
      g_assert_true (error->domain == ACCEL_ERROR);
      g_printerr ("process %u: the collective failed after %.0f ms: %s\n", accel_rendezvous_get_rank (rv),
                  (g_get_monotonic_time () - t0) / 1000.0, error->message);
      for (guint i = 0; i < LOCAL; i++)
        {
          g_object_unref (ops[i]);
          g_object_unref (src[i]);
          g_object_unref (dst[i]);
          g_object_unref (devs[i]);
        }
      return 0;
    }

  /* all-gather of each rank's first 5 values, and broadcast from rank 3. */
  const gsize block = 5;
  AccelBuffer *gathered[LOCAL];
  for (guint i = 0; i < LOCAL; i++)
    {
      g_autoptr(AccelShape) shape = accel_shape_new_1d (block);
      g_autoptr(AccelBuffer) part = accel_buffer_new_view (src[i], 0, shape, &error);
      g_assert_no_error (error);
      gathered[i] = child_buffer (devs[i], block * n, seed, -1);
      ops[i] = accel_all_gather_new (part, gathered[i]);
    }
  g_assert_true (accel_communicator_submit (comm, ops, LOCAL, NULL, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < LOCAL; i++)
    {
      g_autofree double *got = child_read (gathered[i]);
      for (guint r = 0; r < n; r++)
        for (gsize e = 0; e < block; e++)
          g_assert_cmpfloat (got[r * block + e], ==, input (seed, r, e));
      g_object_unref (ops[i]);
      ops[i] = accel_broadcast_new (src[i], dst[i], 3);
    }
  g_assert_true (accel_communicator_submit (comm, ops, LOCAL, NULL, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < LOCAL; i++)
    {
      g_autofree double *got = child_read (dst[i]);
      for (gsize e = 0; e < count; e += 97)
        g_assert_cmpfloat (got[e], ==, input (seed, 3, e));
      g_object_unref (ops[i]);
    }

  /* Rank 1 (process 0) sends to rank 4 (process 2); process 1 takes no part. */
  guint me = accel_rendezvous_get_rank (rv);
  if (me == 0 || me == 2)
    {
      AccelOp *op = me == 0 ? accel_send_new (src[1], 4) : accel_recv_new (dst[0], 1);
      g_assert_true (accel_communicator_submit (comm, &op, 1, NULL, &error));
      g_assert_no_error (error);
      if (me == 2)
        {
          g_autofree double *got = child_read (dst[0]);
          for (gsize e = 0; e < count; e += 31)
            g_assert_cmpfloat (got[e], ==, input (seed, 1, e));
        }
      g_object_unref (op);
    }
  /* The error first: a failed barrier then says why. */
  gboolean ended = accel_rendezvous_barrier (rv, "end", &error);
  g_assert_no_error (error);
  g_assert_true (ended);

  for (guint i = 0; i < LOCAL; i++)
    {
      g_object_unref (gathered[i]);
      g_object_unref (src[i]);
      g_object_unref (dst[i]);
      g_object_unref (devs[i]);
    }
  return 0;
}

static int
child_main (const char *scenario)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelRendezvous) rv = accel_rendezvous_new_from_env (NULL, &error);
  if (rv == NULL)
    {
      g_printerr ("child: %s\n", error->message);
      return 2;
    }
  g_autoptr(AccelSystem) system = accel_system_new (&error);
  g_assert_no_error (error);
  guint32 seed = (guint32) g_ascii_strtoull (g_getenv ("ACCEL_TEST_SEED"), NULL, 10);
  int status = child_job (rv, system, seed, g_str_equal (scenario, "rank-death"));
  accel_system_shutdown (system);
  return status;
}

/* The parent. */

static guint16
free_port (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) s = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  g_autoptr(GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any = g_inet_socket_address_new (lo, 0);
  g_assert_true (g_socket_bind (s, any, TRUE, &error));
  g_autoptr(GSocketAddress) bound = g_socket_get_local_address (s, &error);
  g_assert_no_error (error);
  return g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
}

static void
run_job (const char *scenario, const int *want_status)
{
  guint16 port = free_port ();
  g_autofree char *port_s = g_strdup_printf ("%u", port);
  g_autofree char *seed_s = g_strdup_printf ("%u", g_test_rand_int ());
  GSubprocess *children[N_PROCS];

  for (guint p = 0; p < N_PROCS; p++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
      g_autofree char *rank = g_strdup_printf ("%u", p);
      g_subprocess_launcher_setenv (launcher, "ACCEL_TEST_RENDEZVOUS_CHILD", scenario, TRUE);
      g_subprocess_launcher_setenv (launcher, "ACCEL_TEST_SEED", seed_s, TRUE);
      g_subprocess_launcher_setenv (launcher, "ACCEL_RANK", rank, TRUE);
      g_subprocess_launcher_setenv (launcher, "ACCEL_WORLD_SIZE", G_STRINGIFY (N_PROCS), TRUE);
      g_subprocess_launcher_setenv (launcher, "ACCEL_MASTER_ADDR", "127.0.0.1", TRUE);
      g_subprocess_launcher_setenv (launcher, "ACCEL_MASTER_PORT", port_s, TRUE);
      g_subprocess_launcher_setenv (launcher, "ACCEL_RENDEZVOUS_TOKEN", "job-secret", TRUE);
      g_subprocess_launcher_setenv (launcher, "ACCEL_RENDEZVOUS_TIMEOUT_MS", G_STRINGIFY (TIMEOUT_MS), TRUE);
      g_subprocess_launcher_setenv (launcher, "ACCEL_RENDEZVOUS_MAX_MESSAGE", "65536", TRUE);
      g_subprocess_launcher_setenv (launcher, "ACCEL_CPU_DEVICES", G_STRINGIFY (LOCAL), TRUE);
      children[p] = g_subprocess_launcher_spawn (launcher, &error, self_path, NULL);
      g_assert_no_error (error);
    }
  for (guint p = 0; p < N_PROCS; p++)
    {
      g_autoptr(GError) error = NULL;
      g_assert_true (g_subprocess_wait (children[p], NULL, &error));
      g_assert_no_error (error);
      g_assert_true (g_subprocess_get_if_exited (children[p]));
      g_test_message ("%s: process %u exited with %d", scenario, p, g_subprocess_get_exit_status (children[p]));
      g_assert_cmpint (g_subprocess_get_exit_status (children[p]), ==, want_status[p]);
      g_object_unref (children[p]);
    }
}

static void
test_job (void)
{
  const int want[N_PROCS] = { 0, 0, 0 };
  run_job ("job", want);
}

static void
test_rank_death (void)
{
  const int want[N_PROCS] = { 0, 0, 0 };
  run_job ("rank-death", want);
}

/* The store as a listener. */

/* The socket of a new connection; the connection object is kept in a
 * list the test clears, so that dropping it closes the socket. */
static GPtrArray *connections;

static GSocket *
raw_connect (guint16 port)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  GSocketConnection *c = g_socket_client_connect_to_host (client, "127.0.0.1", port, NULL, &error);
  g_assert_no_error (error);
  if (connections == NULL)
    connections = g_ptr_array_new_with_free_func (g_object_unref);
  g_ptr_array_add (connections, c);
  return g_object_ref (g_socket_connection_get_socket (c));
}

static void
raw_close (GSocket *s)
{
  for (guint i = 0; connections && i < connections->len; i++)
    if (g_socket_connection_get_socket (connections->pdata[i]) == s)
      {
        g_io_stream_close (connections->pdata[i], NULL, NULL);
        g_ptr_array_remove_index (connections, i);
        break;
      }
  g_object_unref (s);
}

static void
raw_send (GSocket *s, const void *data, gsize n)
{
  g_autoptr(GError) error = NULL;
  g_assert_cmpint (g_socket_send (s, data, n, NULL, &error), ==, (gssize) n);
  g_assert_no_error (error);
}

/* Reads until the store closes the connection; returns all it sent. */
static GString *
read_until_closed (GSocket *s)
{
  GString *all = g_string_new (NULL);
  g_socket_set_timeout (s, 30);
  for (;;)
    {
      char buf[4096];
      g_autoptr(GError) error = NULL;
      gssize r = g_socket_receive (s, buf, sizeof buf, NULL, &error);
      if (r <= 0)
        {
          g_assert_false (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT));
          break;
        }
      g_string_append_len (all, buf, r);
    }
  return all;
}

static void
frame (GByteArray *out, GVariant *v)
{
  g_autoptr(GVariant) owned = g_variant_ref_sink (v);
  guint32 len = GUINT32_TO_BE ((guint32) g_variant_get_size (owned));
  g_byte_array_append (out, (const guint8 *) &len, 4);
  g_byte_array_append (out, g_variant_get_data (owned), g_variant_get_size (owned));
}

static GVariant *
message (guint kind, guint64 request, GVariant *payload)
{
  return g_variant_new ("(utv)", kind, request, payload);
}

/* Sends @bytes and expects an answer that names @expect, then a close. */
static void
expect_refusal (guint16 port, const guint8 *bytes, gsize n, const char *expect)
{
  g_autoptr(GSocket) s = raw_connect (port);
  if (n)
    raw_send (s, bytes, n);
  g_autoptr(GString) answer = read_until_closed (s);
  g_object_ref (s);
  raw_close (s);
  if (expect)
    {
      gboolean found = FALSE;
      for (gsize i = 0; i + strlen (expect) <= answer->len && !found; i++)
        found = memcmp (answer->str + i, expect, strlen (expect)) == 0;
      if (!found)
        g_error ("the store's answer does not say “%s” (%" G_GSIZE_FORMAT " bytes)", expect, answer->len);
    }
}

/* Joins with a raw HELLO and returns the socket once welcomed. */
static GSocket *
raw_join (guint16 port, guint rank)
{
  GSocket *s = raw_connect (port);
  g_autoptr(GByteArray) hello = g_byte_array_new ();
  frame (hello, message (1, 1, g_variant_new ("(suu)", "s3cret", rank, 2)));
  raw_send (s, hello->data, hello->len);
  return s;
}

static void
expect_welcome (GSocket *s)
{
  g_autoptr(GError) error = NULL;
  guint8 header[4];
  g_socket_set_blocking (s, TRUE);
  g_socket_set_timeout (s, 30);
  g_assert_cmpint (g_socket_receive (s, (char *) header, 4, NULL, &error), ==, 4);
  guint32 len = ((guint32) header[0] << 24) | ((guint32) header[1] << 16) | ((guint32) header[2] << 8) | header[3];
  g_assert_cmpuint (len, <, 4096);
  g_autofree guint8 *body = g_malloc (len);
  gsize got = 0;
  while (got < len)
    {
      gssize r = g_socket_receive (s, (char *) body + got, len - got, NULL, &error);
      g_assert_cmpint (r, >, 0);
      got += r;
    }
  g_autoptr(GBytes) bytes = g_bytes_new (body, len);
  g_autoptr(GVariant) v = g_variant_ref_sink (g_variant_new_from_bytes (G_VARIANT_TYPE ("(utv)"), bytes, FALSE));
  guint32 kind;
  g_autoptr(GVariant) payload = NULL;
  g_variant_get (v, "(utv)", &kind, NULL, &payload);
  if (kind != 2)   /* WELCOME */
    {
      g_autofree char *text = g_variant_print (payload, FALSE);
      g_error ("expected a WELCOME, got a message of kind %u: %s", kind, text);
    }
}

static void
test_store_hostile (void)
{
  g_autoptr(GError) error = NULL;
  g_setenv ("ACCEL_RENDEZVOUS_MAX_MESSAGE", "65536", TRUE);
  g_autoptr(AccelRendezvousStore) store = accel_rendezvous_store_new ("127.0.0.1", 0, 2, "s3cret", 3000, &error);
  g_assert_no_error (error);
  guint16 port = accel_rendezvous_store_get_port (store);

  /* Random garbage: its first four bytes are a length far over the limit
   * (the top bit is set) or a body that is no (utv). */
  guint8 garbage[512];
  for (guint i = 0; i < sizeof garbage; i++)
    garbage[i] = (guint8) g_test_rand_int_range (0, 256);
  garbage[0] |= 0x80;
  expect_refusal (port, garbage, sizeof garbage, "message");

  /* A length just over the limit: refused before any of it is read. */
  guint8 big[4] = { 0, 1, 0, 1 };
  expect_refusal (port, big, sizeof big, "limit");

  /* A frame of the right length holding no (utv). */
  g_autoptr(GByteArray) bad = g_byte_array_new ();
  guint32 len = GUINT32_TO_BE (64);
  guint8 ff[64];
  memset (ff, 0xff, sizeof ff);
  g_byte_array_append (bad, (const guint8 *) &len, 4);
  g_byte_array_append (bad, ff, sizeof ff);
  expect_refusal (port, bad->data, bad->len, "(utv)");

  /* A payload of the wrong type for its kind. */
  g_autoptr(GByteArray) wrong = g_byte_array_new ();
  frame (wrong, message (1, 1, g_variant_new_string ("hello")));
  expect_refusal (port, wrong->data, wrong->len, "payload");

  /* An exchange before any HELLO. */
  g_autoptr(GByteArray) early = g_byte_array_new ();
  guint32 procs[1] = { 0 };
  frame (early, message (5, 1, g_variant_new ("(s@au@ay)", "x",
                                              g_variant_new_fixed_array (G_VARIANT_TYPE_UINT32, procs, 1, 4),
                                              g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, "", 0, 1))));
  expect_refusal (port, early->data, early->len, "HELLO");

  /* A wrong token, a wrong world size, a rank out of range. */
  g_autoptr(GByteArray) token = g_byte_array_new ();
  frame (token, message (1, 1, g_variant_new ("(suu)", "guess", 0, 2)));
  expect_refusal (port, token->data, token->len, "token");
  g_autoptr(GByteArray) world = g_byte_array_new ();
  frame (world, message (1, 1, g_variant_new ("(suu)", "s3cret", 0, 3)));
  expect_refusal (port, world->data, world->len, "processes");
  g_autoptr(GByteArray) rank = g_byte_array_new ();
  frame (rank, message (1, 1, g_variant_new ("(suu)", "s3cret", 5, 2)));
  expect_refusal (port, rank->data, rank->len, "rank");

  /* Half a message, then silence; and silence from the start: both are
   * closed once the timeout passes. */
  guint8 half[14] = { 0, 0, 0, 100, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
  expect_refusal (port, half, sizeof half, NULL);
  expect_refusal (port, NULL, 0, NULL);

  /* Twice the world size and two more connections at most, then refusals. */
  GSocket *held[6];
  for (guint i = 0; i < 6; i++)
    held[i] = raw_connect (port);
  g_usleep (500 * 1000);
  expect_refusal (port, NULL, 0, "no more connections");
  for (guint i = 0; i < 6; i++)
    raw_close (held[i]);
  g_assert_cmpuint (accel_rendezvous_store_get_n_refused (store), >=, 4);

  /* Through all that the store kept serving: a proper job joins. */
  g_usleep (500 * 1000);
  g_autoptr(GSocket) p0 = raw_join (port, 0);
  g_autoptr(GSocket) p1 = raw_join (port, 1);
  expect_welcome (p0);
  expect_welcome (p1);
  g_assert_cmpuint (accel_rendezvous_store_get_n_joined (store), ==, 2);

  /* A third process of a complete job is refused. */
  g_autoptr(GByteArray) late = g_byte_array_new ();
  frame (late, message (1, 1, g_variant_new ("(suu)", "s3cret", 1, 2)));
  expect_refusal (port, late->data, late->len, "no more connections");
  g_unsetenv ("ACCEL_RENDEZVOUS_MAX_MESSAGE");
  g_clear_pointer (&connections, g_ptr_array_unref);
}

/* The environment: what is missing or wrong is named. */
static void
test_env (void)
{
  g_autoptr(GError) error = NULL;
  g_unsetenv ("ACCEL_RANK");
  g_assert_null (accel_rendezvous_new_from_env (NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "ACCEL_RANK"));
  g_clear_error (&error);
  g_setenv ("ACCEL_RANK", "1", TRUE);
  g_setenv ("ACCEL_WORLD_SIZE", "two", TRUE);
  g_setenv ("ACCEL_MASTER_PORT", "1", TRUE);
  g_assert_null (accel_rendezvous_new_from_env (NULL, &error));
  g_assert_nonnull (strstr (error->message, "ACCEL_WORLD_SIZE"));
  g_clear_error (&error);
  g_setenv ("ACCEL_WORLD_SIZE", "1", TRUE);
  g_setenv ("ACCEL_MASTER_ADDR", "127.0.0.1", TRUE);
  g_assert_null (accel_rendezvous_new_from_env (NULL, &error));
  g_assert_nonnull (strstr (error->message, "rank"));
  g_unsetenv ("ACCEL_RANK");
  g_unsetenv ("ACCEL_WORLD_SIZE");
  g_unsetenv ("ACCEL_MASTER_PORT");
  g_unsetenv ("ACCEL_MASTER_ADDR");
}

int
main (int argc, char **argv)
{
  const char *child = g_getenv ("ACCEL_TEST_RENDEZVOUS_CHILD");
  if (child)
    return child_main (child);

  self_path = argv[0];
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/rendezvous/env", test_env);
  g_test_add_func ("/rendezvous/store/hostile", test_store_hostile);
  g_test_add_func ("/rendezvous/job", test_job);
  g_test_add_func ("/rendezvous/rank-death", test_rank_death);
  return g_test_run ();
}
