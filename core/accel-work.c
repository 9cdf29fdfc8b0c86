/* accel-work.c: work items and the blocking caller's waiter.
 *
 * A blocking submit's caller waits on an AccelWaiter: WAITER_PENDING until
 * its work completes; the signaller moves it to WAITER_DONE with one
 * compare-and-swap, and touches the waiter no more, unless the waiter has
 * gone to sleep (WAITER_PARKED): then it sets WAITER_DONE under the lock
 * and signals. A spinning waiter is so never made to take a contended lock
 * (a futex sleep and wake, several microseconds, on the round trip).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-work-private.h"

enum {
  WAITER_PENDING,
  WAITER_PARKED,
  WAITER_DONE,
};

gint64
_accel_spin_us (void)
{
  static gsize once = 0;
  static gint64 value;
  if (g_once_init_enter (&once))
    {
      const char *env = g_getenv ("ACCEL_DISPATCHER_SPIN_US");
      gint64 v = env ? g_ascii_strtoll (env, NULL, 10) : 50;
      value = CLAMP (v, 0, 10000);
      g_once_init_leave (&once, 1);
    }
  return value;
}

/* Waiter. */

void
_accel_waiter_init (AccelWaiter *w)
{
  w->state = WAITER_PENDING;
  w->error = NULL;
  w->poll = NULL;
  w->poll_data = NULL;
  w->poll_destroy = NULL;
  w->spin_us = 0;
  g_mutex_init (&w->lock);
  g_cond_init (&w->cond);
}

static inline gboolean
waiter_done (AccelWaiter *w)
{
  return __atomic_load_n (&w->state, __ATOMIC_ACQUIRE) == WAITER_DONE;
}

/* Fewer cores than the threads a round trip passes through (two on each
 * side): a spinning waiter or receiver would hold the core that the thread
 * it waits for needs. */
gboolean
_accel_have_few_cores (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once))
    g_once_init_leave (&once, g_get_num_processors () < 4 ? 2 : 1);
  return once == 2;
}

/* Spin briefly, then park. */
void
_accel_waiter_wait (AccelWaiter *w)
{
  gint64 budget = w->poll && w->spin_us > 0 ? w->spin_us : _accel_spin_us ();

  if (budget > 0)
    {
      gint64 deadline = g_get_monotonic_time () + budget;
      guint n = 0;
      while (!waiter_done (w))
        {
          if (w->poll && w->poll (w, FALSE))
            break;
          /* The clock only now and then: the spin must notice DONE soon. */
          if ((++n & 63) == 0 && g_get_monotonic_time () >= deadline)
            break;
          if (_accel_have_few_cores ())
            g_thread_yield ();
          else
            _accel_cpu_relax ();
        }
    }
  if (!waiter_done (w) && !(w->poll && w->poll (w, TRUE)))
    {
      g_mutex_lock (&w->lock);
      gint expected = WAITER_PENDING;
      if (__atomic_compare_exchange_n (&w->state, &expected, WAITER_PARKED, FALSE, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE))
        while (!waiter_done (w))
          g_cond_wait (&w->cond, &w->lock);
      g_mutex_unlock (&w->lock);
    }
  /* A poll that completed the work signalled this waiter itself. */
  while (!waiter_done (w))
    _accel_cpu_relax ();
  if (w->poll_destroy)
    w->poll_destroy (w->poll_data);
  g_mutex_clear (&w->lock);
  g_cond_clear (&w->cond);
}

void
_accel_waiter_signal (AccelWaiter *w, GError *error)
{
  w->error = error;
  gint expected = WAITER_PENDING;
  if (__atomic_compare_exchange_n (&w->state, &expected, WAITER_DONE, FALSE, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE))
    return;   /* the waiter may be gone already: touch nothing more */
  g_mutex_lock (&w->lock);
  __atomic_store_n (&w->state, WAITER_DONE, __ATOMIC_RELEASE);
  g_cond_signal (&w->cond);
  g_mutex_unlock (&w->lock);
}

/* The call is published by a release store of @func, which the running
 * thread loads with acquire: whatever hands the call over (a dispatcher's
 * queue, or GLib's main context, whose futex locks ThreadSanitizer does not
 * see), everything the caller wrote before is visible to @func. */
void
_accel_sync_call_init (AccelSyncCall *call, AccelDispatchFunc func, gpointer data)
{
  call->data = data;
  _accel_waiter_init (&call->waiter);
  __atomic_store_n (&call->func, func, __ATOMIC_RELEASE);
}

void
_accel_sync_call_run (gpointer data)
{
  AccelSyncCall *call = data;
  AccelDispatchFunc func = __atomic_load_n (&call->func, __ATOMIC_ACQUIRE);
  func (call->data);
  _accel_waiter_signal (&call->waiter, NULL);
}

gboolean
_accel_sync_call_run_source (gpointer data)
{
  _accel_sync_call_run (data);
  return G_SOURCE_REMOVE;
}

/* Work items. */

AccelWork *
_accel_work_new (AccelDevice *device, AccelWorkKind kind)
{
  AccelWork *work = g_new0 (AccelWork, 1);
  work->kind = kind;
  work->device = g_object_ref (device);
  work->lane = -1;
  return work;
}

/* A blocking caller holds the op, its buffers and the device until the
 * work is answered, so its work (on the caller's stack) takes no
 * references of its own: no allocation, and no free on the completing
 * thread (which, with glibc, ends up taking the arena lock the caller's
 * next allocation wants). */
void
_accel_work_init_borrowed (AccelWork *work, AccelDevice *device, AccelWorkKind kind)
{
  memset (work, 0, sizeof *work);
  work->kind = kind;
  work->device = device;
  work->lane = -1;
  work->borrowed = TRUE;
}

void
_accel_work_free (AccelWork *work)
{
  if (work->borrowed)
    {
      g_clear_object (&work->cancellable);
      return;   /* on its caller's stack */
    }
  g_clear_object (&work->op);
  g_clear_object (&work->buffer);
  g_clear_pointer (&work->bytes, g_bytes_unref);
  if (work->owns_host)
    g_free (work->host);
  g_clear_error (&work->error);
  g_clear_pointer (&work->delivery, _accel_delivery_unref);
  g_clear_object (&work->cancellable);
  g_clear_object (&work->device);
  g_free (work);
}

/* Takes @task. The task returns on the main context of the calling thread,
 * which is where GIO wants it. */
void
_accel_work_set_task (AccelWork *work, GTask *task)
{
  GCancellable *cancellable = g_task_get_cancellable (task);

  work->mode = ACCEL_WORK_MODE_TASK;
  work->task = task;
  work->delivery = _accel_delivery_get_for_thread ();
  if (cancellable && work->cancellable == NULL)
    work->cancellable = g_object_ref (cancellable);
}

/* On the task's main context, from its delivery queue. */
void
_accel_work_return_task (AccelWork *work)
{
  GTask *task = g_steal_pointer (&work->task);
  GError *error = g_steal_pointer (&work->error);

  if (error)
    g_task_return_error (task, error);
  else if (work->kind == ACCEL_WORK_READ && work->owns_host)
    {
      work->owns_host = FALSE;
      g_task_return_pointer (task, g_bytes_new_take (work->host, work->size), (GDestroyNotify) g_bytes_unref);
    }
  else
    g_task_return_boolean (task, TRUE);
  _accel_work_free (work);
  g_object_unref (task);
}

/* Delivers a completed work item; takes @error. Any thread. */
void
_accel_work_deliver (AccelWork *work, GError *error)
{
  switch (work->mode)
    {
    case ACCEL_WORK_MODE_TASK:
      work->error = error;
      _accel_delivery_push (work->delivery, work);
      break;
    case ACCEL_WORK_MODE_WAIT:
      {
        AccelWaiter *w = work->waiter;
        _accel_work_free (work);
        _accel_waiter_signal (w, error);
      }
      break;
    case ACCEL_WORK_MODE_CALLBACK:
      work->callback (work, error, work->callback_data);
      _accel_work_free (work);
      break;
    }
}

/* Accessors for backends. */

/**
 * accel_work_get_kind: (skip)
 * @work: a work item
 *
 * For backends: gets what a work item does.
 *
 * Returns: what it does
 */
AccelWorkKind
accel_work_get_kind (AccelWork *work)
{
  return work->kind;
}

/**
 * accel_work_get_op: (skip)
 * @work: a work item
 *
 * For backends: gets the op of an op work item.
 *
 * Returns: (transfer none) (nullable): the op of an %ACCEL_WORK_OP item
 */
AccelOp *
accel_work_get_op (AccelWork *work)
{
  return work->op;
}

/**
 * accel_work_get_kernel: (skip)
 * @work: a work item
 *
 * For backends: gets the kernel chosen for an op work item.
 *
 * Returns: (transfer none) (nullable): the kernel chosen for the op; %NULL
 *   for a device that runs its ops elsewhere (an #AccelRemoteDevice: the
 *   host process chooses)
 */
const AccelKernel *
accel_work_get_kernel (AccelWork *work)
{
  return work->kernel;
}

/**
 * accel_work_get_buffer: (skip)
 * @work: a work item
 *
 * For backends: gets the buffer a transfer work item moves data in or out of.
 *
 * Returns: (transfer none) (nullable): the buffer of a transfer item
 */
AccelBuffer *
accel_work_get_buffer (AccelWork *work)
{
  return work->buffer;
}

/**
 * accel_work_get_host_data: (skip)
 * @work: a work item
 * @size: (out) (optional): the byte count
 *
 * For backends: gets the host memory of a transfer work item.
 *
 * Returns: the host memory a transfer reads from or writes to
 */
gpointer
accel_work_get_host_data (AccelWork *work, gsize *size)
{
  if (size)
    *size = work->size;
  return work->host;
}

/**
 * accel_work_set_poll: (skip)
 * @work: work given to the backend's execute
 * @poll: (scope notified): see #AccelWorkPoll
 * @data: (closure poll): for @poll
 * @arg: for @poll
 * @destroy: (destroy data) (nullable): frees @data once the caller has
 *   stopped waiting
 *
 * For backends, on the device thread, in execute and before anything can
 * complete @work: lets a caller blocked on @work poll for its completion
 * (see #AccelWorkPoll). Nothing is set for work that no caller blocks on.
 *
 * Returns: %TRUE if @poll was set (then @destroy will be called); %FALSE
 *   if no caller blocks on @work (nothing is kept, nothing is called)
 */
gboolean
accel_work_set_poll (AccelWork *work, AccelWorkPoll poll, gpointer data, guint64 arg, GDestroyNotify destroy)
{
  g_return_val_if_fail (work != NULL && poll != NULL, FALSE);
  if (work->mode != ACCEL_WORK_MODE_WAIT)
    return FALSE;
  work->poll_data = data;
  work->poll_arg = arg;
  work->poll_destroy = destroy;
  __atomic_store_n (&work->poll, poll, __ATOMIC_RELEASE);
  return TRUE;
}

/* On the waiting caller's thread: its work is on its stack until the wait
 * is over. */
gboolean
_accel_work_waiter_poll (AccelWaiter *w, gboolean parking)
{
  AccelWork *work = w->poll_data;
  AccelWorkPoll poll = __atomic_load_n (&work->poll, __ATOMIC_ACQUIRE);
  return poll != NULL && poll (work, work->poll_data, work->poll_arg);
}

/**
 * accel_work_get_lane: (skip)
 * @work: a work item
 *
 * For backends: gets the lane an op asked for.
 *
 * Returns: the lane asked for, or -1
 */
int
accel_work_get_lane (AccelWork *work)
{
  return work->lane;
}
