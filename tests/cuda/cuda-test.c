/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <string.h>
#include <accel-half.h>
#include "cuda-test.h"

static AccelSystem *test_system;
static AccelDevice *test_cpu;
static AccelDevice *test_gpu;
static char *gpu_missing;

AccelSystem *
ct_system (void)
{
  if (test_system == NULL)
    {
      g_autoptr(GError) error = NULL;
      test_system = accel_system_new (&error);
      g_assert_no_error (error);
    }
  return test_system;
}

AccelDevice *
ct_cpu (void)
{
  if (test_cpu == NULL)
    {
      g_autoptr(GError) error = NULL;
      test_cpu = accel_system_get_device (ct_system (), "cpu:0", &error);
      g_assert_no_error (error);
    }
  return test_cpu;
}

AccelDevice *
ct_gpu (void)
{
  if (test_gpu == NULL && gpu_missing == NULL)
    {
      g_autoptr(GError) error = NULL;
      /* ACCEL_TEST_GPU_STANDIN=cpu:1 runs a test's logic on a CPU device, to
       * check the test itself on a machine without a GPU. */
      const char *standin = g_getenv ("ACCEL_TEST_GPU_STANDIN");
      test_gpu = accel_system_get_device (ct_system (), standin ? standin : "cuda:0", &error);
      if (test_gpu == NULL)
        {
          AccelBackend *backend = accel_system_get_backend (ct_system (), "cuda", NULL);
          const char *reason = backend ? accel_backend_get_unavailable_reason (backend) : NULL;
          gpu_missing = g_strdup_printf ("no cuda:0 (%s)", reason ? reason : error->message);
        }
    }
  if (test_gpu == NULL)
    g_test_skip (gpu_missing);
  return test_gpu;
}

gboolean
ct_gpu_is_remote (void)
{
  AccelDevice *gpu = ct_gpu ();
  GType remote = g_type_from_name ("AccelRemoteDevice");
  return gpu != NULL && remote != 0 && g_type_is_a (G_OBJECT_TYPE (gpu), remote);
}

int
ct_run (void)
{
  int ret = g_test_run ();
  g_clear_object (&test_gpu);
  g_clear_object (&test_cpu);
  if (test_system)
    accel_system_shutdown (test_system);
  g_clear_object (&test_system);
  g_clear_pointer (&gpu_missing, g_free);
  return ret;
}

guint
ct_components (AccelDType dtype)
{
  return accel_dtype_is_complex (dtype) ? 2 : 1;
}

static void
store (AccelDType dtype, guint8 *p, double v)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F16: { guint16 h = accel_f16_from_f64 (v); memcpy (p, &h, 2); } break;
    case ACCEL_DTYPE_BF16: { guint16 h = accel_bf16_from_f64 (v); memcpy (p, &h, 2); } break;
    case ACCEL_DTYPE_FP8_E4M3: *p = accel_fp8_e4m3_from_f64 (v); break;
    case ACCEL_DTYPE_FP8_E5M2: *p = accel_fp8_e5m2_from_f64 (v); break;
    case ACCEL_DTYPE_F32: case ACCEL_DTYPE_C64: { float f = (float) v; memcpy (p, &f, 4); } break;
    case ACCEL_DTYPE_F64: case ACCEL_DTYPE_C128: memcpy (p, &v, 8); break;
    case ACCEL_DTYPE_I8: { gint8 x = (gint8) v; memcpy (p, &x, 1); } break;
    case ACCEL_DTYPE_U8: { guint8 x = (guint8) v; memcpy (p, &x, 1); } break;
    case ACCEL_DTYPE_I32: { gint32 x = (gint32) v; memcpy (p, &x, 4); } break;
    case ACCEL_DTYPE_U32: { guint32 x = (guint32) v; memcpy (p, &x, 4); } break;
    case ACCEL_DTYPE_I64: { gint64 x = (gint64) v; memcpy (p, &x, 8); } break;
    default: g_assert_not_reached ();
    }
}

static double
load (AccelDType dtype, const guint8 *p)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F16: { guint16 h; memcpy (&h, p, 2); return accel_f16_to_f32 (h); }
    case ACCEL_DTYPE_BF16: { guint16 h; memcpy (&h, p, 2); return accel_bf16_to_f32 (h); }
    case ACCEL_DTYPE_FP8_E4M3: return accel_fp8_e4m3_to_f32 (*p);
    case ACCEL_DTYPE_FP8_E5M2: return accel_fp8_e5m2_to_f32 (*p);
    case ACCEL_DTYPE_F32: case ACCEL_DTYPE_C64: { float f; memcpy (&f, p, 4); return f; }
    case ACCEL_DTYPE_F64: case ACCEL_DTYPE_C128: { double d; memcpy (&d, p, 8); return d; }
    case ACCEL_DTYPE_I8: { gint8 x; memcpy (&x, p, 1); return x; }
    case ACCEL_DTYPE_U8: return *p;
    case ACCEL_DTYPE_I32: { gint32 x; memcpy (&x, p, 4); return x; }
    case ACCEL_DTYPE_U32: { guint32 x; memcpy (&x, p, 4); return x; }
    case ACCEL_DTYPE_I64: { gint64 x; memcpy (&x, p, 8); return (double) x; }
    default: g_assert_not_reached ();
    }
}

AccelBuffer *
ct_alloc (AccelDevice *device, AccelDType dtype, const gint64 *dims, guint rank)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelShape) shape = accel_shape_new (dims, rank);
  AccelBuffer *buffer = accel_device_alloc (device, dtype, shape, &error);
  g_assert_no_error (error);
  return buffer;
}

void
ct_write (AccelBuffer *buffer, const double *values)
{
  g_autoptr(GError) error = NULL;
  AccelDType dtype = accel_buffer_get_dtype (buffer);
  gsize n = (gsize) accel_buffer_get_n_elements (buffer) * ct_components (dtype);
  gsize cs = accel_dtype_get_size (dtype) / ct_components (dtype);
  g_autofree guint8 *bytes = g_malloc0 (MAX (accel_buffer_get_size (buffer), 1));

  for (gsize i = 0; i < n; i++)
    store (dtype, bytes + i * cs, values[i]);
  accel_buffer_write (buffer, bytes, accel_buffer_get_size (buffer), &error);
  g_assert_no_error (error);
}

guint8 *
ct_read_bytes (AccelBuffer *buffer)
{
  g_autoptr(GError) error = NULL;
  gsize size = accel_buffer_get_size (buffer);
  guint8 *bytes = g_malloc0 (MAX (size, 1));
  accel_buffer_read (buffer, bytes, size, &error);
  g_assert_no_error (error);
  return bytes;
}

double *
ct_read (AccelBuffer *buffer)
{
  AccelDType dtype = accel_buffer_get_dtype (buffer);
  gsize n = (gsize) accel_buffer_get_n_elements (buffer) * ct_components (dtype);
  gsize cs = accel_dtype_get_size (dtype) / ct_components (dtype);
  g_autofree guint8 *bytes = ct_read_bytes (buffer);
  double *values = g_new (double, MAX (n, 1));

  for (gsize i = 0; i < n; i++)
    values[i] = load (dtype, bytes + i * cs);
  return values;
}

CtPair *
ct_pair_new_empty (AccelDType dtype, const gint64 *dims, guint rank)
{
  CtPair *pair = g_new0 (CtPair, 1);
  pair->cpu = ct_alloc (ct_cpu (), dtype, dims, rank);
  pair->gpu = ct_alloc (ct_gpu (), dtype, dims, rank);
  pair->n_values = (gsize) accel_buffer_get_n_elements (pair->cpu) * ct_components (dtype);
  return pair;
}

CtPair *
ct_pair_new (AccelDType dtype, const gint64 *dims, guint rank, double lo, double hi)
{
  CtPair *pair = ct_pair_new_empty (dtype, dims, rank);
  guint8 tmp[16];

  pair->values = g_new (double, MAX (pair->n_values, 1));
  for (gsize i = 0; i < pair->n_values; i++)
    {
      double v;
      do
        {
          store (dtype, tmp, g_test_rand_double_range (lo, hi));
          v = load (dtype, tmp);
        }
      while (v == 0.0);
      pair->values[i] = v;
    }
  ct_write (pair->cpu, pair->values);
  ct_write (pair->gpu, pair->values);
  return pair;
}

void
ct_pair_free (CtPair *pair)
{
  g_clear_object (&pair->cpu);
  g_clear_object (&pair->gpu);
  g_free (pair->values);
  g_free (pair);
}

void
ct_submit (AccelDevice *device, AccelOp *op)
{
  g_autoptr(GError) error = NULL;
  gboolean ok = accel_device_submit (device, op, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
}

void
ct_submit_both (CtMakeOp make, gpointer data)
{
  g_autoptr(AccelOp) on_cpu = make (FALSE, data);
  g_autoptr(AccelOp) on_gpu = make (TRUE, data);
  ct_submit (ct_cpu (), on_cpu);
  ct_submit (ct_gpu (), on_gpu);
}

double
ct_eps (AccelDType dtype)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F16: return 0x1p-11;
    case ACCEL_DTYPE_BF16: return 0x1p-8;
    case ACCEL_DTYPE_F32: case ACCEL_DTYPE_C64: return 0x1p-24;
    case ACCEL_DTYPE_F64: case ACCEL_DTYPE_C128: return 0x1p-53;
    default: return 0.0;
    }
}

void
ct_assert_close (const char *what, const double *got, const double *want, const double *scale,
                 gsize n, double rtol, double atol)
{
  for (gsize i = 0; i < n; i++)
    {
      double s = scale ? scale[i] : fabs (want[i]);
      double err = fabs (got[i] - want[i]);
      gboolean same_special = (isnan (got[i]) && isnan (want[i])) || (isinf (want[i]) && got[i] == want[i]);
      if (!same_special && !(err <= atol + rtol * s))
        {
          g_test_fail_printf ("%s: element %" G_GSIZE_FORMAT " is %.17g on cuda:0, %.17g on cpu:0 "
                              "(error %.3g, allowed %.3g)", what, i, got[i], want[i], err, atol + rtol * s);
          return;
        }
    }
}

void
ct_assert_same_bytes (const char *what, AccelBuffer *a, AccelBuffer *b)
{
  gsize size = accel_buffer_get_size (a);
  g_assert_cmpuint (size, ==, accel_buffer_get_size (b));
  g_autofree guint8 *ba = ct_read_bytes (a);
  g_autofree guint8 *bb = ct_read_bytes (b);
  for (gsize i = 0; i < size; i++)
    if (ba[i] != bb[i])
      {
        g_test_fail_printf ("%s: byte %" G_GSIZE_FORMAT " differs (0x%02x vs 0x%02x)", what, i, ba[i], bb[i]);
        return;
      }
}

static void
submitted (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr(GError) error = NULL;
  g_assert_true (accel_device_submit_finish (ACCEL_DEVICE (source), result, &error));
  g_assert_no_error (error);
  *(gboolean *) data = TRUE;
}

void
ct_submit_async (AccelDevice *device, AccelOp *op, gboolean *done)
{
  *done = FALSE;
  accel_device_submit_async (device, op, NULL, submitted, done);
}

void
ct_wait (gboolean *done)
{
  while (!*done)
    g_main_context_iteration (NULL, TRUE);
}

void
ct_tally (GObject *source, GAsyncResult *result, gpointer data)
{
  CtTally *t = data;
  g_autoptr(GError) error = NULL;
  gboolean ok = ACCEL_IS_COMMUNICATOR (source)
                  ? accel_communicator_submit_finish (ACCEL_COMMUNICATOR (source), result, &error)
                  : accel_device_submit_finish (ACCEL_DEVICE (source), result, &error);
  if (!ok)
    {
      t->failed++;
      t->poisoned += g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED);
      g_test_message ("answer %d: %s", t->done, error->message);
    }
  t->done++;
}

void
ct_tally_wait (CtTally *t, gint n)
{
  while (t->done < n)
    g_main_context_iteration (NULL, TRUE);
  /* Nothing answers twice: look for strays. */
  g_usleep (200 * 1000);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpint (t->done, ==, n);
}
