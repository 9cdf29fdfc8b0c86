/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <string.h>
#include <accel-half.h>
#include "cpu-test.h"
#include "accel-test-values.h"

AccelSystem *
cpu_test_system (void)
{
  return accel_test_shared_system ();
}

AccelDevice *
cpu_test_device (void)
{
  return accel_test_shared_cpu ();
}

int
cpu_test_run (void)
{
  int ret = g_test_run ();
  accel_test_shared_teardown ();
  return ret;
}

void
cpu_test_add_per_float_dtype (const char *prefix, GTestDataFunc func)
{
  static const AccelDType types[] = {
    ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
  };

  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/%s", prefix, accel_dtype_get_name (types[i]));
      g_test_add_data_func (path, GINT_TO_POINTER (types[i]), func);
    }
}

AccelBuffer *
cpu_test_alloc (AccelDType dtype, const gint64 *dims, guint rank)
{
  g_autoptr(AccelShape) shape = accel_shape_new (dims, rank);
  return accel_test_alloc (cpu_test_device (), dtype, shape);
}

guint
cpu_test_components (AccelDType dtype)
{
  return accel_test_components (dtype);
}

double
cpu_test_round_to (AccelDType dtype, double v)
{
  return accel_test_round_to (dtype, v);
}

void
cpu_test_write (AccelBuffer *buffer, const double *values)
{
  g_assert_true (accel_shape_is_contiguous (accel_buffer_get_shape (buffer)));
  accel_test_write_values (buffer, values);
}

double *
cpu_test_fill_random (AccelBuffer *buffer, double lo, double hi)
{
  AccelDType dtype = accel_buffer_get_dtype (buffer);
  gsize n = (gsize) accel_buffer_get_n_elements (buffer) * accel_test_components (dtype);
  double *values = accel_test_random_values (dtype, n, lo, hi);
  cpu_test_write (buffer, values);
  return values;
}

guint8 *
cpu_test_read_bytes (AccelBuffer *buffer)
{
  return accel_test_read_bytes (buffer);
}

double *
cpu_test_read (AccelBuffer *buffer)
{
  g_assert_true (accel_shape_is_contiguous (accel_buffer_get_shape (buffer)));
  return accel_test_read_values (buffer);
}

void
cpu_test_submit (AccelOp *op)
{
  g_autoptr(GError) error = NULL;
  gboolean ok = accel_device_submit (cpu_test_device (), op, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
}

void
cpu_test_submit_expect_error (AccelOp *op, AccelError code)
{
  g_autoptr(GError) error = NULL;
  gboolean ok = accel_device_submit (cpu_test_device (), op, NULL, &error);
  g_assert_false (ok);
  g_assert_error (error, ACCEL_ERROR, (gint) code);
  g_test_message ("%s: expected error: %s", accel_op_get_type_name (op), error->message);
}

double
cpu_test_eps (AccelDType dtype)
{
  return accel_test_eps (dtype) / 2;   /* the unit roundoff */
}

double
cpu_test_tiny (AccelDType dtype)
{
  return accel_test_denorm_min (dtype);
}

void
cpu_test_assert_close (const char *what,
                       const double *got,
                       const double *want,
                       const double *scale,
                       gsize n,
                       double rtol,
                       double atol)
{
  for (gsize i = 0; i < n; i++)
    {
      double s = scale ? scale[i] : fabs (want[i]);
      double err = fabs (got[i] - want[i]);
      gboolean same_special = (isnan (got[i]) && isnan (want[i]))
                              || (isinf (want[i]) && got[i] == want[i]);
      if (!same_special && !(err <= atol + rtol * s))
        {
          g_test_fail_printf ("%s: element %" G_GSIZE_FORMAT " is %.17g, expected %.17g (error %.3g, allowed %.3g)",
                              what, i, got[i], want[i], err, atol + rtol * s);
          return;
        }
    }
}

void
cpu_test_expect_error_naming (AccelOp *op, AccelError code, const char *needle)
{
  g_autoptr(GError) error = NULL;
  gboolean ok = accel_device_submit (cpu_test_device (), op, NULL, &error);
  g_assert_false (ok);
  g_assert_error (error, ACCEL_ERROR, (gint) code);
  if (strstr (error->message, needle) == NULL)
    g_error ("expected “%s” in: %s", needle, error->message);
  g_test_message ("expected error: %s", error->message);
}

static AccelBuffer *
resolve_handle (guint64 handle, gpointer data)
{
  GPtrArray *buffers = data;
  for (guint i = 0; i < buffers->len; i++)
    if (accel_buffer_get_handle (buffers->pdata[i]) == handle)
      return g_object_ref (buffers->pdata[i]);
  return NULL;
}

AccelOp *
cpu_test_round_trip (AccelOp *op, GPtrArray *buffers)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) v = accel_op_serialize (op);
  AccelOp *back = accel_op_deserialize (v, resolve_handle, buffers, &error);
  g_assert_no_error (error);
  g_assert_true (G_OBJECT_TYPE (back) == G_OBJECT_TYPE (op));
  g_autoptr(GVariant) again = accel_op_serialize (back);
  if (!g_variant_equal (v, again))
    {
      g_autofree char *a = g_variant_print (v, TRUE), *b = g_variant_print (again, TRUE);
      g_test_fail_printf ("%s does not round-trip: %s became %s", accel_op_get_type_name (op), a, b);
    }
  return back;
}
