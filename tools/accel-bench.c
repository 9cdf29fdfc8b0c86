/* accel-bench: measures Accel beside the raw thing it wraps, in the same run.
 *
 *   accel-bench [--device NAME] [--json FILE] [--quick] GROUP...
 *
 * Groups here: `dispatch` (round trip of a trivial op, blocking and async,
 * beside calling its kernel directly; pipelined ops per second) and `gemm`
 * (Accel's gemm beside cblas_sgemm/dgemm on the same data). Other files add
 * groups through accel-bench.h.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <unistd.h>
#include <cblas.h>
#include "accel-config.h"
#include "accel-bench.h"

typedef struct {
  char *name;
  char *unit;
  double value;
  double baseline;
} Result;

struct _AccelBench {
  AccelSystem *system;
  AccelDevice *device;
  gboolean quick;
  gboolean tty;
  gboolean verbose;  /* progress and each result as lines on stderr */
  GArray *results;   /* Result */
};

#ifdef ACCEL_BENCH_CUDA_GROUPS
extern const AccelBenchGroup accel_bench_cuda_groups[];
extern const AccelBenchGroup accel_bench_cuda_graph_groups[];
#endif
#ifdef ACCEL_BENCH_LIBS_GROUPS
extern const AccelBenchGroup accel_bench_libs_groups[];
extern const AccelBenchGroup accel_bench_libs_cutlass_groups[];
#endif
#ifdef ACCEL_BENCH_FLASHATTN_GROUPS
extern const AccelBenchGroup accel_bench_flashattn_groups[];
#endif
#ifdef ACCEL_BENCH_MEDIA_GROUPS
/* accel-bench-media: runs all of its groups when none is named. */
extern const AccelBenchGroup accel_bench_media_groups[];
#define DEFAULT_GROUPS accel_bench_media_groups
#endif

/* The group tables accel-bench knows; add yours here. */
static const AccelBenchGroup *const group_tables[] = {
  accel_bench_core_groups,
  accel_bench_remote_groups,
  accel_bench_journal_groups,
  accel_bench_patterns_groups,
  accel_bench_interop_groups,
#ifdef ACCEL_BENCH_CUDA_GROUPS
  accel_bench_cuda_groups,
  accel_bench_cuda_graph_groups,
#endif
#ifdef ACCEL_BENCH_LIBS_GROUPS
  accel_bench_libs_groups,
  accel_bench_libs_cutlass_groups,
#endif
#ifdef ACCEL_BENCH_FLASHATTN_GROUPS
  accel_bench_flashattn_groups,
#endif
#ifdef ACCEL_BENCH_MEDIA_GROUPS
  accel_bench_media_groups,
#endif
};

AccelSystem *
accel_bench_get_system (AccelBench *bench)
{
  return bench->system;
}

AccelDevice *
accel_bench_get_device (AccelBench *bench)
{
  return bench->device;
}

gboolean
accel_bench_is_quick (AccelBench *bench)
{
  return bench->quick;
}

void
accel_bench_report (AccelBench *bench, const char *name, const char *unit, double value, double baseline)
{
  Result r = { g_strdup (name), g_strdup (unit), value, baseline };
  g_array_append_val (bench->results, r);
  if (bench->verbose)
    fprintf (stderr, "result %s %g %s (baseline %g)\n", name, value, unit, baseline);
  else if (bench->tty)
    fprintf (stderr, "\r\033[K");
}

void
accel_bench_progress (AccelBench *bench, const char *format, ...)
{
  if (!bench->tty && !bench->verbose)
    return;
  va_list args;
  va_start (args, format);
  g_autofree char *line = g_strdup_vprintf (format, args);
  va_end (args);
  if (bench->verbose)
    fprintf (stderr, "progress %s\n", line);
  else
    fprintf (stderr, "\r\033[K%s", line);
  fflush (stderr);
}

double
accel_bench_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

double
accel_bench_quantile (double *samples, gsize n, double q)
{
  if (n == 0)
    return NAN;
  qsort (samples, n, sizeof (double), compare_doubles);
  gsize i = (gsize) floor (q * (double) (n - 1) + 0.5);
  return samples[MIN (i, n - 1)];
}

typedef struct {
  guint completed;
  guint submitted;
  guint total;
  AccelDevice *device;
  AccelOp **ops;
  guint n_ops;
  GError *error;
} Flight;

static void
flight_done (GObject *source, GAsyncResult *result, gpointer data)
{
  Flight *f = data;
  GError *error = NULL;
  if (!accel_device_submit_finish (ACCEL_DEVICE (source), result, &error) && f->error == NULL)
    f->error = error;
  else
    g_clear_error (&error);
  f->completed++;
  if (f->submitted < f->total)
    {
      f->submitted++;
      accel_device_submit_async (f->device, f->ops[(f->submitted - 1) % f->n_ops], NULL, flight_done, f);
    }
}

double
accel_bench_run_ops_in_flight (AccelDevice *device, AccelOp **ops, guint n_ops, guint total, guint in_flight,
                               GError **error)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_main_context_push_thread_default (context);
  Flight f = { 0, 0, total, device, ops, n_ops, NULL };
  double t0 = accel_bench_now ();
  for (guint i = 0; i < in_flight && f.submitted < total; i++)
    {
      f.submitted++;
      accel_device_submit_async (device, ops[(f.submitted - 1) % n_ops], NULL, flight_done, &f);
    }
  while (f.completed < total)
    g_main_context_iteration (context, TRUE);
  double elapsed = accel_bench_now () - t0;
  g_main_context_pop_thread_default (context);
  if (f.error)
    {
      g_propagate_error (error, f.error);
      return -1.0;
    }
  return elapsed;
}

double
accel_bench_run_in_flight (AccelDevice *device, AccelOp *op, guint total, guint in_flight, GError **error)
{
  return accel_bench_run_ops_in_flight (device, &op, 1, total, in_flight, error);
}

/* dispatch */

typedef struct {
  AccelDevice *device;
  AccelOp *op;
  GError *error;
  gboolean done;
  double t_done;
} Dispatch;

static void
async_done (GObject *source, GAsyncResult *result, gpointer data)
{
  Dispatch *d = data;
  GError *error = NULL;
  if (!accel_device_submit_finish (ACCEL_DEVICE (source), result, &error) && d->error == NULL)
    d->error = error;
  else
    g_clear_error (&error);
  d->t_done = accel_bench_now ();
  d->done = TRUE;
}

gboolean
accel_bench_blocking_round_trips (AccelDevice *device, AccelOp *op, guint n, double *samples, GError **error)
{
  for (guint i = 0; i < n / 10; i++)
    if (!accel_device_submit (device, op, NULL, error))
      return FALSE;
  for (guint i = 0; i < n; i++)
    {
      double t0 = accel_bench_now ();
      if (!accel_device_submit (device, op, NULL, error))
        return FALSE;
      samples[i] = accel_bench_now () - t0;
    }
  return TRUE;
}

gboolean
accel_bench_async_round_trips (AccelDevice *device, AccelOp *op, guint n, double *samples, GError **error)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_main_context_push_thread_default (context);
  Dispatch d = { device, op };
  for (guint i = 0; i < n + n / 10 && d.error == NULL; i++)
    {
      d.done = FALSE;
      double t0 = accel_bench_now ();
      accel_device_submit_async (device, op, NULL, async_done, &d);
      while (!d.done)
        g_main_context_iteration (context, TRUE);
      if (i >= n / 10)
        samples[i - n / 10] = d.t_done - t0;
    }
  g_main_context_pop_thread_default (context);
  if (d.error)
    {
      g_propagate_error (error, d.error);
      return FALSE;
    }
  return TRUE;
}

static gboolean
run_dispatch (AccelBench *bench, GError **error)
{
  AccelDevice *device = bench->device;
  const guint n = bench->quick ? 2000 : 20000;
  const guint batch = 100;   /* direct calls per timed sample: the clock costs more than one */
  gint64 one = 1;
  g_autoptr(AccelShape) shape = accel_shape_new (&one, 1);

  /* The baseline: the same op's CPU kernel called directly on this thread. */
  g_autoptr(AccelDevice) cpu = accel_system_get_device (bench->system, "cpu:0", error);
  if (cpu == NULL)
    return FALSE;
  g_autoptr(AccelBuffer) cpu_buf = accel_device_alloc (cpu, ACCEL_DTYPE_F32, shape, error);
  if (cpu_buf == NULL)
    return FALSE;
  g_autoptr(AccelOp) cpu_op = accel_fill_new (cpu_buf, 1.0);
  const AccelKernel *kernel = accel_registry_find_kernel (accel_system_get_registry (bench->system),
                                                          cpu_op, cpu, error);
  if (kernel == NULL)
    return FALSE;

  g_autofree double *direct = g_new (double, n);
  accel_bench_progress (bench, "dispatch: direct kernel calls");
  for (guint i = 0; i < n / 10; i++)
    if (!accel_kernel_run (kernel, cpu_op, NULL, error))
      return FALSE;
  for (guint i = 0; i < n; i++)
    {
      double t0 = accel_bench_now ();
      for (guint j = 0; j < batch; j++)
        accel_kernel_run (kernel, cpu_op, NULL, NULL);
      direct[i] = (accel_bench_now () - t0) / batch;
    }

  g_autoptr(AccelBuffer) buf = accel_device_alloc (device, ACCEL_DTYPE_F32, shape, error);
  if (buf == NULL)
    return FALSE;
  g_autoptr(AccelOp) op = accel_fill_new (buf, 1.0);

  /* Blocking round trips. */
  g_autofree double *blocking = g_new (double, n);
  accel_bench_progress (bench, "dispatch: blocking submit");
  if (!accel_bench_blocking_round_trips (device, op, n, blocking, error))
    return FALSE;

  g_autofree double *async = g_new (double, n);
  accel_bench_progress (bench, "dispatch: async submit");
  if (!accel_bench_async_round_trips (device, op, n, async, error))
    return FALSE;

  /* Pipelined: 256 in flight. */
  const guint in_flight = 256, total = bench->quick ? 20000 : 200000;
  accel_bench_progress (bench, "dispatch: pipelined, %u in flight", in_flight);
  double elapsed = accel_bench_run_in_flight (device, op, total, in_flight, error);
  if (elapsed < 0)
    return FALSE;

  double direct_p50 = accel_bench_quantile (direct, n, 0.5) * 1e6;
  double direct_p99 = accel_bench_quantile (direct, n, 0.99) * 1e6;
  accel_bench_report (bench, "dispatch.submit-blocking.p50", "us",
                      accel_bench_quantile (blocking, n, 0.5) * 1e6, direct_p50);
  accel_bench_report (bench, "dispatch.submit-blocking.p99", "us",
                      accel_bench_quantile (blocking, n, 0.99) * 1e6, direct_p99);
  accel_bench_report (bench, "dispatch.submit-async.p50", "us",
                      accel_bench_quantile (async, n, 0.5) * 1e6, direct_p50);
  accel_bench_report (bench, "dispatch.submit-async.p99", "us",
                      accel_bench_quantile (async, n, 0.99) * 1e6, direct_p99);
  accel_bench_report (bench, "dispatch.pipelined-256", "ops/s", total / elapsed, NAN);
  return TRUE;
}

/* gemm */

static gpointer
host_copy (AccelBuffer *buffer, GError **error)
{
  g_autoptr(GBytes) bytes = accel_buffer_download (buffer, error);
  if (bytes == NULL)
    return NULL;
  gsize size = 0;
  const void *data = g_bytes_get_data (bytes, &size);
  void *copy = NULL;
  if (posix_memalign (&copy, 64, MAX (size, 64)) != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY, "no memory for a host copy");
      return NULL;
    }
  memcpy (copy, data, size);
  return copy;
}

static gboolean
run_gemm_case (AccelBench *bench, AccelDType dtype, gint64 n, guint reps, GError **error)
{
  AccelDevice *device = bench->device;
  g_autoptr(AccelShape) shape = accel_shape_new_2d (n, n);
  g_autoptr(AccelBuffer) a = accel_device_alloc (device, dtype, shape, error);
  g_autoptr(AccelBuffer) b = a ? accel_device_alloc (device, dtype, shape, error) : NULL;
  g_autoptr(AccelBuffer) c = b ? accel_device_alloc (device, dtype, shape, error) : NULL;
  if (c == NULL)
    return FALSE;

  g_autoptr(AccelOp) fa = accel_rng_fill_new (a, ACCEL_RNG_UNIFORM, 1);
  g_autoptr(AccelOp) fb = accel_rng_fill_new (b, ACCEL_RNG_UNIFORM, 2);
  g_object_set (fa, "low", -1.0, NULL);
  g_object_set (fb, "low", -1.0, NULL);
  if (!accel_device_submit (device, fa, NULL, error) || !accel_device_submit (device, fb, NULL, error))
    return FALSE;

  void *ha = host_copy (a, error);
  void *hb = ha ? host_copy (b, error) : NULL;
  void *hc = hb ? host_copy (c, error) : NULL;
  gboolean ok = hc != NULL;
  g_autoptr(AccelOp) op = accel_gemm_new (a, b, c);
  g_autofree double *t_accel = g_new (double, reps);
  g_autofree double *t_direct = g_new (double, reps);
  const char *name = accel_dtype_get_name (dtype);

  /* One warm-up each, then alternate so that both see the same machine. */
  for (guint r = 0; ok && r <= reps; r++)
    {
      accel_bench_progress (bench, "gemm %s %" G_GINT64_FORMAT "^3: %u/%u", name, n, r, reps);
      double t0 = accel_bench_now ();
      ok = accel_device_submit (device, op, NULL, error);
      double t1 = accel_bench_now ();
      if (dtype == ACCEL_DTYPE_F32)
        cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) n, (int) n, (int) n,
                     1.0f, ha, (int) n, hb, (int) n, 0.0f, hc, (int) n);
      else
        cblas_dgemm (CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) n, (int) n, (int) n,
                     1.0, ha, (int) n, hb, (int) n, 0.0, hc, (int) n);
      double t2 = accel_bench_now ();
      if (r > 0)
        {
          t_accel[r - 1] = t1 - t0;
          t_direct[r - 1] = t2 - t1;
        }
    }

  if (ok)
    {
      double flops = 2.0 * (double) n * (double) n * (double) n;
      g_autofree char *label = g_strdup_printf ("gemm.%s.%" G_GINT64_FORMAT, name, n);
      accel_bench_report (bench, label, "GFLOP/s",
                          flops / accel_bench_quantile (t_accel, reps, 0.5) * 1e-9,
                          flops / accel_bench_quantile (t_direct, reps, 0.5) * 1e-9);
    }
  free (ha);
  free (hb);
  free (hc);
  return ok;
}

static gboolean
run_gemm (AccelBench *bench, GError **error)
{
  if (bench->quick)
    return run_gemm_case (bench, ACCEL_DTYPE_F32, 1024, 3, error)
           && run_gemm_case (bench, ACCEL_DTYPE_F64, 512, 3, error);
  return run_gemm_case (bench, ACCEL_DTYPE_F32, 2048, 7, error)
         && run_gemm_case (bench, ACCEL_DTYPE_F32, 1024, 11, error)
         && run_gemm_case (bench, ACCEL_DTYPE_F64, 2048, 5, error)
         && run_gemm_case (bench, ACCEL_DTYPE_F64, 1024, 11, error);
}

const AccelBenchGroup accel_bench_core_groups[] = {
  { "dispatch", "round trip of a one-element fill (blocking, async) beside a direct kernel call; pipelined ops/s",
    run_dispatch },
  { "gemm", "gemm on the device beside cblas_sgemm/dgemm on the same data", run_gemm },
  { NULL, NULL, NULL },
};

/* Output */

static char *
format_number (double v)
{
  if (isnan (v))
    return g_strdup ("-");
  if (fabs (v) >= 1e5)
    return g_strdup_printf ("%.0f", v);
  return g_strdup_printf ("%.3g", v);
}

static void
print_table (AccelBench *bench)
{
  printf ("%-32s %-8s %14s %14s %10s\n", "name", "unit", "value", "baseline", "ratio");
  for (guint i = 0; i < bench->results->len; i++)
    {
      Result *r = &g_array_index (bench->results, Result, i);
      g_autofree char *v = format_number (r->value);
      g_autofree char *b = format_number (r->baseline);
      g_autofree char *q = format_number (r->value / r->baseline);
      printf ("%-32s %-8s %14s %14s %10s\n", r->name, r->unit, v, b, q);
    }
}

static void
json_number (GString *s, double v)
{
  if (!isfinite (v))
    g_string_append (s, "null");
  else
    g_string_append_printf (s, "%.17g", v);
}

static void
json_string (GString *s, const char *text)
{
  g_string_append_c (s, '"');
  for (const char *p = text; *p; p++)
    {
      if (*p == '"' || *p == '\\')
        g_string_append_printf (s, "\\%c", *p);
      else if ((guchar) *p < 0x20)
        g_string_append_printf (s, "\\u%04x", (guchar) *p);
      else
        g_string_append_c (s, *p);
    }
  g_string_append_c (s, '"');
}

static gboolean
write_json (AccelBench *bench, const char *path, GError **error)
{
  g_autoptr(GString) s = g_string_new ("{\n  \"device\": ");
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *date = g_date_time_format_iso8601 (now);

  json_string (s, accel_device_get_name (bench->device));
  g_string_append (s, ",\n  \"date\": ");
  json_string (s, date);
  g_string_append (s, ",\n  \"version\": ");
  json_string (s, ACCEL_VERSION);
  g_string_append_printf (s, ",\n  \"cpus\": %u,\n  \"results\": [", g_get_num_processors ());
  for (guint i = 0; i < bench->results->len; i++)
    {
      Result *r = &g_array_index (bench->results, Result, i);
      g_string_append (s, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
      json_string (s, r->name);
      g_string_append (s, ", \"unit\": ");
      json_string (s, r->unit);
      g_string_append (s, ", \"value\": ");
      json_number (s, r->value);
      g_string_append (s, ", \"baseline\": ");
      json_number (s, r->baseline);
      g_string_append (s, ", \"ratio\": ");
      json_number (s, r->value / r->baseline);
      g_string_append_c (s, '}');
    }
  g_string_append (s, "\n  ]\n}\n");
  return g_file_set_contents (path, s->str, s->len, error);
}

static const AccelBenchGroup *
find_group (const char *name)
{
  for (guint t = 0; t < G_N_ELEMENTS (group_tables); t++)
    for (const AccelBenchGroup *g = group_tables[t]; g->name; g++)
      if (g_str_equal (g->name, name))
        return g;
  return NULL;
}

static void
clear_result (gpointer data)
{
  Result *r = data;
  g_free (r->name);
  g_free (r->unit);
}

int
main (int argc, char **argv)
{
  g_autofree char *device_name = NULL;
  g_autofree char *json = NULL;
  gboolean quick = FALSE, list = FALSE, verbose = FALSE;
  g_autoptr(GError) error = NULL;
  GOptionEntry entries[] = {
    { "device", 'd', 0, G_OPTION_ARG_STRING, &device_name, "Device to measure (default: default)", "NAME" },
    { "json", 'j', 0, G_OPTION_ARG_FILENAME, &json, "Also write the results as JSON", "FILE" },
    { "quick", 'q', 0, G_OPTION_ARG_NONE, &quick, "Smaller sizes and fewer repetitions", NULL },
    { "list", 'l', 0, G_OPTION_ARG_NONE, &list, "List the groups", NULL },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "Progress and each result as lines on stderr, as they come", NULL },
    { NULL },
  };
  g_autoptr(GOptionContext) options = g_option_context_new ("GROUP… — measure Accel beside its baselines");
  g_option_context_add_main_entries (options, entries, NULL);
  if (!g_option_context_parse (options, &argc, &argv, &error))
    {
      g_printerr ("accel-bench: %s\n", error->message);
      return 2;
    }

#ifdef DEFAULT_GROUPS
  g_autoptr(GPtrArray) all = g_ptr_array_new ();
  if (!list && argc < 2)
    {
      g_ptr_array_add (all, argv[0]);
      for (const AccelBenchGroup *g = DEFAULT_GROUPS; g->name; g++)
        g_ptr_array_add (all, (gpointer) g->name);
      argc = (int) all->len;
      argv = (char **) all->pdata;
    }
#endif
  if (list || argc < 2)
    {
      for (guint t = 0; t < G_N_ELEMENTS (group_tables); t++)
        for (const AccelBenchGroup *g = group_tables[t]; g->name; g++)
          printf ("%-12s %s\n", g->name, g->description);
      return list ? 0 : 2;
    }
  for (int i = 1; i < argc; i++)
    if (find_group (argv[i]) == NULL)
      {
        g_printerr ("accel-bench: no group “%s” (--list shows them)\n", argv[i]);
        return 2;
      }

  accel_bench_install_crash_report ();
  AccelBench bench = { .quick = quick, .tty = isatty (STDERR_FILENO) && !verbose, .verbose = verbose };
  bench.results = g_array_new (FALSE, TRUE, sizeof (Result));
  g_array_set_clear_func (bench.results, clear_result);
  bench.system = accel_system_new (&error);
  if (bench.system)
    bench.device = accel_system_get_device (bench.system, device_name ? device_name : "default", &error);
  if (bench.device == NULL)
    {
      g_printerr ("accel-bench: %s\n", error->message);
      return 1;
    }

  int status = 0;
  for (int i = 1; i < argc && status == 0; i++)
    {
      const AccelBenchGroup *g = find_group (argv[i]);
      if (!g->run (&bench, &error))
        {
          if (bench.tty)
            fprintf (stderr, "\r\033[K");
          g_printerr ("accel-bench: %s: %s\n", g->name, error->message);
          status = 1;
        }
    }
  if (bench.tty)
    fprintf (stderr, "\r\033[K");

  printf ("device: %s\n", accel_device_get_name (bench.device));
  print_table (&bench);
  if (json && !write_json (&bench, json, &error))
    {
      g_printerr ("accel-bench: %s\n", error->message);
      status = 1;
    }

  g_array_unref (bench.results);
  g_clear_object (&bench.device);
  accel_system_shutdown (bench.system);
  g_clear_object (&bench.system);
  return status;
}
