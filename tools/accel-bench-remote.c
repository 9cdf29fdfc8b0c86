/* accel-bench-remote.c: the `remote` group of accel-bench: what serving a
 * device from an `accel-device-host` process costs.
 *
 * The measured device (--device) runs in this process; the same device is
 * also served by a host process (an AccelRemoteDevice of the same backend
 * hosting it by name). Each figure is the remote one beside the in-process
 * one, in the same run: the round trip of a tiny op (a fill of one f32),
 * blocking and async, p50 and p99; pipelined ops per second; upload and
 * download bandwidth through the shared arena (ordinary memory, copied in
 * chunks) and from and to host memory shared with the host (moved in
 * place), the latter beside the in-process figures of ordinary memory.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "accel-bench.h"

extern const AccelBenchGroup accel_bench_remote_groups[];

typedef struct {
  double blocking_p50, blocking_p99;
  double async_p50, async_p99;
  double pipelined;
  double upload, download;     /* GB/s */
  double upload_shared, download_shared;
} Figures;

static gint64
transfer_bytes (AccelBench *bench)
{
  return accel_bench_is_quick (bench) ? 16 << 20 : 256 << 20;
}

/* The best of a few round trips of one large buffer from and to @host. */
static gboolean
measure_transfers (AccelBench *bench, AccelDevice *device, guint8 *host, double *up, double *down,
                   GError **error)
{
  gint64 bytes = transfer_bytes (bench);
  g_autoptr(AccelShape) big = accel_shape_new (&bytes, 1);
  g_autoptr(AccelBuffer) b = accel_device_alloc (device, ACCEL_DTYPE_U8, big, error);
  if (b == NULL)
    return FALSE;
  memset (host, 0x5a, bytes);
  double best_up = INFINITY, best_down = INFINITY;
  for (guint rep = 0; rep < 5; rep++)
    {
      double t = accel_bench_now ();
      if (!accel_buffer_write (b, host, bytes, error))
        return FALSE;
      best_up = MIN (best_up, accel_bench_now () - t);
      t = accel_bench_now ();
      if (!accel_buffer_read (b, host, bytes, error))
        return FALSE;
      best_down = MIN (best_down, accel_bench_now () - t);
    }
  *up = bytes / best_up / 1e9;
  *down = bytes / best_down / 1e9;
  return TRUE;
}

static gboolean
measure (AccelBench *bench, AccelDevice *device, const char *label, Figures *f, GError **error)
{
  const guint n = accel_bench_is_quick (bench) ? 2000 : 20000;
  gint64 one = 1;
  g_autoptr(AccelShape) shape = accel_shape_new (&one, 1);
  g_autoptr(AccelBuffer) buf = accel_device_alloc (device, ACCEL_DTYPE_F32, shape, error);
  if (buf == NULL)
    return FALSE;
  g_autoptr(AccelOp) op = accel_fill_new (buf, 1.0);

  g_autofree double *samples = g_new (double, n);
  accel_bench_progress (bench, "remote: %s: blocking submit", label);
  if (!accel_bench_blocking_round_trips (device, op, n, samples, error))
    return FALSE;
  f->blocking_p50 = accel_bench_quantile (samples, n, 0.5) * 1e6;
  f->blocking_p99 = accel_bench_quantile (samples, n, 0.99) * 1e6;

  accel_bench_progress (bench, "remote: %s: async submit", label);
  if (!accel_bench_async_round_trips (device, op, n, samples, error))
    return FALSE;
  f->async_p50 = accel_bench_quantile (samples, n, 0.5) * 1e6;
  f->async_p99 = accel_bench_quantile (samples, n, 0.99) * 1e6;

  const guint in_flight = 256, total = accel_bench_is_quick (bench) ? 20000 : 200000;
  accel_bench_progress (bench, "remote: %s: pipelined", label);
  double elapsed = accel_bench_run_in_flight (device, op, total, in_flight, error);
  if (elapsed < 0)
    return FALSE;
  f->pipelined = total / elapsed;

  accel_bench_progress (bench, "remote: %s: transfers", label);
  g_autofree guint8 *host = g_malloc (transfer_bytes (bench));
  if (!measure_transfers (bench, device, host, &f->upload, &f->download, error))
    return FALSE;

  if (ACCEL_IS_REMOTE_DEVICE (device))
    {
      AccelRemoteDevice *remote = ACCEL_REMOTE_DEVICE (device);
      guint8 *shared = accel_remote_device_alloc_host_memory (remote, transfer_bytes (bench), error);
      if (shared == NULL)
        return FALSE;
      accel_bench_progress (bench, "remote: %s: transfers from shared host memory", label);
      gboolean ok = measure_transfers (bench, device, shared, &f->upload_shared, &f->download_shared, error);
      accel_remote_device_free_host_memory (remote, shared);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

static gboolean
run_remote (AccelBench *bench, GError **error)
{
  AccelDevice *local = accel_bench_get_device (bench);

  if (ACCEL_IS_REMOTE_DEVICE (local))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "%s already runs in a host process; measure an in-process device "
                   "(for CUDA: ACCEL_CUDA_ISOLATION=none)", accel_device_get_name (local));
      return FALSE;
    }
  g_autofree char *name = g_strdup_printf ("%s@host", accel_device_get_name (local));
  /* As accel_remote_device_new() makes it, with room for one transfer in
   * shared host memory. */
  if (!g_file_test (accel_remote_device_get_host_path (), G_FILE_TEST_IS_EXECUTABLE))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "The device host program “%s” is not there (set ACCEL_DEVICE_HOST)",
                   accel_remote_device_get_host_path ());
      return FALSE;
    }
  g_autoptr(AccelDevice) remote = g_object_new (ACCEL_TYPE_REMOTE_DEVICE,
                                                "name", name,
                                                "backend", accel_device_get_backend (local),
                                                "hosted-device", accel_device_get_name (local),
                                                "host-memory-size", (guint64) transfer_bytes (bench),
                                                NULL);

  Figures in = { 0 }, out = { 0 };
  if (!measure (bench, local, accel_device_get_name (local), &in, error)
      || !measure (bench, remote, name, &out, error))
    return FALSE;

  accel_bench_report (bench, "remote.submit-blocking.p50", "us", out.blocking_p50, in.blocking_p50);
  accel_bench_report (bench, "remote.submit-blocking.p99", "us", out.blocking_p99, in.blocking_p99);
  accel_bench_report (bench, "remote.submit-async.p50", "us", out.async_p50, in.async_p50);
  accel_bench_report (bench, "remote.submit-async.p99", "us", out.async_p99, in.async_p99);
  accel_bench_report (bench, "remote.pipelined-256", "ops/s", out.pipelined, in.pipelined);
  accel_bench_report (bench, "remote.upload", "GB/s", out.upload, in.upload);
  accel_bench_report (bench, "remote.download", "GB/s", out.download, in.download);
  accel_bench_report (bench, "remote.upload-shared", "GB/s", out.upload_shared, in.upload);
  accel_bench_report (bench, "remote.download-shared", "GB/s", out.download_shared, in.download);
  return TRUE;
}

const AccelBenchGroup accel_bench_remote_groups[] = {
  { "remote", "round trip, pipelining and transfers through an accel-device-host, beside in-process",
    run_remote },
  { NULL },
};
