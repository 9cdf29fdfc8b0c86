/* A lane's handles on cuda:0, through the cuda fault plugin's `lane-handle`
 * op: a handle that accel_cuda_lane_open_handle()'s open function stored
 * before it failed is the lane's to free, once, and the lane's next op
 * opens a new one.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
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

/* Runs `lane-handle` on @lane; it must succeed. */
static Counts
run_ok (AccelDevice *gpu, AccelBuffer *dst, gboolean fail, guint lane)
{
  g_autoptr(AccelOp) op = lane_handle_op (dst, fail, lane);
  ct_submit (gpu, op);
  g_autofree guint8 *bytes = ct_read_bytes (dst);
  Counts c;
  memcpy (&c, bytes, sizeof c);
  g_assert_cmpint (c.lane, ==, (gint32) lane);
  return c;
}

static void
test_open_fails_after_store (void)
{
  AccelDevice *gpu = ct_gpu ();
  if (gpu == NULL)
    return;
  guint lanes = accel_device_get_lanes (gpu);
  g_assert_cmpuint (lanes, >=, 2);
  guint lane = (guint) g_test_rand_int_range (0, (gint32) lanes);
  guint other = (lane + 1) % lanes;
  gint64 five = 5;
  g_autoptr(AccelBuffer) dst = ct_alloc (gpu, ACCEL_DTYPE_I32, &five, 1);

  /* Where the counts stand: a handle opened on another lane, kept. */
  Counts base = run_ok (gpu, dst, FALSE, other);
  g_assert_cmpint (base.handle, ==, base.opens);

  /* The open stores a handle, then fails: the op fails with its error, and
   * the lane destroys that handle, once. */
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelOp) failing = lane_handle_op (dst, TRUE, lane);
  g_assert_false (accel_device_submit (gpu, failing, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_LIBRARY);
  g_autofree char *want = g_strdup_printf ("set-up of handle %d failed after it was stored", base.opens + 1);
  g_assert_nonnull (strstr (error->message, want));

  /* The lane kept nothing: the next op on it opens again, and succeeds. */
  Counts again = run_ok (gpu, dst, FALSE, lane);
  g_assert_cmpint (again.opens, ==, base.opens + 2);
  g_assert_cmpint (again.destroys, ==, base.destroys + 1);
  g_assert_cmpint (again.last_destroyed, ==, base.opens + 1);
  g_assert_cmpint (again.handle, ==, base.opens + 2);

  /* That handle is the lane's from now on: no open (so no failure) and no
   * destroy, even when an open would fail. */
  Counts kept = run_ok (gpu, dst, TRUE, lane);
  g_assert_cmpint (kept.opens, ==, again.opens);
  g_assert_cmpint (kept.destroys, ==, again.destroys);
  g_assert_cmpint (kept.handle, ==, again.handle);
  Counts first = run_ok (gpu, dst, TRUE, other);
  g_assert_cmpint (first.opens, ==, again.opens);
  g_assert_cmpint (first.handle, ==, base.handle);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/lane/open-fails-after-store", test_open_fails_after_store);
  return ct_run ();
}
