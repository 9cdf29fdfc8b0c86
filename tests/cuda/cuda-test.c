/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <string.h>
#include <accel-half.h>
#include "cuda-test.h"
#include "accel-test-values.h"

static AccelDevice *test_gpu;
static char *gpu_missing;

AccelSystem *
ct_system (void)
{
  return accel_test_shared_system ();
}

AccelDevice *
ct_cpu (void)
{
  return accel_test_shared_cpu ();
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

AccelDevice *
ct_remote_gpu (const char *why_remote)
{
  AccelDevice *gpu = ct_gpu ();
  if (gpu != NULL && !ct_gpu_is_remote ())
    {
      g_test_skip (why_remote);
      return NULL;
    }
  return gpu;
}

int
ct_run (void)
{
  int ret = g_test_run ();
  g_clear_object (&test_gpu);
  accel_test_shared_teardown ();
  g_clear_pointer (&gpu_missing, g_free);
  return ret;
}

guint
ct_components (AccelDType dtype)
{
  return accel_test_components (dtype);
}

AccelBuffer *
ct_alloc (AccelDevice *device, AccelDType dtype, const gint64 *dims, guint rank)
{
  g_autoptr(AccelShape) shape = accel_shape_new (dims, rank);
  return accel_test_alloc (device, dtype, shape);
}

void
ct_write (AccelBuffer *buffer, const double *values)
{
  accel_test_write_values (buffer, values);
}

guint8 *
ct_read_bytes (AccelBuffer *buffer)
{
  return accel_test_read_bytes (buffer);
}

double *
ct_read (AccelBuffer *buffer)
{
  return accel_test_read_values (buffer);
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

  pair->values = accel_test_random_values (dtype, pair->n_values, lo, hi);
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

AccelOp *
ct_slow_writer (AccelFunction *slow, AccelBuffer *x, AccelAccess access, float v, gint64 n)
{
  AccelOp *w = accel_launch_new (slow);
  accel_launch_set_grid (ACCEL_LAUNCH (w), (guint) ((n + 255) / 256), 1, 1);
  accel_launch_set_block (ACCEL_LAUNCH (w), 256, 1, 1);
  accel_launch_add_buffer (ACCEL_LAUNCH (w), x, access);
  accel_launch_add_float32 (ACCEL_LAUNCH (w), v);
  accel_launch_add_int32 (ACCEL_LAUNCH (w), (gint32) n);
  accel_launch_add_int32 (ACCEL_LAUNCH (w), 20000);
  accel_op_set_lane (w, 0);
  return w;
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
  return accel_test_eps (dtype) / 2;   /* the unit roundoff */
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
ct_assert_pair_close (const char *what, CtPair *pair, const double *scale, double rtol, double atol)
{
  g_autofree double *got = ct_read (pair->gpu);
  g_autofree double *want = ct_read (pair->cpu);
  ct_assert_close (what, got, want, scale, pair->n_values, rtol, atol);
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

static void
answered (GObject *source, GAsyncResult *result, gpointer data)
{
  CtPending *p = data;
  GError *error = NULL;
  if (!accel_device_submit_finish (ACCEL_DEVICE (source), result, &error))
    {
      p->failed++;
      if (p->first_error == NULL)
        p->first_error = error;
      else
        g_error_free (error);
    }
  p->pending--;
}

void
ct_pending_submit (CtPending *p, AccelDevice *device, AccelOp *op)
{
  p->pending++;
  accel_device_submit_async (device, op, NULL, answered, p);
}

void
ct_pending_wait (CtPending *p, gint most)
{
  while (p->pending > most)
    g_main_context_iteration (NULL, TRUE);
}

void
ct_pending_finish (CtPending *p)
{
  ct_pending_wait (p, 0);
  g_assert_no_error (p->first_error);
  g_assert_cmpint (p->failed, ==, 0);
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
