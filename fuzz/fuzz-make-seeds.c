/* fuzz-make-seeds: writes the seed corpora of the harnesses into
 * DIR/NAME/ (the checked-in ones in fuzz/corpus/ were made with it, from
 * a build with -Dfuzzing=enabled):
 *
 *   fuzz-make-seeds fuzz/corpus
 *
 * Seeds are made with the code that makes such bytes for real (the cache
 * writer, accel_op_serialize(), the channel's sender), so that they stay
 * in the formats the readers expect.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "fuzz-env.h"
#include "fuzz-op-handle.h"
#include "accel-journal-private.h"
#include "accel-rendezvous-private.h"
#include <sys/socket.h>

static void
write_seed (const char *dir, const char *harness, const char *name, const guint8 *data, gsize size)
{
  g_autofree char *sub = g_build_filename (dir, harness, NULL);
  g_autofree char *path = g_build_filename (sub, name, NULL);
  g_autoptr(GError) error = NULL;
  g_mkdir_with_parents (sub, 0755);
  if (!g_file_set_contents (path, (const char *) data, size, &error))
    g_error ("%s", error->message);
}

/* registry-cache: the cache the registry writes for the CPU plugin, one
 * blacklisted file beside it, and an empty one. */
static void
registry_seeds (const char *dir)
{
  AccelRegistry *registry = accel_system_get_registry (accel_fuzz_get_system ());
  AccelPlugin *cpu = accel_registry_find_plugin (registry, "cpu");
  g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func ((GDestroyNotify) _accel_registry_cache_entry_free);
  AccelRegistryCacheEntry *ok = g_new0 (AccelRegistryCacheEntry, 1);
  ok->path = g_strdup ("/usr/lib/accel-1.0/libaccel-cpu.so");
  ok->size = 123456;
  ok->mtime = 1700000000000000;
  ok->status = ACCEL_PLUGIN_STATUS_OK;
  ok->metadata = g_variant_ref_sink (_accel_plugin_to_metadata (cpu));
  ok->dep_stamp = g_strdup ("");
  AccelRegistryCacheEntry *bad = g_new0 (AccelRegistryCacheEntry, 1);
  bad->path = g_strdup ("/usr/lib/accel-1.0/libaccel-broken.so");
  bad->size = 42;
  bad->mtime = 1700000000000001;
  bad->status = ACCEL_PLUGIN_STATUS_BLACKLISTED;
  bad->reason = g_strdup ("crashed while loading: killed by signal 11 (Segmentation fault)");
  bad->dep_stamp = g_strdup ("PATH=/usr/bin");

  g_autofree char *path = g_build_filename (accel_fuzz_get_tmpdir (), "seed.bin", NULL);
  const char *names[] = { "empty", "one", "two" };
  for (guint n = 0; n <= 2; n++)
    {
      g_autoptr(GPtrArray) some = g_ptr_array_new ();
      if (n >= 1)
        g_ptr_array_add (some, ok);
      if (n >= 2)
        g_ptr_array_add (some, bad);
      g_autoptr(GError) error = NULL;
      g_autofree char *data = NULL;
      gsize size;
      if (!_accel_registry_cache_write (path, some, &error) || !g_file_get_contents (path, &data, &size, &error))
        g_error ("%s", error->message);
      write_seed (dir, "registry-cache", names[n], (guint8 *) data, size);
    }
  g_ptr_array_add (entries, ok);
  g_ptr_array_add (entries, bad);
}

/* op-deserialize: an op of every type the registry knows, its buffers of
 * a few shapes, serialised with handles that describe them. */
static void
op_seeds (const char *dir)
{
  AccelRegistry *registry = accel_system_get_registry (accel_fuzz_get_system ());
  AccelDevice *cpu = accel_fuzz_get_cpu ();
  g_auto(GStrv) names = accel_registry_list_op_types (registry);
  const struct {
    const char *tag;
    guint rank;
    gint64 dims[4];
  } shapes[] = {
    { "vector", 1, { 16 } },
    { "matrix", 2, { 8, 8 } },
    { "tensor", 4, { 2, 2, 8, 8 } },
  };

  for (guint t = 0; names[t]; t++)
    for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
      {
        g_autoptr(GError) error = NULL;
        g_autoptr(AccelOp) op = accel_op_new_by_name (names[t], &error);
        if (op == NULL)
          continue;
        guint n_all, n = 0;
        g_autofree GParamSpec **all = g_object_class_list_properties (G_OBJECT_GET_CLASS (op), &n_all);
        g_autofree GParamSpec **pspecs = g_new (GParamSpec *, n_all + 1);
        for (guint i = 0; i < n_all; i++)
          if (all[i]->value_type == ACCEL_TYPE_BUFFER && (all[i]->flags & G_PARAM_WRITABLE))
            pspecs[n++] = all[i];
        g_autoptr(GHashTable) handles = g_hash_table_new (g_str_hash, g_str_equal);
        for (guint i = 0; i < n; i++)
          {
            FuzzHandle h = { ACCEL_DTYPE_F32, shapes[s].rank, FUZZ_LAYOUT_CONTIGUOUS, i, { 0 } };
            memcpy (h.dims, shapes[s].dims, sizeof shapes[s].dims);
            g_autoptr(AccelShape) shape = accel_shape_new (shapes[s].dims, shapes[s].rank);
            g_autoptr(AccelBuffer) b = accel_device_alloc (cpu, ACCEL_DTYPE_F32, shape, &error);
            g_assert_no_error (error);
            g_object_set (op, pspecs[i]->name, b, NULL);
            g_hash_table_insert (handles, (gpointer) pspecs[i]->name,
                                 GSIZE_TO_POINTER ((gsize) fuzz_handle_encode (&h)));
          }

        /* The same op with the handles that describe its buffers. */
        g_autoptr(GVariant) real = accel_op_serialize (op);
        const char *type_name;
        g_autoptr(GVariantIter) iter = NULL;
        g_variant_get (real, "(&sa{sv})", &type_name, &iter);
        GVariantBuilder props;
        g_variant_builder_init (&props, G_VARIANT_TYPE ("a{sv}"));
        const char *key;
        GVariant *value;
        while (g_variant_iter_next (iter, "{&sv}", &key, &value))
          {
            gpointer handle;
            if (g_hash_table_lookup_extended (handles, key, NULL, &handle))
              g_variant_builder_add (&props, "{sv}", key, g_variant_new_uint64 (GPOINTER_TO_SIZE (handle)));
            else
              g_variant_builder_add (&props, "{sv}", key, value);
            g_variant_unref (value);
          }
        g_autoptr(GVariant) seed = g_variant_ref_sink (g_variant_new ("(sa{sv})", type_name, &props));
        gsize size = g_variant_get_size (seed);
        g_autofree guint8 *bytes = g_malloc (size + 2);
        bytes[0] = size & 255;
        bytes[1] = size >> 8;
        memcpy (bytes + 2, g_variant_get_data (seed), size);
        g_autofree char *name = g_strdup_printf ("%s-%s", names[t], shapes[s].tag);
        write_seed (dir, "op-deserialize", name, bytes, size + 2);
      }
}

/* The channel harnesses: messages as the real sender frames them, read
 * back raw from the other side's ring. */
typedef struct {
  AccelChannel *tx;
  AccelChannel *rx;
  GByteArray *stream;
} Stream;

static void
stream_add (Stream *s, AccelChannelKind kind, guint64 id, GVariant *body)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) owned = body ? g_variant_ref_sink (body) : NULL;
  if (!_accel_channel_send (s->tx, kind, id, owned, 0, &error))
    g_error ("%s", error->message);
  g_autoptr(GVariant) msg = _accel_channel_receive (s->rx, &error);
  g_assert_no_error (error);
  gsize size = g_variant_get_size (msg);
  guint8 head[3] = { 0, size & 255, size >> 8 };
  g_byte_array_append (s->stream, head, 3);
  g_byte_array_append (s->stream, g_variant_get_data (msg), size);
}

static void
stream_begin (Stream *s, gboolean host_sends)
{
  g_autoptr(GError) error = NULL;
  AccelChannel *app = _accel_channel_new (1 << 16, 4096, &error);
  g_assert_no_error (error);
  AccelChannel *host = _accel_channel_attach (dup (_accel_channel_get_fd (app)), &error);
  g_assert_no_error (error);
  s->tx = host_sends ? host : app;
  s->rx = host_sends ? app : host;
  s->stream = g_byte_array_new ();
}

static void
stream_end (Stream *s, const char *dir, const char *harness, const char *name)
{
  write_seed (dir, harness, name, s->stream->data, s->stream->len);
  g_byte_array_unref (s->stream);
  _accel_channel_free (s->tx);
  _accel_channel_free (s->rx);
}

static GVariant *
table_entry (guint64 handle, guint64 alloc, guint64 offset, AccelDType dtype, gint64 n)
{
  gint64 one = 1;
  return g_variant_new ("(tttu@ax@ax)", handle, alloc, offset, (guint32) dtype,
                        g_variant_new_fixed_array (G_VARIANT_TYPE_INT64, &n, 1, sizeof (gint64)),
                        g_variant_new_fixed_array (G_VARIANT_TYPE_INT64, &one, 1, sizeof (gint64)));
}

static void
host_seeds (const char *dir)
{
  Stream s;
  AccelDevice *cpu = accel_fuzz_get_cpu ();

  /* A session as an application makes one (allocation ids start at 1). */
  stream_begin (&s, FALSE);
  stream_add (&s, ACCEL_CHANNEL_ALLOC, 1, g_variant_new_uint64 (4096));
  stream_add (&s, ACCEL_CHANNEL_ALLOC, 2, g_variant_new_uint64 (256));
  stream_add (&s, ACCEL_CHANNEL_WRITE, 3, g_variant_new ("(tttt)", (guint64) 1, (guint64) 0, (guint64) 1024, (guint64) 0));
  g_autoptr(AccelShape) shape = accel_shape_new_1d (64);
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelBuffer) x = accel_device_alloc (cpu, ACCEL_DTYPE_F32, shape, &error);
  g_autoptr(AccelBuffer) y = accel_device_alloc (cpu, ACCEL_DTYPE_F32, shape, &error);
  g_assert_no_error (error);
  g_autoptr(AccelOp) fill = accel_fill_new (x, 2.5);
  g_autoptr(AccelOp) axpy = accel_op_new ("axpy", "x", x, "y", y, "alpha", 0.5, NULL);
  g_autoptr(GVariant) fill_form = accel_op_serialize (fill);   /* full references */
  g_autoptr(GVariant) axpy_form = accel_op_serialize (axpy);
  GVariant *fill_table[] = { table_entry (accel_buffer_get_handle (x), 1, 0, ACCEL_DTYPE_F32, 64) };
  stream_add (&s, ACCEL_CHANNEL_OP, 4,
              g_variant_new ("(@(sa{sv})@a(tttuaxax))", fill_form,
                             g_variant_new_array (G_VARIANT_TYPE ("(tttuaxax)"), fill_table, 1)));
  GVariant *axpy_table[] = { table_entry (accel_buffer_get_handle (x), 1, 0, ACCEL_DTYPE_F32, 64),
                             table_entry (accel_buffer_get_handle (y), 1, 256, ACCEL_DTYPE_F32, 64) };
  stream_add (&s, ACCEL_CHANNEL_OP, 5,
              g_variant_new ("(@(sa{sv})@a(tttuaxax))", axpy_form,
                             g_variant_new_array (G_VARIANT_TYPE ("(tttuaxax)"), axpy_table, 2)));
  stream_add (&s, ACCEL_CHANNEL_READ, 6, g_variant_new ("(tttt)", (guint64) 1, (guint64) 256, (guint64) 256, (guint64) 2048));
  stream_add (&s, ACCEL_CHANNEL_ZERO, 7, g_variant_new ("(ttt)", (guint64) 2, (guint64) 0, (guint64) 256));
  stream_add (&s, ACCEL_CHANNEL_MEMORY, 8, NULL);
  stream_add (&s, ACCEL_CHANNEL_FREE, 0, g_variant_new_uint64 (2));
  stream_add (&s, ACCEL_CHANNEL_READ, 9, g_variant_new ("(tttt)", (guint64) 2, (guint64) 0, (guint64) 16, (guint64) 0));
  stream_add (&s, 77, 10, NULL);
  stream_end (&s, dir, "host-requests", "session");

  /* Bad requests, one kind each. */
  stream_begin (&s, FALSE);
  stream_add (&s, ACCEL_CHANNEL_ALLOC, 1, g_variant_new_uint64 (G_MAXUINT64));
  stream_add (&s, ACCEL_CHANNEL_ALLOC, 2, g_variant_new_string ("4096"));
  stream_add (&s, ACCEL_CHANNEL_ALLOC, 3, g_variant_new_uint64 (64));
  stream_add (&s, ACCEL_CHANNEL_WRITE, 4, g_variant_new ("(tttt)", (guint64) 1, (guint64) 60, (guint64) 8, (guint64) 0));
  stream_add (&s, ACCEL_CHANNEL_READ, 5, g_variant_new ("(tttt)", (guint64) 1, (guint64) 0, (guint64) 8, G_MAXUINT64 - 4));
  stream_add (&s, ACCEL_CHANNEL_ZERO, 6, g_variant_new ("(ttt)", (guint64) 9, (guint64) 0, (guint64) 8));
  GVariant *bad_table[] = { table_entry (accel_buffer_get_handle (x), 1, 32, ACCEL_DTYPE_F32, 64) };
  stream_add (&s, ACCEL_CHANNEL_OP, 7,
              g_variant_new ("(@(sa{sv})@a(tttuaxax))", fill_form,
                             g_variant_new_array (G_VARIANT_TYPE ("(tttuaxax)"), bad_table, 1)));
  stream_end (&s, dir, "host-requests", "bad-requests");
}

static void
app_seeds (const char *dir)
{
  Stream s;

  stream_begin (&s, TRUE);
  GVariantBuilder info;
  g_variant_builder_init (&info, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&info, "{sv}", "name", g_variant_new_string ("cpu:0"));
  g_variant_builder_add (&info, "{sv}", "backend", g_variant_new_string ("cpu"));
  g_variant_builder_add (&info, "{sv}", "memory-total", g_variant_new_uint64 (1 << 30));
  g_variant_builder_add (&info, "{sv}", "memory-free", g_variant_new_uint64 (1 << 29));
  g_variant_builder_add (&info, "{sv}", "lanes", g_variant_new_uint32 (1));
  g_variant_builder_add (&info, "{sv}", "compute-capability-major", g_variant_new_int32 (9));
  stream_add (&s, ACCEL_CHANNEL_HELLO, 0, g_variant_builder_end (&info));
  stream_add (&s, ACCEL_CHANNEL_REPLY, 1, g_variant_new_uint64 (1));
  stream_add (&s, ACCEL_CHANNEL_REPLY, 2, g_variant_new ("(tt)", (guint64) 1 << 30, (guint64) 1 << 29));
  stream_add (&s, ACCEL_CHANNEL_REPLY, 3, NULL);
  g_autoptr(GError) failure = g_error_new (ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH, "x has shape [3]");
  stream_add (&s, ACCEL_CHANNEL_FAILED, 4, _accel_channel_error_to_variant (failure));
  g_autoptr(GError) foreign = g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED, "elsewhere");
  stream_add (&s, ACCEL_CHANNEL_FAILED, 5, _accel_channel_error_to_variant (foreign));
  g_autoptr(GError) lost = g_error_new (ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED, "illegal address");
  stream_add (&s, ACCEL_CHANNEL_POISONED, 0, _accel_channel_error_to_variant (lost));
  stream_end (&s, dir, "app-replies", "session");

  stream_begin (&s, TRUE);
  g_autoptr(GError) refused = g_error_new (ACCEL_ERROR, ACCEL_ERROR_NO_DEVICE, "no cpu:7");
  stream_add (&s, ACCEL_CHANNEL_HELLO, 0, _accel_channel_error_to_variant (refused));
  stream_end (&s, dir, "app-replies", "hello-failed");
}

/* journal: sessions recorded on cpu:0, with digests and with bytes (the
 * second one stopped mid-op, as a crash would leave it). */
static void
journal_seeds (const char *dir)
{
  AccelDevice *cpu = accel_fuzz_get_cpu ();
  const char *names[] = { "session-digests", "session-bytes" };
  for (guint k = 0; k < 2; k++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *path = g_build_filename (accel_fuzz_get_tmpdir (), "seed.journal", NULL);
      g_remove (path);
      g_autoptr(AccelJournal) journal = accel_journal_new (path, k ? ACCEL_JOURNAL_FLAGS_BYTES : 0, &error);
      g_assert_no_error (error);
      g_object_set (cpu, "journal", journal, NULL);
      g_autoptr(AccelShape) s23 = accel_shape_new_2d (2, 3);
      g_autoptr(AccelShape) s34 = accel_shape_new_2d (3, 4);
      g_autoptr(AccelShape) s24 = accel_shape_new_2d (2, 4);
      g_autoptr(AccelBuffer) a = accel_device_alloc (cpu, ACCEL_DTYPE_F32, s23, &error);
      g_autoptr(AccelBuffer) b = accel_device_alloc (cpu, ACCEL_DTYPE_F32, s34, &error);
      g_autoptr(AccelBuffer) c = accel_device_alloc (cpu, ACCEL_DTYPE_F32, s24, &error);
      g_autoptr(AccelBuffer) c64 = accel_device_alloc (cpu, ACCEL_DTYPE_F64, s24, &error);
      g_assert_no_error (error);
      float va[6] = { 1, -2, 3, 0.5f, 0.25f, -1 }, vb[12] = { 1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4 };
      accel_buffer_write (a, (guint8 *) va, sizeof va, &error);
      accel_buffer_write (b, (guint8 *) vb, sizeof vb, &error);
      accel_buffer_zero (c, &error);
      g_autoptr(AccelOp) gemm = accel_gemm_new (a, b, c);
      g_autoptr(AccelOp) scal = accel_scal_new (0.5, c);
      g_autoptr(AccelOp) cast = accel_cast_new (c, c64);
      g_autoptr(AccelOp) fill = accel_fill_new (a, 3.0);
      AccelOp *ops[] = { gemm, scal, scal, cast, fill };
      for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
        if (!accel_device_submit (cpu, ops[i], NULL, &error))
          g_error ("%s", error->message);
      g_object_set (cpu, "journal", NULL, NULL);
      accel_device_synchronize (cpu, NULL);
      accel_journal_flush (journal, &error);
      g_autofree char *data = NULL;
      gsize size;
      if (!g_file_get_contents (path, &data, &size, &error))
        g_error ("%s", error->message);
      write_seed (dir, "journal", names[k], (guint8 *) data, k ? size - 20 : size);
    }
}

/* rendezvous: what a process sends a store, framed by the real writer,
 * and a last byte that picks the store (bit 0: two processes; bit 1: a
 * token). */
static void
rendezvous_seeds (const char *dir)
{
  const struct {
    const char *name;
    guint8 flags;
    const char *token;
  } cases[] = {
    { "join-exchange", 0, "" },
    { "join-with-token", 2, "fuzz-token" },
    { "two-processes", 1, "" },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      int sv[2];
      g_assert (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
      g_autoptr(GSocket) a = g_socket_new_from_fd (sv[0], NULL);
      g_autoptr(GSocket) b = g_socket_new_from_fd (sv[1], NULL);
      g_autoptr(GError) error = NULL;
      guint32 procs[] = { 0 };
      const guint8 part[] = "a process's part";
      GVariant *messages[] = {
        g_variant_new ("(suu)", cases[c].token, (guint32) 0, (guint32) (cases[c].flags & 1 ? 2 : 1)),
        g_variant_new_tuple (NULL, 0),
        g_variant_new ("(s@au@ay)", "tag-1", g_variant_new_fixed_array (G_VARIANT_TYPE_UINT32, procs, 1, 4),
                       g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, part, sizeof part, 1)),
        g_variant_new ("(ss)", "tag", "a reason"),
      };
      AccelWireKind kinds[] = { ACCEL_WIRE_HELLO, ACCEL_WIRE_PING, ACCEL_WIRE_EXCHANGE, ACCEL_WIRE_ABORT };
      for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
        if (!_accel_wire_write (a, kinds[i], i + 1, g_variant_ref_sink (messages[i]), 0, &error))
          g_error ("%s", error->message);
        else
          g_variant_unref (messages[i]);
      g_socket_shutdown (a, FALSE, TRUE, NULL);
      g_autoptr(GByteArray) stream = g_byte_array_new ();
      guint8 buf[4096];
      gssize n;
      while ((n = g_socket_receive (b, (char *) buf, sizeof buf, NULL, NULL)) > 0)
        g_byte_array_append (stream, buf, n);
      g_byte_array_append (stream, &cases[c].flags, 1);
      write_seed (dir, "rendezvous", cases[c].name, stream->data, stream->len);
    }
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      g_printerr ("Usage: %s DIR\n", argv[0]);
      return 2;
    }
  registry_seeds (argv[1]);
  op_seeds (argv[1]);
  host_seeds (argv[1]);
  app_seeds (argv[1]);
  journal_seeds (argv[1]);
  rendezvous_seeds (argv[1]);
  return 0;
}
