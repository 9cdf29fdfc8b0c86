/* Collectives among CPU devices: bad input is refused with a specific
 * error before anything runs; a rank's lost context fails the collective
 * in flight with CONTEXT_POISONED and the next one runs on a rebuilt
 * communicator; a communicator whose devices are gone says so.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "collective-test.h"

/* n all-reduce ops of @count f32 each, with dst holding known values (kept
 * in s->values). */
static void
setup_all_reduce (CollRanks *s, guint n, gint64 count)
{
  s->n = n;
  for (guint i = 0; i < n; i++)
    {
      s->src[i] = coll_alloc (coll_device (i), ACCEL_DTYPE_F32, count);
      g_free (coll_fill (s->src[i], ACCEL_REDUCTION_SUM));
      s->dst[i] = coll_alloc (coll_device (i), ACCEL_DTYPE_F32, count);
      s->values[i] = coll_fill (s->dst[i], ACCEL_REDUCTION_SUM);
      s->ops[i] = accel_all_reduce_new (s->src[i], s->dst[i], ACCEL_REDUCTION_SUM);
    }
}

/* Nothing ran: every dst still holds what was written. */
static void
assert_untouched (CollRanks *s)
{
  for (guint i = 0; i < s->n; i++)
    {
      g_autofree double *got = cpu_test_read (s->dst[i]);
      coll_assert_equal ("dst after a refused collective", got, s->values[i],
                         accel_buffer_get_n_elements (s->dst[i]));
    }
}

static void
test_rank_count (void)
{
  g_autoptr(AccelCommunicator) comm = coll_comm (4);
  CollRanks s = { 0 };
  setup_all_reduce (&s, 3, 17);
  g_autofree char *m = coll_submit_expect (comm, s.ops, 3, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (m, "one op per rank"));
  assert_untouched (&s);
  coll_ranks_clear (&s);
}

static void
test_dtype_mismatch (void)
{
  g_autoptr(AccelCommunicator) comm = coll_comm (3);
  CollRanks s = { 0 };
  setup_all_reduce (&s, 3, 17);
  g_autoptr(AccelBuffer) other = coll_alloc (coll_device (2), ACCEL_DTYPE_F64, 17);
  g_object_set (s.ops[2], "src", other, "dst", other, NULL);
  g_autofree char *m = coll_submit_expect (comm, s.ops, 3, ACCEL_ERROR_DTYPE_UNSUPPORTED);
  g_assert_nonnull (strstr (m, "rank 2"));
  assert_untouched (&s);
  coll_ranks_clear (&s);
}

static void
test_shape_mismatch (void)
{
  g_autoptr(AccelCommunicator) comm = coll_comm (4);
  CollRanks s = { 0 };
  setup_all_reduce (&s, 4, 17);
  g_autoptr(AccelBuffer) src = coll_alloc (coll_device (3), ACCEL_DTYPE_F32, 18);
  g_autoptr(AccelBuffer) dst = coll_alloc (coll_device (3), ACCEL_DTYPE_F32, 18);
  g_object_set (s.ops[3], "src", src, "dst", dst, NULL);
  g_autofree char *m = coll_submit_expect (comm, s.ops, 4, ACCEL_ERROR_SHAPE_MISMATCH);
  g_assert_nonnull (strstr (m, "rank 3"));
  assert_untouched (&s);

  /* An all-gather's dst must hold n-ranks blocks. */
  AccelOp *ag[4];
  g_autoptr(AccelBuffer) small = coll_alloc (coll_device (1), ACCEL_DTYPE_F32, 17 * 3);
  for (guint i = 0; i < 4; i++)
    ag[i] = accel_all_gather_new (s.src[i], i == 1 ? small : s.dst[i]);
  g_free (coll_submit_expect (comm, ag, 4, ACCEL_ERROR_SHAPE_MISMATCH));
  for (guint i = 0; i < 4; i++)
    g_object_unref (ag[i]);
  coll_ranks_clear (&s);
}

static void
test_wrong_device (void)
{
  g_autoptr(AccelCommunicator) comm = coll_comm (3);
  CollRanks s = { 0 };
  setup_all_reduce (&s, 3, 9);
  /* Rank 1's op with buffers of rank 2's device. */
  g_autoptr(AccelBuffer) src = coll_alloc (coll_device (2), ACCEL_DTYPE_F32, 9);
  g_object_set (s.ops[1], "src", src, NULL);
  g_autofree char *m = coll_submit_expect (comm, s.ops, 3, ACCEL_ERROR_WRONG_DEVICE);
  g_assert_nonnull (strstr (m, "cpu:2"));
  assert_untouched (&s);

  /* A device that is no rank at all. */
  g_autoptr(AccelBuffer) far = coll_alloc (coll_device (3), ACCEL_DTYPE_F32, 9);
  g_object_set (s.ops[1], "src", far, NULL);
  g_free (coll_submit_expect (comm, s.ops, 3, ACCEL_ERROR_WRONG_DEVICE));
  coll_ranks_clear (&s);
}

static void
test_mixed_ops (void)
{
  g_autoptr(AccelCommunicator) comm = coll_comm (2);
  CollRanks s = { 0 };
  setup_all_reduce (&s, 2, 5);

  /* Two collective types. */
  g_autoptr(AccelBuffer) big = coll_alloc (coll_device (1), ACCEL_DTYPE_F32, 10);
  AccelOp *mixed[2] = { s.ops[0], accel_all_gather_new (s.src[1], big) };
  g_free (coll_submit_expect (comm, mixed, 2, ACCEL_ERROR_INVALID_ARGUMENT));
  g_object_unref (mixed[1]);

  /* Reductions that differ. */
  g_object_set (s.ops[1], "reduction", ACCEL_REDUCTION_MAX, NULL);
  g_autofree char *m = coll_submit_expect (comm, s.ops, 2, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (m, "reduction"));
  g_object_set (s.ops[1], "reduction", ACCEL_REDUCTION_SUM, NULL);

  /* Roots that differ, and a root that is no rank. */
  AccelOp *bc[2] = { accel_broadcast_new (s.src[0], s.dst[0], 0), accel_broadcast_new (NULL, s.dst[1], 1) };
  g_free (coll_submit_expect (comm, bc, 2, ACCEL_ERROR_INVALID_ARGUMENT));
  g_object_set (bc[0], "root", 2, NULL);
  g_object_set (bc[1], "root", 2, NULL);
  g_free (coll_submit_expect (comm, bc, 2, ACCEL_ERROR_INVALID_ARGUMENT));
  g_object_unref (bc[0]);
  g_object_unref (bc[1]);

  /* Not a collective at all. */
  g_autoptr(AccelOp) fill = accel_op_new ("fill", "dst", s.dst[0], "value", 1.0, NULL);
  AccelOp *notc[2] = { fill, s.ops[1] };
  g_free (coll_submit_expect (comm, notc, 2, ACCEL_ERROR_INVALID_ARGUMENT));

  /* Complex products do not exist. */
  g_autoptr(AccelBuffer) z0 = coll_alloc (coll_device (0), ACCEL_DTYPE_C64, 3);
  g_autoptr(AccelBuffer) z1 = coll_alloc (coll_device (1), ACCEL_DTYPE_C64, 3);
  AccelOp *zp[2] = { accel_all_reduce_new (z0, z0, ACCEL_REDUCTION_PROD), accel_all_reduce_new (z1, z1, ACCEL_REDUCTION_PROD) };
  g_free (coll_submit_expect (comm, zp, 2, ACCEL_ERROR_DTYPE_UNSUPPORTED));
  g_object_unref (zp[0]);
  g_object_unref (zp[1]);

  assert_untouched (&s);
  coll_ranks_clear (&s);
}

static void
test_in_place_misaligned (void)
{
  g_autoptr(AccelCommunicator) comm = coll_comm (2);
  g_autoptr(GError) error = NULL;
  AccelOp *ops[2];
  AccelBuffer *dst[2], *src[2];
  for (guint i = 0; i < 2; i++)
    {
      dst[i] = coll_alloc (coll_device (i), ACCEL_DTYPE_F32, 8);
      g_autoptr(AccelShape) shape = accel_shape_new_1d (4);
      /* Rank 1's block is the first half, not the second: refused. */
      src[i] = accel_buffer_new_view (dst[i], 0, shape, &error);
      g_assert_no_error (error);
      ops[i] = accel_all_gather_new (src[i], dst[i]);
    }
  g_autofree char *m = coll_submit_expect (comm, ops, 2, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (m, "overlaps"));
  for (guint i = 0; i < 2; i++)
    {
      g_object_unref (ops[i]);
      g_object_unref (src[i]);
      g_object_unref (dst[i]);
    }
}

static void
test_p2p_errors (void)
{
  g_autoptr(AccelCommunicator) comm = coll_comm (3);
  g_autoptr(AccelBuffer) a = coll_alloc (coll_device (0), ACCEL_DTYPE_F32, 6);
  g_autoptr(AccelBuffer) b = coll_alloc (coll_device (1), ACCEL_DTYPE_F32, 6);
  g_autoptr(AccelBuffer) c = coll_alloc (coll_device (1), ACCEL_DTYPE_F32, 7);
  g_autoptr(AccelBuffer) d = coll_alloc (coll_device (2), ACCEL_DTYPE_I32, 6);

  /* A send without its recv. */
  AccelOp *lonely[1] = { accel_send_new (a, 1) };
  g_autofree char *m = coll_submit_expect (comm, lonely, 1, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (m, "receives nothing"));

  /* Counts and dtypes that do not match. */
  AccelOp *counts[2] = { lonely[0], accel_recv_new (c, 0) };
  g_free (coll_submit_expect (comm, counts, 2, ACCEL_ERROR_SHAPE_MISMATCH));
  AccelOp *dtypes[2] = { accel_send_new (a, 2), accel_recv_new (d, 0) };
  g_free (coll_submit_expect (comm, dtypes, 2, ACCEL_ERROR_DTYPE_UNSUPPORTED));

  /* Sending to oneself; a peer that is no rank; two sends of one rank. */
  AccelOp *self_send[1] = { accel_send_new (a, 0) };
  g_free (coll_submit_expect (comm, self_send, 1, ACCEL_ERROR_INVALID_ARGUMENT));
  AccelOp *far[1] = { accel_send_new (a, 7) };
  g_free (coll_submit_expect (comm, far, 1, ACCEL_ERROR_INVALID_ARGUMENT));
  AccelOp *twice[3] = { lonely[0], accel_send_new (a, 2), accel_recv_new (b, 0) };
  g_free (coll_submit_expect (comm, twice, 3, ACCEL_ERROR_INVALID_ARGUMENT));

  g_object_unref (lonely[0]);
  g_object_unref (counts[1]);
  g_object_unref (dtypes[0]);
  g_object_unref (dtypes[1]);
  g_object_unref (self_send[0]);
  g_object_unref (far[0]);
  g_object_unref (twice[1]);
  g_object_unref (twice[2]);
}

/* A collective given to a device directly is refused, naming the way. */
static void
test_direct_to_device (void)
{
  g_autoptr(AccelBuffer) a = coll_alloc (coll_device (0), ACCEL_DTYPE_F32, 4);
  g_autoptr(AccelOp) op = accel_all_reduce_new (a, a, ACCEL_REDUCTION_SUM);
  g_autoptr(GError) error = NULL;
  g_assert_false (accel_device_submit (coll_device (0), op, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "AccelCommunicator"));
}

static void
test_constructor (void)
{
  g_autoptr(GError) error = NULL;
  AccelDevice *twice[2] = { coll_device (0), coll_device (0) };
  g_assert_null (accel_communicator_new (twice, 2, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (accel_communicator_new (NULL, 0, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
}

/* A rank's device loses its context (the `fault` op) while a collective
 * waits for that rank: the collective fails with CONTEXT_POISONED, the
 * rank's old buffers are stale, and the next collective runs on a rebuilt
 * communicator, right. */
static void
submitted (GObject *source, GAsyncResult *result, gpointer data)
{
  GError **out = data;
  if (!accel_communicator_submit_finish (ACCEL_COMMUNICATOR (source), result, out))
    g_assert_nonnull (*out);
  else
    *out = g_error_new_literal (ACCEL_ERROR, ACCEL_ERROR_FAILED, "it succeeded");
}

static void
fault_done (GObject *source, GAsyncResult *result, gpointer data)
{
  gboolean *done = data;
  g_autoptr(GError) error = NULL;
  g_assert_false (accel_device_submit_finish (ACCEL_DEVICE (source), result, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED);
  *done = TRUE;
}

/* Holds a device's thread until released, so that what is posted to it
 * meanwhile queues in a known order. */
typedef struct {
  GMutex lock;
  GCond cond;
  gboolean held;
  gboolean release;
} Hold;

static void
hold_thread (gpointer data)
{
  Hold *h = data;
  g_mutex_lock (&h->lock);
  h->held = TRUE;
  g_cond_broadcast (&h->cond);
  while (!h->release)
    g_cond_wait (&h->cond, &h->lock);
  g_mutex_unlock (&h->lock);
}

static void
test_rebuild (void)
{
  const gint64 count = 101;
  g_autoptr(AccelCommunicator) comm = coll_comm (4);
  CollRanks s = { 0 };
  setup_all_reduce (&s, 4, count);
  coll_submit (comm, s.ops, 4);
  g_assert_cmpuint (accel_communicator_get_epoch (comm), ==, 0);
  guint gen = accel_device_get_generation (coll_device (1));

  g_autoptr(GError) error = NULL;
  g_autoptr(AccelOp) fault = accel_op_new_by_name ("fault", &error);
  g_assert_no_error (error);
  /* cpu:1 runs the fault, then its part of the collective; the other
   * ranks' parts wait for it meanwhile. */
  Hold hold = { 0 };
  g_mutex_init (&hold.lock);
  g_cond_init (&hold.cond);
  accel_dispatcher_post (accel_actor_get_dispatcher (ACCEL_ACTOR (coll_device (1))), hold_thread, &hold);
  g_mutex_lock (&hold.lock);
  while (!hold.held)
    g_cond_wait (&hold.cond, &hold.lock);
  g_mutex_unlock (&hold.lock);
  gboolean fault_seen = FALSE;
  accel_device_submit_async (coll_device (1), fault, NULL, fault_done, &fault_seen);
  GError *collective_error = NULL;
  accel_communicator_submit_async (comm, s.ops, 4, NULL, submitted, &collective_error);
  /* Validated while cpu:1 is still in generation 0. Whether its part is
   * posted before or after the fault runs, the rank's lost context is
   * what the collective reports. */
  g_mutex_lock (&hold.lock);
  hold.release = TRUE;
  g_cond_broadcast (&hold.cond);
  g_mutex_unlock (&hold.lock);
  while (collective_error == NULL || !fault_seen)
    g_main_context_iteration (NULL, TRUE);
  g_mutex_clear (&hold.lock);
  g_cond_clear (&hold.cond);
  g_test_message ("in flight: %s", collective_error->message);
  g_assert_error (collective_error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED);
  g_clear_error (&collective_error);
  g_assert_cmpuint (accel_device_get_generation (coll_device (1)), ==, gen + 1);

  /* Rank 1's buffers went with its context. */
  g_free (coll_submit_expect (comm, s.ops, 4, ACCEL_ERROR_STALE_BUFFER));

  /* New ones, and the communicator is rebuilt for them. */
  g_clear_object (&s.src[1]);
  g_clear_object (&s.dst[1]);
  s.src[1] = coll_alloc (coll_device (1), ACCEL_DTYPE_F32, count);
  g_free (coll_fill (s.src[1], ACCEL_REDUCTION_SUM));
  s.dst[1] = coll_alloc (coll_device (1), ACCEL_DTYPE_F32, count);
  g_object_set (s.ops[1], "src", s.src[1], "dst", s.dst[1], NULL);
  double *values[CT_MAX_RANKS];
  for (guint i = 0; i < 4; i++)
    values[i] = cpu_test_read (s.src[i]);
  coll_submit (comm, s.ops, 4);
  g_assert_cmpuint (accel_communicator_get_epoch (comm), ==, 1);
  g_autofree double *want = g_new (double, count);
  coll_reference_reduce (ACCEL_DTYPE_F32, ACCEL_REDUCTION_SUM, values, 4, 0, count, want);
  for (guint i = 0; i < 4; i++)
    {
      g_autofree double *got = cpu_test_read (s.dst[i]);
      coll_assert_equal ("all-reduce after the rebuild", got, want, count);
      g_free (values[i]);
    }
  coll_ranks_clear (&s);
}

/* accel_communicator_abort(): the next collective runs on a new incarnation. */
static void
test_abort (void)
{
  g_autoptr(AccelCommunicator) comm = coll_comm (2);
  CollRanks s = { 0 };
  setup_all_reduce (&s, 2, 3);
  coll_submit (comm, s.ops, 2);
  accel_communicator_abort (comm, "the test says so");
  coll_submit (comm, s.ops, 2);
  g_assert_cmpuint (accel_communicator_get_epoch (comm), ==, 1);
  coll_ranks_clear (&s);
}

/* A communicator whose devices are gone refuses, naming the device. */
static void
test_devices_gone (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelSystem) system = accel_system_new (&error);
  g_assert_no_error (error);
  accel_system_set_cpu_devices (system, 2);
  g_autoptr(AccelDevice) d0 = accel_system_get_device (system, "cpu:0", &error);
  g_autoptr(AccelDevice) d1 = accel_system_get_device (system, "cpu:1", &error);
  g_assert_no_error (error);
  AccelDevice *devs[2] = { d0, d1 };
  g_autoptr(AccelCommunicator) comm = accel_communicator_new (devs, 2, &error);
  g_assert_no_error (error);
  g_autoptr(AccelBuffer) a = coll_alloc (d0, ACCEL_DTYPE_F32, 4);
  g_autoptr(AccelBuffer) b = coll_alloc (d1, ACCEL_DTYPE_F32, 4);
  AccelOp *ops[2] = { accel_all_reduce_new (a, a, ACCEL_REDUCTION_SUM), accel_all_reduce_new (b, b, ACCEL_REDUCTION_SUM) };
  coll_submit (comm, ops, 2);

  accel_system_shutdown (system);
  g_autofree char *m = coll_submit_expect (comm, ops, 2, ACCEL_ERROR_DEVICE_FAILED);
  g_assert_nonnull (strstr (m, "cpu:"));
  g_object_unref (ops[0]);
  g_object_unref (ops[1]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/collective/errors/rank-count", test_rank_count);
  g_test_add_func ("/collective/errors/dtype-mismatch", test_dtype_mismatch);
  g_test_add_func ("/collective/errors/shape-mismatch", test_shape_mismatch);
  g_test_add_func ("/collective/errors/wrong-device", test_wrong_device);
  g_test_add_func ("/collective/errors/mixed-ops", test_mixed_ops);
  g_test_add_func ("/collective/errors/in-place-misaligned", test_in_place_misaligned);
  g_test_add_func ("/collective/errors/p2p", test_p2p_errors);
  g_test_add_func ("/collective/errors/direct-to-device", test_direct_to_device);
  g_test_add_func ("/collective/errors/constructor", test_constructor);
  g_test_add_func ("/collective/rebuild", test_rebuild);
  g_test_add_func ("/collective/abort", test_abort);
  g_test_add_func ("/collective/devices-gone", test_devices_gone);
  return cpu_test_run ();
}
