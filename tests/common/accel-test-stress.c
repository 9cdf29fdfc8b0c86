/* accel-test-stress.c: many threads submitting to one device while it
 * faults (see accel-test-stress.h).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-test-stress.h"

typedef struct {
  AccelDevice *dev;
  const AccelTestStress *config;
  guint seed;
  guint8 *completions;
  gint done;
  gint ok;
  gint poisoned;
  gint stale;
  gint other;
} Thread;

typedef struct {
  Thread *thread;
  guint index;
} Pending;

static void
stress_done (GObject *source, GAsyncResult *result, gpointer data)
{
  Pending *pending = data;
  Thread *st = pending->thread;
  g_autoptr(GError) error = NULL;
  if (accel_device_submit_finish (ACCEL_DEVICE (source), result, &error))
    st->ok++;
  else if (g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED))
    st->poisoned++;
  else if (g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER))
    st->stale++;
  else
    {
      g_test_message ("unexpected: %s", error->message);
      st->other++;
    }
  st->completions[pending->index]++;
  st->done++;
  g_free (pending);
}

static gpointer
stress_thread (gpointer data)
{
  Thread *st = data;
  g_autoptr(GMainContext) ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  GRand *rand = g_rand_new_with_seed (st->seed);
  g_autoptr(AccelShape) s = accel_shape_new_1d (16);
  AccelBuffer *buf = NULL;
  guint submitted = 0;

  while (submitted < st->config->n_ops)
    {
      if (buf == NULL || accel_buffer_is_stale (buf))
        {
          g_clear_object (&buf);
          buf = accel_device_alloc (st->dev, ACCEL_DTYPE_F32, s, NULL);
          if (buf == NULL)   /* a restart in progress may refuse; try again */
            {
              g_usleep (1000);
              continue;
            }
        }
      AccelOp *op;
      if ((guint) g_rand_int_range (rand, 0, 1000) < st->config->faults_per_mille)
        op = accel_op_new_by_name ("fault", NULL);
      else
        op = accel_op_new ("fill", "dst", buf, "value", (double) submitted, NULL);
      Pending *pending = g_new (Pending, 1);
      *pending = (Pending) { st, submitted };
      accel_device_submit_async (st->dev, op, NULL, stress_done, pending);
      g_object_unref (op);
      submitted++;
      while (submitted - st->done > st->config->in_flight)
        g_main_context_iteration (ctx, TRUE);
    }
  while (st->done < (gint) st->config->n_ops)
    g_main_context_iteration (ctx, TRUE);
  g_clear_object (&buf);
  g_rand_free (rand);
  g_main_context_pop_thread_default (ctx);
  return NULL;
}

AccelTestStressResult
accel_test_stress_run (AccelDevice *dev, const AccelTestStress *stress)
{
  AccelTestStressResult r = { 0, 0, 0, G_MAXUINT };
  g_autofree Thread *st = g_new0 (Thread, stress->n_threads);
  g_autofree GThread **threads = g_new0 (GThread *, stress->n_threads);

  for (guint t = 0; t < stress->n_threads; t++)
    {
      st[t] = (Thread) { dev, stress, g_test_rand_int (), g_new0 (guint8, stress->n_ops) };
      threads[t] = g_thread_new ("stress", stress_thread, &st[t]);
    }
  for (guint t = 0; t < stress->n_threads; t++)
    {
      g_thread_join (threads[t]);
      for (guint i = 0; i < stress->n_ops; i++)
        g_assert_cmpuint (st[t].completions[i], ==, 1);
      g_assert_cmpint (st[t].other, ==, 0);
      g_assert_cmpint (st[t].ok + st[t].poisoned + st[t].stale, ==, (gint) stress->n_ops);
      r.ok += st[t].ok;
      r.poisoned += st[t].poisoned;
      r.stale += st[t].stale;
      r.min_ok = MIN (r.min_ok, (guint) st[t].ok);
      g_free (st[t].completions);
    }
  g_test_message ("%u ok, %u poisoned, %u stale, generation %u", r.ok, r.poisoned, r.stale,
                  accel_device_get_generation (dev));
  return r;
}
