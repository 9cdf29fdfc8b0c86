/* accel-delivery.c: completed work returned to its caller's main context,
 * many completions per wake-up.
 *
 * GIO wants a GTask to return on the main context that was the
 * thread-default when it was made. Returned from another thread, each
 * GTask attaches an idle source and wakes the context: one allocation, one
 * context lock and one wake-up (a system call, and the context's thread
 * leaving poll()) per op. Here every main context that submits work gets
 * one AccelDelivery, a GSource with a queue: a completing thread appends
 * to the queue and wakes the context only when the queue was empty; the
 * source, dispatched on the context, returns everything queued since,
 * each task from within its own context, so GTask calls back at once.
 *
 * While work it delivers is in flight, the source spins briefly in its
 * prepare, before the context would sleep in poll(): a completion that
 * comes within the spin (ACCEL_DISPATCHER_SPIN_US, as a blocking caller's)
 * then costs no wake-up of the context's thread at all. Not with fewer
 * than four cores, where the spinning thread holds a core that the
 * completing one needs.
 *
 * A thread remembers the delivery of its current thread-default context
 * and holds that context (so the last context a thread submitted from
 * lives until the thread submits from another or exits); each work item
 * holds a reference to its delivery until it is returned.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-work-private.h"

struct _AccelDelivery {
  GSource source;
  GMutex lock;
  GPtrArray *queue;          /* AccelWork, completed; under lock */
  GPtrArray *draining;       /* the context's thread only */
  gint queued;               /* atomic: queue->len, for the spin */
  gint outstanding;          /* atomic: tasks taken and not yet returned */
};

static gboolean
delivery_prepare (GSource *source, gint *timeout)
{
  AccelDelivery *self = (AccelDelivery *) source;

  *timeout = -1;
  if (g_atomic_int_get (&self->queued) > 0)
    return TRUE;
  gint64 budget = _accel_spin_us ();
  if (budget <= 0 || g_atomic_int_get (&self->outstanding) == 0 || _accel_have_few_cores ())
    return FALSE;
  gint64 deadline = g_get_monotonic_time () + budget;
  for (guint n = 1;; n++)
    {
      if (g_atomic_int_get (&self->queued) > 0)
        return TRUE;
      if ((n & 63) == 0 && g_get_monotonic_time () >= deadline)
        return FALSE;
      _accel_cpu_relax ();
    }
}

static gboolean
delivery_dispatch (GSource *source, GSourceFunc callback, gpointer user_data)
{
  AccelDelivery *self = (AccelDelivery *) source;

  g_source_set_ready_time (source, -1);
  g_mutex_lock (&self->lock);
  GPtrArray *batch = self->queue;
  self->queue = self->draining;
  self->draining = batch;
  g_atomic_int_set (&self->queued, 0);
  g_mutex_unlock (&self->lock);

  g_atomic_int_add (&self->outstanding, -(gint) batch->len);
  for (guint i = 0; i < batch->len; i++)
    _accel_work_return_task (batch->pdata[i]);
  g_ptr_array_set_size (batch, 0);
  return G_SOURCE_CONTINUE;
}

static void
delivery_finalize (GSource *source)
{
  AccelDelivery *self = (AccelDelivery *) source;

  /* Nothing can be queued: each queued work holds a reference. The last
   * reference may be dropped on a completing thread, after the context's
   * thread swapped the arrays under the lock (and GLib's own ordering of
   * the source's count is out of ThreadSanitizer's sight): read them
   * under it too. */
  g_mutex_lock (&self->lock);
  GPtrArray *queue = self->queue, *draining = self->draining;
  g_mutex_unlock (&self->lock);
  g_ptr_array_unref (queue);
  g_ptr_array_unref (draining);
  g_mutex_clear (&self->lock);
}

static GSourceFuncs delivery_funcs = {
  .prepare = delivery_prepare,
  .dispatch = delivery_dispatch,
  .finalize = delivery_finalize,
};

static AccelDelivery *
delivery_new (GMainContext *context)
{
  AccelDelivery *self = (AccelDelivery *) g_source_new (&delivery_funcs, sizeof (AccelDelivery));

  g_mutex_init (&self->lock);
  self->queue = g_ptr_array_sized_new (64);
  self->draining = g_ptr_array_sized_new (64);
  g_source_set_name ((GSource *) self, "AccelDelivery");
  g_source_set_priority ((GSource *) self, G_PRIORITY_DEFAULT);
  g_source_attach ((GSource *) self, context);
  return self;
}

/* The calling thread's: a delivery to its thread-default main context.
 *
 * It holds a reference to the context as well as to the source. GLib's
 * g_source_unref() reads the source's context and takes its lock with no
 * guard against that context being finalised on another thread meanwhile;
 * a context is finalised where its last reference goes, which without this
 * one could be a completing thread (through _accel_delivery_push()'s
 * reference or a GTask's), while this thread unrefs the source it kept.
 * Holding the context here makes this thread, which drops the source
 * first, the one that finalises it. */
typedef struct {
  GMainContext *context;
  AccelDelivery *delivery;
} ThreadDelivery;

static void
thread_delivery_clear (ThreadDelivery *td)
{
  if (td->delivery)
    g_source_unref ((GSource *) g_steal_pointer (&td->delivery));
  g_clear_pointer (&td->context, g_main_context_unref);
}

static void
thread_delivery_free (gpointer data)
{
  thread_delivery_clear (data);
  g_free (data);
}

static GPrivate thread_delivery = G_PRIVATE_INIT (thread_delivery_free);

/* For a task about to be in flight: returns a new reference, and counts
 * the task until its return. */
AccelDelivery *
_accel_delivery_get_for_thread (void)
{
  GMainContext *context = g_main_context_get_thread_default ();
  if (context == NULL)
    context = g_main_context_default ();

  ThreadDelivery *td = g_private_get (&thread_delivery);
  if (G_UNLIKELY (td == NULL))
    {
      td = g_new0 (ThreadDelivery, 1);
      g_private_set (&thread_delivery, td);
    }
  if (G_LIKELY (td->context == context))
    {
      g_atomic_int_inc (&td->delivery->outstanding);
      return _accel_delivery_ref (td->delivery);
    }

  GSource *found = g_main_context_find_source_by_funcs_user_data (context, &delivery_funcs, NULL);
  AccelDelivery *delivery = found ? (AccelDelivery *) g_source_ref (found) : delivery_new (context);
  thread_delivery_clear (td);
  td->delivery = delivery;
  td->context = g_main_context_ref (context);
  g_atomic_int_inc (&delivery->outstanding);
  return _accel_delivery_ref (delivery);
}

AccelDelivery *
_accel_delivery_ref (AccelDelivery *self)
{
  return (AccelDelivery *) g_source_ref ((GSource *) self);
}

void
_accel_delivery_unref (AccelDelivery *self)
{
  g_source_unref ((GSource *) self);
}

/* Any thread: queues @work, whose result is set, for return on the
 * delivery's context. */
void
_accel_delivery_push (AccelDelivery *self, AccelWork *work)
{
  GMainContext *context = NULL;

  g_mutex_lock (&self->lock);
  gboolean first = self->queue->len == 0;
  /* Once @work is queued, the context's thread may return it at once (it
   * may be spinning in prepare), and with it drop the last references to
   * this delivery and to the context: the wake-up below holds its own,
   * and drops the source's before the context's, so that the context is
   * not finalised on another thread while g_source_unref() here takes its
   * lock (see ThreadDelivery). */
  if (first)
    {
      g_source_ref ((GSource *) self);
      context = g_main_context_ref (g_task_get_context (work->task));
    }
  g_ptr_array_add (self->queue, work);
  g_atomic_int_set (&self->queued, self->queue->len);
  g_mutex_unlock (&self->lock);
  /* Only the first of a batch wakes the context up. */
  if (first)
    {
      g_source_set_ready_time ((GSource *) self, 0);
      g_source_unref ((GSource *) self);
      g_main_context_unref (context);
    }
}
