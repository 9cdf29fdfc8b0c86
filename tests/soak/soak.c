/* The soak (suite `slow`, not in the default test run): mixed ops from many
 * threads on remote-cpu (an AccelRemoteDevice hosting cpu:0) and on every
 * CUDA device present, for a long time, while the device hosts are killed,
 * contexts poisoned and hosts hung at random moments.
 *
 * Every op is checked against a reference computed here; every completion
 * is counted. Each minute (ACCEL_SOAK_SAMPLE_S) the resident memory of
 * this process and of the device hosts, and this process's open file
 * descriptors, are sampled. The run fails on a wrong result, a completion
 * lost or doubled, an error other than the ones faults cause
 * (CONTEXT_POISONED, STALE_BUFFER), a thread that makes no progress for
 * ACCEL_SOAK_HANG_S, or memory or descriptors that grow by more than 10%
 * after the first ten minutes (a third of the run, if shorter): the median
 * of the last ten minutes' samples against that of the warm-up's second
 * half.
 *
 * Knobs: ACCEL_SOAK_MINUTES (60), ACCEL_SOAK_THREADS (16),
 * ACCEL_SOAK_SAMPLE_S (60), ACCEL_SOAK_HANG_S (300), ACCEL_SOAK_GROWTH
 * (the growth allowed, 10 %; a sanitizer's quarantine needs more),
 * ACCEL_SOAK_CASES (which kinds of work, of gemm,axpy,transfer,async: all),
 * ACCEL_SOAK_CHAOS (0 injects nothing, for looking into a failure),
 * ACCEL_SOAK_LOG (a file for the samples and the summary, as Markdown).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static guint
env_uint (const char *name, guint dflt)
{
  const char *v = g_getenv (name);
  return v && *v ? (guint) g_ascii_strtoull (v, NULL, 10) : dflt;
}

typedef struct {
  AccelDevice *device;
  gboolean remote;
  gboolean can_fault;           /* atomic: has a `fault` kernel */
} Target;

typedef struct {
  GPtrArray *targets;           /* Target */
  guint cases[4];               /* the kinds of work run, by index */
  guint n_cases;
  gint64 end;
  gint stop;                    /* atomic */
  GMutex lock;                  /* guards failure and the log */
  GString *failure;
  FILE *log;
  /* counters, atomic */
  gint64 ok, poisoned, stale, async_ok;
  gint kills, faults, hangs;
  gint finished;                /* workers that have returned */
  guint n_threads;
  gint64 *progress;             /* per thread: last time it finished an op (atomic) */
} Soak;

static void
fail (Soak *soak, const char *format, ...) G_GNUC_PRINTF (2, 3);

static void
fail (Soak *soak, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *what = g_strdup_vprintf (format, args);
  va_end (args);
  g_mutex_lock (&soak->lock);
  if (soak->failure->len == 0)
    g_string_append (soak->failure, what);
  g_mutex_unlock (&soak->lock);
  g_test_message ("soak: FAILURE: %s", what);
  g_atomic_int_set (&soak->stop, 1);
}

static void
say (Soak *soak, const char *format, ...) G_GNUC_PRINTF (2, 3);

static void
say (Soak *soak, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *line = g_strdup_vprintf (format, args);
  va_end (args);
  g_test_message ("%s", line);
  g_mutex_lock (&soak->lock);
  if (soak->log)
    {
      fprintf (soak->log, "%s\n", line);
      fflush (soak->log);
    }
  g_mutex_unlock (&soak->lock);
}

/* An error that a fault injected here explains; anything else is a failure. */
static gboolean
expected (Soak *soak, GError *error, const char *what)
{
  if (g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED))
    {
      __atomic_add_fetch (&soak->poisoned, 1, __ATOMIC_RELAXED);
      return TRUE;
    }
  if (g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER))
    {
      __atomic_add_fetch (&soak->stale, 1, __ATOMIC_RELAXED);
      return TRUE;
    }
  fail (soak, "%s: unexpected error: %s (%s %d)", what, error->message, g_quark_to_string (error->domain),
        error->code);
  return FALSE;
}

static float *
random_f32 (GRand *rand, gsize n)
{
  float *data = g_new (float, n ? n : 1);
  for (gsize i = 0; i < n; i++)
    data[i] = (float) g_rand_double_range (rand, -1, 1);
  return data;
}

/* A buffer of @n f32 holding @data; NULL (a fault explained it) or a failure. */
static AccelBuffer *
upload (Soak *soak, AccelDevice *dev, const AccelShape *shape, const float *data, gboolean *ok)
{
  g_autoptr(GError) error = NULL;
  AccelBuffer *b = accel_device_alloc (dev, ACCEL_DTYPE_F32, shape, &error);
  if (b && accel_buffer_write (b, (const guint8 *) data, accel_buffer_get_size (b), &error))
    return b;
  g_clear_object (&b);
  *ok = expected (soak, error, "upload");
  return NULL;
}

static gboolean
download (Soak *soak, AccelBuffer *b, float *out, gboolean *ok)
{
  g_autoptr(GError) error = NULL;
  if (accel_buffer_read (b, (guint8 *) out, accel_buffer_get_size (b), &error))
    return TRUE;
  *ok = expected (soak, error, "download");
  return FALSE;
}

static gboolean
run_op (Soak *soak, AccelDevice *dev, AccelOp *op, gboolean *ok)
{
  g_autoptr(GError) error = NULL;
  if (accel_device_submit (dev, op, NULL, &error))
    return TRUE;
  *ok = expected (soak, error, accel_op_get_type_name (op));
  return FALSE;
}

static void
check_close (Soak *soak, const char *what, const float *got, const double *want, gsize n, double tol)
{
  for (gsize i = 0; i < n; i++)
    if (!(fabs (got[i] - want[i]) <= tol * (1 + fabs (want[i]))))
      {
        fail (soak, "%s: wrong result at %" G_GSIZE_FORMAT ": %g, expected %g", what, i, got[i], want[i]);
        return;
      }
}

/* gemm of random shapes against a double-precision reference. */
static void
case_gemm (Soak *soak, AccelDevice *dev, GRand *rand)
{
  gint64 m = g_rand_int_range (rand, 1, 48), k = g_rand_int_range (rand, 1, 48), n = g_rand_int_range (rand, 1, 48);
  g_autoptr(AccelShape) sa = accel_shape_new_2d (m, k), sb = accel_shape_new_2d (k, n), sc = accel_shape_new_2d (m, n);
  g_autofree float *a = random_f32 (rand, m * k), *b = random_f32 (rand, k * n), *c = random_f32 (rand, m * n);
  gboolean ok = TRUE;
  g_autoptr(AccelBuffer) ba = upload (soak, dev, sa, a, &ok);
  g_autoptr(AccelBuffer) bb = ba ? upload (soak, dev, sb, b, &ok) : NULL;
  g_autoptr(AccelBuffer) bc = bb ? upload (soak, dev, sc, c, &ok) : NULL;
  if (bc == NULL)
    return;
  g_autoptr(AccelOp) op = accel_gemm_new (ba, bb, bc);
  g_autofree float *out = g_new (float, m * n);
  if (!run_op (soak, dev, op, &ok) || !download (soak, bc, out, &ok))
    return;
  g_autofree double *want = g_new0 (double, m * n);
  for (gint64 i = 0; i < m; i++)
    for (gint64 j = 0; j < n; j++)
      for (gint64 p = 0; p < k; p++)
        want[i * n + j] += (double) a[i * k + p] * b[p * n + j];
  check_close (soak, "gemm", out, want, m * n, 1e-4);
  __atomic_add_fetch (&soak->ok, 1, __ATOMIC_RELAXED);
}

/* axpy, then scal, on the same buffer: each reads what the last wrote. */
static void
case_axpy_scal (Soak *soak, AccelDevice *dev, GRand *rand)
{
  gint64 n = g_rand_int_range (rand, 1, 5000);
  double alpha = g_rand_double_range (rand, -2, 2), beta = g_rand_double_range (rand, -2, 2);
  g_autoptr(AccelShape) s = accel_shape_new_1d (n);
  g_autofree float *x = random_f32 (rand, n), *y = random_f32 (rand, n);
  gboolean ok = TRUE;
  g_autoptr(AccelBuffer) bx = upload (soak, dev, s, x, &ok);
  g_autoptr(AccelBuffer) by = bx ? upload (soak, dev, s, y, &ok) : NULL;
  if (by == NULL)
    return;
  g_autoptr(AccelOp) axpy = accel_axpy_new (alpha, bx, by);
  g_autoptr(AccelOp) scal = accel_scal_new (beta, by);
  g_autofree float *out = g_new (float, n);
  if (!run_op (soak, dev, axpy, &ok) || !run_op (soak, dev, scal, &ok) || !download (soak, by, out, &ok))
    return;
  g_autofree double *want = g_new (double, n);
  for (gint64 i = 0; i < n; i++)
    want[i] = beta * ((double) (float) (alpha * x[i]) + y[i]);
  check_close (soak, "axpy+scal", out, want, n, 1e-5);
  __atomic_add_fetch (&soak->ok, 2, __ATOMIC_RELAXED);
}

/* Bytes up and down, larger than a chunk of the shared arena at times. */
static void
case_transfer (Soak *soak, AccelDevice *dev, GRand *rand)
{
  gint64 n = g_rand_int_range (rand, 1, 1 << g_rand_int_range (rand, 4, 21));
  g_autoptr(AccelShape) s = accel_shape_new_1d (n);
  g_autofree float *x = random_f32 (rand, n);
  gboolean ok = TRUE;
  g_autoptr(AccelBuffer) b = upload (soak, dev, s, x, &ok);
  if (b == NULL)
    return;
  g_autofree float *out = g_new (float, n);
  if (!download (soak, b, out, &ok))
    return;
  if (memcmp (out, x, n * sizeof (float)) != 0)
    fail (soak, "transfer of %" G_GINT64_FORMAT " f32 came back different", n);
  __atomic_add_fetch (&soak->ok, 1, __ATOMIC_RELAXED);
}

/* Several async fills in flight at once, each completed exactly once. */
typedef struct {
  gint completions;
  GError *error;
} Pending;

static void
pending_done (GObject *source, GAsyncResult *result, gpointer data)
{
  Pending *p = data;
  GError *error = NULL;
  if (!accel_device_submit_finish (ACCEL_DEVICE (source), result, &error))
    p->error = error;
  p->completions++;
}

static void
case_async (Soak *soak, AccelDevice *dev, GRand *rand)
{
  enum { N = 8 };
  gint64 n = g_rand_int_range (rand, 1, 2000);
  g_autoptr(AccelShape) s = accel_shape_new_1d (n);
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_main_context_push_thread_default (context);
  AccelBuffer *bufs[N] = { NULL };
  AccelOp *ops[N] = { NULL };
  Pending pending[N] = { { 0 } };
  double values[N];
  gboolean ok = TRUE;
  guint made = 0;

  for (; made < N; made++)
    {
      g_autoptr(GError) error = NULL;
      bufs[made] = accel_device_alloc (dev, ACCEL_DTYPE_F32, s, &error);
      if (bufs[made] == NULL)
        {
          ok = expected (soak, error, "alloc");
          break;
        }
      values[made] = g_rand_int_range (rand, -1000, 1000) / 8.0;
      ops[made] = accel_fill_new (bufs[made], values[made]);
      accel_device_submit_async (dev, ops[made], NULL, pending_done, &pending[made]);
    }
  /* Every op submitted completes, with an answer or a fault's error. */
  for (guint i = 0; i < made; i++)
    while (pending[i].completions == 0)
      g_main_context_iteration (context, TRUE);
  while (g_main_context_iteration (context, FALSE))
    ;
  g_autofree float *out = g_new (float, n);
  for (guint i = 0; i < made && ok; i++)
    {
      if (pending[i].completions != 1)
        fail (soak, "an async fill completed %d times", pending[i].completions);
      else if (pending[i].error)
        ok = expected (soak, pending[i].error, "fill");
      else if (download (soak, bufs[i], out, &ok))
        {
          for (gint64 j = 0; j < n; j++)
            if (out[j] != (float) values[i])
              {
                fail (soak, "async fill: element %" G_GINT64_FORMAT " is %g, expected %g", j, out[j], values[i]);
                break;
              }
          __atomic_add_fetch (&soak->async_ok, 1, __ATOMIC_RELAXED);
        }
    }
  for (guint i = 0; i < made; i++)
    {
      g_clear_error (&pending[i].error);
      g_object_unref (ops[i]);
      g_object_unref (bufs[i]);
    }
  g_main_context_pop_thread_default (context);
}

typedef struct {
  Soak *soak;
  guint index;
} Worker;

static gpointer
worker_thread (gpointer data)
{
  Worker *w = data;
  Soak *soak = w->soak;
  g_autoptr(GRand) rand = g_rand_new_with_seed (g_test_rand_int () ^ (w->index * 7919));

  while (!g_atomic_int_get (&soak->stop) && g_get_monotonic_time () < soak->end)
    {
      Target *t = soak->targets->pdata[g_rand_int_range (rand, 0, soak->targets->len)];
      switch (soak->cases[g_rand_int_range (rand, 0, soak->n_cases)])
        {
        case 0: case_gemm (soak, t->device, rand); break;
        case 1: case_axpy_scal (soak, t->device, rand); break;
        case 2: case_transfer (soak, t->device, rand); break;
        default: case_async (soak, t->device, rand); break;
        }
      __atomic_store_n (&soak->progress[w->index], g_get_monotonic_time (), __ATOMIC_RELAXED);
    }
  g_atomic_int_inc (&soak->finished);
  return NULL;
}

/* Kills, faults and hangs at random moments, a few seconds apart. */
static gpointer
chaos_thread (gpointer data)
{
  Soak *soak = data;
  g_autoptr(GRand) rand = g_rand_new_with_seed (g_test_rand_int ());

  while (!g_atomic_int_get (&soak->stop) && g_get_monotonic_time () < soak->end)
    {
      for (gint64 pause = g_rand_int_range (rand, 500, 6000); pause > 0 && !g_atomic_int_get (&soak->stop); pause -= 100)
        g_usleep (100 * 1000);
      Target *t = soak->targets->pdata[g_rand_int_range (rand, 0, soak->targets->len)];
      int what = g_rand_int_range (rand, 0, 100);
      if (t->remote && what < 55)
        {
          GPid pid = accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (t->device));
          if (pid > 0 && kill (pid, SIGKILL) == 0)
            g_atomic_int_inc (&soak->kills);
        }
      else if (t->remote && what < 58)
        {
          accel_actor_tell (ACCEL_ACTOR (t->device), g_variant_new ("(s)", "debug-hang"));
          g_atomic_int_inc (&soak->hangs);
        }
      else if (g_atomic_int_get (&t->can_fault))
        {
          g_autoptr(GError) error = NULL;
          g_autoptr(AccelOp) fault = accel_op_new_by_name ("fault", &error);
          if (fault && !accel_device_submit (t->device, fault, NULL, &error))
            {
              if (g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL)
                  || g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE))
                g_atomic_int_set (&t->can_fault, 0);
              else if (g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED))
                g_atomic_int_inc (&soak->faults);
              else if (!g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER))
                fail (soak, "fault: unexpected error: %s", error->message);
            }
        }
    }
  return NULL;
}

/* From /proc: resident memory in KiB (0 if the process is gone). */
static guint64
rss_kib (int pid)
{
  g_autofree char *path = pid ? g_strdup_printf ("/proc/%d/status", pid) : g_strdup ("/proc/self/status");
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  const char *line = strstr (text, "VmRSS:");
  return line ? g_ascii_strtoull (line + 6, NULL, 10) : 0;
}

static guint
open_fds (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;
  while (dir && g_dir_read_name (dir))
    n++;
  return n;
}

typedef struct {
  double minute;
  guint64 app_rss;
  guint64 host_rss;             /* the largest host's */
  guint fds;
} Sample;

static int
compare_u64 (gconstpointer a, gconstpointer b)
{
  guint64 x = *(const guint64 *) a, y = *(const guint64 *) b;
  return x < y ? -1 : x > y;
}

/* The median of each figure over the samples of minutes [@from, @to]. */
static gboolean
median_of (GArray *samples, double from, double to, Sample *out)
{
  g_autoptr(GArray) app = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_autoptr(GArray) host = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_autoptr(GArray) fds = g_array_new (FALSE, FALSE, sizeof (guint64));
  for (guint i = 0; i < samples->len; i++)
    {
      const Sample *s = &g_array_index (samples, Sample, i);
      if (s->minute < from || s->minute > to)
        continue;
      guint64 f = s->fds;
      g_array_append_val (app, s->app_rss);
      g_array_append_val (host, s->host_rss);
      g_array_append_val (fds, f);
    }
  if (app->len == 0)
    return FALSE;
  g_array_sort (app, compare_u64);
  g_array_sort (host, compare_u64);
  g_array_sort (fds, compare_u64);
  out->minute = to;
  out->app_rss = g_array_index (app, guint64, app->len / 2);
  out->host_rss = g_array_index (host, guint64, host->len / 2);
  out->fds = g_array_index (fds, guint64, fds->len / 2);
  return TRUE;
}

static void
test_soak (void)
{
  g_autoptr(GError) error = NULL;
  guint minutes = env_uint ("ACCEL_SOAK_MINUTES", 60);
  guint sample_s = MAX (env_uint ("ACCEL_SOAK_SAMPLE_S", 60), 1);
  guint hang_s = env_uint ("ACCEL_SOAK_HANG_S", 300);
  double growth = 1 + env_uint ("ACCEL_SOAK_GROWTH", 10) / 100.0;
  Soak soak = { 0 };
  soak.n_threads = MAX (env_uint ("ACCEL_SOAK_THREADS", 16), 1);
  soak.failure = g_string_new (NULL);
  soak.progress = g_new0 (gint64, soak.n_threads);
  g_mutex_init (&soak.lock);
  const char *log_path = g_getenv ("ACCEL_SOAK_LOG");
  if (log_path && *log_path)
    soak.log = fopen (log_path, "a");

  const char *case_names[] = { "gemm", "axpy", "transfer", "async" };
  const char *cases = g_getenv ("ACCEL_SOAK_CASES");
  for (guint i = 0; i < G_N_ELEMENTS (case_names); i++)
    if (cases == NULL || strstr (cases, case_names[i]))
      soak.cases[soak.n_cases++] = i;
  g_assert_cmpuint (soak.n_cases, >, 0);

  g_autoptr(AccelSystem) system = accel_system_new (&error);
  g_assert_no_error (error);
  soak.targets = g_ptr_array_new ();
  AccelBackend *cpu = accel_system_get_backend (system, "cpu", &error);
  g_assert_no_error (error);
  Target remote = { accel_remote_device_new (cpu, "remote-cpu:0", "cpu:0", NULL, &error), TRUE, TRUE };
  /* Faults only where a host takes them: in this process a sticky one
   * leaves a GPU FAILED for good, as it should. */
  g_assert_no_error (error);
  g_ptr_array_add (soak.targets, &remote);
  g_autoptr(GPtrArray) devices = accel_system_list_devices (system);
  Target gpus[16];
  guint n_gpus = 0;
  for (guint i = 0; i < devices->len && n_gpus < G_N_ELEMENTS (gpus); i++)
    {
      AccelDevice *d = devices->pdata[i];
      if (g_strcmp0 (accel_device_get_backend_name (d), "cuda") != 0)
        continue;
      gpus[n_gpus] = (Target) { g_object_ref (d), ACCEL_IS_REMOTE_DEVICE (d), ACCEL_IS_REMOTE_DEVICE (d) };
      g_ptr_array_add (soak.targets, &gpus[n_gpus++]);
    }
  for (guint i = 0; i < soak.targets->len; i++)
    {
      Target *t = soak.targets->pdata[i];
      /* Restarts without limit; a host silent for 10 s with work is hung. */
      accel_actor_set_strategy (ACCEL_ACTOR (t->device), G_MAXUINT, 1000, NULL, NULL, NULL);
      if (t->remote)
        accel_remote_device_set_deadline_ms (ACCEL_REMOTE_DEVICE (t->device), 10000);
    }

  say (&soak, "## Soak: %u minutes, %u threads, devices:", minutes, soak.n_threads);
  for (guint i = 0; i < soak.targets->len; i++)
    say (&soak, "- %s%s", accel_device_get_name (((Target *) soak.targets->pdata[i])->device),
         ((Target *) soak.targets->pdata[i])->remote ? " (served by accel-device-host)" : "");
  say (&soak, "\n| minute | app RSS (MiB) | largest host RSS (MiB) | open fds | ops verified | async fills | poisoned | stale | kills | faults | hangs | generation |");
  say (&soak, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");

  gint64 start = g_get_monotonic_time ();
  soak.end = start + (gint64) minutes * 60 * G_USEC_PER_SEC;
  for (guint i = 0; i < soak.n_threads; i++)
    soak.progress[i] = start;
  GThread *chaos = env_uint ("ACCEL_SOAK_CHAOS", 1) ? g_thread_new ("soak-chaos", chaos_thread, &soak) : NULL;
  g_autofree Worker *workers = g_new (Worker, soak.n_threads);
  g_autofree GThread **threads = g_new (GThread *, soak.n_threads);
  for (guint i = 0; i < soak.n_threads; i++)
    {
      workers[i] = (Worker) { &soak, i };
      threads[i] = g_thread_new ("soak-worker", worker_thread, &workers[i]);
    }

  g_autoptr(GArray) samples = g_array_new (FALSE, FALSE, sizeof (Sample));
  gint64 next_sample = start;
  while (g_get_monotonic_time () < soak.end && !g_atomic_int_get (&soak.stop))
    {
      gint64 now = g_get_monotonic_time ();
      for (guint i = 0; i < soak.n_threads; i++)
        if (now - __atomic_load_n (&soak.progress[i], __ATOMIC_RELAXED) > (gint64) hang_s * G_USEC_PER_SEC)
          fail (&soak, "worker %u made no progress for %u s (a hang or a lost completion)", i, hang_s);
      if (now >= next_sample)
        {
          Sample s = { (now - start) / 60e6, rss_kib (0), 0, open_fds () };
          for (guint i = 0; i < soak.targets->len; i++)
            {
              Target *t = soak.targets->pdata[i];
              GPid pid = t->remote ? accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (t->device)) : 0;
              if (pid > 0)
                s.host_rss = MAX (s.host_rss, rss_kib (pid));
            }
          g_array_append_val (samples, s);
          say (&soak, "| %.1f | %.1f | %.1f | %u | %" G_GINT64_FORMAT " | %" G_GINT64_FORMAT " | %" G_GINT64_FORMAT
               " | %" G_GINT64_FORMAT " | %d | %d | %d | %u |",
               s.minute, s.app_rss / 1024.0, s.host_rss / 1024.0, s.fds, __atomic_load_n (&soak.ok, __ATOMIC_RELAXED),
               __atomic_load_n (&soak.async_ok, __ATOMIC_RELAXED), __atomic_load_n (&soak.poisoned, __ATOMIC_RELAXED),
               __atomic_load_n (&soak.stale, __ATOMIC_RELAXED), g_atomic_int_get (&soak.kills),
               g_atomic_int_get (&soak.faults), g_atomic_int_get (&soak.hangs),
               accel_device_get_generation (remote.device));
          next_sample += (gint64) sample_s * G_USEC_PER_SEC;
        }
      g_usleep (200 * 1000);
    }

  /* Let the threads finish their op; one stuck here is a hang too. */
  g_atomic_int_set (&soak.stop, 1);
  gint64 deadline = g_get_monotonic_time () + (gint64) hang_s * G_USEC_PER_SEC;
  while (g_atomic_int_get (&soak.finished) < (gint) soak.n_threads)
    {
      if (g_get_monotonic_time () > deadline)
        g_error ("soak: %d of %u workers did not finish their op within %u s of the end (a hang or a lost "
                 "completion); %s", soak.n_threads - g_atomic_int_get (&soak.finished), soak.n_threads, hang_s,
                 soak.failure->str);
      g_usleep (100 * 1000);
    }
  for (guint i = 0; i < soak.n_threads; i++)
    g_thread_join (threads[i]);
  if (chaos)
    g_thread_join (chaos);

  /* Growth: the median of the last ten minutes' samples (a third of the
   * run, if shorter) against the median of the warm-up's second half. A
   * host is replaced every few seconds and either process's memory moves
   * with the transfers in flight, so one sample alone is no level; a leak
   * moves the median. */
  double warmup = MIN (10.0, minutes / 3.0);
  double tail_from = (g_get_monotonic_time () - start) / 60e6 - MIN (10.0, minutes / 3.0);
  Sample level, late;
  gboolean have = median_of (samples, warmup / 2, warmup, &level)
                  && median_of (samples, MAX (tail_from, warmup + 1e-9), G_MAXDOUBLE, &late);
  Sample *base = have ? &level : NULL;
  if (have)
    {
      say (&soak, "\nMedians: warm-up (minutes %.1f to %.1f) app %.1f MiB, host %.1f MiB, %u fds; "
           "last %.0f minutes app %.1f MiB, host %.1f MiB, %u fds.",
           warmup / 2, warmup, level.app_rss / 1024.0, level.host_rss / 1024.0, level.fds,
           MIN (10.0, minutes / 3.0), late.app_rss / 1024.0, late.host_rss / 1024.0, late.fds);
      if (late.app_rss > level.app_rss * growth)
        fail (&soak, "the application's RSS grew from %.1f MiB to %.1f MiB (medians)", level.app_rss / 1024.0,
              late.app_rss / 1024.0);
      if (level.host_rss && late.host_rss > level.host_rss * growth)
        fail (&soak, "the device hosts' RSS grew from %.1f MiB to %.1f MiB (medians)", level.host_rss / 1024.0,
              late.host_rss / 1024.0);
      if (late.fds > level.fds * growth + 2)
        fail (&soak, "open descriptors grew from %u to %u (medians)", level.fds, late.fds);
    }
  if (base == NULL && minutes > 0)
    fail (&soak, "no sample after the warm-up of %.1f minutes", warmup);
  if (soak.ok == 0)
    fail (&soak, "no op was verified");
  if (soak.kills + soak.faults == 0 && minutes > 0 && chaos)
    fail (&soak, "no fault was injected");

  say (&soak, "\nResult: %s. %" G_GINT64_FORMAT " ops verified and %" G_GINT64_FORMAT " async fills in %.1f minutes; "
       "%" G_GINT64_FORMAT " poisoned and %" G_GINT64_FORMAT " stale (all explained by %d host kills, %d injected faults "
       "and %d hangs); remote-cpu:0 at generation %u.",
       soak.failure->len ? soak.failure->str : "passed", soak.ok, soak.async_ok,
       (g_get_monotonic_time () - start) / 60e6, soak.poisoned, soak.stale, soak.kills, soak.faults, soak.hangs,
       accel_device_get_generation (remote.device));
  g_assert_cmpstr (soak.failure->str, ==, "");

  for (guint i = 0; i < n_gpus; i++)
    g_object_unref (gpus[i].device);
  g_object_unref (remote.device);
  g_ptr_array_unref (soak.targets);
  if (soak.log)
    fclose (soak.log);
  g_string_free (soak.failure, TRUE);
  g_free (soak.progress);
  g_mutex_clear (&soak.lock);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/soak/remote-and-gpus", test_soak);
  return g_test_run ();
}
