/* The journal across backends: a session recorded on cuda:0 (in this
 * process and in a device host, as the suite runs every program both ways)
 * is replayed on cpu:0 by accel-replay, and every op agrees within its
 * dtype's tolerance, with digests only and with the bytes kept. Skips
 * where there is no cuda:0.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <string.h>
#include <glib/gstdio.h>
#include "cuda-test.h"

static guint
session (AccelDevice *gpu)
{
  g_autoptr(GError) error = NULL;
  guint n_ops = 0;
  for (guint round = 0; round < 3; round++)
    {
      gint64 m = g_test_rand_int_range (3, 200), k = g_test_rand_int_range (3, 200), n = g_test_rand_int_range (3, 200);
      gint64 da[] = { m, k }, db[] = { k, n }, dc[] = { m, n };
      g_autoptr(AccelBuffer) a = ct_alloc (gpu, ACCEL_DTYPE_F32, da, 2);
      g_autoptr(AccelBuffer) b = ct_alloc (gpu, ACCEL_DTYPE_F32, db, 2);
      g_autoptr(AccelBuffer) c = ct_alloc (gpu, ACCEL_DTYPE_F32, dc, 2);
      g_autoptr(AccelBuffer) d = ct_alloc (gpu, ACCEL_DTYPE_F32, dc, 2);
      g_autoptr(AccelBuffer) c64 = ct_alloc (gpu, ACCEL_DTYPE_F64, dc, 2);
      AccelBuffer *inputs[] = { a, b, c, d };
      for (guint i = 0; i < G_N_ELEMENTS (inputs); i++)
        {
          gint64 count = accel_buffer_get_n_elements (inputs[i]);
          g_autofree double *values = g_new (double, count);
          for (gint64 j = 0; j < count; j++)
            values[j] = g_test_rand_double_range (-1, 1);
          ct_write (inputs[i], values);
        }
      g_autoptr(AccelOp) gemm = accel_gemm_new (a, b, c);
      g_autoptr(AccelOp) axpy = accel_axpy_new (g_test_rand_double_range (-2, 2), d, c);
      g_autoptr(AccelOp) scal = accel_scal_new (g_test_rand_double_range (-2, 2), c);
      g_autoptr(AccelOp) cast = accel_cast_new (c, c64);
      g_autoptr(AccelOp) fill = accel_fill_new (d, g_test_rand_double_range (-5, 5));
      AccelOp *ops[] = { gemm, axpy, scal, scal, cast, fill };
      for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
        {
          ct_submit (gpu, ops[i]);
          n_ops++;
        }
    }
  g_assert_true (accel_device_synchronize (gpu, &error));
  g_assert_no_error (error);
  return n_ops;
}

static void
record_and_replay (AccelJournalFlags flags)
{
  AccelDevice *gpu = ct_gpu ();
  if (gpu == NULL)
    return;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("accel-cuda-journal-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *path = g_build_filename (dir, "cuda.journal", NULL);
  g_autoptr(AccelJournal) journal = accel_journal_new (path, flags, &error);
  g_assert_no_error (error);

  g_object_set (gpu, "journal", journal, NULL);
  guint n = session (gpu);
  g_object_set (gpu, "journal", NULL, NULL);
  g_assert_true (accel_journal_flush (journal, &error));
  g_assert_no_error (error);

  const char *argv[] = { g_getenv ("ACCEL_TEST_REPLAY"), path, "--device", "cpu:0", NULL };
  g_autofree char *out = NULL, *err = NULL;
  int wait_status;
  g_assert_nonnull (argv[0]);
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                               &wait_status, &error));
  g_assert_no_error (error);
  g_test_message ("%s%s", out, err);
  g_assert_true (WIFEXITED (wait_status));
  g_assert_cmpint (WEXITSTATUS (wait_status), ==, 0);
  guint ops = 0, identical = 0, agree = 0, differ = 1, failed = 1, recorded = 1, skipped = 1;
  const char *summary = strstr (out, " ops: ");
  while (summary > out && summary[-1] != '\n')
    summary--;
  g_assert_nonnull (summary);
  g_assert_cmpint (sscanf (summary, "%u ops: %u identical, %u agree, %u differ, %u failed, %u failed when recorded, %u skipped",
                           &ops, &identical, &agree, &differ, &failed, &recorded, &skipped), ==, 7);
  g_assert_cmpuint (ops, ==, n);
  g_assert_cmpuint (identical + agree, ==, n);
  g_assert_cmpuint (differ + failed + recorded + skipped, ==, 0);
  g_remove (path);
  g_rmdir (dir);
}

static void
test_digests (void)
{
  record_and_replay (ACCEL_JOURNAL_FLAGS_NONE);
}

static void
test_bytes (void)
{
  record_and_replay (ACCEL_JOURNAL_FLAGS_BYTES);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/journal/replay-on-cpu-digests", test_digests);
  g_test_add_func ("/cuda/journal/replay-on-cpu-bytes", test_bytes);
  return ct_run ();
}
