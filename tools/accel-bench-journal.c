/* accel-bench-journal.c: the `journal` group of accel-bench: what recording
 * into an AccelJournal (digests only, the default) costs the dispatch of
 * a tiny op (a fill of one f32, as `dispatch` measures it).
 *
 * Each figure with the journal set on the device is beside the same
 * figure without it, in the same run; the two are measured in alternating
 * rounds, and each figure is the median of its rounds, so that what else
 * the machine does weighs on both alike. Beside the wall-clock figures,
 * the CPU time the device's thread spends per pipelined op (from
 * /proc/self/task/TID/schedstat), which other load on the machine does
 * not inflate.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "accel-bench.h"

extern const AccelBenchGroup accel_bench_journal_groups[];

/* CPU seconds used so far by this process's threads named @comm: from
 * each thread's schedstat (nanoseconds), or its stat (clock ticks, 10 ms)
 * where the kernel keeps no schedstat. */
static double
thread_cpu (const char *comm)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/task", 0, NULL);
  const char *tid;
  double total = 0;
  long ticks = sysconf (_SC_CLK_TCK);
  while (dir && (tid = g_dir_read_name (dir)))
    {
      g_autofree char *path = g_strdup_printf ("/proc/self/task/%s/stat", tid);
      g_autofree char *stat = NULL;
      if (!g_file_get_contents (path, &stat, NULL, NULL))
        continue;
      const char *open = strchr (stat, '('), *close = strrchr (stat, ')');
      if (!(open && close && (gsize) (close - open - 1) == strlen (comm) && strncmp (open + 1, comm, close - open - 1) == 0))
        continue;
      g_autofree char *sched_path = g_strdup_printf ("/proc/self/task/%s/schedstat", tid);
      g_autofree char *sched = NULL;
      unsigned long long ns;
      unsigned long utime, stime;
      if (g_file_get_contents (sched_path, &sched, NULL, NULL) && sscanf (sched, "%llu", &ns) == 1)
        total += ns * 1e-9;
      else if (sscanf (close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) == 2)
        total += (double) (utime + stime) / ticks;
    }
  return total;
}

/* One round: 4 @n ops with 256 in flight (ops/s, the device thread's CPU
 * seconds, the ops), then @n async round trips and @n blocking ones (their
 * medians, µs). */
static gboolean
round_figures (AccelDevice *device, AccelOp *op, guint n, double *figures, GError **error)
{
  /* The device's thread, as the kernel names it (15 characters). */
  g_autofree char *full = g_strdup_printf ("accel-%s", accel_device_get_name (device));
  g_autofree char *comm = g_strndup (full, 15);
  double c0 = thread_cpu (comm);
  double elapsed = accel_bench_run_in_flight (device, op, n * 4, 256, error);
  if (elapsed < 0)
    return FALSE;
  figures[0] = n * 4 / elapsed;
  figures[3] = thread_cpu (comm) - c0;   /* seconds: summed over the rounds */
  figures[4] = n * 4;

  g_autofree double *samples = g_new (double, n);
  if (!accel_bench_async_round_trips (device, op, n, samples, error))
    return FALSE;
  figures[1] = accel_bench_quantile (samples, n, 0.5) * 1e6;
  if (!accel_bench_blocking_round_trips (device, op, n, samples, error))
    return FALSE;
  figures[2] = accel_bench_quantile (samples, n, 0.5) * 1e6;
  return TRUE;
}

static gboolean
run_journal (AccelBench *bench, GError **error)
{
  AccelDevice *device = accel_bench_get_device (bench);
  const guint rounds = accel_bench_is_quick (bench) ? 5 : 21;
  const guint n = accel_bench_is_quick (bench) ? 2000 : 5000;
  g_autoptr(AccelShape) shape = accel_shape_new_1d (1);
  g_autoptr(AccelBuffer) buf = accel_device_alloc (device, ACCEL_DTYPE_F32, shape, error);
  if (buf == NULL)
    return FALSE;
  g_autoptr(AccelOp) op = accel_fill_new (buf, 1.0);

  g_autofree char *dir = g_dir_make_tmp ("accel-bench-journal-XXXXXX", error);
  if (dir == NULL)
    return FALSE;
  g_autofree char *path = g_build_filename (dir, "bench.journal", NULL);
  g_autoptr(AccelJournal) journal = accel_journal_new (path, ACCEL_JOURNAL_FLAGS_NONE, error);
  if (journal == NULL)
    return FALSE;

  double figures[2][5][21];
  gboolean ok = TRUE;
  for (guint r = 0; r < rounds + 1 && ok; r++)
    for (guint with = 0; with < 2 && ok; with++)
      {
        accel_bench_progress (bench, "journal: round %u of %u, %s", r + 1, rounds + 1,
                              with ? "recording" : "not recording");
        g_object_set (device, "journal", with ? journal : NULL, NULL);
        double f[5];
        ok = round_figures (device, op, n, f, error);
        /* The first round warms up. */
        for (guint k = 0; ok && r > 0 && k < 5; k++)
          figures[with][k][r - 1] = f[k];
      }
  g_object_set (device, "journal", NULL, NULL);
  if (ok)
    ok = accel_device_synchronize (device, error) && accel_journal_flush (journal, error);
  guint64 records = accel_journal_get_n_records (journal);
  g_clear_object (&journal);
  g_remove (path);
  g_rmdir (dir);
  if (!ok)
    return FALSE;
  if (records < (guint64) rounds * n * 6)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED, "the journal has %" G_GUINT64_FORMAT
                   " records; the recorded rounds ran %u ops", records, (rounds + 1) * n * 6);
      return FALSE;
    }

  const char *names[] = { "journal.pipelined-256", "journal.submit-async.p50", "journal.submit-blocking.p50",
                          "journal.device-thread-cpu" };
  const char *units[] = { "ops/s", "us", "us", "ns/op" };
  for (guint k = 0; k < 3; k++)
    accel_bench_report (bench, names[k], units[k], accel_bench_quantile (figures[1][k], rounds, 0.5),
                        accel_bench_quantile (figures[0][k], rounds, 0.5));
  /* CPU time in clock ticks: summed over every round, then per op. */
  double cpu[2] = { 0, 0 }, ops[2] = { 0, 0 };
  for (guint with = 0; with < 2; with++)
    for (guint r = 0; r < rounds; r++)
      {
        cpu[with] += figures[with][3][r];
        ops[with] += figures[with][4][r];
      }
  accel_bench_report (bench, names[3], units[3], cpu[1] / ops[1] * 1e9, cpu[0] / ops[0] * 1e9);
  return TRUE;
}

const AccelBenchGroup accel_bench_journal_groups[] = {
  { "journal", "dispatch of a one-element fill recorded into a journal (digests) beside unrecorded",
    run_journal },
  { NULL },
};
