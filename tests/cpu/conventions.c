/* conventions.c: what a numpy user trips over, each a regression test:
 * out-of-bounds CSR offsets named (and never read past, under ASan), fill
 * with NaN and ±inf, empty axes, a device outliving its system, and
 * errors naming the property that is wrong.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "cpu-test.h"

static AccelBuffer *
ints (const gint32 *values, gint64 n)
{
  gint64 dims[1] = { n };
  AccelBuffer *b = cpu_test_alloc (ACCEL_DTYPE_I32, dims, 1);
  g_autoptr(GError) error = NULL;
  g_assert_true (accel_buffer_write (b, (const guint8 *) values, n * sizeof (gint32), &error));
  g_assert_no_error (error);
  return b;
}

/* Offsets past nnz (monotone or not) and decreasing offsets are named as
 * row-ptr faults before any column is read: the ASan build fails on a read
 * past col-ind. */
static void
test_csr_offsets (void)
{
  const struct { gint32 row_ptr[4]; gint32 col_ind[5]; } cases[] = {
    { { 0, 2, 6, 5 }, { 0, 1, 0, 1, 2 } },   /* past nnz, then decreasing */
    { { 0, 2, 9, 5 }, { 0, 1, 0, 1, 2 } },
    { { 0, 3, 2, 5 }, { 2, 1, 0, 1, 2 } },   /* decreasing within bounds; columns not ascending too */
    { { 0, 4, 1, 5 }, { 0, 1, 2, 3, 0 } },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      gint64 d5[1] = { 5 }, d4[1] = { 4 }, d3[1] = { 3 };
      g_autoptr(AccelBuffer) rp = ints (cases[c].row_ptr, 4);
      g_autoptr(AccelBuffer) ci = ints (cases[c].col_ind, 5);
      g_autoptr(AccelBuffer) vals = cpu_test_alloc (ACCEL_DTYPE_F32, d5, 1);
      g_autoptr(AccelBuffer) x = cpu_test_alloc (ACCEL_DTYPE_F32, d4, 1);
      g_autoptr(AccelBuffer) y = cpu_test_alloc (ACCEL_DTYPE_F32, d3, 1);
      g_free (cpu_test_fill_random (vals, -1, 1));
      g_free (cpu_test_fill_random (x, -1, 1));
      g_autoptr(AccelOp) op = accel_spmv_new (rp, ci, vals, x, y, 4);
      cpu_test_expect_error_naming (op, ACCEL_ERROR_INVALID_ARGUMENT, "“row-ptr”");
    }
}

/* Every binary64 value fills, converted as cast converts it. */
static void
test_fill_non_finite (void)
{
  const double specials[] = { NAN, INFINITY, -INFINITY, -0.0 };
  const AccelDType floats[] = { ACCEL_DTYPE_F64, ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16 };
  gint64 dims[2] = { g_test_rand_int_range (1, 9), g_test_rand_int_range (1, 9) };

  for (guint s = 0; s < G_N_ELEMENTS (specials); s++)
    {
      for (guint d = 0; d < G_N_ELEMENTS (floats); d++)
        {
          g_autoptr(AccelBuffer) b = cpu_test_alloc (floats[d], dims, 2);
          g_free (cpu_test_fill_random (b, -1, 1));
          g_autoptr(AccelOp) op = accel_fill_new (b, specials[s]);
          cpu_test_submit (op);
          g_autofree double *got = cpu_test_read (b);
          for (gint64 i = 0; i < dims[0] * dims[1]; i++)
            if (isnan (specials[s]) ? !isnan (got[i])
                                    : (got[i] != specials[s] || signbit (got[i]) != signbit (specials[s])))
              g_error ("fill %g into %s: element %" G_GINT64_FORMAT " is %g", specials[s],
                       accel_dtype_get_name (floats[d]), i, got[i]);
        }
      /* Into integers: NaN gives 0, ±inf the extremes (saturation). */
      g_autoptr(AccelBuffer) bi = cpu_test_alloc (ACCEL_DTYPE_I32, dims, 2);
      g_autoptr(AccelOp) opi = accel_fill_new (bi, specials[s]);
      cpu_test_submit (opi);
      g_autofree double *goti = cpu_test_read (bi);
      double want = isnan (specials[s]) ? 0 : isinf (specials[s]) ? (specials[s] > 0 ? G_MAXINT32 : G_MININT32) : 0;
      for (gint64 i = 0; i < dims[0] * dims[1]; i++)
        g_assert_cmpfloat (goti[i], ==, want);
    }

  /* The imaginary part too. */
  g_autoptr(AccelBuffer) bc = cpu_test_alloc (ACCEL_DTYPE_C64, dims, 2);
  g_autoptr(AccelOp) opc = accel_fill_new (bc, -INFINITY);
  g_object_set (opc, "value-imag", NAN, NULL);
  cpu_test_submit (opc);
  g_autofree double *gotc = cpu_test_read (bc);
  for (gint64 i = 0; i < dims[0] * dims[1]; i++)
    g_assert_true (gotc[2 * i] == -INFINITY && isnan (gotc[2 * i + 1]));
}

/* A shape with a zero anywhere is contiguous, and reducing an empty axis
 * gives the documented identities. */
static void
test_empty_axis (void)
{
  gint64 rows = g_test_rand_int_range (1, 7);
  gint64 d_src[2] = { rows, 0 }, d_dst[1] = { rows };
  g_autoptr(AccelShape) shape = accel_shape_new (d_src, 2);
  g_assert_true (accel_shape_is_contiguous (shape));
  const struct { AccelReduceOp op; double want; } cases[] = {
    { ACCEL_REDUCE_SUM, 0.0 }, { ACCEL_REDUCE_MEAN, NAN }, { ACCEL_REDUCE_MAX, -INFINITY }, { ACCEL_REDUCE_MIN, INFINITY },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autoptr(AccelBuffer) src = cpu_test_alloc (ACCEL_DTYPE_F32, d_src, 2);
      g_autoptr(AccelBuffer) dst = cpu_test_alloc (ACCEL_DTYPE_F32, d_dst, 1);
      g_free (cpu_test_fill_random (dst, -1, 1));
      g_autoptr(AccelOp) op = accel_reduce_new (src, dst, cases[c].op, -1);
      cpu_test_submit (op);
      g_autofree double *got = cpu_test_read (dst);
      for (gint64 i = 0; i < rows; i++)
        g_assert_true (isnan (cases[c].want) ? isnan (got[i]) : got[i] == cases[c].want);
    }
}

/* `Accel.System.new ().get_device ("cpu:0")`: the device works after the
 * application let its system go, and closes when it goes itself. */
static void
test_device_outlives_system (void)
{
  g_autoptr(GError) error = NULL;
  AccelSystem *system = accel_system_new (&error);
  g_assert_no_error (error);
  AccelDevice *dev = accel_system_get_device (system, "cpu:0", &error);
  g_assert_no_error (error);
  GWeakRef system_ref;
  g_weak_ref_init (&system_ref, system);
  g_object_unref (system);

  double value = g_test_rand_double_range (-100, 100);
  gint64 dims[1] = { g_test_rand_int_range (1, 100) };
  g_autoptr(AccelShape) shape = accel_shape_new (dims, 1);
  g_autoptr(AccelBuffer) b = accel_device_alloc (dev, ACCEL_DTYPE_F64, shape, &error);
  g_assert_no_error (error);
  g_autoptr(AccelOp) op = accel_fill_new (b, value);
  g_assert_true (accel_device_submit (dev, op, NULL, &error));
  g_assert_no_error (error);
  g_autoptr(GBytes) bytes = accel_buffer_download (b, &error);
  g_assert_no_error (error);
  const double *got = g_bytes_get_data (bytes, NULL);
  for (gint64 i = 0; i < dims[0]; i++)
    g_assert_cmpfloat (got[i], ==, value);
  g_assert_cmpint (accel_device_get_state (dev), ==, ACCEL_DEVICE_STATE_READY);

  g_clear_object (&op);
  g_clear_object (&b);
  g_object_unref (dev);
  g_weak_ref_clear (&system_ref);
}

static void
conv_buffers (gboolean nhwc, AccelBuffer **x, AccelBuffer **w, AccelBuffer **y, gint64 k_w, gint64 k_y)
{
  gint64 n = 2, c = 3, h = 9, wd = 7, r = 3, s = 3;
  gint64 dx[4] = { n, c, h, wd }, dw[4] = { k_w, c, r, s }, dy[4] = { n, k_y, h - r + 1, wd - s + 1 };
  if (nhwc)
    {
      gint64 ax[4] = { n, h, wd, c }, aw[4] = { k_w, r, s, c }, ay[4] = { n, h - r + 1, wd - s + 1, k_y };
      memcpy (dx, ax, sizeof dx), memcpy (dw, aw, sizeof dw), memcpy (dy, ay, sizeof dy);
    }
  *x = cpu_test_alloc (ACCEL_DTYPE_F32, dx, 4);
  *w = cpu_test_alloc (ACCEL_DTYPE_F32, dw, 4);
  *y = cpu_test_alloc (ACCEL_DTYPE_F32, dy, 4);
}

/* A wrong result of a backward conv is named, not the dy it fails to match. */
static void
test_conv_blames_result (void)
{
  for (int nhwc = 0; nhwc < 2; nhwc++)
    {
      AccelBuffer *x, *w, *y;
      /* dw with one filter too many for dy's channels. */
      conv_buffers (nhwc, &x, &w, &y, 5, 4);
      g_autoptr(AccelOp) bf = accel_conv2d_backward_filter_new (x, y, w);
      g_object_set (bf, "layout", nhwc ? ACCEL_CONV_LAYOUT_NHWC : ACCEL_CONV_LAYOUT_NCHW, NULL);
      cpu_test_expect_error_naming (bf, ACCEL_ERROR_SHAPE_MISMATCH, "“dw”");
      g_object_unref (x), g_object_unref (w), g_object_unref (y);

      /* dw whose window gives another output size than dy's. */
      conv_buffers (nhwc, &x, &w, &y, 4, 4);
      gint64 dw5[4] = { 4, 3, 5, 5 }, dw5n[4] = { 4, 5, 5, 3 };
      g_autoptr(AccelBuffer) w5 = cpu_test_alloc (ACCEL_DTYPE_F32, nhwc ? dw5n : dw5, 4);
      g_autoptr(AccelOp) bf2 = accel_conv2d_backward_filter_new (x, y, w5);
      g_object_set (bf2, "layout", nhwc ? ACCEL_CONV_LAYOUT_NHWC : ACCEL_CONV_LAYOUT_NCHW, NULL);
      cpu_test_expect_error_naming (bf2, ACCEL_ERROR_SHAPE_MISMATCH, "“dw”");

      /* dx with the wrong channel count, then the wrong size. */
      gint64 dxc[4] = { 2, 5, 9, 7 }, dxcn[4] = { 2, 9, 7, 5 };
      g_autoptr(AccelBuffer) x5 = cpu_test_alloc (ACCEL_DTYPE_F32, nhwc ? dxcn : dxc, 4);
      g_autoptr(AccelOp) bd = accel_conv2d_backward_data_new (y, w, x5);
      g_object_set (bd, "layout", nhwc ? ACCEL_CONV_LAYOUT_NHWC : ACCEL_CONV_LAYOUT_NCHW, NULL);
      cpu_test_expect_error_naming (bd, ACCEL_ERROR_SHAPE_MISMATCH, "“dx”");
      gint64 dxs[4] = { 2, 3, 11, 7 }, dxsn[4] = { 2, 11, 7, 3 };
      g_autoptr(AccelBuffer) x11 = cpu_test_alloc (ACCEL_DTYPE_F32, nhwc ? dxsn : dxs, 4);
      g_autoptr(AccelOp) bd2 = accel_conv2d_backward_data_new (y, w, x11);
      g_object_set (bd2, "layout", nhwc ? ACCEL_CONV_LAYOUT_NHWC : ACCEL_CONV_LAYOUT_NCHW, NULL);
      cpu_test_expect_error_naming (bd2, ACCEL_ERROR_SHAPE_MISMATCH, "“dx”");
      g_object_unref (x), g_object_unref (w), g_object_unref (y);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cpu/conventions/csr-offsets", test_csr_offsets);
  g_test_add_func ("/cpu/conventions/fill-non-finite", test_fill_non_finite);
  g_test_add_func ("/cpu/conventions/empty-axis", test_empty_axis);
  g_test_add_func ("/cpu/conventions/device-outlives-system", test_device_outlives_system);
  g_test_add_func ("/cpu/conventions/conv-blames-result", test_conv_blames_result);
  return cpu_test_run ();
}
