/* Tests of the journal (AccelJournal) and accel-replay: sessions of ops on
 * random data recorded on cpu:0 and on remote-cpu (a device host), with
 * digests or bytes, replay on cpu:0 and agree op by op; a journal cut
 * short or damaged replays up to its last whole record and says where;
 * a backend that disagrees (the test plugin's `scribble`, whose result
 * depends on the process) is found, and only it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include <string.h>
#include <glib/gstdio.h>
#include "accel-test-buffers.h"
#include "accel-journal-private.h"

static const char *replay_program;

static AccelBuffer *
upload_random (AccelDevice *dev, AccelDType dtype, const AccelShape *shape)
{
  g_autoptr(GError) error = NULL;
  AccelBuffer *b = accel_device_alloc (dev, dtype, shape, &error);
  g_assert_no_error (error);
  gsize size = accel_buffer_get_size (b);
  g_autofree guint8 *data = g_malloc (size);
  if (dtype == ACCEL_DTYPE_F32)
    for (gsize i = 0; i < size / 4; i++)
      ((float *) data)[i] = (float) g_test_rand_double_range (-1, 1);
  else
    for (gsize i = 0; i < size / 8; i++)
      ((double *) data)[i] = g_test_rand_double_range (-1, 1);
  g_assert_true (accel_buffer_write (b, data, size, &error));
  g_assert_no_error (error);
  return b;
}

static void
submit (AccelDevice *dev, AccelOp *op, guint *n_ops)
{
  accel_test_submit (dev, op);
  (*n_ops)++;
}

/* Ops of several kinds, shapes and dtypes on fresh random data, each
 * reading what earlier ones wrote. With @scribble, a `scribble` whose
 * result feeds the ops after it. Returns how many ops were run. */
static guint
run_session (AccelDevice *dev, gboolean scribble)
{
  guint n_ops = 0;
  for (guint round = 0; round < 3; round++)
    {
      gint64 m = g_test_rand_int_range (3, 34), k = g_test_rand_int_range (3, 34), n = g_test_rand_int_range (3, 34);
      g_autoptr(AccelShape) sa = accel_shape_new_2d (m, k);
      g_autoptr(AccelShape) sb = accel_shape_new_2d (k, n);
      g_autoptr(AccelShape) sc = accel_shape_new_2d (m, n);
      g_autoptr(AccelBuffer) a = upload_random (dev, ACCEL_DTYPE_F32, sa);
      g_autoptr(AccelBuffer) b = upload_random (dev, ACCEL_DTYPE_F32, sb);
      g_autoptr(AccelBuffer) c = upload_random (dev, ACCEL_DTYPE_F32, sc);
      g_autoptr(AccelBuffer) d = upload_random (dev, ACCEL_DTYPE_F32, sc);
      g_autoptr(AccelBuffer) c64 = upload_random (dev, ACCEL_DTYPE_F64, sc);

      g_autoptr(AccelOp) gemm = accel_gemm_new (a, b, c);
      submit (dev, gemm, &n_ops);
      if (scribble)
        {
          g_autoptr(AccelOp) s = accel_op_new ("scribble", "dst", d, NULL);
          submit (dev, s, &n_ops);
        }
      g_autoptr(AccelOp) axpy = accel_axpy_new (g_test_rand_double_range (-2, 2), d, c);
      submit (dev, axpy, &n_ops);
      g_autoptr(AccelOp) scal = accel_scal_new (g_test_rand_double_range (-2, 2), c);
      submit (dev, scal, &n_ops);
      submit (dev, scal, &n_ops);   /* the same op object again */
      g_autoptr(AccelOp) cast = accel_cast_new (c, c64);
      submit (dev, cast, &n_ops);

      /* A broadcast (strided) input, copied out. */
      gint64 dims[] = { m, n }, strides[] = { 0, 1 };
      g_autoptr(AccelShape) sbc = accel_shape_new_strided (dims, strides, 2);
      g_autoptr(AccelBuffer) row = upload_random (dev, ACCEL_DTYPE_F32, sbc);
      g_autoptr(AccelOp) copy = accel_copy_new (row, d);
      submit (dev, copy, &n_ops);
      g_autoptr(AccelOp) fill = accel_fill_new (a, g_test_rand_double_range (-5, 5));
      submit (dev, fill, &n_ops);
      g_object_set (fill, "value", g_test_rand_double_range (-5, 5), NULL);   /* changed: recorded anew */
      submit (dev, fill, &n_ops);
    }
  return n_ops;
}

typedef struct {
  int status;
  char *output;
  char *errors;             /* what it said on stderr */
  guint ops, identical, agree, differ, failed, recorded_failures, skipped;
} Replay;

static void
replay_clear (Replay *r)
{
  g_free (r->output);
  g_free (r->errors);
}

static void
replay (Replay *r, const char *path, const char *scribble, const char *extra_arg)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) env = g_get_environ ();
  if (scribble)
    env = g_environ_setenv (env, "ACCEL_TEST_SCRIBBLE", scribble, TRUE);
  const char *argv[] = { replay_program, path, "--device", "cpu:0", extra_arg, NULL };
  g_autofree char *err = NULL;
  int wait_status;
  memset (r, 0, sizeof *r);
  g_assert_true (g_spawn_sync (NULL, (char **) argv, env, G_SPAWN_DEFAULT, NULL, NULL, &r->output, &err,
                               &wait_status, &error));
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (wait_status));
  r->status = WEXITSTATUS (wait_status);
  if (err && *err)
    g_test_message ("accel-replay said on stderr: %s", err);
  r->errors = g_steal_pointer (&err);

  g_auto(GStrv) lines = g_strsplit (r->output, "\n", -1);
  gboolean found = FALSE;
  for (guint i = 0; lines[i]; i++)
    if (sscanf (lines[i], "%u ops: %u identical, %u agree, %u differ, %u failed, %u failed when recorded, %u skipped",
                &r->ops, &r->identical, &r->agree, &r->differ, &r->failed, &r->recorded_failures,
                &r->skipped) == 7)
      found = TRUE;
  if (!found && r->status != 2)
    g_error ("accel-replay printed no summary:\n%s", r->output);
}

static char *
journal_path (const char *name)
{
  g_autofree char *dir = g_dir_make_tmp ("accel-journal-test-XXXXXX", NULL);
  g_assert_nonnull (dir);
  return g_build_filename (dir, name, NULL);
}

static void
remove_journal (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_remove (path);
  g_rmdir (dir);
}

static guint
record (AccelDevice *dev, const char *path, AccelJournalFlags flags, gboolean scribble)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelJournal) journal = accel_journal_new (path, flags, &error);
  g_assert_no_error (error);
  g_object_set (dev, "journal", journal, NULL);
  guint n = run_session (dev, scribble);
  g_object_set (dev, "journal", NULL, NULL);
  g_assert_true (accel_device_synchronize (dev, &error));
  g_assert_true (accel_journal_flush (journal, &error));
  g_assert_no_error (error);
  /* A session record, one for the device, an OP per op state, a RUN per
   * op and the uploads: more records than ops. */
  g_assert_cmpuint (accel_journal_get_n_records (journal), >, n + 2);
  return n;
}

static void
check_round_trip (AccelDevice *dev, AccelJournalFlags flags)
{
  g_autofree char *path = journal_path ("session.journal");
  guint n = record (dev, path, flags, FALSE);

  Replay r;
  replay (&r, path, NULL, NULL);
  g_test_message ("%s", r.output);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpuint (r.ops, ==, n);
  g_assert_cmpuint (r.identical + r.agree, ==, n);
  g_assert_cmpuint (r.differ + r.failed + r.skipped + r.recorded_failures, ==, 0);
  replay_clear (&r);
  remove_journal (path);
}

/* On cpu:0 and on remote-cpu:0. */
static void
test_round_trip (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  check_round_trip (f->dev, ACCEL_JOURNAL_FLAGS_NONE);
  check_round_trip (f->dev, ACCEL_JOURNAL_FLAGS_BYTES);
}

typedef struct {
  gsize start;
  gsize end;      /* of its bytes, before the padding to 8 */
} Span;

/* The records from the one after the first RUN to the last RUN, as the
 * journal's reader finds them: a cut inside one of them, or a byte of one
 * changed, leaves some ops before the damage and some after. Their padding
 * carries nothing and is not checked, so it is left out. */
static GArray *
record_spans (const char *data, gsize size)
{
  g_autoptr(GBytes) bytes = g_bytes_new_static (data, size);
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelJournalReader) reader = _accel_journal_reader_new (bytes, &error);
  g_assert_no_error (error);
  GArray *spans = g_array_new (FALSE, FALSE, sizeof (Span));
  gboolean after_first_run = FALSE;
  guint last_run = 0;
  AccelJournalRecord *r;
  while ((r = _accel_journal_reader_next (reader, &error)))
    {
      if (after_first_run)
        {
          Span span = { r->offset, r->offset + ACCEL_JOURNAL_RECORD_HEAD + g_bytes_get_size (r->storage) };
          g_array_append_val (spans, span);
        }
      if (r->kind == ACCEL_JOURNAL_RUN)
        {
          after_first_run = TRUE;
          last_run = spans->len;
        }
      _accel_journal_record_free (r);
    }
  g_assert_no_error (error);
  g_assert_cmpuint (_accel_journal_reader_get_offset (reader), ==, size);
  g_array_set_size (spans, last_run);
  return spans;
}

/* Cut short, then damaged in the middle: what comes before is replayed,
 * and the damage is named with its place. */
static void
test_damaged (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = journal_path ("damaged.journal");
  guint n = record (f->dev, path, ACCEL_JOURNAL_FLAGS_NONE, FALSE);
  g_autofree char *data = NULL;
  gsize size;
  g_assert_true (g_file_get_contents (path, &data, &size, &error));

  /* Damage lands in a record after the first RUN and up to the last one,
   * so that some ops come before it and some after, whatever the sizes the
   * session drew (a first round of large buffers can fill half the file):
   * a cut strictly inside the record (at its start, the journal before it
   * is whole), or a changed byte of it. */
  g_autoptr(GArray) spans = record_spans (data, size);
  g_assert_cmpuint (spans->len, >, 0);

  for (guint damage = 0; damage < 2; damage++)
    {
      const Span *span = &g_array_index (spans, Span, g_test_rand_int_range (0, spans->len));
      gsize at = g_test_rand_int_range (span->start + (damage == 0), span->end);
      g_autofree char *copy = g_memdup2 (data, size);
      if (damage == 1)
        copy[at] ^= 0x5a;
      g_assert_true (g_file_set_contents (path, copy, damage == 0 ? at : size, &error));

      Replay r;
      replay (&r, path, NULL, NULL);
      g_test_message ("%s", r.output);
      g_assert_cmpint (r.status, ==, 3);
      const char *where = strstr (r.output, "The journal is damaged at byte ");
      g_assert_nonnull (where);
      guint64 offset = g_ascii_strtoull (where + strlen ("The journal is damaged at byte "), NULL, 10);
      g_assert_cmpuint (offset, >=, 16);
      g_assert_cmpuint (offset, <=, at);
      g_assert_cmpuint (r.ops, >, 0);
      g_assert_cmpuint (r.ops, <, n);
      g_assert_cmpuint (r.identical + r.agree, ==, r.ops);
      replay_clear (&r);
    }

  /* Not a journal at all. */
  g_assert_true (g_file_set_contents (path, "not a journal", -1, &error));
  Replay r;
  replay (&r, path, NULL, NULL);
  g_assert_cmpint (r.status, ==, 2);
  replay_clear (&r);

  /* A journal of another version (1 had other checksums): refused, by
   * its version, before any record is read. */
  g_autofree char *old = g_memdup2 (data, size);
  guint32 version = GUINT32_TO_LE (1);
  memcpy (old + 8, &version, 4);
  g_assert_true (g_file_set_contents (path, old, size, &error));
  replay (&r, path, NULL, NULL);
  g_assert_cmpint (r.status, ==, 2);
  g_assert_nonnull (strstr (r.errors, "A journal of version 1; this Accel reads version 2"));
  replay_clear (&r);
  remove_journal (path);
}

/* The records one blocking submit of @op adds. */
static guint64
records_of (AccelDevice *dev, AccelJournal *journal, AccelOp *op)
{
  g_autoptr(GError) error = NULL;
  /* Work is recorded once it completed, maybe after its caller returned:
   * what came before first (an upload), then the op. */
  g_assert_true (accel_device_synchronize (dev, &error));
  guint64 before = accel_journal_get_n_records (journal);
  g_assert_true (accel_device_submit (dev, op, NULL, &error));
  g_assert_true (accel_device_synchronize (dev, &error));
  g_assert_no_error (error);
  return accel_journal_get_n_records (journal) - before;
}

/* An op is recorded (an OP record) once per state: run again unchanged it
 * adds a RUN only; changed, or a new op object (even one made at the
 * address of a freed one, with the same bytes), it adds its OP again. */
static void
test_op_states (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = journal_path ("states.journal");
  g_autoptr(AccelJournal) journal = accel_journal_new (path, ACCEL_JOURNAL_FLAGS_NONE, &error);
  g_assert_no_error (error);
  g_object_set (f->dev, "journal", journal, NULL);

  g_autoptr(AccelShape) shape = accel_shape_new_1d (g_test_rand_int_range (1, 40));
  g_autoptr(AccelBuffer) buf = upload_random (f->dev, ACCEL_DTYPE_F32, shape);
  double value = g_test_rand_double_range (-5, 5);
  for (guint round = 0; round < 4; round++)
    {
      AccelOp *op = accel_fill_new (buf, value);
      g_assert_cmpuint (records_of (f->dev, journal, op), ==, 2);   /* OP, RUN */
      g_assert_cmpuint (records_of (f->dev, journal, op), ==, 1);   /* RUN */
      g_object_set (op, "value", value + 1, NULL);
      g_assert_cmpuint (records_of (f->dev, journal, op), ==, 2);
      g_object_set (op, "value", value, NULL);
      g_assert_cmpuint (records_of (f->dev, journal, op), ==, 2);
      g_assert_cmpuint (records_of (f->dev, journal, op), ==, 1);
      g_object_unref (op);   /* the next one is likely made where it was */
    }
  g_object_set (f->dev, "journal", NULL, NULL);
  g_assert_true (accel_device_synchronize (f->dev, &error));
  g_assert_true (accel_journal_flush (journal, &error));
  g_assert_no_error (error);

  Replay r;
  replay (&r, path, NULL, NULL);
  g_assert_cmpint (r.status, ==, 0);
  g_assert_cmpuint (r.ops, ==, 4 * 5);
  g_assert_cmpuint (r.identical + r.agree, ==, r.ops);
  replay_clear (&r);
  remove_journal (path);
}

/* @n ops on a device whose memory is not ours, each on buffers dropped
 * as soon as it returns: the journal's reads of its outputs, and then its
 * record, come after its buffers are gone. */
static void
run_dropping (AccelDevice *dev, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(AccelShape) shape = accel_shape_new_2d (g_test_rand_int_range (1, 64), g_test_rand_int_range (1, 2048));
      g_autoptr(AccelBuffer) x = upload_random (dev, ACCEL_DTYPE_F32, shape);
      g_autoptr(AccelBuffer) y = upload_random (dev, ACCEL_DTYPE_F32, shape);
      g_autoptr(AccelOp) axpy = accel_axpy_new (g_test_rand_double_range (-2, 2), x, y);
      guint ignored = 0;
      submit (dev, axpy, &ignored);
    }
}

/* A run that outlives its op, its buffers, and the journal's hold on the
 * device (another journal takes the device while its reads are out) is
 * still recorded whole, in its own journal. */
static void
test_outlived (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(GError) error = NULL;
  const guint n = 40;
  char *paths[2];
  AccelJournal *journals[2];
  for (guint j = 0; j < 2; j++)
    {
      paths[j] = journal_path (j ? "second.journal" : "first.journal");
      journals[j] = accel_journal_new (paths[j], ACCEL_JOURNAL_FLAGS_BYTES, &error);
      g_assert_no_error (error);
      g_object_set (f->dev, "journal", journals[j], NULL);   /* no synchronize in between */
      run_dropping (f->dev, n);
    }
  g_assert_true (accel_device_synchronize (f->dev, &error));
  g_object_set (f->dev, "journal", NULL, NULL);
  for (guint j = 0; j < 2; j++)
    {
      g_assert_true (accel_journal_flush (journals[j], &error));
      g_assert_no_error (error);
      g_object_unref (journals[j]);
      Replay r;
      replay (&r, paths[j], NULL, NULL);
      g_assert_cmpint (r.status, ==, 0);
      g_assert_cmpuint (r.ops, ==, n);
      g_assert_cmpuint (r.identical + r.agree, ==, n);
      replay_clear (&r);
      remove_journal (paths[j]);
      g_free (paths[j]);
    }
}

/* The views a replay (or a device host) makes from outside bytes: strides
 * whose last offset is 2^64 - 1 wrap "one past it" to 0 elements, which
 * must not pass for a view that fits. */
static void
test_hostile_view (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelShape) small = accel_shape_new_1d (g_test_rand_int_range (1, 64));
  g_autoptr(AccelBuffer) base = upload_random (f->dev, ACCEL_DTYPE_F32, small);

  gint64 dims[] = { 5, 4 }, strides[] = { G_MAXINT64 / 2, 1 };
  g_autoptr(AccelShape) wraps = accel_shape_new_strided (dims, strides, 2);
  g_assert_null (_accel_buffer_new_alias (base, 0, ACCEL_DTYPE_F32, wraps, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH);
  g_clear_error (&error);

  /* What fits still does. */
  gint64 n = accel_buffer_get_n_elements (base);
  gint64 d1[] = { n }, s1[] = { 1 };
  g_autoptr(AccelShape) fits = accel_shape_new_strided (d1, s1, 1);
  g_autoptr(AccelBuffer) view = _accel_buffer_new_alias (base, 0, ACCEL_DTYPE_F32, fits, &error);
  g_assert_no_error (error);
  g_assert_nonnull (view);
}

/* Recorded where `scribble` writes 1, replayed where it writes 2. */
static void
test_finds_difference (AccelTestDeviceFixture *f, gconstpointer user_data)
{

  for (guint bytes = 0; bytes < 2; bytes++)
    {
      g_autofree char *path = journal_path ("difference.journal");
      g_setenv ("ACCEL_TEST_SCRIBBLE", "1", TRUE);
      guint n = record (f->dev, path, bytes ? ACCEL_JOURNAL_FLAGS_BYTES : 0, TRUE);

      Replay same;
      replay (&same, path, "1", NULL);
      g_assert_cmpint (same.status, ==, 0);
      g_assert_cmpuint (same.identical + same.agree, ==, n);
      replay_clear (&same);

      Replay r;
      replay (&r, path, "2", "--quiet");
      g_test_message ("%s", r.output);
      g_assert_cmpint (r.status, ==, 1);
      g_assert_cmpuint (r.ops, ==, n);
      g_auto(GStrv) lines = g_strsplit (r.output, "\n", -1);
      guint scribbles = 0;
      for (guint i = 0; lines[i]; i++)
        if (strstr (lines[i], " scribble: DIFFER"))
          scribbles++;
      g_assert_cmpuint (scribbles, ==, 3);
      if (bytes)
        {
          /* Each op gets its recorded inputs: only the scribbles differ. */
          g_assert_cmpuint (r.differ, ==, 3);
          g_assert_null (strstr (r.output, "not as recorded"));
        }
      else
        {
          /* The axpy after each scribble reads what it wrote. */
          g_assert_cmpuint (r.differ, >=, 3);
          g_assert_nonnull (strstr (r.output, "not as recorded"));
        }
      replay_clear (&r);
      remove_journal (path);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  replay_program = g_getenv ("ACCEL_TEST_REPLAY");
  g_assert_nonnull (replay_program);
  accel_test_add_cpu ("/journal/cpu", NULL, test_round_trip);
  accel_test_add_remote_cpu ("/journal/remote", NULL, test_round_trip);
  accel_test_add_cpu ("/journal/damaged", NULL, test_damaged);
  accel_test_add_cpu ("/journal/finds-difference", NULL, test_finds_difference);
  accel_test_add_cpu ("/journal/op-states", NULL, test_op_states);
  accel_test_add_remote_cpu ("/journal/outlived", NULL, test_outlived);
  accel_test_add_cpu ("/journal/hostile-view", NULL, test_hostile_view);
  return g_test_run ();
}
