/* Tests of AccelRemoteDevice with the CPU backend behind an
 * `accel-device-host` process: ops against references on random data,
 * transfers larger than the shared arena, views and strided shapes, faults
 * (generation, stale buffers, queued work), a host killed mid-stream, a
 * host killed while idle (replaced without any work submitted), transfers
 * in place from and to host memory shared with the host, a hung host, many threads submitting while faults happen, the restart
 * budget, out-of-memory and a device the host cannot find.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include "accel-test-buffers.h"
#include "accel-test-stress.h"
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>

static void
test_info (void)
{
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  g_autoptr(AccelDevice) dev = accel_test_remote_cpu_device (system);
  g_autoptr(GError) error = NULL;

  g_assert_true (ACCEL_IS_REMOTE_DEVICE (dev));
  g_assert_cmpstr (accel_remote_device_get_hosted_device (ACCEL_REMOTE_DEVICE (dev)), ==, "cpu:0");
  g_assert_cmpstr (accel_device_get_backend_name (dev), ==, "cpu");
  /* Nothing runs before the first use. */
  g_assert_cmpint (accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev)), ==, 0);
  g_assert_null (accel_remote_device_get_info (ACCEL_REMOTE_DEVICE (dev)));

  g_autoptr(AccelShape) s = accel_shape_new_1d (16);
  g_autoptr(AccelBuffer) b = accel_test_alloc_f32 (dev, s);
  g_assert_cmpint (accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev)), >, 0);
  g_autoptr(GVariant) info = accel_remote_device_get_info (ACCEL_REMOTE_DEVICE (dev));
  g_assert_nonnull (info);
  const char *name = NULL, *backend = NULL;
  guint64 total = 0;
  g_assert_true (g_variant_lookup (info, "name", "&s", &name));
  g_assert_true (g_variant_lookup (info, "backend", "&s", &backend));
  g_assert_true (g_variant_lookup (info, "memory-total", "t", &total));
  g_assert_cmpstr (name, ==, "cpu:0");
  g_assert_cmpstr (backend, ==, "cpu");
  g_assert_cmpuint (total, >, 0);
  /* A property of the hosted device's own class comes along. */
  g_assert_true (g_variant_lookup (info, "n-threads", "u", NULL));
  g_assert_cmpuint (accel_device_get_memory_total (dev), >, 0);
  g_assert_cmpuint (accel_device_get_generation (dev), ==, 0);
}

typedef struct {
  GError *error;
  gint calls;
} Outcome;

static void
outcome_done (GObject *source, GAsyncResult *result, gpointer data)
{
  Outcome *o = data;
  GError *error = NULL;
  accel_device_submit_finish (ACCEL_DEVICE (source), result, &error);
  o->error = error;
  o->calls++;
}

/* Reference: row-major c = a b. */
static void
gemm_ref (const float *a, const float *b, double *c, gint64 m, gint64 n, gint64 k)
{
  for (gint64 i = 0; i < m; i++)
    for (gint64 j = 0; j < n; j++)
      {
        double acc = 0;
        for (gint64 l = 0; l < k; l++)
          acc += (double) a[i * k + l] * b[l * n + j];
        c[i * n + j] = acc;
      }
}

static void
test_ops (void)
{
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  g_autoptr(AccelDevice) dev = accel_test_remote_cpu_device (system);
  g_autoptr(GError) error = NULL;

  /* gemm at sizes that are multiples of nothing. */
  gint64 m = g_test_rand_int_range (5, 70), n = g_test_rand_int_range (5, 70), k = g_test_rand_int_range (5, 70);
  g_autoptr(AccelShape) sa = accel_shape_new_2d (m, k);
  g_autoptr(AccelShape) sb = accel_shape_new_2d (k, n);
  g_autoptr(AccelShape) sc = accel_shape_new_2d (m, n);
  g_autofree float *ha = NULL, *hb = NULL;
  g_autoptr(AccelBuffer) a = accel_test_alloc_random_f32 (dev, sa, &ha);
  g_autoptr(AccelBuffer) b = accel_test_alloc_random_f32 (dev, sb, &hb);
  g_autoptr(AccelBuffer) c = accel_test_alloc_random_f32 (dev, sc, NULL);
  g_autoptr(AccelOp) gemm = accel_gemm_new (a, b, c);
  g_assert_true (accel_device_submit (dev, gemm, NULL, &error));
  g_assert_no_error (error);
  g_autofree double *ref = g_new (double, m * n);
  gemm_ref (ha, hb, ref, m, n, k);
  g_autofree float *hc = accel_test_read_f32 (c);
  for (gint64 i = 0; i < m * n; i++)
    g_assert_cmpfloat_with_epsilon (hc[i], ref[i], 1e-4 * (1 + fabs (ref[i])));

  /* axpy and copy through views at odd offsets of one allocation. */
  gint64 len = g_test_rand_int_range (10, 5000);
  g_autoptr(AccelShape) big = accel_shape_new_1d (3 * len + 7);
  g_autofree float *hbig = NULL;
  g_autoptr(AccelBuffer) whole = accel_test_alloc_random_f32 (dev, big, &hbig);
  g_autoptr(AccelShape) sv = accel_shape_new_1d (len);
  g_autoptr(AccelBuffer) x = accel_buffer_new_view (whole, 3, sv, &error);
  g_assert_no_error (error);
  g_autoptr(AccelBuffer) y = accel_buffer_new_view (whole, len + 5, sv, &error);
  g_assert_no_error (error);
  g_autoptr(AccelBuffer) z = accel_buffer_new_view (whole, 2 * len + 7, sv, &error);
  g_assert_no_error (error);
  g_autoptr(AccelOp) axpy = accel_op_new ("axpy", "x", x, "y", y, "alpha", 0.5, NULL);
  g_assert_true (accel_device_submit (dev, axpy, NULL, &error));
  g_assert_no_error (error);
  g_autoptr(AccelOp) copy = accel_copy_new (y, z);
  g_assert_true (accel_device_submit (dev, copy, NULL, &error));
  g_assert_no_error (error);
  g_autofree float *after = accel_test_read_f32 (whole);
  for (gint64 i = 0; i < len; i++)
    {
      float expect = hbig[len + 5 + i] + 0.5f * hbig[3 + i];
      g_assert_cmpfloat_with_epsilon (after[len + 5 + i], expect, 1e-6);
      g_assert_cmpfloat (after[2 * len + 7 + i], ==, after[len + 5 + i]);
    }
  g_assert_cmpfloat (after[0], ==, hbig[0]);
  g_assert_cmpfloat (after[len + 4], ==, hbig[len + 4]);

  /* fill and copy into a strided shape: only its elements change. */
  gint64 rows = g_test_rand_int_range (2, 40), cols = g_test_rand_int_range (2, 40), pad = 3;
  gint64 dims[2] = { rows, cols }, strides[2] = { cols + pad, 1 };
  g_autoptr(AccelShape) strided = accel_shape_new_strided (dims, strides, 2);
  g_autoptr(AccelBuffer) sbuf = accel_test_alloc_f32 (dev, strided);
  g_assert_cmpuint (accel_buffer_get_size (sbuf), ==, ((rows - 1) * (cols + pad) + cols) * 4);
  g_assert_true (accel_buffer_zero (sbuf, &error));
  g_autoptr(AccelOp) fill = accel_fill_new (sbuf, 3.0);
  g_assert_true (accel_device_submit (dev, fill, NULL, &error));
  g_assert_no_error (error);
  g_autofree float *hs = accel_test_read_f32 (sbuf);
  for (gint64 r = 0; r < rows; r++)
    for (gint64 col = 0; col < cols + pad && r * (cols + pad) + col < (gint64) (accel_buffer_get_size (sbuf) / 4); col++)
      g_assert_cmpfloat (hs[r * (cols + pad) + col], ==, col < cols ? 3.0f : 0.0f);

  g_autoptr(AccelShape) dense = accel_shape_new_2d (rows, cols);
  g_autofree float *hsrc = NULL;
  g_autoptr(AccelBuffer) src = accel_test_alloc_random_f32 (dev, dense, &hsrc);
  g_autoptr(AccelOp) scopy = accel_copy_new (src, sbuf);
  g_assert_true (accel_device_submit (dev, scopy, NULL, &error));
  g_assert_no_error (error);
  g_autofree float *hs2 = accel_test_read_f32 (sbuf);
  for (gint64 r = 0; r < rows; r++)
    for (gint64 col = 0; col < cols; col++)
      g_assert_cmpfloat (hs2[r * (cols + pad) + col], ==, hsrc[r * cols + col]);

  /* Order is kept: async fills in a row, then a blocking read. */
  {
    g_autoptr(GMainContext) ctx = g_main_context_new ();
    g_main_context_push_thread_default (ctx);
    Outcome outs[64] = { { NULL, 0 }, };
    for (guint i = 0; i < G_N_ELEMENTS (outs); i++)
      {
        g_autoptr(AccelOp) f = accel_fill_new (sbuf, (double) i);
        accel_device_submit_async (dev, f, NULL, outcome_done, &outs[i]);
      }
    g_autofree float *last = accel_test_read_f32 (sbuf);
    g_assert_cmpfloat (last[0], ==, 63.0f);
    g_assert_cmpfloat (last[(rows - 1) * (cols + pad) + cols - 1], ==, 63.0f);
    for (guint i = 0; i < G_N_ELEMENTS (outs); i++)
      {
        while (outs[i].calls == 0)
          g_main_context_iteration (ctx, TRUE);
        g_assert_no_error (outs[i].error);
      }
    g_main_context_pop_thread_default (ctx);
  }

  /* Buffers of rank 6 with padded strides: the op's body is big enough
   * for two-byte framing offsets in its buffer table. */
  {
    gint64 dims6[6], dense_strides[6], padded[6];
    gint64 n6 = 1;
    for (int d = 5; d >= 0; d--)
      {
        dims6[d] = g_test_rand_int_range (1, 4);
        dense_strides[d] = n6;
        n6 *= dims6[d];
      }
    gint64 st = 1;
    for (int d = 5; d >= 0; d--)
      {
        padded[d] = st;
        st *= dims6[d] + (d % 2);
      }
    g_autoptr(AccelShape) dense6 = accel_shape_new_strided (dims6, dense_strides, 6);
    g_autoptr(AccelShape) padded6 = accel_shape_new_strided (dims6, padded, 6);
    g_autofree float *h6 = NULL;
    g_autoptr(AccelBuffer) src6 = accel_test_alloc_random_f32 (dev, dense6, &h6);
    g_autoptr(AccelBuffer) dst6 = accel_test_alloc_f32 (dev, padded6);
    g_assert_true (accel_buffer_zero (dst6, &error));
    g_autoptr(AccelOp) copy6 = accel_copy_new (src6, dst6);
    g_assert_true (accel_device_submit (dev, copy6, NULL, &error));
    g_assert_no_error (error);
    g_autofree float *back = accel_test_read_f32 (dst6);
    for (gint64 i = 0; i < n6; i++)
      {
        gint64 rest = i, at = 0;
        for (int d = 5; d >= 0; d--)
          {
            at += (rest % dims6[d]) * padded[d];
            rest /= dims6[d];
          }
        g_assert_cmpfloat (back[at], ==, h6[i]);
      }
  }

  /* Errors of the host's kernels and validation come back as they are. */
  g_autoptr(AccelShape) s3 = accel_shape_new_2d (3, 4);
  g_autoptr(AccelBuffer) bad = accel_test_alloc_f32 (dev, s3);
  g_autoptr(AccelOp) mismatch = accel_gemm_new (a, b, bad);
  g_assert_false (accel_device_submit (dev, mismatch, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH);
}

static void
async_count (GObject *source, GAsyncResult *result, gpointer data)
{
  gint *count = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;
  if (g_task_get_source_tag (G_TASK (result)) == accel_buffer_download_async)
    {
      bytes = accel_buffer_download_finish (ACCEL_BUFFER (source), result, &error);
      g_object_set_data_full (source, "bytes", g_steal_pointer (&bytes), (GDestroyNotify) g_bytes_unref);
    }
  else
    accel_buffer_upload_finish (ACCEL_BUFFER (source), result, &error);
  g_assert_no_error (error);
  (*count)++;
}

static void
test_transfers (void)
{
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  /* A 64 KiB arena: everything below goes in chunks of 16 KiB. */
  g_autoptr(AccelDevice) dev = accel_test_remote_cpu_device_full (system, "cpu:0", NULL, 64 * 1024, 0);
  g_autoptr(GError) error = NULL;

  gint64 sizes[] = { 1, 255, 4096, 16 * 1024, 16 * 1024 + 1, 300001, 1 << 20 };
  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      gint64 n = sizes[i];
      g_autoptr(AccelShape) s = accel_shape_new_1d (n);
      g_autoptr(AccelBuffer) b = accel_device_alloc (dev, ACCEL_DTYPE_U8, s, &error);
      g_assert_no_error (error);
      g_autofree guint8 *data = g_malloc (n);
      for (gint64 j = 0; j < n; j++)
        data[j] = g_test_rand_int_range (0, 256);
      g_assert_true (accel_buffer_write (b, data, n, &error));
      g_autoptr(GBytes) back = accel_buffer_download (b, &error);
      g_assert_no_error (error);
      g_assert_cmpmem (g_bytes_get_data (back, NULL), g_bytes_get_size (back), data, n);

      /* A view in the middle reads, writes and zeroes its own range. */
      if (n >= 16)
        {
          gint64 off = n / 3, len = n / 2;
          g_autoptr(AccelShape) vs = accel_shape_new_1d (len);
          g_autoptr(AccelBuffer) v = accel_buffer_new_view (b, off, vs, &error);
          g_assert_no_error (error);
          g_autoptr(GBytes) vb = accel_buffer_download (v, &error);
          g_assert_no_error (error);
          g_assert_cmpmem (g_bytes_get_data (vb, NULL), len, data + off, len);
          g_assert_true (accel_buffer_zero (v, &error));
          g_autoptr(GBytes) after = accel_buffer_download (b, &error);
          g_assert_no_error (error);
          const guint8 *p = g_bytes_get_data (after, NULL);
          g_assert_cmpmem (p, off, data, off);
          for (gint64 j = off; j < off + len; j++)
            g_assert_cmpuint (p[j], ==, 0);
          g_assert_cmpmem (p + off + len, n - off - len, data + off + len, n - off - len);
        }
    }

  /* Several async uploads and downloads in flight at once, 3 MiB each. */
  g_autoptr(GMainContext) ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  const guint n_bufs = 4;
  gsize n = 3 * 1024 * 1024 + 12345;
  AccelBuffer *bufs[4];
  GBytes *src[4];
  gint done = 0;
  g_autoptr(AccelShape) s = accel_shape_new_1d (n);
  for (guint i = 0; i < n_bufs; i++)
    {
      bufs[i] = accel_device_alloc (dev, ACCEL_DTYPE_U8, s, &error);
      g_assert_no_error (error);
      guint8 *data = g_malloc (n);
      for (gsize j = 0; j < n; j++)
        data[j] = (guint8) g_test_rand_int ();
      src[i] = g_bytes_new_take (data, n);
      accel_buffer_upload_async (bufs[i], src[i], NULL, async_count, &done);
    }
  for (guint i = 0; i < n_bufs; i++)
    accel_buffer_download_async (bufs[i], NULL, async_count, &done);
  while (done < (gint) (2 * n_bufs))
    g_main_context_iteration (ctx, TRUE);
  for (guint i = 0; i < n_bufs; i++)
    {
      GBytes *got = g_object_get_data (G_OBJECT (bufs[i]), "bytes");
      g_assert_true (g_bytes_equal (got, src[i]));
      g_bytes_unref (src[i]);
      g_object_unref (bufs[i]);
    }
  g_main_context_pop_thread_default (ctx);
}

static void
count_notify (GObject *obj, GParamSpec *pspec, gpointer data)
{
  g_atomic_int_inc ((gint *) data);
}

typedef struct {
  GMutex lock;
  GCond cond;
  gboolean released;
} Gate;

/* Holds the device thread, so that what is submitted meanwhile stays
 * queued in the device's mailbox. */
static void
gate_wait (gpointer data)
{
  Gate *gate = data;
  g_mutex_lock (&gate->lock);
  while (!gate->released)
    g_cond_wait (&gate->cond, &gate->lock);
  g_mutex_unlock (&gate->lock);
}

static void
gate_release (Gate *gate)
{
  g_mutex_lock (&gate->lock);
  gate->released = TRUE;
  g_cond_signal (&gate->cond);
  g_mutex_unlock (&gate->lock);
}

static void
wait_for_no_host (AccelDevice *dev)
{
  gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  while (accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev)) != 0)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, end);
      g_usleep (1000);
    }
}

static void
test_fault (void)
{
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  g_autoptr(AccelDevice) dev = accel_test_remote_cpu_device (system);
  g_autoptr(GError) error = NULL;
  accel_actor_set_strategy (ACCEL_ACTOR (dev), 3, 60000, NULL, NULL, NULL);
  gint notified = 0;
  g_signal_connect (dev, "notify::generation", G_CALLBACK (count_notify), &notified);

  g_autoptr(AccelShape) s = accel_shape_new_1d (g_test_rand_int_range (1, 500));
  g_autoptr(AccelBuffer) old = accel_test_alloc_random_f32 (dev, s, NULL);
  GPid first_host = accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev));

  /* The fault goes to the host; what queues behind it meanwhile is served
   * after the new host starts: what names the old generation's buffers is
   * refused, the rest runs there. */
  g_autoptr(GMainContext) ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  Outcome out[4] = { { NULL, 0 }, };
  Gate gate = { .released = FALSE };
  g_mutex_init (&gate.lock);
  g_cond_init (&gate.cond);
  g_autoptr(AccelOp) fault = accel_op_new_by_name ("fault", &error);
  g_assert_no_error (error);
  accel_device_submit_async (dev, fault, NULL, outcome_done, &out[0]);
  accel_dispatcher_post (accel_actor_get_dispatcher (ACCEL_ACTOR (dev)), gate_wait, &gate);
  g_autoptr(AccelOp) fill = accel_op_new ("fill", "dst", old, "value", 1.0, NULL);
  accel_device_submit_async (dev, fill, NULL, outcome_done, &out[1]);
  g_autoptr(AccelOp) fault2 = accel_op_new ("fault", "target", old, NULL);
  accel_device_submit_async (dev, fault2, NULL, outcome_done, &out[2]);
  g_autoptr(AccelOp) fault3 = accel_op_new_by_name ("fault", &error);
  accel_device_submit_async (dev, fault3, NULL, outcome_done, &out[3]);
  /* The host is gone once it has answered the fault. */
  wait_for_no_host (dev);
  gate_release (&gate);
  while (out[0].calls + out[1].calls + out[2].calls + out[3].calls < 4)
    g_main_context_iteration (ctx, TRUE);
  g_main_context_pop_thread_default (ctx);
  g_mutex_clear (&gate.lock);
  g_cond_clear (&gate.cond);

  for (guint i = 0; i < 4; i++)
    g_assert_cmpint (out[i].calls, ==, 1);
  g_assert_error (out[0].error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED);
  g_assert_nonnull (strstr (out[0].error->message, "injected fault"));
  g_assert_error (out[1].error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
  g_assert_error (out[2].error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
  /* The queued fault without buffers ran on the second host, and faulted it. */
  g_assert_error (out[3].error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED);
  g_assert_nonnull (strstr (out[3].error->message, "injected fault"));
  for (guint i = 0; i < 4; i++)
    g_clear_error (&out[i].error);
  g_assert_cmpint (notified, ==, 2);
  g_assert_cmpint (accel_device_get_state (dev), ==, ACCEL_DEVICE_STATE_READY);
  /* A new host serves new buffers. */
  accel_test_assert_restarted (dev, old, 2);
  g_autoptr(AccelBuffer) fresh = accel_test_alloc_random_f32 (dev, s, NULL);
  GPid third_host = accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev));
  g_assert_cmpint (third_host, >, 0);
  g_assert_cmpint (third_host, !=, first_host);
  accel_test_fill_f32 (dev, fresh, 4.0f);

  /* Work already handed to a host when it faults fails with it. */
  g_autoptr(GMainContext) ctx2 = g_main_context_new ();
  g_main_context_push_thread_default (ctx2);
  Outcome burst[2] = { { NULL, 0 }, };
  g_autoptr(AccelOp) fault4 = accel_op_new_by_name ("fault", &error);
  accel_device_submit_async (dev, fault4, NULL, outcome_done, &burst[0]);
  g_autoptr(AccelOp) fill3 = accel_op_new ("fill", "dst", fresh, "value", 1.0, NULL);
  accel_device_submit_async (dev, fill3, NULL, outcome_done, &burst[1]);
  while (burst[0].calls + burst[1].calls < 2)
    g_main_context_iteration (ctx2, TRUE);
  g_main_context_pop_thread_default (ctx2);
  g_assert_error (burst[0].error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED);
  g_assert_true (burst[1].error == NULL
                 || g_error_matches (burst[1].error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED)
                 || g_error_matches (burst[1].error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER));
  g_clear_error (&burst[0].error);
  g_clear_error (&burst[1].error);
  g_assert_cmpuint (accel_device_get_generation (dev), ==, 3);
}

typedef struct {
  gint ok;
  gint poisoned;
  gint stale;
  gint other;
  guint8 *calls;
  gint done;
} Batch;

static void
batch_done (GObject *source, GAsyncResult *result, gpointer data)
{
  gpointer *pack = data;
  Batch *b = pack[0];
  guint index = GPOINTER_TO_UINT (pack[1]);
  g_autoptr(GError) error = NULL;
  if (accel_device_submit_finish (ACCEL_DEVICE (source), result, &error))
    b->ok++;
  else if (g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED))
    b->poisoned++;
  else if (g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER))
    b->stale++;   /* still queued when the new host came: its buffers are gone */
  else
    {
      g_test_message ("unexpected: %s", error->message);
      b->other++;
    }
  b->calls[index]++;
  b->done++;
  g_free (pack);
}

static void
test_kill_mid_stream (void)
{
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  g_autoptr(AccelDevice) dev = accel_test_remote_cpu_device (system);

  gint64 n = 300;
  g_autoptr(AccelShape) s = accel_shape_new_2d (n, n);
  g_autoptr(AccelBuffer) a = accel_test_alloc_random_f32 (dev, s, NULL);
  g_autoptr(AccelBuffer) b = accel_test_alloc_random_f32 (dev, s, NULL);
  g_autoptr(AccelBuffer) c = accel_test_alloc_random_f32 (dev, s, NULL);
  GPid host = accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev));
  g_assert_cmpint (host, >, 0);

  g_autoptr(GMainContext) ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  const guint n_ops = 24;
  Batch batch = { 0, 0, 0, 0, g_new0 (guint8, n_ops), 0 };
  for (guint i = 0; i < n_ops; i++)
    {
      g_autoptr(AccelOp) op = accel_gemm_new (a, b, c);
      gpointer *pack = g_new (gpointer, 2);
      pack[0] = &batch;
      pack[1] = GUINT_TO_POINTER (i);
      accel_device_submit_async (dev, op, NULL, batch_done, pack);
    }
  g_assert_cmpint (kill (host, SIGKILL), ==, 0);
  while (batch.done < (gint) n_ops)
    g_main_context_iteration (ctx, TRUE);
  g_main_context_pop_thread_default (ctx);

  for (guint i = 0; i < n_ops; i++)
    g_assert_cmpuint (batch.calls[i], ==, 1);
  g_free (batch.calls);
  g_test_message ("%d ok, %d poisoned, %d stale", batch.ok, batch.poisoned, batch.stale);
  g_assert_cmpint (batch.other, ==, 0);
  g_assert_cmpint (batch.poisoned, >, 0);
  g_assert_cmpuint (accel_device_get_generation (dev), ==, 1);

  /* Later work runs on a new host. */
  g_autoptr(AccelShape) s1 = accel_shape_new_1d (100);
  g_autoptr(AccelBuffer) fresh = accel_test_alloc_f32 (dev, s1);
  g_assert_cmpint (accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev)), !=, host);
  accel_test_fill_f32 (dev, fresh, -2.0f);
}

/* Until the restart to @generation is complete: a new host other than
 * @old_host runs and the device is ready. */
static void
wait_for_restart (AccelDevice *dev, guint generation, GPid old_host)
{
  gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  for (;;)
    {
      GPid pid = accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev));
      if (accel_device_get_generation (dev) >= generation && pid != 0 && pid != old_host
          && accel_device_get_state (dev) == ACCEL_DEVICE_STATE_READY)
        break;
      g_assert_cmpint (g_get_monotonic_time (), <, end);
      g_usleep (1000);
    }
}

/* A host that dies while the device is idle is replaced at once: the
 * generation moves without any work being submitted, the old buffers are
 * stale, and the next work runs on the new host without failing first. */
static void
test_idle_death (void)
{
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  g_autoptr(AccelDevice) dev = accel_test_remote_cpu_device (system);
  g_autoptr(GError) error = NULL;
  gint notified = 0;
  g_signal_connect (dev, "notify::generation", G_CALLBACK (count_notify), &notified);

  gint64 n = g_test_rand_int_range (1, 4000);
  g_autoptr(AccelShape) s = accel_shape_new_1d (n);
  g_autoptr(AccelBuffer) old = accel_test_alloc_random_f32 (dev, s, NULL);
  GPid host = accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev));
  g_assert_cmpint (host, >, 0);
  g_assert_cmpuint (accel_device_get_generation (dev), ==, 0);

  for (guint round = 1; round <= 2; round++)
    {
      g_assert_cmpint (kill (host, SIGKILL), ==, 0);
      wait_for_restart (dev, round, host);
      g_assert_cmpuint (accel_device_get_generation (dev), ==, round);
      /* The new host was started by the restart itself. */
      GPid next = accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev));
      g_assert_cmpint (next, >, 0);
      g_assert_cmpint (next, !=, host);
      host = next;
      g_assert_cmpint (accel_device_get_state (dev), ==, ACCEL_DEVICE_STATE_READY);
    }
  g_assert_cmpuint (accel_actor_get_restart_count (ACCEL_ACTOR (dev)), ==, 2);

  /* Buffers of the dead host are stale; nothing else fails. */
  g_assert_true (accel_buffer_is_stale (old));
  g_autoptr(AccelOp) stale_fill = accel_fill_new (old, 1.0);
  g_assert_false (accel_device_submit (dev, stale_fill, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
  g_clear_error (&error);

  g_autofree float *want = NULL;
  g_autoptr(AccelBuffer) fresh = accel_test_alloc_random_f32 (dev, s, &want);
  g_autoptr(AccelBuffer) out = accel_test_alloc_f32 (dev, s);
  g_autoptr(AccelOp) copy = accel_copy_new (fresh, out);
  g_assert_true (accel_device_submit (dev, copy, NULL, &error));
  g_assert_no_error (error);
  g_autofree float *got = accel_test_read_f32 (out);
  g_assert_cmpmem (got, n * sizeof (float), want, n * sizeof (float));
  g_assert_cmpuint (accel_device_get_generation (dev), ==, 2);
  g_assert_cmpint (g_atomic_int_get (&notified), ==, 2);
  g_assert_cmpint (accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev)), ==, host);
}

/* Writes @from (@n bytes) into @b, then reads @b back into ordinary memory
 * (through the arena) and into @into (zeroed first): both hold @want. */
static void
check_write_read (AccelBuffer *b, const guint8 *from, guint8 *into, const guint8 *want, gsize n)
{
  g_autoptr(GError) error = NULL;
  g_assert_true (accel_buffer_write (b, from, n, &error));
  g_assert_no_error (error);
  g_autofree guint8 *plain = g_malloc (n);
  g_assert_true (accel_buffer_read (b, plain, n, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (plain, n, want, n);
  memset (into, 0, n);
  g_assert_true (accel_buffer_read (b, into, n, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (into, n, want, n);
}

/* Host memory shared with the host: transfers from and to it are moved in
 * place; it outlives the host it came from (transfers then copy). */
static void
test_host_memory (void)
{
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  g_autoptr(GError) error = NULL;
  const gsize region = 1 << 20;
  g_autoptr(AccelDevice) dev = accel_test_remote_cpu_device_full (system, "cpu:0", NULL, 65536, region);
  AccelRemoteDevice *remote = ACCEL_REMOTE_DEVICE (dev);

  /* Larger than the arena, smaller than the region; odd sizes. */
  gsize n = g_test_rand_int_range (200000, 400000);
  guint8 *src = accel_remote_device_alloc_host_memory (remote, n, &error);
  g_assert_no_error (error);
  g_assert_nonnull (src);
  g_assert_cmpuint (GPOINTER_TO_SIZE (src) % 4096, ==, 0);
  guint8 *dst = accel_remote_device_alloc_host_memory (remote, n, &error);
  g_assert_no_error (error);
  g_assert_true (dst >= src + n || dst + n <= src);
  for (gsize i = 0; i < n; i++)
    src[i] = (guint8) g_test_rand_int ();

  g_autoptr(AccelShape) s = accel_shape_new_1d (n);
  g_autoptr(AccelBuffer) b = accel_device_alloc (dev, ACCEL_DTYPE_U8, s, &error);
  g_assert_no_error (error);
  /* Read back through the arena (ordinary memory), and in place. */
  g_autofree guint8 *plain = g_memdup2 (src, n);
  check_write_read (b, src, dst, plain, n);

  /* An op between an in-place write and an in-place read of a view. */
  g_autoptr(AccelShape) sv = accel_shape_new_1d (n / 4);
  g_autoptr(AccelBuffer) f = accel_device_alloc (dev, ACCEL_DTYPE_F32, sv, &error);
  g_assert_no_error (error);
  g_autoptr(AccelOp) fill = accel_fill_new (f, 3.0);
  g_assert_true (accel_device_submit (dev, fill, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (accel_buffer_read (f, dst, (n / 4) * sizeof (float), &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (((float *) dst)[0], ==, 3.0f);
  g_assert_cmpfloat (((float *) dst)[n / 4 - 1], ==, 3.0f);

  /* Too much is refused; what is freed is merged and handed out again. */
  g_assert_null (accel_remote_device_alloc_host_memory (remote, region, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY);
  g_clear_error (&error);
  accel_remote_device_free_host_memory (remote, dst);
  accel_remote_device_free_host_memory (remote, src);
  guint8 *all = accel_remote_device_alloc_host_memory (remote, region, &error);
  g_assert_no_error (error);
  g_assert_nonnull (all);
  accel_remote_device_free_host_memory (remote, all);

  /* Memory of a former host stays usable: it is copied like any other. */
  guint8 *kept = accel_remote_device_alloc_host_memory (remote, n, &error);
  g_assert_no_error (error);
  memcpy (kept, plain, n);
  GPid host = accel_remote_device_get_host_pid (remote);
  g_assert_cmpint (kill (host, SIGKILL), ==, 0);
  wait_for_restart (dev, 1, host);
  g_autoptr(AccelBuffer) b2 = accel_device_alloc (dev, ACCEL_DTYPE_U8, s, &error);
  g_assert_no_error (error);
  check_write_read (b2, kept, kept, plain, n);
  accel_remote_device_free_host_memory (remote, kept);

  /* None configured: a clear error. */
  g_autoptr(AccelDevice) none = accel_test_remote_cpu_device (system);
  g_assert_null (accel_remote_device_alloc_host_memory (ACCEL_REMOTE_DEVICE (none), 16, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY);
  g_assert_nonnull (strstr (error->message, "host-memory-size"));
}

static void
test_hang (void)
{
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  g_autoptr(AccelDevice) dev = accel_test_remote_cpu_device (system);
  g_autoptr(GError) error = NULL;
  guint deadline = accel_remote_device_get_deadline_ms (ACCEL_REMOTE_DEVICE (dev));

  g_autoptr(AccelShape) s = accel_shape_new_1d (64);
  g_autoptr(AccelBuffer) b = accel_test_alloc_f32 (dev, s);
  GPid host = accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev));

  /* The test hook: the host stops answering. A short deadline only for
   * this, so that a slow machine does not pass for a hung host elsewhere. */
  accel_remote_device_set_deadline_ms (ACCEL_REMOTE_DEVICE (dev), 300);
  accel_actor_tell (ACCEL_ACTOR (dev), g_variant_new ("(s)", "debug-hang"));
  g_autoptr(AccelOp) fill = accel_fill_new (b, 1.0);
  gint64 t0 = g_get_monotonic_time ();
  g_assert_false (accel_device_submit (dev, fill, NULL, &error));
  gint64 waited = g_get_monotonic_time () - t0;
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED);
  g_assert_nonnull (strstr (error->message, "answered nothing"));
  g_clear_error (&error);
  g_test_message ("hang noticed after %" G_GINT64_FORMAT " ms", waited / 1000);
  g_assert_cmpint (waited, >=, 300 * 1000);
  g_assert_cmpint (waited, <, 5 * G_USEC_PER_SEC);
  accel_remote_device_set_deadline_ms (ACCEL_REMOTE_DEVICE (dev), deadline);

  g_autoptr(AccelBuffer) fresh = accel_test_alloc_f32 (dev, s);
  g_assert_cmpuint (accel_device_get_generation (dev), ==, 1);
  g_assert_cmpint (accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev)), !=, host);
  accel_test_fill_f32 (dev, fresh, 7.0f);
}

/* Threads submit ops with faults injected at random; every op must
 * complete exactly once. */

static void
test_threads_with_faults (void)
{
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  g_autoptr(AccelDevice) dev = accel_test_remote_cpu_device (system);
  accel_actor_set_strategy (ACCEL_ACTOR (dev), G_MAXUINT, 1000, NULL, NULL, NULL);
  const AccelTestStress stress = { .n_threads = 4, .n_ops = g_test_thorough () ? 5000 : 1000,
                                   .faults_per_mille = 3, .in_flight = 8 };
  AccelTestStressResult r = accel_test_stress_run (dev, &stress);
  g_assert_cmpuint (r.poisoned, >, 0);
  g_assert_cmpuint (accel_device_get_generation (dev), >, 0);
  g_assert_cmpuint (r.ok, >, stress.n_threads * stress.n_ops / 2);
  g_assert_cmpint (accel_device_get_state (dev), ==, ACCEL_DEVICE_STATE_READY);
}

static void
test_budget (void)
{
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  g_autoptr(AccelDevice) dev = accel_test_remote_cpu_device (system);
  g_autoptr(GError) error = NULL;
  accel_actor_set_strategy (ACCEL_ACTOR (dev), 1, 60000, NULL, NULL, NULL);

  accel_test_assert_fault_poisons (dev);
  g_assert_cmpuint (accel_device_get_generation (dev), ==, 1);
  accel_test_assert_fault_poisons (dev);
  g_assert_cmpint (accel_device_get_state (dev), ==, ACCEL_DEVICE_STATE_FAILED);
  /* No host is left running. */
  g_assert_cmpint (accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev)), ==, 0);

  g_autoptr(AccelShape) s = accel_shape_new_1d (8);
  g_autoptr(AccelBuffer) none = accel_device_alloc (dev, ACCEL_DTYPE_F32, s, &error);
  g_assert_null (none);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED);
  g_clear_error (&error);
  g_assert_false (accel_test_submit_fault (dev, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED);
}

static void
test_out_of_memory (void)
{
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  const char *env[] = { "ACCEL_CPU_MEMORY_LIMIT=1M", NULL };
  g_autoptr(AccelDevice) dev = accel_test_remote_cpu_device_full (system, "cpu:0", env, 0, 0);
  g_autoptr(GError) error = NULL;

  g_autoptr(AccelShape) big = accel_shape_new_1d (1 << 20);
  g_autoptr(AccelBuffer) none = accel_device_alloc (dev, ACCEL_DTYPE_F32, big, &error);
  g_assert_null (none);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY);
  g_assert_nonnull (strstr (error->message, "ACCEL_CPU_MEMORY_LIMIT"));
  g_clear_error (&error);

  /* The device stays usable, in the same generation. */
  g_autoptr(AccelShape) s = accel_shape_new_1d (1000);
  g_autoptr(AccelBuffer) b = accel_test_alloc_f32 (dev, s);
  g_autoptr(AccelOp) fill = accel_fill_new (b, 2.5);
  g_assert_true (accel_device_submit (dev, fill, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (accel_device_get_generation (dev), ==, 0);
  g_assert_cmpint (accel_device_get_state (dev), ==, ACCEL_DEVICE_STATE_READY);
}

static void
test_no_such_device (void)
{
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  g_autoptr(AccelDevice) dev = accel_test_remote_cpu_device_full (system, "cpu:7", NULL, 0, 0);
  g_autoptr(GError) error = NULL;

  g_autoptr(AccelShape) s = accel_shape_new_1d (8);
  g_autoptr(AccelBuffer) none = accel_device_alloc (dev, ACCEL_DTYPE_F32, s, &error);
  g_assert_null (none);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_DEVICE);
  g_assert_nonnull (strstr (error->message, "cpu:7"));
  g_assert_cmpint (accel_device_get_state (dev), ==, ACCEL_DEVICE_STATE_FAILED);
}

static guint
count_fds (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;
  g_assert_nonnull (dir);
  while (g_dir_read_name (dir))
    n++;
  return n;
}

/* Hosts come and go without leaving descriptors, processes or threads. */
static void
test_no_leaks (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  /* The system's own descriptors (registry, scanner) are there from here. */
  g_autoptr(AccelDevice) warm = accel_test_remote_cpu_device (system);
  g_autoptr(AccelShape) s = accel_shape_new_1d (4);
  g_autoptr(AccelBuffer) wb = accel_test_alloc_f32 (warm, s);
  g_clear_object (&wb);
  g_clear_object (&warm);
  g_usleep (200 * 1000);
  guint before = count_fds ();

  AccelDevice *dev = accel_test_remote_cpu_device (system);
  accel_actor_set_strategy (ACCEL_ACTOR (dev), 100, 60000, NULL, NULL, NULL);
  GPid pids[4];
  for (guint i = 0; i < G_N_ELEMENTS (pids); i++)
    {
      g_autoptr(AccelBuffer) b = accel_test_alloc_f32 (dev, s);
      pids[i] = accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev));
      accel_test_assert_fault_poisons (dev);
    }
  g_autoptr(AccelBuffer) last = accel_test_alloc_f32 (dev, s);
  GPid running = accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev));
  g_clear_object (&last);
  g_object_unref (dev);

  /* The connection's threads end, and free it, a little after the device. */
  gint64 end = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (count_fds () != before && g_get_monotonic_time () < end)
    g_usleep (10 * 1000);
  g_assert_cmpuint (count_fds (), ==, before);
  /* Every host has exited and been reaped (by GLib, in the background). */
  for (guint i = 0; i < G_N_ELEMENTS (pids); i++)
    {
      while (kill (pids[i], 0) == 0 && g_get_monotonic_time () < end)
        g_usleep (10 * 1000);
      g_assert_true (kill (pids[i], 0) != 0);
    }
  while (kill (running, 0) == 0 && g_get_monotonic_time () < end)
    g_usleep (10 * 1000);
  g_assert_true (kill (running, 0) != 0);
}

static void
test_no_host_program (void)
{
  /* In a child, so that the environment is changed before any thread runs. */
  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
      g_test_trap_assert_passed ();
      return;
    }
  g_setenv ("ACCEL_DEVICE_HOST", "/nonexistent/accel-device-host", TRUE);
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  g_autoptr(GError) error = NULL;
  AccelBackend *cpu = accel_system_get_backend (system, "cpu", &error);
  g_assert_no_error (error);
  g_autoptr(AccelDevice) dev = accel_remote_device_new (cpu, "remote-cpu:0", "cpu:0", NULL, &error);
  g_assert_null (dev);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "/nonexistent/accel-device-host"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (g_getenv ("ACCEL_DEVICE_HOST") == NULL)
    {
      g_printerr ("ACCEL_DEVICE_HOST must name the built accel-device-host\n");
      return 1;
    }
  g_test_add_func ("/remote/info", test_info);
  g_test_add_func ("/remote/ops", test_ops);
  g_test_add_func ("/remote/transfers", test_transfers);
  g_test_add_func ("/remote/fault", test_fault);
  g_test_add_func ("/remote/kill-mid-stream", test_kill_mid_stream);
  g_test_add_func ("/remote/idle-death", test_idle_death);
  g_test_add_func ("/remote/host-memory", test_host_memory);
  g_test_add_func ("/remote/hang", test_hang);
  g_test_add_func ("/remote/threads-with-faults", test_threads_with_faults);
  g_test_add_func ("/remote/budget", test_budget);
  g_test_add_func ("/remote/out-of-memory", test_out_of_memory);
  g_test_add_func ("/remote/no-such-device", test_no_such_device);
  g_test_add_func ("/remote/no-leaks", test_no_leaks);
  g_test_add_func ("/remote/no-host-program", test_no_host_program);
  return g_test_run ();
}
