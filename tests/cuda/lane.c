/* A lane's handles on cuda:0, through the cuda fault plugin's `lane-handle`
 * op: a handle that accel_cuda_lane_open_handle()'s open function stored
 * before it failed is the lane's to free, once, and the lane's next op
 * opens a new one.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <string.h>
#include "cuda-test.h"

/* What the `lane-handle` kernel reports. */
typedef struct {
  gint32 opens;
  gint32 destroys;
  gint32 handle;            /* the serial of the handle the kernel got */
  gint32 last_destroyed;    /* the serial of the last handle destroyed */
  gint32 lane;
} Counts;

static AccelOp *
lane_handle_op (AccelBuffer *dst, gboolean fail, guint lane)
{
  AccelOp *op = accel_op_new ("lane-handle", "dst", dst, "fail", fail, NULL);
  accel_op_set_lane (op, (int) lane);
  return op;
}

/* Runs @op, a `lane-handle` on @dst; it must succeed. */
static Counts
submit_ok (AccelDevice *gpu, AccelOp *op, AccelBuffer *dst)
{
  ct_submit (gpu, op);
  g_autofree guint8 *bytes = ct_read_bytes (dst);
  Counts c;
  memcpy (&c, bytes, sizeof c);
  return c;
}

/* Runs `lane-handle`, asking for @lane; it must succeed. */
static Counts
run_ok (AccelDevice *gpu, AccelBuffer *dst, gboolean fail, guint lane)
{
  g_autoptr(AccelOp) op = lane_handle_op (dst, fail, lane);
  return submit_ok (gpu, op, dst);
}

/* cuda:0, its lane count (at least 2) and a fresh `lane-handle` output;
 * NULL where there is no GPU. */
static AccelDevice *
lane_test_gpu (guint *lanes, AccelBuffer **dst)
{
  AccelDevice *gpu = ct_gpu ();
  if (gpu == NULL)
    return NULL;
  *lanes = accel_device_get_lanes (gpu);
  g_assert_cmpuint (*lanes, >=, 2);
  gint64 five = 5;
  *dst = ct_alloc (gpu, ACCEL_DTYPE_I32, &five, 1);
  return gpu;
}

static void
test_open_fails_after_store (void)
{
  guint lanes;
  g_autoptr(AccelBuffer) dst = NULL;
  AccelDevice *gpu = lane_test_gpu (&lanes, &dst);
  if (gpu == NULL)
    return;
  guint asked = (guint) g_test_rand_int_range (0, (gint32) lanes);

  /* The open stores a handle, then fails: the op fails with its error,
   * which names the handle, the lane and the destroys until then. An op
   * runs on the lane it asks for, in a device host too (the lane travels
   * with the op's properties). */
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelOp) failing = lane_handle_op (dst, TRUE, asked);
  g_assert_false (accel_device_submit (gpu, failing, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_LIBRARY);
  const char *said = strstr (error->message, "set-up of handle ");
  g_assert_nonnull (said);
  gint32 serial = 0, destroys = -1;
  guint lane = G_MAXUINT;
  g_assert_cmpint (sscanf (said, "set-up of handle %d on lane %u failed after it was stored (%d destroyed before)",
                           &serial, &lane, &destroys), ==, 3);
  g_assert_cmpint (serial, >=, 1);
  g_assert_cmpint (destroys, >=, 0);
  g_assert_cmpuint (lane, ==, asked);

  /* The lane destroyed that handle, once, and kept nothing: the next op on
   * it opens again, and succeeds. */
  Counts again = run_ok (gpu, dst, FALSE, asked);
  g_assert_cmpint (again.lane, ==, (gint32) asked);
  g_assert_cmpint (again.destroys, ==, destroys + 1);
  g_assert_cmpint (again.last_destroyed, ==, serial);
  g_assert_cmpint (again.handle, >, serial);
  g_assert_cmpint (again.handle, ==, again.opens);

  /* That handle is the lane's from now on: no open (so no failure) and no
   * destroy, even when an open would fail. */
  Counts kept = run_ok (gpu, dst, TRUE, asked);
  g_assert_cmpint (kept.lane, ==, (gint32) asked);
  g_assert_cmpint (kept.opens, ==, again.opens);
  g_assert_cmpint (kept.destroys, ==, again.destroys);
  g_assert_cmpint (kept.handle, ==, again.handle);

  /* Another lane has a handle of its own. */
  guint next = (asked + 1) % lanes;
  g_autoptr(AccelBuffer) dst2 = ct_alloc (gpu, ACCEL_DTYPE_I32, (gint64[]) { 5 }, 1);
  Counts other = run_ok (gpu, dst2, FALSE, next);
  g_assert_cmpint (other.lane, ==, (gint32) next);
  g_assert_cmpint (other.destroys, ==, again.destroys);
  g_assert_cmpint (other.opens, ==, again.opens + 1);
  g_assert_cmpint (other.handle, ==, other.opens);
  g_assert_cmpint (other.handle, !=, again.handle);
}

/* One op submitted again after accel_op_set_lane() runs on its new lane:
 * in a device host the op crosses as the bytes it was last sent with
 * unless a property changed since, so setting the lane must count as a
 * change. */
static void
test_lane_changed_between_submissions (void)
{
  guint lanes;
  g_autoptr(AccelBuffer) dst = NULL;
  AccelDevice *gpu = lane_test_gpu (&lanes, &dst);
  if (gpu == NULL)
    return;
  g_autoptr(AccelOp) op = lane_handle_op (dst, FALSE, 0);
  guint first = (guint) g_test_rand_int_range (0, (gint32) lanes);
  for (guint k = 0; k < 2 * lanes; k++)
    {
      guint want = (first + k) % lanes;
      accel_op_set_lane (op, (int) want);
      g_assert_cmpint (accel_op_get_lane (op), ==, (int) want);
      g_assert_cmpint (submit_ok (gpu, op, dst).lane, ==, (gint32) want);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/lane/open-fails-after-store", test_open_fails_after_store);
  g_test_add_func ("/cuda/lane/changed-between-submissions", test_lane_changed_between_submissions);
  return ct_run ();
}
