/* Tests of AccelShape: overlap detection against enumerating every
 * element's offset on random small layouts, and arithmetic that saturates
 * instead of overflowing on dimensions another process may send.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>

/* The reference: two index tuples at one offset, found by enumeration. */
static gboolean
overlaps_by_enumeration (const gint64 *dims, const gint64 *strides, guint rank)
{
  gint64 n = 1;
  for (guint i = 0; i < rank; i++)
    n *= dims[i];
  if (n == 0)
    return FALSE;
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  for (gint64 k = 0; k < n; k++)
    {
      gint64 rest = k, offset = 0;
      for (int i = (int) rank - 1; i >= 0; i--)
        {
          offset += (rest % dims[i]) * strides[i];
          rest /= dims[i];
        }
      if (g_hash_table_contains (seen, &offset))
        return TRUE;
      g_hash_table_add (seen, g_memdup2 (&offset, sizeof offset));
    }
  return FALSE;
}

static void
test_may_overlap (void)
{
  guint n_overlapping = 0, n_distinct = 0, n_interleaved = 0;

  for (guint trial = 0; trial < 4000; trial++)
    {
      guint rank = g_test_rand_int_range (0, 5);
      gint64 dims[4], strides[4];
      for (guint i = 0; i < rank; i++)
        {
          dims[i] = g_test_rand_int_range (0, 5);
          strides[i] = g_test_rand_int_range (-3, 13);
        }
      /* Half of them row-major with a random stretch, which never overlap. */
      if (trial % 2 == 0)
        for (int i = (int) rank - 1, s = g_test_rand_int_range (1, 3); i >= 0; i--)
          {
            strides[i] = s;
            s *= MAX (dims[i], 1) * g_test_rand_int_range (1, 3);
          }
      g_autoptr(AccelShape) shape = accel_shape_new_strided (dims, strides, rank);
      gboolean truth = overlaps_by_enumeration (dims, strides, rank);
      gboolean said = accel_shape_may_overlap (shape);
      /* Conservative: never says "distinct" of an overlapping layout. */
      if (truth)
        g_assert_true (said);
      if (!said)
        n_distinct++;
      else if (truth)
        n_overlapping++;
      else
        n_interleaved++;
      if (trial % 2 == 0)
        g_assert_false (said);
    }
  g_test_message ("%u distinct, %u overlapping, %u interleaved", n_distinct, n_overlapping, n_interleaved);
  g_assert_cmpuint (n_distinct, >, 1000);
  g_assert_cmpuint (n_overlapping, >, 100);

  /* A broadcast over a dimension of one is no overlap. */
  gint64 dims[] = { 1, 7 }, strides[] = { 0, 1 };
  g_autoptr(AccelShape) row = accel_shape_new_strided (dims, strides, 2);
  g_assert_false (accel_shape_may_overlap (row));
}

static void
test_saturation (void)
{
  gint64 big = g_test_rand_int_range (1, 1000) + ((gint64) 1 << 40);
  gint64 dims[] = { 3, big, big };
  g_autoptr(AccelShape) shape = accel_shape_new (dims, 3);
  g_assert_cmpint (accel_shape_get_n_elements (shape), ==, G_MAXINT64);
  g_assert_cmpint (accel_shape_get_extent (shape), ==, G_MAXINT64);
  g_assert_cmpint (accel_shape_get_stride (shape, 0), ==, G_MAXINT64);
  g_assert_true (accel_shape_is_contiguous (shape));
  (void) accel_shape_hash (shape);

  /* An empty dimension makes everything empty, whatever the others are. */
  gint64 empty[] = { big, 0, big };
  g_autoptr(AccelShape) none = accel_shape_new (empty, 3);
  g_assert_cmpint (accel_shape_get_n_elements (none), ==, 0);
  g_assert_cmpint (accel_shape_get_extent (none), ==, 0);

  /* Negative strides that reach before the first element. */
  gint64 d[] = { big }, s[] = { -big };
  g_autoptr(AccelShape) back = accel_shape_new_strided (d, s, 1);
  g_assert_cmpint (accel_shape_get_extent (back), ==, G_MININT64);

  /* Small shapes keep exact figures. */
  gint64 m = g_test_rand_int_range (1, 50), n = g_test_rand_int_range (1, 50);
  g_autoptr(AccelShape) small = accel_shape_new_2d (m, n);
  g_assert_cmpint (accel_shape_get_n_elements (small), ==, m * n);
  g_assert_cmpint (accel_shape_get_extent (small), ==, m * n);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/shape/may-overlap", test_may_overlap);
  g_test_add_func ("/shape/saturation", test_saturation);
  return g_test_run ();
}
