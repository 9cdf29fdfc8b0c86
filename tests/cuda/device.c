/* The CUDA device itself: properties, transfers (pinned-staged chunks and
 * their edges), cross-lane hazards with no synchronisation by the caller,
 * out-of-memory that leaves the device usable, and many threads
 * submitting at once.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "cuda-test.h"

static void
test_properties (void)
{
  AccelDevice *gpu = ct_gpu ();
  if (!gpu)
    return;
  g_autofree char *name = NULL, *cc = NULL;
  int sm = 0;
  g_object_get (gpu, "device-name", &name, "compute-capability", &cc, "sm-count", &sm, NULL);
  g_test_message ("cuda:0 is %s, compute capability %s, %d SMs, %u lanes, %" G_GUINT64_FORMAT " bytes",
                  name, cc, sm, accel_device_get_lanes (gpu), accel_device_get_memory_total (gpu));
  g_assert_nonnull (name);
  g_assert_nonnull (cc);
  g_assert_nonnull (strchr (cc, '.'));
  g_assert_cmpint (sm, >, 0);
  g_assert_cmpuint (accel_device_get_memory_total (gpu), >, 0);
  g_assert_cmpuint (accel_device_get_memory_free (gpu), <=, accel_device_get_memory_total (gpu));
  g_assert_cmpstr (accel_device_get_backend_name (gpu), ==, "cuda");
}

/* Sizes around the 2 MiB staging chunks (and 8 MiB, 4 of them), and odd ones. */
static void
test_transfers (void)
{
  static const gsize sizes[] = { 1, 3, 4097, (2 << 20) - 1, 2 << 20, (2 << 20) + 1, (8 << 20) - 1, 8 << 20, (8 << 20) + 1, (40 << 20) + 7 };
  AccelDevice *gpu = ct_gpu ();
  if (!gpu)
    return;
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      gint64 n = (gint64) sizes[s];
      g_autoptr(AccelBuffer) buf = ct_alloc (gpu, ACCEL_DTYPE_U8, &n, 1);
      g_autofree guint8 *data = g_malloc (sizes[s]);
      for (gsize i = 0; i < sizes[s]; i++)
        data[i] = (guint8) g_test_rand_int ();
      g_autoptr(GError) error = NULL;
      g_assert_true (accel_buffer_write (buf, data, sizes[s], &error));
      g_assert_no_error (error);
      g_autofree guint8 *back = ct_read_bytes (buf);
      g_assert_cmpmem (back, sizes[s], data, sizes[s]);

      g_assert_true (accel_buffer_zero (buf, &error));
      g_assert_no_error (error);
      g_autofree guint8 *zeros = ct_read_bytes (buf);
      for (gsize i = 0; i < sizes[s]; i++)
        if (zeros[i] != 0)
          {
            g_test_fail_printf ("zero: byte %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " is %u", i, sizes[s], zeros[i]);
            break;
          }
    }
}

static void
submit_on (AccelDevice *device, AccelOp *op, int lane, CtPending *o)
{
  accel_op_set_lane (op, lane);
  ct_pending_submit (o, device, op);
}

/* Writes on lane 0, reads on lane 1, sums on lane 2, over and over, with
 * nothing synchronised by the caller: a missed wait shows as a stale sum. */
static void
test_cross_lane (void)
{
  AccelDevice *gpu = ct_gpu ();
  if (!gpu)
    return;
  if (accel_device_get_lanes (gpu) < 3)
    {
      g_test_skip ("needs 3 lanes (ACCEL_CUDA_LANES)");
      return;
    }
  const int rounds = 40;
  gint64 n = 1 << 24;
  gint64 one = 1;
  g_autoptr(AccelBuffer) a = ct_alloc (gpu, ACCEL_DTYPE_F32, &n, 1);
  g_autoptr(GPtrArray) copies = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) sums = g_ptr_array_new_with_free_func (g_object_unref);
  CtPending o = { 0 };

  for (int r = 0; r < rounds; r++)
    {
      AccelBuffer *b = ct_alloc (gpu, ACCEL_DTYPE_F32, &n, 1);
      AccelBuffer *s = ct_alloc (gpu, ACCEL_DTYPE_F32, &one, 1);
      g_ptr_array_add (copies, b);
      g_ptr_array_add (sums, s);
      g_autoptr(AccelOp) fill = accel_op_new ("fill", "dst", a, "value", (double) (r + 1), NULL);
      g_autoptr(AccelOp) copy = accel_op_new ("copy", "src", a, "dst", b, NULL);
      g_autoptr(AccelOp) sum = accel_op_new ("reduce", "src", b, "dst", s, "reduction", ACCEL_REDUCE_MAX,
                                             "axis", 0, NULL);
      submit_on (gpu, fill, 0, &o);
      submit_on (gpu, copy, 1, &o);
      submit_on (gpu, sum, 2, &o);
    }
  ct_pending_finish (&o);
  for (int r = 0; r < rounds; r++)
    {
      g_autofree double *v = ct_read (sums->pdata[r]);
      if (v[0] != (double) (r + 1))
        {
          g_test_fail_printf ("round %d: the copy on lane 1 saw %g, not %d", r, v[0], r + 1);
          break;
        }
      /* And the whole copy, not just its maximum. */
      if (r == rounds - 1)
        {
          g_autoptr(AccelBuffer) mn = ct_alloc (gpu, ACCEL_DTYPE_F32, &one, 1);
          g_autoptr(AccelOp) min = accel_op_new ("reduce", "src", copies->pdata[r], "dst", mn,
                                                 "reduction", ACCEL_REDUCE_MIN, "axis", 0, NULL);
          ct_submit (gpu, min);
          g_autofree double *w = ct_read (mn);
          g_assert_cmpfloat (w[0], ==, (double) rounds);
        }
    }
}

/* Transfers in flight on other lanes: a write on one lane and an op on
 * another, then a read. */
static void
test_transfer_ordering (void)
{
  AccelDevice *gpu = ct_gpu ();
  if (!gpu)
    return;
  gint64 n = 3 << 20;
  g_autoptr(AccelBuffer) a = ct_alloc (gpu, ACCEL_DTYPE_F32, &n, 1);
  g_autoptr(AccelBuffer) b = ct_alloc (gpu, ACCEL_DTYPE_F32, &n, 1);
  g_autofree float *host = g_new (float, n);
  for (int round = 0; round < 10; round++)
    {
      for (gint64 i = 0; i < n; i++)
        host[i] = (float) (round * 7 + (i % 1000));
      g_autoptr(GError) error = NULL;
      g_assert_true (accel_buffer_write (a, (guint8 *) host, n * sizeof (float), &error));
      g_autoptr(AccelOp) scal = accel_op_new ("scal", "x", a, "alpha", 2.0, NULL);
      accel_op_set_lane (scal, round % 3);
      ct_submit (gpu, scal);
      g_autoptr(AccelOp) copy = accel_op_new ("copy", "src", a, "dst", b, NULL);
      accel_op_set_lane (copy, (round + 1) % 3);
      ct_submit (gpu, copy);
      g_autofree float *back = (float *) ct_read_bytes (b);
      for (gint64 i = 0; i < n; i++)
        if (back[i] != 2 * host[i])
          {
            g_test_fail_printf ("round %d element %" G_GINT64_FORMAT ": %g, expected %g", round, i, back[i], 2 * host[i]);
            return;
          }
    }
}

static void
test_out_of_memory (void)
{
  AccelDevice *gpu = ct_gpu ();
  if (!gpu)
    return;
  guint64 total = accel_device_get_memory_total (gpu);
  gint64 n = (gint64) (total / 4 + (total / 8));   /* 1.5x the card, in f32 */
  g_autoptr(AccelShape) shape = accel_shape_new_1d (n);
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelBuffer) huge = accel_device_alloc (gpu, ACCEL_DTYPE_F32, shape, &error);
  g_assert_null (huge);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY);
  g_test_message ("expected: %s", error->message);
  g_assert_cmpint (accel_device_get_state (gpu), ==, ACCEL_DEVICE_STATE_READY);

  /* Good work right after. */
  gint64 m = 1023;
  g_autoptr(CtPair) x = ct_pair_new (ACCEL_DTYPE_F32, &m, 1, -1, 1);
  g_autoptr(AccelOp) op = accel_op_new ("scal", "x", x->gpu, "alpha", 3.0, NULL);
  ct_submit (gpu, op);
  g_autofree double *got = ct_read (x->gpu);
  for (gint64 i = 0; i < m; i++)
    g_assert_cmpfloat (got[i], ==, (double) (float) (3.0 * x->values[i]));
}

/* Eight threads, each with its own buffers, submitting blocking ops. */
static gpointer
thread_work (gpointer data)
{
  AccelDevice *gpu = data;
  gint64 n = 4097;
  g_autoptr(AccelBuffer) x = ct_alloc (gpu, ACCEL_DTYPE_F32, &n, 1);
  for (int r = 0; r < 200; r++)
    {
      g_autoptr(AccelOp) fill = accel_op_new ("fill", "dst", x, "value", (double) r, NULL);
      g_autoptr(AccelOp) scal = accel_op_new ("scal", "x", x, "alpha", 2.0, NULL);
      ct_submit (gpu, fill);
      ct_submit (gpu, scal);
      if (r % 50 == 49)
        {
          g_autofree float *v = (float *) ct_read_bytes (x);
          for (gint64 i = 0; i < n; i++)
            g_assert_cmpfloat (v[i], ==, 2.0f * r);
        }
    }
  return NULL;
}

static void
test_threads (void)
{
  AccelDevice *gpu = ct_gpu ();
  if (!gpu)
    return;
  GThread *threads[8];
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("submitter", thread_work, gpu);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/device/properties", test_properties);
  g_test_add_func ("/cuda/device/transfers", test_transfers);
  g_test_add_func ("/cuda/device/cross-lane", test_cross_lane);
  g_test_add_func ("/cuda/device/transfer-ordering", test_transfer_ordering);
  g_test_add_func ("/cuda/device/out-of-memory", test_out_of_memory);
  g_test_add_func ("/cuda/device/threads", test_threads);
  return ct_run ();
}
