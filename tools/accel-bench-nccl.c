/* accel-bench-nccl: bus bandwidth of Accel's all-reduce and all-gather
 * beside the raw collective on the same buffers, in the same run.
 *
 *   accel-bench-nccl [--backend cuda|cpu] [--ranks 2,4] [--min-bytes 8]
 *                    [--max-bytes 1G] [--quick] [--json FILE]
 *
 * Bus bandwidth as nccl-tests defines it: algbw = S / t, where S is the
 * all-reduce's buffer size or the all-gather's whole output, and busbw =
 * algbw × 2(n−1)/n for all-reduce, × (n−1)/n for all-gather (with one rank
 * the algbw is shown). Each size is run back to back a number of times
 * after a warm-up, and the time per collective taken from the total, as
 * nccl-tests does.
 *
 * CUDA (the default where there is a GPU): every local GPU count from 1 to
 * all of them, or --ranks, and then the peer copy from the first GPU to
 * the second beside cudaMemcpyPeerAsync on the same buffers; the devices run in this process
 * (ACCEL_CUDA_ISOLATION=none unless set otherwise) so that the baseline,
 * ncclAllReduce/ncclAllGather called directly on the same buffers (one
 * group call over every GPU, as nccl-tests), can be run; with devices in
 * host processes there is no baseline. CPU: cpu devices, the CPU
 * collectives beside one thread doing the same reduction and copies on the
 * same buffers.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include "accel-config.h"
#include <accel.h>
#include "accel-bench-nccl.h"

typedef struct {
  char *name;
  char *unit;
  double value;
  double baseline;
} Result;

typedef struct {
  AccelSystem *system;
  gboolean cuda;
  gboolean quick;
  GArray *results;
  char *device_desc;
} Bench;

static void
report (Bench *b, const char *name, const char *unit, double value, double baseline)
{
  Result r = { g_strdup (name), g_strdup (unit), value, baseline };
  g_array_append_val (b->results, r);
  if (isnan (baseline))
    printf ("%-52s %12.3f %-6s\n", name, value, unit);
  else
    printf ("%-52s %12.3f %-6s  baseline %12.3f  ratio %.3f\n", name, value, unit, baseline, value / baseline);
  fflush (stdout);
}

static char *
size_name (gsize bytes)
{
  if (bytes >= (1 << 30) && bytes % (1 << 30) == 0)
    return g_strdup_printf ("%" G_GSIZE_FORMAT " GiB", bytes >> 30);
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0)
    return g_strdup_printf ("%" G_GSIZE_FORMAT " MiB", bytes >> 20);
  if (bytes >= (1 << 10) && bytes % (1 << 10) == 0)
    return g_strdup_printf ("%" G_GSIZE_FORMAT " KiB", bytes >> 10);
  return g_strdup_printf ("%" G_GSIZE_FORMAT " B", bytes);
}

/* The CPU baseline: one thread reduces the same buffers and copies the
 * result to every rank (all-reduce), or copies every block everywhere
 * (all-gather). */
static double
cpu_baseline (BenchCollective what, AccelBuffer **src, AccelBuffer **dst, guint n, gsize bytes, int iters)
{
  gsize count = bytes / 4;
  g_autofree float *tmp = g_new (float, MAX (count, 1));
  gint64 t0 = g_get_monotonic_time ();
  for (int k = 0; k < iters; k++)
    {
      if (what == BENCH_ALL_REDUCE)
        {
          memcpy (tmp, accel_buffer_get_data (src[0]), count * 4);
          for (guint r = 1; r < n; r++)
            {
              const float *s = accel_buffer_get_data (src[r]);
              for (gsize i = 0; i < count; i++)
                tmp[i] += s[i];
            }
          for (guint r = 0; r < n; r++)
            memcpy (accel_buffer_get_data (dst[r]), tmp, count * 4);
        }
      else
        for (guint r = 0; r < n; r++)
          for (guint q = 0; q < n; q++)
            memcpy ((guint8 *) accel_buffer_get_data (dst[r]) + q * bytes, accel_buffer_get_data (src[q]), bytes);
    }
  return (g_get_monotonic_time () - t0) / 1e6 / iters;
}

typedef struct {
  int left;
  GError *error;
} Waiting;

/* The answer of a collective or of a device's op. */
static void
done (GObject *source, GAsyncResult *result, gpointer data)
{
  Waiting *w = data;
  GError *error = NULL;
  if (ACCEL_IS_COMMUNICATOR (source) ? !accel_communicator_submit_finish (ACCEL_COMMUNICATOR (source), result, &error)
                                     : !accel_device_submit_finish (ACCEL_DEVICE (source), result, &error))
    {
      if (w->error == NULL)
        w->error = error;
      else
        g_error_free (error);
    }
  w->left--;
}

static double
accel_time (AccelCommunicator *comm, AccelOp **ops, guint n, int warmup, int iters, GError **error)
{
  for (int k = 0; k < warmup; k++)
    if (!accel_communicator_submit (comm, ops, n, NULL, error))
      return -1;
  Waiting w = { iters, NULL };
  gint64 t0 = g_get_monotonic_time ();
  for (int k = 0; k < iters; k++)
    accel_communicator_submit_async (comm, ops, n, NULL, done, &w);
  while (w.left > 0)
    g_main_context_iteration (NULL, TRUE);
  double t = (g_get_monotonic_time () - t0) / 1e6 / iters;
  if (w.error)
    {
      g_propagate_error (error, w.error);
      return -1;
    }
  return t;
}

static gboolean
run_size (Bench *b, AccelCommunicator *comm, AccelDevice **devs, guint n, BenchCollective what, gsize bytes,
          BenchNcclRaw *raw, GError **error)
{
  /* bytes: the all-reduce's buffer, the all-gather's whole output. */
  gsize per_rank = what == BENCH_ALL_REDUCE ? bytes : bytes / n;
  if (per_rank < 4 || per_rank % 4)
    return TRUE;
  gsize out_bytes = what == BENCH_ALL_REDUCE ? bytes : per_rank * n;
  AccelBuffer *src[16], *dst[16];
  AccelOp *ops[16];
  void *src_ptr[16], *dst_ptr[16];
  gboolean ok = TRUE;

  for (guint r = 0; r < n; r++)
    {
      g_autoptr(AccelShape) s_shape = accel_shape_new_1d (per_rank / 4);
      g_autoptr(AccelShape) d_shape = accel_shape_new_1d (out_bytes / 4);
      src[r] = accel_device_alloc (devs[r], ACCEL_DTYPE_F32, s_shape, error);
      dst[r] = src[r] ? accel_device_alloc (devs[r], ACCEL_DTYPE_F32, d_shape, error) : NULL;
      if (dst[r] == NULL)
        {
          for (guint q = 0; q <= r; q++)
            {
              g_clear_object (&src[q]);
              if (q < r)
                g_clear_object (&dst[q]);
            }
          return FALSE;
        }
      g_autoptr(AccelOp) fill = accel_op_new ("fill", "dst", src[r], "value", 1.0 + r, NULL);
      ok = ok && accel_device_submit (devs[r], fill, NULL, error);
      ops[r] = what == BENCH_ALL_REDUCE ? accel_all_reduce_new (src[r], dst[r], ACCEL_REDUCTION_SUM)
                                        : accel_all_gather_new (src[r], dst[r]);
      src_ptr[r] = accel_buffer_get_data (src[r]);
      dst_ptr[r] = accel_buffer_get_data (dst[r]);
    }

  double total = (double) bytes * n;
  int iters = (int) CLAMP ((b->cuda ? 8e9 : 5e8) / MAX (total, 1.0), 3, b->quick ? 20 : 100);
  int warmup = b->quick ? 2 : 5;
  double t = ok ? accel_time (comm, ops, n, warmup, iters, error) : -1;
  double t_raw = NAN;
  if (t > 0 && raw)
    t_raw = bench_nccl_raw_time (raw, what, src_ptr, dst_ptr, per_rank, warmup, iters, error);
  else if (t > 0 && !b->cuda)
    t_raw = cpu_baseline (what, src, dst, n, per_rank, iters);
  ok = t > 0 && !(t_raw < 0);

  if (ok)
    {
      double factor = n == 1 ? 1.0 : what == BENCH_ALL_REDUCE ? 2.0 * (n - 1) / n : (double) (n - 1) / n;
      double bw = (double) out_bytes / t * factor / 1e9;
      double bw_raw = isnan (t_raw) ? NAN : (double) out_bytes / t_raw * factor / 1e9;
      g_autofree char *size = size_name (out_bytes);
      g_autofree char *name = g_strdup_printf ("%s %s %u %s %s %s", b->cuda ? "nccl" : "cpu",
                                               what == BENCH_ALL_REDUCE ? "all-reduce" : "all-gather", n,
                                               b->cuda ? "GPUs" : "ranks", size, n == 1 ? "algbw" : "busbw");
      report (b, name, "GB/s", bw, bw_raw);
    }
  for (guint r = 0; r < n; r++)
    {
      g_object_unref (ops[r]);
      g_object_unref (src[r]);
      g_object_unref (dst[r]);
    }
  return ok;
}

static gboolean
in_process (AccelDevice *device, int *ordinal)
{
  GParamSpec *iso = g_object_class_find_property (G_OBJECT_GET_CLASS (device), "isolation");
  GParamSpec *ord = g_object_class_find_property (G_OBJECT_GET_CLASS (device), "ordinal");
  if (iso == NULL || ord == NULL)
    return FALSE;
  GValue v = G_VALUE_INIT;
  g_value_init (&v, iso->value_type);
  g_object_get_property (G_OBJECT (device), "isolation", &v);
  int isolation = g_value_get_enum (&v);
  g_value_unset (&v);
  g_object_get (device, "ordinal", ordinal, NULL);
  return isolation == 0;   /* ACCEL_CUDA_ISOLATION_NONE */
}

static gboolean
run_ranks (Bench *b, AccelDevice **devs, guint n, gsize min_bytes, gsize max_bytes, GError **error)
{
  g_autoptr(AccelCommunicator) comm = accel_communicator_new (devs, n, error);
  if (comm == NULL)
    return FALSE;
  BenchNcclRaw *raw = NULL;
#ifdef ACCEL_BENCH_NCCL_RAW
  if (b->cuda)
    {
      int ordinals[16];
      gboolean local = TRUE;
      for (guint r = 0; r < n; r++)
        local = local && in_process (devs[r], &ordinals[r]);
      if (local && (raw = bench_nccl_raw_new (ordinals, (int) n, error)) == NULL)
        return FALSE;
      if (!local)
        g_printerr ("accel-bench-nccl: devices in host processes: no direct NCCL baseline\n");
    }
#else
  (void) in_process;
#endif

  gboolean ok = TRUE;
  for (int what = BENCH_ALL_REDUCE; what <= BENCH_ALL_GATHER && ok; what++)
    for (gsize bytes = min_bytes; bytes <= max_bytes && ok; bytes *= b->quick ? 8 : 2)
      ok = run_size (b, comm, devs, n, (BenchCollective) what, bytes, raw, error);
#ifdef ACCEL_BENCH_NCCL_RAW
  if (raw)
    bench_nccl_raw_free (raw);
#endif
  return ok;
}

#ifdef ACCEL_BENCH_NCCL_RAW
/* Peer copies from the first GPU to the second, beside cudaMemcpyPeerAsync
 * on the same buffers. */
static gboolean
run_peer_copies (Bench *b, AccelDevice *from, AccelDevice *to, gsize max_bytes, GError **error)
{
  int src_ordinal, dst_ordinal;
  if (!in_process (from, &src_ordinal) || !in_process (to, &dst_ordinal))
    return TRUE;
  for (gsize bytes = 1 << 20; bytes <= max_bytes; bytes *= b->quick ? 64 : 8)
    {
      g_autoptr(AccelShape) shape = accel_shape_new_1d (bytes / 4);
      g_autoptr(AccelBuffer) src = accel_device_alloc (from, ACCEL_DTYPE_F32, shape, error);
      g_autoptr(AccelBuffer) dst = src ? accel_device_alloc (to, ACCEL_DTYPE_F32, shape, error) : NULL;
      if (dst == NULL)
        return FALSE;
      g_autoptr(AccelOp) copy = accel_op_new ("copy", "src", src, "dst", dst, NULL);
      int iters = (int) CLAMP (4e9 / bytes, 3, b->quick ? 20 : 100);
      for (int k = 0; k < 3; k++)
        if (!accel_device_submit (to, copy, NULL, error))
          return FALSE;
      Waiting w = { iters, NULL };
      gint64 t0 = g_get_monotonic_time ();
      for (int k = 0; k < iters; k++)
        accel_device_submit_async (to, copy, NULL, done, &w);
      while (w.left > 0)
        g_main_context_iteration (NULL, TRUE);
      double t = (g_get_monotonic_time () - t0) / 1e6 / iters;
      if (w.error)
        {
          g_propagate_error (error, w.error);
          return FALSE;
        }
      double t_raw = bench_nccl_raw_peer_time (src_ordinal, accel_buffer_get_data (src), dst_ordinal,
                                               accel_buffer_get_data (dst), bytes, 3, iters, error);
      if (t_raw < 0)
        return FALSE;
      g_autofree char *size = size_name (bytes);
      g_autofree char *name = g_strdup_printf ("peer copy %s->%s %s", accel_device_get_name (from),
                                               accel_device_get_name (to), size);
      report (b, name, "GB/s", bytes / t / 1e9, bytes / t_raw / 1e9);
    }
  return TRUE;
}
#endif

static gboolean
parse_size (const char *text, gsize *out)
{
  char *end = NULL;
  guint64 v = g_ascii_strtoull (text, &end, 10);
  if (end == text)
    return FALSE;
  if (*end == 'K' || *end == 'k')
    v <<= 10, end++;
  else if (*end == 'M' || *end == 'm')
    v <<= 20, end++;
  else if (*end == 'G' || *end == 'g')
    v <<= 30, end++;
  *out = (gsize) v;
  return *end == '\0' && v > 0;
}

static void
write_json (Bench *b, const char *path)
{
  g_autoptr(GString) s = g_string_new ("{\n  \"device\": ");
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  g_autofree char *date = g_date_time_format_iso8601 (now);
  g_string_append_printf (s, "\"%s\",\n  \"date\": \"%s\",\n  \"version\": \"%s\",\n  \"results\": [\n",
                          b->device_desc, date, ACCEL_VERSION);
  for (guint i = 0; i < b->results->len; i++)
    {
      Result *r = &g_array_index (b->results, Result, i);
      g_string_append_printf (s, "    {\"name\": \"%s\", \"unit\": \"%s\", \"value\": %.6g", r->name, r->unit,
                              r->value);
      if (!isnan (r->baseline))
        g_string_append_printf (s, ", \"baseline\": %.6g, \"ratio\": %.4f", r->baseline, r->value / r->baseline);
      g_string_append_printf (s, "}%s\n", i + 1 < b->results->len ? "," : "");
    }
  g_string_append (s, "  ]\n}\n");
  g_autoptr(GError) error = NULL;
  if (!g_file_set_contents (path, s->str, s->len, &error))
    g_printerr ("accel-bench-nccl: %s\n", error->message);
}

int
main (int argc, char **argv)
{
  g_autofree char *backend = NULL, *ranks_text = NULL, *min_text = NULL, *max_text = NULL, *json = NULL;
  gboolean quick = FALSE;
  g_autoptr(GError) error = NULL;
  GOptionEntry entries[] = {
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend, "cuda or cpu (default: cuda where there is a GPU)", "NAME" },
    { "ranks", 'r', 0, G_OPTION_ARG_STRING, &ranks_text, "Rank counts, comma-separated (default: cuda 1…all, cpu 2,3,4)", "LIST" },
    { "min-bytes", 0, 0, G_OPTION_ARG_STRING, &min_text, "Smallest size (default 8)", "BYTES" },
    { "max-bytes", 0, 0, G_OPTION_ARG_STRING, &max_text, "Largest size (default: cuda 1G, cpu 16M)", "BYTES" },
    { "quick", 'q', 0, G_OPTION_ARG_NONE, &quick, "Every eighth size, fewer repetitions", NULL },
    { "json", 'j', 0, G_OPTION_ARG_FILENAME, &json, "Also write the results as JSON", "FILE" },
    { NULL },
  };
  g_autoptr(GOptionContext) options = g_option_context_new ("— collective bus bandwidth beside NCCL");
  g_option_context_add_main_entries (options, entries, NULL);
  if (!g_option_context_parse (options, &argc, &argv, &error))
    {
      g_printerr ("accel-bench-nccl: %s\n", error->message);
      return 2;
    }
  gsize min_bytes = 8, max_bytes = 0;
  if ((min_text && !parse_size (min_text, &min_bytes)) || (max_text && !parse_size (max_text, &max_bytes)))
    {
      g_printerr ("accel-bench-nccl: --min-bytes and --max-bytes take a size such as 8, 64K, 1G\n");
      return 2;
    }

  /* The direct baseline needs the devices in this process. */
  g_setenv ("ACCEL_CUDA_ISOLATION", "none", FALSE);
  Bench b = { .quick = quick };
  b.results = g_array_new (FALSE, TRUE, sizeof (Result));
  b.system = accel_system_new (&error);
  if (b.system == NULL)
    {
      g_printerr ("accel-bench-nccl: %s\n", error->message);
      return 1;
    }
  accel_system_set_cpu_devices (b.system, 8);
  g_autoptr(GPtrArray) all = accel_system_list_devices (b.system);
  g_autoptr(GPtrArray) devs = g_ptr_array_new ();
  for (guint i = 0; i < all->len; i++)
    if (g_strcmp0 (accel_device_get_backend_name (all->pdata[i]), "cuda") == 0)
      g_ptr_array_add (devs, all->pdata[i]);
  b.cuda = backend ? g_str_equal (backend, "cuda") : devs->len > 0;
  if (!b.cuda)
    {
      g_ptr_array_set_size (devs, 0);
      for (guint i = 0; i < all->len; i++)
        if (g_strcmp0 (accel_device_get_backend_name (all->pdata[i]), "cpu") == 0)
          g_ptr_array_add (devs, all->pdata[i]);
    }
  if (devs->len == 0)
    {
      g_printerr ("accel-bench-nccl: no %s device\n", b.cuda ? "cuda" : "cpu");
      return 1;
    }
  if (max_bytes == 0)
    max_bytes = b.cuda ? (gsize) 1 << 30 : (gsize) 16 << 20;
  b.device_desc = g_strdup_printf ("%u %s device(s), first %s", devs->len, b.cuda ? "cuda" : "cpu",
                                   accel_device_get_name (devs->pdata[0]));

  g_autoptr(GArray) counts = g_array_new (FALSE, FALSE, sizeof (guint));
  if (ranks_text)
    {
      g_auto(GStrv) parts = g_strsplit (ranks_text, ",", -1);
      for (guint i = 0; parts[i]; i++)
        {
          guint n = (guint) g_ascii_strtoull (parts[i], NULL, 10);
          if (n == 0 || n > MIN (devs->len, 16))
            {
              g_printerr ("accel-bench-nccl: %u ranks asked for, %u %s devices present\n", n, devs->len,
                          b.cuda ? "cuda" : "cpu");
              return 2;
            }
          g_array_append_val (counts, n);
        }
    }
  else if (b.cuda)
    for (guint n = 1; n <= MIN (devs->len, 16); n++)
      g_array_append_val (counts, n);
  else
    for (guint n = 2; n <= MIN (devs->len, 4); n++)
      g_array_append_val (counts, n);

  printf ("accel-bench-nccl: %s\n", b.device_desc);
  int status = 0;
  for (guint i = 0; i < counts->len && status == 0; i++)
    if (!run_ranks (&b, (AccelDevice **) devs->pdata, g_array_index (counts, guint, i), min_bytes, max_bytes, &error))
      {
        g_printerr ("accel-bench-nccl: %s\n", error->message);
        status = 1;
      }
#ifdef ACCEL_BENCH_NCCL_RAW
  if (status == 0 && b.cuda && devs->len >= 2
      && !run_peer_copies (&b, devs->pdata[0], devs->pdata[1], MIN (max_bytes, (gsize) 1 << 30), &error))
    {
      g_printerr ("accel-bench-nccl: %s\n", error->message);
      status = 1;
    }
#endif
  if (json)
    write_json (&b, json);
  for (guint i = 0; i < b.results->len; i++)
    {
      g_free (g_array_index (b.results, Result, i).name);
      g_free (g_array_index (b.results, Result, i).unit);
    }
  g_array_unref (b.results);
  g_free (b.device_desc);
  accel_system_shutdown (b.system);
  g_object_unref (b.system);
  return status;
}
