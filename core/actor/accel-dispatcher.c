/* accel-dispatcher.c: one OS thread running its own GMainContext, with a
 * fast mailbox in front of it.
 *
 * A cross-thread wake through a futex or an eventfd costs tens of
 * microseconds on a small machine, so the thread spins on its mailbox for a
 * short while after the last message before it parks in
 * g_main_context_iteration(). Posters only pay for the wake-up when the
 * thread is parked.
 *
 * A poller (private: accel-device-host's channel) lets the thread serve a
 * second queue beside its mailbox: it is polled whenever the mailbox is
 * empty, and the thread parks in the poller's own wait, which a post
 * interrupts. The context's sources are then served after each wake-up,
 * and at least every POLLER_PARK_US.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"

typedef struct {
  AccelDispatchFunc func;
  gpointer data;
} Message;

struct _AccelDispatcher {
  GObject parent_instance;

  char *name;
  GMainContext *context;
  GThread *thread;

  GMutex lock;
  GArray *queue;          /* of Message, guarded by lock */
  GArray *draining;       /* owned by the thread */
  gint pending;           /* atomic: messages in queue */
  gint parked;            /* atomic: thread is (about to be) blocked in poll */
  gint running;           /* atomic */
  gint busy;              /* atomic: running messages or the poller */
  gint64 spin_us;
  const AccelDispatcherPoller *poller;   /* set once, on the thread; atomic (posters read it) */
  gpointer poller_data;                  /* written before poller */
  guint poller_turns;
  gint64 poller_sources_at;   /* when the context's sources were last served */
};

#define POLLER_PARK_US (100 * 1000)

/**
 * AccelDispatcher:
 *
 * One OS thread running its own #GMainContext. Actors, and the devices
 * whose library handles need a stable thread, are served by one.
 */
G_DEFINE_FINAL_TYPE (AccelDispatcher, accel_dispatcher, G_TYPE_OBJECT)

static GPrivate current_dispatcher;


static gboolean
drain (AccelDispatcher *self)
{
  if (g_atomic_int_get (&self->pending) == 0)
    return FALSE;

  /* Busy before the mailbox looks empty: a poster that sees it empty and
   * not busy knows that everything posted before has run. */
  g_atomic_int_set (&self->busy, 1);
  g_mutex_lock (&self->lock);
  GArray *tmp = self->queue;
  self->queue = self->draining;
  self->draining = tmp;
  g_atomic_int_set (&self->pending, 0);
  g_mutex_unlock (&self->lock);

  for (guint i = 0; i < self->draining->len; i++)
    {
      Message *m = &g_array_index (self->draining, Message, i);
      m->func (m->data);
    }
  g_array_set_size (self->draining, 0);
  g_atomic_int_set (&self->busy, 0);
  return TRUE;
}

static gboolean
poll_poller (AccelDispatcher *self)
{
  g_atomic_int_set (&self->busy, 1);
  gboolean did = self->poller->poll (self->poller_data);
  g_atomic_int_set (&self->busy, 0);
  return did;
}

/* With a poller: park in its wait, which a post interrupts. */
static void
park_in_poller (AccelDispatcher *self)
{
  g_atomic_int_set (&self->parked, 1);
  if (g_atomic_int_get (&self->pending) == 0 && g_atomic_int_get (&self->running))
    {
      /* The context's sources (a system call to look) at most every
       * millisecond: the poller may go idle between any two requests. */
      gint64 now = g_get_monotonic_time ();
      if (now - self->poller_sources_at >= 1000)
        {
          self->poller_sources_at = now;
          g_main_context_iteration (self->context, FALSE);
        }
      if (g_atomic_int_get (&self->pending) == 0)
        self->poller->park (self->poller_data, POLLER_PARK_US);
    }
  g_atomic_int_set (&self->parked, 0);
}

static gpointer
dispatcher_thread (gpointer data)
{
  AccelDispatcher *self = data;

  g_private_set (&current_dispatcher, self);
  g_main_context_push_thread_default (self->context);

  while (g_atomic_int_get (&self->running))
    {
      gboolean drained = drain (self);
      gboolean polled = self->poller && g_atomic_int_get (&self->pending) == 0 && poll_poller (self);
      if (drained || polled)
        {
          /* Give sources a turn without blocking (a system call: while
           * only the poller is busy, now and then). */
          if (drained || (++self->poller_turns & 127) == 0)
            g_main_context_iteration (self->context, FALSE);
          continue;
        }
      if (self->poller)
        {
          park_in_poller (self);
          continue;
        }

      /* Spin a little before parking: the next message usually comes soon. */
      /* The mailbox word on every turn; the clock and the main context
       * (which polls its file descriptors: a system call) only every 128th,
       * so a message is seen within a few hundred nanoseconds. */
      gint64 deadline = self->spin_us > 0 ? g_get_monotonic_time () + self->spin_us : 0;
      gboolean got = FALSE;
      for (guint n = 1; self->spin_us > 0; n++)
        {
          if (g_atomic_int_get (&self->pending) != 0)
            {
              got = TRUE;
              break;
            }
          if ((n & 127) == 0
              && (g_get_monotonic_time () >= deadline || g_main_context_pending (self->context)))
            break;
          _accel_cpu_relax ();
        }
      if (got)
        continue;

      g_atomic_int_set (&self->parked, 1);
      if (g_atomic_int_get (&self->pending) == 0 && g_atomic_int_get (&self->running))
        g_main_context_iteration (self->context, TRUE);
      g_atomic_int_set (&self->parked, 0);
    }

  /* Run what was posted before the stop, so nothing is lost. */
  while (drain (self))
    ;
  while (g_main_context_iteration (self->context, FALSE))
    ;

  g_main_context_pop_thread_default (self->context);
  g_object_unref (self);
  return NULL;
}

static void
accel_dispatcher_finalize (GObject *object)
{
  AccelDispatcher *self = ACCEL_DISPATCHER (object);

  g_main_context_unref (self->context);
  g_array_unref (self->queue);
  g_array_unref (self->draining);
  g_mutex_clear (&self->lock);
  g_free (self->name);

  G_OBJECT_CLASS (accel_dispatcher_parent_class)->finalize (object);
}

static void
accel_dispatcher_class_init (AccelDispatcherClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = accel_dispatcher_finalize;
}

static void
accel_dispatcher_init (AccelDispatcher *self)
{
  g_mutex_init (&self->lock);
  self->queue = g_array_sized_new (FALSE, FALSE, sizeof (Message), 64);
  self->draining = g_array_sized_new (FALSE, FALSE, sizeof (Message), 64);
  self->context = g_main_context_new ();
  self->spin_us = _accel_spin_us ();
}

/**
 * accel_dispatcher_new:
 * @name: a name for the thread (shown by debuggers)
 *
 * Starts a dispatcher: one OS thread running its own #GMainContext.
 *
 * Returns: (transfer full): the dispatcher; it stops when finalised or on
 *   accel_dispatcher_stop()
 */
AccelDispatcher *
accel_dispatcher_new (const char *name)
{
  AccelDispatcher *self = g_object_new (ACCEL_TYPE_DISPATCHER, NULL);

  self->name = g_strdup (name ? name : "accel-dispatcher");
  g_atomic_int_set (&self->running, 1);
  /* The thread holds a reference until it ends: an owner that drops the
   * dispatcher without stopping it leaves the thread running, never dangling. */
  self->thread = g_thread_new (self->name, dispatcher_thread, g_object_ref (self));
  return self;
}

/**
 * accel_dispatcher_get_name:
 * @self: a dispatcher
 *
 * Gets its name.
 *
 * Returns: its name
 */
const char *
accel_dispatcher_get_name (AccelDispatcher *self)
{
  g_return_val_if_fail (ACCEL_IS_DISPATCHER (self), NULL);
  return self->name;
}

/**
 * accel_dispatcher_get_context:
 * @self: a dispatcher
 *
 * Sources attached to this context run on the dispatcher's thread.
 *
 * Returns: (transfer none): the main context its thread runs
 */
GMainContext *
accel_dispatcher_get_context (AccelDispatcher *self)
{
  g_return_val_if_fail (ACCEL_IS_DISPATCHER (self), NULL);
  return self->context;
}

/**
 * accel_dispatcher_is_current:
 * @self: a dispatcher
 *
 * Whether the calling thread is the dispatcher's own.
 *
 * Returns: %TRUE when called from @self's thread
 */
gboolean
accel_dispatcher_is_current (AccelDispatcher *self)
{
  return g_private_get (&current_dispatcher) == self;
}

/**
 * accel_dispatcher_post: (skip)
 * @self: a dispatcher
 * @func: the function to run on the dispatcher thread
 * @data: its argument
 *
 * Queues @func. Messages run in the order they were posted, one at a time.
 * Callable from any thread; messages posted after accel_dispatcher_stop()
 * still run, on the calling thread, so that none is lost.
 */
void
accel_dispatcher_post (AccelDispatcher *self, AccelDispatchFunc func, gpointer data)
{
  g_return_if_fail (ACCEL_IS_DISPATCHER (self));
  g_return_if_fail (func != NULL);

  if (G_UNLIKELY (!g_atomic_int_get (&self->running)))
    {
      func (data);
      return;
    }

  Message m = { func, data };
  g_mutex_lock (&self->lock);
  g_array_append_val (self->queue, m);
  g_atomic_int_set (&self->pending, 1);
  /* Once the lock is dropped the message may run at once, and with it the
   * owner's last use of the dispatcher: a wake-up holds its own reference
   * (a thread that is not parked needs none, and this one is not touched
   * again). */
  gboolean wake = g_atomic_int_get (&self->parked);
  if (wake)
    g_object_ref (self);
  g_mutex_unlock (&self->lock);

  if (wake)
    {
      g_main_context_wakeup (self->context);
      const AccelDispatcherPoller *poller = g_atomic_pointer_get (&self->poller);
      if (poller)
        poller->wake (self->poller_data);
      g_object_unref (self);
    }
}

/* Nothing is queued or running on the thread: everything posted before
 * this call has run. */
gboolean
_accel_dispatcher_is_idle (AccelDispatcher *self)
{
  return g_atomic_int_get (&self->pending) == 0 && g_atomic_int_get (&self->busy) == 0;
}

typedef struct {
  AccelDispatcher *self;
  const AccelDispatcherPoller *poller;
  gpointer data;
} SetPoller;

static void
set_poller_cb (gpointer data)
{
  SetPoller *sp = data;
  sp->self->poller_data = sp->data;
  g_atomic_pointer_set (&sp->self->poller, sp->poller);   /* publishes poller_data too */
  g_free (sp);
}

/* Installs @poller (for good) from any thread: from the next turn of the
 * thread on, it is polled and parked in. */
void
_accel_dispatcher_set_poller (AccelDispatcher *self, const AccelDispatcherPoller *poller, gpointer data)
{
  SetPoller *sp = g_new (SetPoller, 1);
  sp->self = self;
  sp->poller = poller;
  sp->data = data;
  accel_dispatcher_post (self, set_poller_cb, sp);
}

/**
 * accel_dispatcher_stop:
 * @self: a dispatcher
 *
 * Runs what is queued, then ends the thread and waits for it. Called from
 * the dispatcher's own thread, it ends the thread after the current message
 * without waiting. Idempotent.
 */
void
accel_dispatcher_stop (AccelDispatcher *self)
{
  g_return_if_fail (ACCEL_IS_DISPATCHER (self));

  if (self->thread == NULL)
    return;
  g_atomic_int_set (&self->running, 0);
  g_main_context_wakeup (self->context);
  if (accel_dispatcher_is_current (self))
    {
      g_thread_unref (self->thread);
      self->thread = NULL;
      return;
    }
  g_thread_join (self->thread);
  self->thread = NULL;
  /* A post that raced with the stop may have queued after the thread's last
   * drain: run it here rather than lose it. */
  while (drain (self))
    ;
}
