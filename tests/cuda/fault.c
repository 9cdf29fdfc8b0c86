/* Real sticky faults on cuda:0: the test-only `fault` kernel writes through
 * an invalid pointer.
 *
 * In-process (ACCEL_CUDA_ISOLATION=none) the device must go to FAILED with
 * a message naming isolation=process, every op in flight completing once
 * with an error. With a device host process (ACCEL_CUDA_ISOLATION=process):
 * twenty faults in a row while eight threads submit good work: every op
 * completes exactly once, work after each restart is right, old buffers are
 * refused as stale; the host killed with SIGKILL mid-stream; and the time
 * from a fault to the first good op.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <signal.h>
#include <string.h>
#include "cuda-test.h"

static AccelOp *
fault_op (void)
{
  g_autoptr(GError) error = NULL;
  AccelOp *op = accel_op_new_by_name ("fault", &error);
  g_assert_no_error (error);
  return op;
}

typedef struct {
  gint completions;
  gint errors;
  gint expected;
} Counter;

static void
counted (GObject *source, GAsyncResult *result, gpointer data)
{
  Counter *c = data;
  g_autoptr(GError) error = NULL;
  if (!accel_device_submit_finish (ACCEL_DEVICE (source), result, &error))
    c->errors++;
  c->completions++;
}

static void
test_in_process (void)
{
  AccelDevice *gpu = ct_gpu ();
  if (!gpu)
    return;
  if (ct_gpu_is_remote ())
    {
      g_test_skip ("the device runs in a host process");
      return;
    }

  gint64 n = 1 << 20;
  g_autoptr(AccelBuffer) x = ct_alloc (gpu, ACCEL_DTYPE_F32, &n, 1);
  Counter c = { 0 };
  for (int i = 0; i < 10; i++)
    {
      g_autoptr(AccelOp) op = accel_op_new ("fill", "dst", x, "value", (double) i, NULL);
      accel_device_submit_async (gpu, op, NULL, counted, &c);
    }
  g_autoptr(AccelOp) fault = fault_op ();
  accel_device_submit_async (gpu, fault, NULL, counted, &c);
  for (int i = 0; i < 10; i++)
    {
      g_autoptr(AccelOp) op = accel_op_new ("scal", "x", x, "alpha", 2.0, NULL);
      accel_device_submit_async (gpu, op, NULL, counted, &c);
    }
  while (c.completions < 21)
    g_main_context_iteration (NULL, TRUE);
  /* Nothing completes twice: wait a little for strays. */
  g_usleep (200 * 1000);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpint (c.completions, ==, 21);
  g_assert_cmpint (c.errors, >=, 1);

  g_assert_cmpint (accel_device_get_state (gpu), ==, ACCEL_DEVICE_STATE_FAILED);
  const GError *failure = accel_device_get_failure (gpu);
  g_assert_nonnull (failure);
  g_test_message ("failure: %s", failure->message);
  g_assert_nonnull (strstr (failure->message, "isolation=process"));

  g_autoptr(GError) error = NULL;
  g_autoptr(AccelOp) after = accel_op_new ("fill", "dst", x, "value", 1.0, NULL);
  g_assert_false (accel_device_submit (gpu, after, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED);
}

/* Process isolation. */

typedef struct {
  AccelDevice *gpu;
  gint stop;
  gint submitted;
  gint completed;
  gint good;
  gint wrong;
  char *first_wrong;
} Workers;

static gpointer
worker (gpointer data)
{
  Workers *w = data;
  gint64 n = 4097;
  AccelBuffer *x = NULL;
  int r = 0;

  while (!g_atomic_int_get (&w->stop))
    {
      g_autoptr(GError) error = NULL;
      if (x == NULL)
        {
          g_autoptr(AccelShape) shape = accel_shape_new_1d (n);
          x = accel_device_alloc (w->gpu, ACCEL_DTYPE_F32, shape, &error);
          if (x == NULL)
            {
              g_usleep (1000);
              continue;
            }
        }
      r++;
      g_autoptr(AccelOp) fill = accel_op_new ("fill", "dst", x, "value", (double) r, NULL);
      g_autoptr(AccelOp) scal = accel_op_new ("scal", "x", x, "alpha", 2.0, NULL);
      g_atomic_int_inc (&w->submitted);
      gboolean ok = accel_device_submit (w->gpu, fill, NULL, &error);
      g_atomic_int_inc (&w->completed);
      if (ok)
        {
          g_atomic_int_inc (&w->submitted);
          ok = accel_device_submit (w->gpu, scal, NULL, &error);
          g_atomic_int_inc (&w->completed);
        }
      if (!ok)
        {
          /* A fault of the main thread's may take this op down with it, or
           * leave its buffer in an older generation. */
          if (g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER))
            g_clear_object (&x);
          else if (!g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED))
            {
              g_test_message ("worker: unexpected error: %s", error->message);
              g_atomic_int_inc (&w->wrong);
            }
          continue;
        }
      g_autoptr(GError) read_error = NULL;
      g_autofree float *v = g_new (float, n);
      if (!accel_buffer_read (x, (guint8 *) v, n * sizeof (float), &read_error))
        {
          if (g_error_matches (read_error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER))
            g_clear_object (&x);
          continue;
        }
      gboolean right = TRUE;
      for (gint64 i = 0; i < n && right; i++)
        right = v[i] == 2.0f * r;
      if (right)
        g_atomic_int_inc (&w->good);
      else
        {
          /* A fault between the scal and the read may lose the data with
           * the context; anything else is wrong. */
          if (accel_buffer_is_stale (x))
            g_clear_object (&x);
          else
            g_atomic_int_inc (&w->wrong);
        }
    }
  g_clear_object (&x);
  return NULL;
}

static gboolean
wait_generation (AccelDevice *gpu, guint above, gint64 timeout_us)
{
  gint64 deadline = g_get_monotonic_time () + timeout_us;
  while (accel_device_get_generation (gpu) <= above)
    {
      if (g_get_monotonic_time () > deadline)
        return FALSE;
      g_usleep (1000);
    }
  return TRUE;
}

static void
test_twenty_faults (void)
{
  AccelDevice *gpu = ct_remote_gpu ("needs ACCEL_CUDA_ISOLATION=process and a device host");
  if (!gpu)
    return;

  /* Twenty restarts are more than the default budget (ten a minute). */
  AccelActor *supervisor = accel_actor_get_parent (ACCEL_ACTOR (gpu));
  accel_actor_set_strategy (supervisor ? supervisor : ACCEL_ACTOR (gpu), 100, 60000, NULL, NULL, NULL);

  Workers w = { .gpu = gpu };
  GThread *threads[8];
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("worker", worker, &w);

  gint64 n = 1023;
  double worst = 0.0, total = 0.0;
  for (int f = 0; f < 20; f++)
    {
      g_autoptr(AccelBuffer) old = ct_alloc (gpu, ACCEL_DTYPE_F32, &n, 1);
      guint gen = accel_device_get_generation (gpu);
      g_autoptr(AccelOp) fault = fault_op ();
      g_autoptr(GError) error = NULL;
      gint64 t0 = g_get_monotonic_time ();
      g_assert_false (accel_device_submit (gpu, fault, NULL, &error));
      g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED);
      g_assert_true (wait_generation (gpu, gen, 30 * G_USEC_PER_SEC));

      /* The first good op on the new host. */
      g_autoptr(AccelBuffer) fresh = NULL;
      for (;;)
        {
          g_autoptr(GError) e = NULL;
          g_autoptr(AccelShape) shape = accel_shape_new_1d (n);
          fresh = accel_device_alloc (gpu, ACCEL_DTYPE_F32, shape, &e);
          if (fresh)
            break;
          g_assert_true (g_error_matches (e, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED));
        }
      g_autoptr(AccelOp) good = accel_op_new ("fill", "dst", fresh, "value", 5.0, NULL);
      ct_submit (gpu, good);
      double dt = (g_get_monotonic_time () - t0) / 1e6;
      worst = MAX (worst, dt);
      total += dt;
      g_autofree double *v = ct_read (fresh);
      for (gint64 i = 0; i < n; i++)
        g_assert_cmpfloat (v[i], ==, 5.0);

      g_autoptr(GError) stale = NULL;
      g_autoptr(AccelOp) on_old = accel_op_new ("fill", "dst", old, "value", 1.0, NULL);
      g_assert_false (accel_device_submit (gpu, on_old, NULL, &stale));
      g_assert_error (stale, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER);
    }
  g_atomic_int_set (&w.stop, 1);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);

  g_test_message ("fault to first good op: mean %.3f s, worst %.3f s; workers: %d ops, %d good rounds",
                  total / 20, worst, w.submitted, w.good);
  g_assert_cmpint (w.wrong, ==, 0);
  g_assert_cmpint (w.completed, ==, w.submitted);
  g_assert_cmpint (w.good, >, 0);
  g_assert_cmpfloat (worst, <, 2.0);
  g_assert_cmpint (accel_device_get_state (gpu), ==, ACCEL_DEVICE_STATE_READY);
}

static void
test_sigkill (void)
{
  AccelDevice *gpu = ct_remote_gpu ("needs ACCEL_CUDA_ISOLATION=process and a device host");
  if (!gpu)
    return;
  const char *pid_property = NULL;
  for (const char *const *p = (const char *const[]) { "host-pid", "pid", NULL }; *p; p++)
    if (g_object_class_find_property (G_OBJECT_GET_CLASS (gpu), *p))
      pid_property = *p;
  if (pid_property == NULL)
    {
      g_test_skip ("the remote device does not say which process hosts it");
      return;
    }

  gint64 n = 1 << 22;
  g_autoptr(AccelBuffer) x = ct_alloc (gpu, ACCEL_DTYPE_F32, &n, 1);
  Counter c = { 0 };
  int pid = 0;
  guint gen = accel_device_get_generation (gpu);
  for (int i = 0; i < 200; i++)
    {
      g_autoptr(AccelOp) op = accel_op_new ("fill", "dst", x, "value", (double) i, NULL);
      accel_device_submit_async (gpu, op, NULL, counted, &c);
      if (i == 100)
        {
          g_object_get (gpu, pid_property, &pid, NULL);
          g_assert_cmpint (pid, >, 0);
          kill (pid, SIGKILL);
        }
    }
  while (c.completions < 200)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (wait_generation (gpu, gen, 30 * G_USEC_PER_SEC));
  g_assert_cmpint (c.completions, ==, 200);

  gint64 m = 33;
  g_autoptr(AccelBuffer) y = ct_alloc (gpu, ACCEL_DTYPE_F32, &m, 1);
  g_autoptr(AccelOp) good = accel_op_new ("fill", "dst", y, "value", 3.0, NULL);
  ct_submit (gpu, good);
  g_autofree double *v = ct_read (y);
  g_assert_cmpfloat (v[m - 1], ==, 3.0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* The in-process fault leaves this process's CUDA context poisoned for
   * good, so it runs last. */
  g_test_add_func ("/cuda/fault/twenty-faults-eight-threads", test_twenty_faults);
  g_test_add_func ("/cuda/fault/host-sigkill", test_sigkill);
  g_test_add_func ("/cuda/fault/in-process-fails", test_in_process);
  return ct_run ();
}
