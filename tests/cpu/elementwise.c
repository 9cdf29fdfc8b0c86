/* copy and fill on cpu:0: every dtype, contiguous and strided layouts,
 * reshapes, odd sizes, and large buffers that take the threaded path.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "cpu-test.h"

static const AccelDType all_types[] = {
  ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16, ACCEL_DTYPE_F32, ACCEL_DTYPE_F64,
  ACCEL_DTYPE_C64, ACCEL_DTYPE_C128, ACCEL_DTYPE_I8, ACCEL_DTYPE_U8,
  ACCEL_DTYPE_I32, ACCEL_DTYPE_U32, ACCEL_DTYPE_I64, ACCEL_DTYPE_FP8_E4M3,
  ACCEL_DTYPE_FP8_E5M2,
};

static AccelBuffer *
alloc_strided (AccelDType dtype, const gint64 *dims, const gint64 *strides, guint rank)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelShape) shape = accel_shape_new_strided (dims, strides, rank);
  AccelBuffer *b = accel_device_alloc (cpu_test_device (), dtype, shape, &error);
  g_assert_no_error (error);
  return b;
}

/* Random bytes that are valid values of any dtype's bit patterns. */
static void
write_random_bytes (AccelBuffer *b, guint8 **out)
{
  g_autoptr(GError) error = NULL;
  gsize size = accel_buffer_get_size (b);
  guint8 *bytes = g_malloc (MAX (size, 1));
  for (gsize i = 0; i < size; i++)
    bytes[i] = (guint8) g_test_rand_int_range (1, 256);
  accel_buffer_write (b, bytes, size, &error);
  g_assert_no_error (error);
  *out = bytes;
}

static void
test_copy_contiguous (gconstpointer data)
{
  AccelDType dtype = GPOINTER_TO_INT (data);
  static const gint64 sizes[] = { 1, 7, 33, 129, 300001 };

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      gint64 n = sizes[s];
      /* A reshape: [n] into [1, n]. */
      gint64 dd[2] = { 1, n };
      g_autoptr(AccelBuffer) src = cpu_test_alloc (dtype, &n, 1);
      g_autoptr(AccelBuffer) dst = cpu_test_alloc (dtype, dd, 2);
      g_autofree guint8 *bytes = NULL;
      write_random_bytes (src, &bytes);

      g_autoptr(AccelOp) op = accel_copy_new (src, dst);
      cpu_test_submit (op);
      g_autofree guint8 *got = cpu_test_read_bytes (dst);
      g_assert_cmpmem (got, accel_buffer_get_size (dst), bytes, accel_buffer_get_size (src));
    }
}

static void
test_copy_strided (gconstpointer data)
{
  AccelDType dtype = GPOINTER_TO_INT (data);
  gsize es = accel_dtype_get_size (dtype);
  /* A transposed view of [7, 33] storage, and a padded destination. */
  gint64 sdims[2] = { 33, 7 }, sstrides[2] = { 1, 33 };
  gint64 ddims[2] = { 33, 7 }, dstrides[2] = { 9, 1 };

  g_autoptr(AccelBuffer) src = alloc_strided (dtype, sdims, sstrides, 2);
  g_autoptr(AccelBuffer) dst = alloc_strided (dtype, ddims, dstrides, 2);
  g_autofree guint8 *sbytes = NULL, *dbefore = NULL;
  write_random_bytes (src, &sbytes);
  write_random_bytes (dst, &dbefore);

  g_autoptr(AccelOp) op = accel_copy_new (src, dst);
  cpu_test_submit (op);
  g_autofree guint8 *got = cpu_test_read_bytes (dst);

  for (gint64 i = 0; i < 33; i++)
    for (gint64 j = 0; j < 9; j++)
      {
        const guint8 *g = got + (i * 9 + j) * es;
        if (j < 7)
          g_assert_cmpmem (g, es, sbytes + (i * 1 + j * 33) * es, es);
        else if (i < 32)   /* the padding is left alone */
          g_assert_cmpmem (g, es, dbefore + (i * 9 + j) * es, es);
      }
}

static double
expected_fill (AccelDType dtype, double v)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_I8: return CLAMP (trunc (v), -128, 127);
    case ACCEL_DTYPE_U8: return CLAMP (trunc (v), 0, 255);
    case ACCEL_DTYPE_I32: return CLAMP (trunc (v), G_MININT32, G_MAXINT32);
    case ACCEL_DTYPE_U32: return CLAMP (trunc (v), 0, G_MAXUINT32);
    case ACCEL_DTYPE_I64: return trunc (v);
    default: return cpu_test_round_to (dtype, v);
    }
}

static void
test_fill (gconstpointer data)
{
  AccelDType dtype = GPOINTER_TO_INT (data);
  guint cc = cpu_test_components (dtype);
  static const gint64 sizes[] = { 1, 7, 33, 129, 300001 };

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      gint64 n = sizes[s];
      g_autoptr(AccelBuffer) dst = cpu_test_alloc (dtype, &n, 1);
      double value = g_test_rand_double_range (-100, 100);
      double imag = cc == 2 ? g_test_rand_double_range (-100, 100) : 0.0;

      g_autoptr(AccelOp) op = accel_fill_new (dst, value);
      g_object_set (op, "value-imag", imag, NULL);
      cpu_test_submit (op);
      g_autofree double *got = cpu_test_read (dst);
      for (gint64 i = 0; i < n; i++)
        {
          g_assert_cmpfloat (got[i * cc], ==, expected_fill (dtype, value));
          if (cc == 2)
            g_assert_cmpfloat (got[i * cc + 1], ==, cpu_test_round_to (dtype, imag));
        }
    }
}

static void
test_fill_strided (void)
{
  gint64 dims[2] = { 5, 3 }, strides[2] = { 4, 1 };
  g_autoptr(AccelBuffer) dst = alloc_strided (ACCEL_DTYPE_F32, dims, strides, 2);
  g_autofree guint8 *before = NULL;
  write_random_bytes (dst, &before);

  g_autoptr(AccelOp) op = accel_fill_new (dst, 2.5);
  cpu_test_submit (op);
  g_autofree guint8 *got = cpu_test_read_bytes (dst);
  const float *f = (const float *) got;
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 4; j++)
      {
        if (j < 3)
          g_assert_cmpfloat (f[i * 4 + j], ==, 2.5f);
        else if (i < 4)
          g_assert_cmpmem (&f[i * 4 + j], 4, before + 4 * (i * 4 + j), 4);
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (all_types); i++)
    {
      const char *name = accel_dtype_get_name (all_types[i]);
      g_autofree char *p1 = g_strdup_printf ("/cpu/copy/contiguous/%s", name);
      g_autofree char *p2 = g_strdup_printf ("/cpu/copy/strided/%s", name);
      g_autofree char *p3 = g_strdup_printf ("/cpu/fill/%s", name);
      g_test_add_data_func (p1, GINT_TO_POINTER (all_types[i]), test_copy_contiguous);
      g_test_add_data_func (p2, GINT_TO_POINTER (all_types[i]), test_copy_strided);
      g_test_add_data_func (p3, GINT_TO_POINTER (all_types[i]), test_fill);
    }
  g_test_add_func ("/cpu/fill/strided", test_fill_strided);
  return cpu_test_run ();
}
