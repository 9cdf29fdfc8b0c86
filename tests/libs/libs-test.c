/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <accel-half.h>
#include "libs-test.h"
#include "accel-test-values.h"

static AccelDevice *device;        /* under test, NULL if absent */
static char *device_name;
static char *absent_reason;

static void
lt_init (int *argc, char ***argv)
{
  g_test_init (argc, argv, NULL);
  device_name = g_strdup (g_getenv ("ACCEL_TEST_DEVICE") ? g_getenv ("ACCEL_TEST_DEVICE") : "cpu:0");

  g_autoptr(GError) error = NULL;
  device = accel_system_get_device (accel_test_shared_system (), device_name, &error);
  if (device == NULL)
    absent_reason = g_strdup_printf ("no device %s: %s", device_name, error->message);
}

static int
lt_run (void)
{
  int ret = g_test_run ();
  g_clear_object (&device);
  accel_test_shared_teardown ();
  g_free (device_name);
  g_free (absent_reason);
  return ret;
}

AccelDevice *
lt_device (void)
{
  if (device == NULL)
    g_test_skip (absent_reason);
  return device;
}

AccelDevice *
lt_device_for (const char *first_op_type, ...)
{
  if (lt_device () == NULL)
    return NULL;

  AccelRegistry *registry = accel_system_get_registry (accel_test_shared_system ());
  const char *backend = accel_device_get_backend_name (device);
  va_list args;
  va_start (args, first_op_type);
  for (const char *t = first_op_type; t != NULL; t = va_arg (args, const char *))
    {
      g_autoptr(GPtrArray) kernels = accel_registry_list_kernels (registry, t, backend);
      if (kernels == NULL || kernels->len == 0)
        {
          g_autofree char *why = g_strdup_printf ("no %s kernel for %s on this build", backend, t);
          g_test_skip (why);
          va_end (args);
          return NULL;
        }
    }
  va_end (args);
  return device;
}

gboolean
lt_device_is_cpu (void)
{
  return device == accel_test_shared_cpu ();
}

AccelBuffer *
lt_alloc (AccelDType dtype, const gint64 *dims, guint rank)
{
  g_autoptr(AccelShape) shape = accel_shape_new (dims, rank);
  g_assert_nonnull (device);
  return accel_test_alloc (device, dtype, shape);
}

AccelBuffer *
lt_new (AccelDType dtype, const gint64 *dims, guint rank, const double *values)
{
  AccelBuffer *b = lt_alloc (dtype, dims, rank);
  if (values != NULL)
    lt_write (b, values);
  else
    {
      g_autoptr(GError) error = NULL;
      accel_buffer_zero (b, &error);
      g_assert_no_error (error);
    }
  return b;
}

double
lt_round (AccelDType dtype, double v)
{
  return accel_test_round_to (dtype, v);
}

double *
lt_random (AccelDType dtype, gint64 n, double lo, double hi)
{
  double *v = g_new (double, MAX (n, 1));
  for (gint64 i = 0; i < n; i++)
    {
      double x = g_test_rand_double_range (lo, hi);
      v[i] = lt_round (dtype, accel_dtype_is_integer (dtype) ? floor (x) : x);
    }
  return v;
}

void
lt_write (AccelBuffer *buffer, const double *values)
{
  accel_test_write_values (buffer, values);
}

double *
lt_read (AccelBuffer *buffer)
{
  return accel_test_read_values (buffer);
}

void
lt_submit (AccelOp *op)
{
  g_autoptr(GError) error = NULL;
  gboolean ok = accel_device_submit (device, op, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
}

/* The twin of an op on cpu:0: each buffer copied there, bound by handle. */
typedef struct {
  GHashTable *by_handle;   /* guint64 handle -> cpu AccelBuffer */
} Twin;

static AccelBuffer *
twin_resolve (guint64 handle, gpointer user_data)
{
  Twin *twin = user_data;
  AccelBuffer *b = g_hash_table_lookup (twin->by_handle, &handle);
  return b ? g_object_ref (b) : NULL;
}

static void
twin_add (Twin *twin, AccelBuffer *b)
{
  guint64 handle = accel_buffer_get_handle (b);
  if (g_hash_table_contains (twin->by_handle, &handle))
    return;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = accel_buffer_download (b, &error);
  g_assert_no_error (error);
  AccelBuffer *copy = accel_test_alloc (accel_test_shared_cpu (), accel_buffer_get_dtype (b), accel_buffer_get_shape (b));
  accel_buffer_upload (copy, bytes, &error);
  g_assert_no_error (error);
  g_hash_table_insert (twin->by_handle, g_memdup2 (&handle, sizeof handle), copy);
}

void
lt_submit_compare (AccelOp *op, double rtol, double atol, const char *first_property, ...)
{
  /* ACCEL_TEST_FORCE_COMPARE runs the twin on cpu:0 even when testing cpu:0,
   * which checks this harness without a GPU. */
  if (lt_device_is_cpu () && g_getenv ("ACCEL_TEST_FORCE_COMPARE") == NULL)
    {
      lt_submit (op);
      return;
    }

  g_autoptr(GError) error = NULL;
  Twin twin = { g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_object_unref) };
  g_autoptr(GPtrArray) buffers = accel_op_get_buffers (op, ACCEL_ACCESS_READ_WRITE);
  for (guint i = 0; i < buffers->len; i++)
    twin_add (&twin, buffers->pdata[i]);
  g_autoptr(GVariant) serialized = accel_op_serialize (op);
  g_autoptr(AccelOp) twin_op = accel_op_deserialize (serialized, twin_resolve, &twin, &error);
  g_assert_no_error (error);

  lt_submit (op);
  accel_device_submit (accel_test_shared_cpu (), twin_op, NULL, &error);
  g_assert_no_error (error);

  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  va_list args;
  va_start (args, first_property);
  for (const char *p = first_property; p != NULL; p = va_arg (args, const char *))
    g_ptr_array_add (names, (gpointer) p);
  va_end (args);

  AccelOpClass *klass = ACCEL_OP_GET_CLASS (op);
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      gboolean all = g_str_equal (name, "*");
      guint n_props;
      g_autofree GParamSpec **props = g_object_class_list_properties (G_OBJECT_CLASS (klass), &n_props);
      for (guint j = 0; j < n_props; j++)
        {
          const char *prop = props[j]->name;
          AccelAccess access = accel_op_class_get_buffer_access (klass, prop);
          if (access == 0 || (all ? !(access & ACCEL_ACCESS_WRITE) : !g_str_equal (prop, name)))
            continue;
          AccelBuffer *got_b = accel_op_peek_buffer (op, prop);
          AccelBuffer *want_b = accel_op_peek_buffer (twin_op, prop);
          if (got_b == NULL)
            continue;
          g_autofree double *got = lt_read (got_b);
          g_autofree double *want = lt_read (want_b);
          g_autofree char *what = g_strdup_printf ("%s '%s' on %s against cpu:0",
                                                   accel_op_get_type_name (op), prop, device_name);
          lt_assert_close (what, got, want, accel_buffer_get_n_elements (got_b), rtol, atol);
        }
    }
  g_hash_table_unref (twin.by_handle);
}

static void
device_still_works (void)
{
  gint64 dims[1] = { 5 };
  double values[5] = { 1, 2, 3, 4, 5 };
  g_autoptr(AccelBuffer) x = lt_new (ACCEL_DTYPE_F32, dims, 1, values);
  g_autoptr(AccelOp) op = accel_scan_new (x, x, ACCEL_SCAN_INCLUSIVE);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (accel_device_get_state (device), ==, ACCEL_DEVICE_STATE_READY);
  accel_device_submit (device, op, NULL, &error);
  g_assert_no_error (error);
  g_autofree double *got = lt_read (x);
  g_assert_cmpfloat (got[4], ==, 15.0);
}

void
lt_expect_error (AccelOp *op, AccelError code, const char *substring)
{
  g_autoptr(GError) error = NULL;
  gboolean ok = accel_device_submit (device, op, NULL, &error);
  g_assert_false (ok);
  g_assert_error (error, ACCEL_ERROR, (gint) code);
  if (substring != NULL && strstr (error->message, substring) == NULL)
    g_error ("error “%s” does not mention “%s”", error->message, substring);
  g_test_message ("expected error: %s", error->message);
  device_still_works ();
}

double
lt_eps (AccelDType dtype)
{
  return accel_test_eps (dtype);
}

void
lt_assert_close (const char *what, const double *got, const double *want, gsize n, double rtol, double atol)
{
  for (gsize i = 0; i < n; i++)
    {
      double tol = atol + rtol * fabs (want[i]);
      gboolean same = (isnan (got[i]) && isnan (want[i])) || got[i] == want[i];   /* NaN, ±inf */
      if (!same && !(fabs (got[i] - want[i]) <= tol))
        g_error ("%s: element %" G_GSIZE_FORMAT " is %.9g, expected %.9g (tolerance %.3g)",
                 what, i, got[i], want[i], tol);
    }
}

int
main (int argc, char **argv)
{
  lt_init (&argc, &argv);
  for (const LtTest *t = lt_tests; t->path != NULL; t++)
    g_test_add_func (t->path, t->func);
  return lt_run ();
}
