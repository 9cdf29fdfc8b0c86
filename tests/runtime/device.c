/* Tests of devices, buffers and submission on cpu:0: blocking and async
 * submit, ordering, cancellation, bad input, generations and supervision
 * (with the test-only `fault` op), serialisation round trips, and many
 * threads submitting while faults happen.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include "accel-test-buffers.h"
#include "accel-test-stress.h"
#include <math.h>
#include <string.h>

static void
test_devices_listed (void)
{
  g_autoptr(AccelSystem) system = accel_test_new_system ();
  g_autoptr(GPtrArray) devices = accel_system_list_devices (system);
  g_assert_cmpuint (devices->len, >=, 1);
  g_autoptr(AccelDevice) cpu = accel_test_get_device (system, "cpu:0");
  g_assert_cmpstr (accel_device_get_backend_name (cpu), ==, "cpu");
  g_assert_cmpuint (accel_device_get_generation (cpu), ==, 0);
  g_assert_cmpint (accel_device_get_state (cpu), ==, ACCEL_DEVICE_STATE_READY);
  g_assert_cmpuint (accel_device_get_memory_total (cpu), >, 0);

  g_autoptr(GError) error = NULL;
  g_autoptr(AccelDevice) dflt = accel_system_get_device (system, "default", &error);
  g_assert_no_error (error);
  g_assert_true (dflt == devices->pdata[0]);

  g_autoptr(AccelDevice) none = accel_system_get_device (system, "cuda:99", &error);
  g_assert_null (none);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_DEVICE);
}

static void
test_buffer_round_trip (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(GError) error = NULL;
  gint64 n = g_test_rand_int_range (1, 5000);
  g_autoptr(AccelShape) shape = accel_shape_new_1d (n);
  float *host = NULL;
  g_autoptr(AccelBuffer) b = accel_test_alloc_random_f32 (f->dev, shape, &host);

  g_assert_cmpuint (accel_buffer_get_size (b), ==, n * 4);
  g_autoptr(GBytes) bytes = accel_buffer_download (b, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), host, n * 4);

  /* A view of a contiguous range reads and writes the base's memory. */
  gint64 off = n / 3, len = n - off;
  g_autoptr(AccelShape) vshape = accel_shape_new_1d (len);
  g_autoptr(AccelBuffer) view = accel_buffer_new_view (b, off, vshape, &error);
  g_assert_no_error (error);
  g_autofree float *vdata = accel_test_read_f32 (view);
  g_assert_cmpmem (vdata, len * 4, host + off, len * 4);
  accel_buffer_zero (view, &error);
  g_assert_no_error (error);
  g_autofree float *after = accel_test_read_f32 (b);
  g_assert_cmpmem (after, off * 4, host, off * 4);
  for (gint64 i = off; i < n; i++)
    g_assert_cmpfloat (after[i], ==, 0.0f);

  /* Views that do not fit, and host data of the wrong size. */
  g_autoptr(AccelShape) big = accel_shape_new_1d (n + 1);
  g_autoptr(AccelBuffer) bad = accel_buffer_new_view (b, 0, big, &error);
  g_assert_null (bad);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH);
  g_clear_error (&error);
  g_assert_false (accel_buffer_write (b, (guint8 *) host, n * 4 - 1, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH);
  g_free (host);
}

static void
async_done (GObject *source, GAsyncResult *result, gpointer data)
{
  GError **out = ((gpointer *) data)[0];
  gint *count = ((gpointer *) data)[1];
  accel_device_submit_finish (ACCEL_DEVICE (source), result, out);
  (*count)++;
}

static void
test_submit_async_gemm (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  gint64 m = g_test_rand_int_range (1, 70), k = g_test_rand_int_range (1, 70), n = g_test_rand_int_range (1, 70);
  g_autoptr(AccelShape) sa = accel_shape_new_2d (m, k);
  g_autoptr(AccelShape) sb = accel_shape_new_2d (k, n);
  g_autoptr(AccelShape) sc = accel_shape_new_2d (m, n);
  float *a, *b;
  g_autoptr(AccelBuffer) ba = accel_test_alloc_random_f32 (f->dev, sa, &a);
  g_autoptr(AccelBuffer) bb = accel_test_alloc_random_f32 (f->dev, sb, &b);
  g_autoptr(AccelBuffer) bc = accel_test_alloc_random_f32 (f->dev, sc, NULL);

  g_autoptr(AccelOp) op = accel_op_new ("gemm", "a", ba, "b", bb, "c", bc, "alpha", 2.0, NULL);
  GError *error = NULL;
  gint count = 0;
  gpointer data[2] = { &error, &count };
  accel_device_submit_async (f->dev, op, NULL, async_done, data);
  /* The callback runs on this thread's main context, not before. */
  g_assert_cmpint (count, ==, 0);
  while (count == 0)
    g_main_context_iteration (NULL, TRUE);
  g_assert_no_error (error);

  g_autofree float *c = accel_test_read_f32 (bc);
  for (gint64 i = 0; i < m; i++)
    for (gint64 j = 0; j < n; j++)
      {
        double ref = 0;
        for (gint64 p = 0; p < k; p++)
          ref += (double) a[i * k + p] * b[p * n + j];
        g_assert_cmpfloat_with_epsilon (c[i * n + j], 2.0 * ref, 1e-4 * (1 + fabs (ref)));
      }
  g_free (a);
  g_free (b);
}

/* Async ops then a blocking read: the read sees every earlier op. */
static void
test_ordering (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(AccelShape) s = accel_shape_new_1d (g_test_rand_int_range (1, 1000));
  g_autoptr(AccelBuffer) x = accel_test_alloc_random_f32 (f->dev, s, NULL);
  GError *error = NULL;
  gint count = 0;
  gpointer data[2] = { &error, &count };
  double expect = 0;
  guint nops = 100;
  for (guint i = 0; i < nops; i++)
    {
      double v = g_test_rand_double_range (-10, 10);
      g_autoptr(AccelOp) fill = accel_op_new ("fill", "dst", x, "value", v, NULL);
      accel_device_submit_async (f->dev, fill, NULL, async_done, data);
      expect = (float) v;
    }
  g_autofree float *out = accel_test_read_f32 (x);
  for (gint64 i = 0; i < accel_buffer_get_n_elements (x); i++)
    g_assert_cmpfloat (out[i], ==, (float) expect);
  while (count < (gint) nops)
    g_main_context_iteration (NULL, TRUE);
  g_assert_no_error (error);
}

/* Each async op on a main context of its own, made before the submit and
 * dropped once the op is back: completions must find their context alive
 * and never touch it after its owner let go (the delivery of a context is
 * made, used once and freed over and over, while other threads complete). */
static void
test_async_fresh_contexts (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(AccelShape) s = accel_shape_new_1d (g_test_rand_int_range (1, 300));
  g_autoptr(AccelBuffer) x = accel_test_alloc_random_f32 (f->dev, s, NULL);
  guint rounds = 1500;

  for (guint i = 0; i < rounds; i++)
    {
      g_autoptr(GMainContext) ctx = g_main_context_new ();
      g_main_context_push_thread_default (ctx);
      GError *error = NULL;
      gint count = 0;
      gpointer data[2] = { &error, &count };
      double v = g_test_rand_double_range (-100, 100);
      guint in_flight = 1 + i % 3;
      for (guint k = 0; k < in_flight; k++)
        {
          g_autoptr(AccelOp) fill = accel_op_new ("fill", "dst", x, "value", v + k, NULL);
          accel_device_submit_async (f->dev, fill, NULL, async_done, data);
        }
      while (count < (gint) in_flight)
        g_main_context_iteration (ctx, TRUE);
      g_main_context_pop_thread_default (ctx);
      g_assert_no_error (error);
      if (i % 100 == 0)
        {
          g_autofree float *out = accel_test_read_f32 (x);
          g_assert_cmpfloat (out[0], ==, (float) (v + in_flight - 1));
        }
    }
}

static void
test_cancel_queued (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  /* A long op keeps the device busy while the cancelled ones queue. */
  g_autoptr(AccelShape) sq = accel_shape_new_2d (700, 700);
  g_autoptr(AccelBuffer) a = accel_test_alloc_random_f32 (f->dev, sq, NULL);
  g_autoptr(AccelBuffer) c = accel_test_alloc_random_f32 (f->dev, sq, NULL);
  g_autoptr(AccelOp) slow = accel_op_new ("gemm", "a", a, "b", a, "c", c, NULL);
  g_autoptr(GCancellable) cancel = g_cancellable_new ();

  GError *errors[8] = { NULL, };
  gint count = 0;
  gpointer data[8][2];
  GError *slow_error = NULL;
  gpointer slow_data[2] = { &slow_error, &count };
  accel_device_submit_async (f->dev, slow, NULL, async_done, slow_data);
  for (int i = 0; i < 8; i++)
    {
      data[i][0] = &errors[i];
      data[i][1] = &count;
      g_autoptr(AccelOp) fill = accel_op_new ("fill", "dst", c, "value", 1.0, NULL);
      accel_device_submit_async (f->dev, fill, cancel, async_done, data[i]);
    }
  g_cancellable_cancel (cancel);
  while (count < 9)
    g_main_context_iteration (NULL, TRUE);
  g_assert_no_error (slow_error);
  guint cancelled = 0;
  for (int i = 0; i < 8; i++)
    {
      if (errors[i])
        {
          g_assert_error (errors[i], ACCEL_ERROR, ACCEL_ERROR_CANCELLED);
          cancelled++;
        }
      g_clear_error (&errors[i]);
    }
  g_assert_cmpuint (cancelled, >=, 1);
  /* The device still works. */
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelOp) fill = accel_op_new ("fill", "dst", c, "value", 3.0, NULL);
  g_assert_true (accel_device_submit (f->dev, fill, NULL, &error));
  g_assert_no_error (error);
}

static void
test_bad_input (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelShape) s23 = accel_shape_new_2d (2, 3);
  g_autoptr(AccelShape) s45 = accel_shape_new_2d (4, 5);
  g_autoptr(AccelBuffer) a = accel_test_alloc_random_f32 (f->dev, s23, NULL);
  g_autoptr(AccelBuffer) b = accel_test_alloc_random_f32 (f->dev, s45, NULL);
  g_autoptr(AccelBuffer) c = accel_test_alloc_random_f32 (f->dev, s23, NULL);

  /* Shapes that do not fit: the message names a property. */
  g_autoptr(AccelOp) gemm = accel_op_new ("gemm", "a", a, "b", b, "c", c, NULL);
  g_assert_false (accel_device_submit (f->dev, gemm, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH);
  g_clear_error (&error);

  /* A missing buffer. */
  g_autoptr(AccelOp) partial = accel_op_new ("gemm", "a", a, "b", b, NULL);
  g_assert_false (accel_device_submit (f->dev, partial, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "“c”"));
  g_clear_error (&error);

  /* An unknown op type. */
  g_autoptr(AccelOp) unknown = accel_op_new_by_name ("no-such-op", &error);
  g_assert_null (unknown);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE);
  g_clear_error (&error);

  /* A buffer of another device (a second system's cpu:0). */
  g_autoptr(AccelSystem) other = accel_test_new_system ();
  g_autoptr(AccelDevice) dev2 = accel_test_get_device (other, "cpu:0");
  g_autoptr(AccelBuffer) foreign = accel_test_alloc_random_f32 (dev2, s23, NULL);
  g_autoptr(AccelOp) copy = accel_op_new ("fill", "dst", foreign, "value", 1.0, NULL);
  g_assert_false (accel_device_submit (f->dev, copy, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_WRONG_DEVICE);
  g_clear_error (&error);

  /* Out of memory under ACCEL_CPU_MEMORY_LIMIT (set by the test env). */
  g_autoptr(AccelShape) huge = accel_shape_new_1d ((gint64) 1 << 40);
  g_autoptr(AccelBuffer) nope = accel_device_alloc (f->dev, ACCEL_DTYPE_F64, huge, &error);
  g_assert_null (nope);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY);
  g_clear_error (&error);

  /* After all that, a good op on the same device succeeds. */
  accel_test_fill_f32 (f->dev, c, 2.5f);
}

/* A broadcast (stride 0) buffer can be read, never written: the result of
 * writing it would depend on the order of the writes. (Found by fuzzing: a
 * fill of a broadcast of 10^16 elements kept a device host busy for good.) */
static void
test_broadcast_output (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(GError) error = NULL;
  gint64 rows = g_test_rand_int_range (2, 9), cols = g_test_rand_int_range (1, 17);
  gint64 dims[] = { rows, cols }, strides[] = { 0, 1 };
  g_autoptr(AccelShape) broadcast = accel_shape_new_strided (dims, strides, 2);
  g_autoptr(AccelShape) full = accel_shape_new_2d (rows, cols);
  g_autoptr(AccelBuffer) src = accel_device_alloc (f->dev, ACCEL_DTYPE_F32, broadcast, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (accel_buffer_get_size (src), ==, cols * sizeof (float));
  float *row = g_new (float, cols);
  for (gint64 j = 0; j < cols; j++)
    row[j] = (float) g_test_rand_double_range (-1, 1);
  g_assert_true (accel_buffer_write (src, (guint8 *) row, cols * sizeof (float), &error));
  g_autoptr(AccelBuffer) dst = accel_test_alloc_random_f32 (f->dev, full, NULL);

  g_autoptr(AccelOp) fill = accel_op_new ("fill", "dst", src, "value", 1.0, NULL);
  g_assert_false (accel_device_submit (f->dev, fill, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "“dst”"));
  g_clear_error (&error);

  /* Read, it is every row the same. */
  g_autoptr(AccelOp) copy = accel_op_new ("copy", "src", src, "dst", dst, NULL);
  g_assert_true (accel_device_submit (f->dev, copy, NULL, &error));
  g_assert_no_error (error);
  g_autofree float *out = accel_test_read_f32 (dst);
  for (gint64 i = 0; i < rows; i++)
    for (gint64 j = 0; j < cols; j++)
      g_assert_cmpfloat (out[i * cols + j], ==, row[j]);
  g_free (row);
}

static void
test_cross_device_copy (void)
{
  g_autoptr(AccelSystem) s1 = accel_test_new_system ();
  g_autoptr(AccelSystem) s2 = accel_test_new_system ();
  g_autoptr(AccelDevice) d1 = accel_test_get_device (s1, "cpu:0");
  g_autoptr(AccelDevice) d2 = accel_test_get_device (s2, "cpu:0");
  g_autoptr(AccelShape) s = accel_shape_new_1d (g_test_rand_int_range (1, 3000));
  float *host;
  g_autoptr(AccelBuffer) src = accel_test_alloc_random_f32 (d1, s, &host);
  g_autoptr(AccelBuffer) dst = accel_test_alloc_random_f32 (d2, s, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelOp) copy = accel_op_new ("copy", "src", src, "dst", dst, NULL);
  g_assert_true (accel_device_submit (d2, copy, NULL, &error));
  g_assert_no_error (error);
  g_autofree float *got = accel_test_read_f32 (dst);
  g_assert_cmpmem (got, accel_buffer_get_size (dst), host, accel_buffer_get_size (src));
  g_free (host);
}

static AccelBuffer *
resolve_from_table (guint64 handle, gpointer data)
{
  GHashTable *table = data;
  AccelBuffer *b = g_hash_table_lookup (table, &handle);
  return b ? g_object_ref (b) : NULL;
}

static void
test_serialize_round_trip (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(AccelShape) s = accel_shape_new_2d (3, 3);
  g_autoptr(AccelBuffer) a = accel_test_alloc_random_f32 (f->dev, s, NULL);
  g_autoptr(AccelBuffer) b = accel_test_alloc_random_f32 (f->dev, s, NULL);
  g_autoptr(AccelBuffer) c = accel_test_alloc_random_f32 (f->dev, s, NULL);
  g_autoptr(GHashTable) table = g_hash_table_new (g_int64_hash, g_int64_equal);
  guint64 ha = accel_buffer_get_handle (a), hb = accel_buffer_get_handle (b), hc = accel_buffer_get_handle (c);
  g_assert_cmpuint (ha, !=, hb);
  g_hash_table_insert (table, &ha, a);
  g_hash_table_insert (table, &hb, b);
  g_hash_table_insert (table, &hc, c);

  g_auto(GStrv) types = accel_registry_list_op_types (accel_system_get_registry (f->system));
  guint tried = 0;
  for (guint t = 0; types[t]; t++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(AccelOp) op = accel_op_new_by_name (types[t], &error);
      g_assert_no_error (error);
      /* Give every property a random value in its range. */
      guint n;
      g_autofree GParamSpec **pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (op), &n);
      for (guint i = 0; i < n; i++)
        {
          GParamSpec *p = pspecs[i];
          if ((p->flags & G_PARAM_READWRITE) != G_PARAM_READWRITE || (p->flags & G_PARAM_CONSTRUCT_ONLY))
            continue;
          GValue v = G_VALUE_INIT;
          g_value_init (&v, p->value_type);
          if (p->value_type == ACCEL_TYPE_BUFFER)
            g_value_set_object (&v, g_test_rand_bit () ? a : c);
          else if (G_IS_PARAM_SPEC_DOUBLE (p))
            g_value_set_double (&v, g_test_rand_double_range (MAX (G_PARAM_SPEC_DOUBLE (p)->minimum, -1e6),
                                                              MIN (G_PARAM_SPEC_DOUBLE (p)->maximum, 1e6)));
          else if (G_IS_PARAM_SPEC_INT (p))
            g_value_set_int (&v, g_test_rand_int_range (MAX (G_PARAM_SPEC_INT (p)->minimum, -1000),
                                                        MIN (G_PARAM_SPEC_INT (p)->maximum, 1000) + 1));
          else if (G_IS_PARAM_SPEC_UINT (p))
            g_value_set_uint (&v, g_test_rand_int_range (G_PARAM_SPEC_UINT (p)->minimum,
                                                         MIN (G_PARAM_SPEC_UINT (p)->maximum, 1000) + 1));
          else if (G_IS_PARAM_SPEC_UINT64 (p))
            g_value_set_uint64 (&v, ((guint64) g_test_rand_int () << 32) ^ (guint32) g_test_rand_int ());
          else if (G_IS_PARAM_SPEC_BOOLEAN (p))
            g_value_set_boolean (&v, g_test_rand_bit ());
          else if (G_IS_PARAM_SPEC_ENUM (p))
            {
              GEnumClass *ec = G_PARAM_SPEC_ENUM (p)->enum_class;
              g_value_set_enum (&v, ec->values[g_test_rand_int_range (0, ec->n_values)].value);
            }
          else
            {
              g_value_unset (&v);
              continue;
            }
          g_object_set_property (G_OBJECT (op), p->name, &v);
          g_value_unset (&v);
        }
      g_autoptr(GVariant) v1 = accel_op_serialize (op);
      g_autoptr(AccelOp) back = accel_op_deserialize (v1, resolve_from_table, table, &error);
      g_assert_no_error (error);
      g_assert_true (G_OBJECT_TYPE (back) == G_OBJECT_TYPE (op));
      g_autoptr(GVariant) v2 = accel_op_serialize (back);
      g_assert_true (g_variant_equal (v1, v2));
      tried++;
    }
  g_assert_cmpuint (tried, >=, 11);

  /* Untrusted input: wrong types, unknown names, unknown handles. */
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) bad1 = g_variant_ref_sink (g_variant_new ("(sa{sv})", "gemm", NULL));
  g_autoptr(AccelOp) ok = accel_op_deserialize (bad1, resolve_from_table, table, &error);
  g_assert_no_error (error);
  GVariantBuilder bld;
  g_variant_builder_init (&bld, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&bld, "{sv}", "alpha", g_variant_new_string ("two"));
  g_autoptr(GVariant) bad2 = g_variant_ref_sink (g_variant_new ("(sa{sv})", "gemm", &bld));
  g_assert_null (accel_op_deserialize (bad2, resolve_from_table, table, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_variant_builder_init (&bld, G_VARIANT_TYPE_VARDICT);
  g_variant_builder_add (&bld, "{sv}", "a", g_variant_new_uint64 (987654321));
  g_autoptr(GVariant) bad3 = g_variant_ref_sink (g_variant_new ("(sa{sv})", "gemm", &bld));
  g_assert_null (accel_op_deserialize (bad3, resolve_from_table, table, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
  g_clear_error (&error);
  g_autoptr(GVariant) bad4 = g_variant_ref_sink (g_variant_new ("(sa{sv})", "nope", NULL));
  g_assert_null (accel_op_deserialize (bad4, resolve_from_table, table, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE);
}

static void
count_notify (GObject *obj, GParamSpec *pspec, gpointer data)
{
  g_atomic_int_inc ((gint *) data);
}

static void
test_fault_restart (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(GError) error = NULL;
  accel_actor_set_strategy (ACCEL_ACTOR (f->dev), 3, 60000, NULL, NULL, NULL);
  gint notified = 0;
  g_signal_connect (f->dev, "notify::generation", G_CALLBACK (count_notify), &notified);

  g_autoptr(AccelShape) s = accel_shape_new_1d (g_test_rand_int_range (1, 500));
  g_autoptr(AccelBuffer) old = accel_test_alloc_random_f32 (f->dev, s, NULL);

  /* Ops queued behind the fault run after the restart. */
  GError *errors[3] = { NULL, };
  gint count = 0;
  gpointer data[3][2];
  g_autoptr(AccelShape) s2 = accel_shape_new_1d (3);
  g_autoptr(AccelBuffer) keep = accel_test_alloc_random_f32 (f->dev, s2, NULL);
  g_autoptr(AccelOp) fault = accel_op_new_by_name ("fault", &error);
  g_assert_no_error (error);
  data[0][0] = &errors[0]; data[0][1] = &count;
  accel_device_submit_async (f->dev, fault, NULL, async_done, data[0]);
  g_autoptr(AccelOp) stale_fill = accel_op_new ("fill", "dst", old, "value", 1.0, NULL);
  data[1][0] = &errors[1]; data[1][1] = &count;
  accel_device_submit_async (f->dev, stale_fill, NULL, async_done, data[1]);
  /* Every op queued behind the fault that names an old buffer is refused. */
  g_autoptr(AccelOp) stale_zero = accel_op_new ("fill", "dst", keep, "value", 2.0, NULL);
  data[2][0] = &errors[2]; data[2][1] = &count;
  accel_device_submit_async (f->dev, stale_zero, NULL, async_done, data[2]);
  while (count < 3)
    g_main_context_iteration (NULL, TRUE);

  g_assert_error (errors[0], ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED);
  g_assert_error (errors[1], ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
  g_assert_error (errors[2], ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
  for (int i = 0; i < 3; i++)
    g_clear_error (&errors[i]);
  g_assert_cmpint (notified, ==, 1);
  /* Old buffers are refused everywhere; new ones work. */
  accel_test_assert_restarted (f->dev, old, 1);
  g_autoptr(AccelBuffer) fresh = accel_test_alloc_random_f32 (f->dev, s, NULL);
  accel_test_fill_f32 (f->dev, fresh, 4.0f);

  /* Two more restarts are in the budget of 3; the fourth fault stops it. */
  for (guint i = 0; i < 2; i++)
    accel_test_assert_fault_poisons (f->dev);
  g_assert_cmpuint (accel_device_get_generation (f->dev), ==, 3);
  accel_test_assert_fault_poisons (f->dev);
  g_assert_cmpint (accel_device_get_state (f->dev), ==, ACCEL_DEVICE_STATE_FAILED);
  g_assert_nonnull (accel_device_get_failure (f->dev));

  g_autoptr(AccelOp) fill = accel_fill_new (fresh, 4.0);
  g_assert_false (accel_device_submit (f->dev, fill, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED);
  g_assert_nonnull (strstr (error->message, "budget"));
  g_clear_error (&error);
  g_autoptr(AccelBuffer) none = accel_device_alloc (f->dev, ACCEL_DTYPE_F32, s, &error);
  g_assert_null (none);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED);
}

/* Eight threads submit ops with faults injected at random; every op must
 * complete exactly once. */

static void
test_threads_with_faults (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  accel_actor_set_strategy (ACCEL_ACTOR (f->dev), G_MAXUINT, 1000, NULL, NULL, NULL);
  const AccelTestStress stress = {
    .n_threads = 8, .n_ops = g_test_thorough () || !g_getenv ("ACCEL_TEST_QUICK") ? 10000 : 1000,
    .faults_per_mille = 1, .in_flight = 64,
  };
  AccelTestStressResult r = accel_test_stress_run (f->dev, &stress);
  g_assert_cmpuint (r.poisoned, >, 0);
  g_assert_cmpuint (accel_device_get_generation (f->dev), >, 0);
  /* Each fault turns every op in flight with an old buffer stale, so only
   * a part succeeds; but every thread gets work done between faults. */
  g_assert_cmpuint (r.min_ok, >, 0);
  g_assert_cmpint (accel_device_get_state (f->dev), ==, ACCEL_DEVICE_STATE_READY);

  /* And the device serves new work correctly afterwards. */
  g_autoptr(AccelShape) s = accel_shape_new_1d (33);
  g_autoptr(AccelBuffer) b = accel_test_alloc_random_f32 (f->dev, s, NULL);
  accel_test_fill_f32 (f->dev, b, 6.5f);
}

/* An op submitted again is checked again whenever it changed: a gemm that
 * ran is given a c of the wrong shape (refused, nothing written), then
 * the right one back (runs again), then a c of another device. */
static void
test_resubmit_changed (AccelTestDeviceFixture *f, gconstpointer user_data)
{
  g_autoptr(AccelSystem) other_system = accel_test_new_system ();
  g_autoptr(AccelDevice) other = accel_test_get_device (other_system, "cpu:0");
  gint64 m = g_test_rand_int_range (1, 40), n = g_test_rand_int_range (1, 40), k = g_test_rand_int_range (1, 40);
  g_autoptr(AccelShape) sa = accel_shape_new_2d (m, k);
  g_autoptr(AccelShape) sb = accel_shape_new_2d (k, n);
  g_autoptr(AccelShape) sc = accel_shape_new_2d (m, n);
  g_autoptr(AccelShape) wrong = accel_shape_new_2d (m, n + 1);
  g_autoptr(AccelBuffer) a = accel_test_alloc_random_f32 (f->dev, sa, NULL);
  g_autoptr(AccelBuffer) b = accel_test_alloc_random_f32 (f->dev, sb, NULL);
  g_autoptr(AccelBuffer) c = accel_test_alloc_random_f32 (f->dev, sc, NULL);
  g_autoptr(AccelBuffer) bad = accel_test_alloc_random_f32 (f->dev, wrong, NULL);
  g_autoptr(AccelBuffer) elsewhere = accel_test_alloc_random_f32 (other, sc, NULL);
  g_autoptr(AccelOp) gemm = accel_op_new ("gemm", "a", a, "b", b, "c", c, NULL);
  g_autoptr(GError) error = NULL;

  for (int i = 0; i < 3; i++)
    {
      g_assert_true (accel_device_submit (f->dev, gemm, NULL, &error));
      g_assert_no_error (error);
    }
  g_autofree float *before = accel_test_read_f32 (bad);
  g_object_set (gemm, "c", bad, NULL);
  for (int i = 0; i < 2; i++)
    {
      g_assert_false (accel_device_submit (f->dev, gemm, NULL, &error));
      g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH);
      g_assert_nonnull (strstr (error->message, "c"));
      g_clear_error (&error);
    }
  g_autofree float *after = accel_test_read_f32 (bad);
  g_assert_cmpmem (before, m * (n + 1) * sizeof (float), after, m * (n + 1) * sizeof (float));

  g_object_set (gemm, "c", c, NULL);
  g_assert_true (accel_device_submit (f->dev, gemm, NULL, &error));
  g_assert_no_error (error);

  g_object_set (gemm, "c", elsewhere, NULL);
  g_assert_false (accel_device_submit (f->dev, gemm, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_WRONG_DEVICE);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/device/listed", test_devices_listed);
  accel_test_add_cpu ("/device/buffer-round-trip", NULL, test_buffer_round_trip);
  accel_test_add_cpu ("/device/submit-async-gemm", NULL, test_submit_async_gemm);
  accel_test_add_cpu ("/device/ordering", NULL, test_ordering);
  accel_test_add_cpu ("/device/async-fresh-contexts", NULL, test_async_fresh_contexts);
  accel_test_add_cpu ("/device/cancel-queued", NULL, test_cancel_queued);
  accel_test_add_cpu ("/device/bad-input", NULL, test_bad_input);
  accel_test_add_cpu ("/device/broadcast-output", NULL, test_broadcast_output);
  g_test_add_func ("/device/cross-device-copy", test_cross_device_copy);
  accel_test_add_cpu ("/device/serialize-round-trip", NULL, test_serialize_round_trip);
  accel_test_add_cpu ("/device/resubmit-changed", NULL, test_resubmit_changed);
  accel_test_add_cpu ("/device/fault-restart", NULL, test_fault_restart);
  accel_test_add_cpu ("/device/threads-with-faults", NULL, test_threads_with_faults);
  return g_test_run ();
}
