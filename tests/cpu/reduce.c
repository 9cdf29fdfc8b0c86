/* reduce and softmax on cpu:0 against binary64 references: every
 * reduction, dtype and axis (negative too), kept or removed axes, odd
 * sizes, in-place softmax.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include "cpu-test.h"

typedef struct {
  guint rank;
  gint64 dims[4];
} Shape;

static const Shape shapes[] = {
  { 1, { 1 } },
  { 1, { 129 } },
  { 2, { 7, 33 } },
  { 3, { 3, 7, 5 } },
  { 3, { 2, 300, 3 } },
  { 4, { 2, 3, 1, 7 } },
  { 2, { 2048, 129 } },
};

static const char *
reduction_name (AccelReduceOp r)
{
  static const char *names[] = { "sum", "max", "min", "mean" };
  return names[r];
}

static void
check_reduce (AccelDType dtype, const Shape *s, int axis_arg, gboolean keep, AccelReduceOp red)
{
  int axis = axis_arg < 0 ? axis_arg + (int) s->rank : axis_arg;
  gint64 outer = 1, len = s->dims[axis], inner = 1;
  for (int i = 0; i < axis; i++)
    outer *= s->dims[i];
  for (guint i = axis + 1; i < s->rank; i++)
    inner *= s->dims[i];

  gint64 ddims[4];
  guint drank = 0;
  for (guint i = 0; i < s->rank; i++)
    if ((int) i != axis)
      ddims[drank++] = s->dims[i];
    else if (keep)
      ddims[drank++] = 1;

  g_autoptr(AccelBuffer) src = cpu_test_alloc (dtype, s->dims, s->rank);
  g_autoptr(AccelBuffer) dst = cpu_test_alloc (dtype, ddims, drank);
  g_autofree double *x = cpu_test_fill_random (src, -4, 4);
  g_autoptr(AccelOp) op = accel_reduce_new (src, dst, red, axis_arg);
  cpu_test_submit (op);
  g_autofree double *got = cpu_test_read (dst);

  gint64 nout = outer * inner;
  g_autofree double *want = g_new (double, nout);
  g_autofree double *scale = g_new (double, nout);
  for (gint64 o = 0; o < outer; o++)
    for (gint64 i = 0; i < inner; i++)
      {
        double acc = red == ACCEL_REDUCE_MAX ? -INFINITY : red == ACCEL_REDUCE_MIN ? INFINITY : 0;
        double mag = 0;
        for (gint64 r = 0; r < len; r++)
          {
            double v = x[(o * len + r) * inner + i];
            mag += fabs (v);
            if (red == ACCEL_REDUCE_MAX)
              acc = MAX (acc, v);
            else if (red == ACCEL_REDUCE_MIN)
              acc = MIN (acc, v);
            else
              acc += v;
          }
        if (red == ACCEL_REDUCE_MEAN)
          {
            acc /= len;
            mag /= len;
          }
        want[o * inner + i] = acc;
        scale[o * inner + i] = red == ACCEL_REDUCE_SUM || red == ACCEL_REDUCE_MEAN ? mag + fabs (acc) : fabs (acc);
      }

  g_autofree char *what = g_strdup_printf ("reduce %s %s rank %u axis %d keep %d", reduction_name (red),
                                           accel_dtype_get_name (dtype), s->rank, axis_arg, keep);
  /* Binary64 accumulation, then one rounding to the dtype. */
  cpu_test_assert_close (what, got, want, scale, nout, cpu_test_eps (dtype) + 1e-14 * len, 0.0);
}

static void
test_reduce (gconstpointer data)
{
  AccelDType dtype = GPOINTER_TO_INT (data);

  for (guint si = 0; si < G_N_ELEMENTS (shapes); si++)
    for (int axis = -(int) shapes[si].rank; axis < (int) shapes[si].rank; axis++)
      for (AccelReduceOp red = ACCEL_REDUCE_SUM; red <= ACCEL_REDUCE_MEAN; red++)
        check_reduce (dtype, &shapes[si], axis, (axis + red) % 2 == 0, red);
}

static void
test_reduce_nan (void)
{
  gint64 dims[2] = { 3, 5 };
  g_autoptr(AccelBuffer) src = cpu_test_alloc (ACCEL_DTYPE_F32, dims, 2);
  g_autoptr(AccelBuffer) dst = cpu_test_alloc (ACCEL_DTYPE_F32, dims, 1);
  g_autofree double *x = cpu_test_fill_random (src, 1, 2);
  x[7] = NAN;   /* row 1 */
  cpu_test_write (src, x);

  for (AccelReduceOp red = ACCEL_REDUCE_SUM; red <= ACCEL_REDUCE_MEAN; red++)
    {
      g_autoptr(AccelOp) op = accel_reduce_new (src, dst, red, 1);
      cpu_test_submit (op);
      g_autofree double *got = cpu_test_read (dst);
      g_assert_false (isnan (got[0]));
      g_assert_true (isnan (got[1]));
      g_assert_false (isnan (got[2]));
    }
}

static void
check_softmax (AccelDType dtype, const Shape *s, gboolean in_place)
{
  g_autoptr(AccelBuffer) src = cpu_test_alloc (dtype, s->dims, s->rank);
  g_autoptr(AccelBuffer) dst = in_place ? g_object_ref (src) : cpu_test_alloc (dtype, s->dims, s->rank);
  g_autofree double *x = cpu_test_fill_random (src, -8, 8);
  g_autoptr(AccelOp) op = accel_softmax_new (src, dst);
  cpu_test_submit (op);
  g_autofree double *got = cpu_test_read (dst);

  gint64 len = s->dims[s->rank - 1], n = 1;
  for (guint i = 0; i < s->rank; i++)
    n *= s->dims[i];
  g_autofree double *want = g_new (double, n);
  for (gint64 r = 0; r < n / len; r++)
    {
      const double *xr = x + r * len;
      double m = -INFINITY, sum = 0;
      for (gint64 j = 0; j < len; j++)
        m = MAX (m, xr[j]);
      for (gint64 j = 0; j < len; j++)
        sum += exp (xr[j] - m);
      for (gint64 j = 0; j < len; j++)
        want[r * len + j] = exp (xr[j] - m) / sum;
    }
  g_autofree char *what = g_strdup_printf ("softmax %s rank %u in place %d", accel_dtype_get_name (dtype),
                                           s->rank, in_place);
  /* f32 arithmetic for all but f64: a few f32 ulps, then the dtype's rounding. */
  double rtol = dtype == ACCEL_DTYPE_F64 ? 1e-13 : 4e-6 + cpu_test_eps (dtype);
  cpu_test_assert_close (what, got, want, NULL, n, rtol, 1e-30 + cpu_test_tiny (dtype));
}

static void
test_softmax (gconstpointer data)
{
  AccelDType dtype = GPOINTER_TO_INT (data);
  for (guint si = 0; si < G_N_ELEMENTS (shapes); si++)
    {
      check_softmax (dtype, &shapes[si], FALSE);
      check_softmax (dtype, &shapes[si], TRUE);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  cpu_test_add_per_float_dtype ("/cpu/reduce", test_reduce);
  cpu_test_add_per_float_dtype ("/cpu/softmax", test_softmax);
  g_test_add_func ("/cpu/reduce/nan", test_reduce_nan);
  return cpu_test_run ();
}
