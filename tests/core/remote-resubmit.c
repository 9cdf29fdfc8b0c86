/* An op submitted again to a device behind a host, after each kind of
 * change: the application sends an unchanged op with the bytes it sent
 * before and the host runs the op it made for them before, so each change
 * must reach the host (a new value, another buffer, a buffer freed and its
 * memory reused, a view of another part of a buffer).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include "accel-test-buffers.h"

static void
test_resubmit (void)
{
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  g_autoptr(AccelDevice) dev = accel_test_remote_cpu_device (system);
  g_autoptr(AccelShape) shape = accel_shape_new_1d (g_test_rand_int_range (1, 500));
  g_autoptr(AccelBuffer) x = accel_test_alloc_random_f32 (dev, shape, NULL);
  g_autoptr(AccelBuffer) y = accel_test_alloc_random_f32 (dev, shape, NULL);
  double v = g_test_rand_double_range (-100, 100);
  g_autoptr(AccelOp) fill = accel_op_new ("fill", "dst", x, "value", v, NULL);

  /* The same op, unchanged, several times. */
  for (int i = 0; i < 3; i++)
    {
      accel_test_submit (dev, fill);
      accel_test_assert_all_f32 (x, (float) v);
      g_autoptr(AccelOp) other = accel_op_new ("fill", "dst", x, "value", v + 1, NULL);
      accel_test_submit (dev, other);
      accel_test_assert_all_f32 (x, (float) (v + 1));
    }

  /* A new value. */
  g_object_set (fill, "value", v + 2, NULL);
  accel_test_submit (dev, fill);
  accel_test_assert_all_f32 (x, (float) (v + 2));

  /* Another buffer. */
  g_object_set (fill, "dst", y, NULL);
  accel_test_submit (dev, fill);
  accel_test_assert_all_f32 (y, (float) (v + 2));

  /* A buffer freed, a new one made (its memory may be the old one's). */
  for (int round = 0; round < 4; round++)
    {
      g_autoptr(AccelBuffer) z = accel_test_alloc_random_f32 (dev, shape, NULL);
      g_object_set (fill, "dst", z, "value", v + round, NULL);
      accel_test_submit (dev, fill);
      accel_test_assert_all_f32 (z, (float) (v + round));
      g_object_set (fill, "dst", y, NULL);
    }

  /* Views of two halves of one buffer. */
  gint64 n = accel_shape_get_n_elements (shape);
  if (n >= 2)
    {
      gint64 half = n / 2;
      g_autoptr(AccelShape) hs = accel_shape_new_1d (half);
      g_autoptr(GError) error = NULL;
      g_autoptr(AccelBuffer) lo = accel_buffer_new_view (x, 0, hs, &error);
      g_assert_no_error (error);
      g_autoptr(AccelBuffer) hi = accel_buffer_new_view (x, half, hs, &error);
      g_assert_no_error (error);
      g_object_set (fill, "dst", lo, "value", 3.0, NULL);
      accel_test_submit (dev, fill);
      g_object_set (fill, "dst", hi, "value", 4.0, NULL);
      accel_test_submit (dev, fill);
      g_autofree float *got = accel_test_read_f32 (x);
      for (gint64 i = 0; i < half; i++)
        g_assert_cmpfloat (got[i], ==, 3.0f);
      for (gint64 i = half; i < 2 * half; i++)
        g_assert_cmpfloat (got[i], ==, 4.0f);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/remote/resubmit", test_resubmit);
  return g_test_run ();
}
