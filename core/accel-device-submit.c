/* accel-device-submit.c: how work reaches a device and how it completes.
 *
 * accel_device_submit_async() and accel_device_submit() validate an op on
 * the caller's thread, check that its buffers are the device's and of its
 * current generation, choose its kernel, and make an AccelWork of it
 * (accel-work.c). The work then goes one of two ways:
 *
 * - through the device's mailbox: its thread serves it (run_work()),
 *   restarting the context first if a fault asked for it, and hands it to
 *   the backend's execute;
 * - straight from the caller's thread, when the device has a hand-over
 *   (AccelRemoteDevice: the op is written into its host's channel) and
 *   its thread has nothing queued or running, so that no order can be
 *   lost. This is the path of a device served by a host process: one
 *   thread hop each way.
 *
 * Either way the backend (or connection) completes the work exactly once,
 * from any thread, with accel_device_complete_work().
 *
 * A device that runs its ops elsewhere (a host process) chooses no kernel
 * here: the host does, where the kernel runs, and answers NO_KERNEL if it
 * has none.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-device-private.h"
#include "accel-journal-private.h"

/* Buffers. */

gboolean
_accel_device_check_buffer (AccelDevice *self, AccelBuffer *buffer, const char *what, GError **error)
{
  AccelDevicePrivate *priv = _accel_device_get_private (self);

  if (accel_buffer_get_device (buffer) != self)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_WRONG_DEVICE,
                   "%s is a buffer of device “%s”, not of “%s”", what,
                   accel_device_get_name (accel_buffer_get_device (buffer)),
                   accel_device_get_name (self));
      return FALSE;
    }
  guint gen = g_atomic_int_get (&priv->generation);
  if (accel_buffer_get_generation (buffer) != gen)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER,
                   "%s was made in generation %u of device “%s”, which is now at generation %u; "
                   "its memory was lost when the device restarted",
                   what, accel_buffer_get_generation (buffer), accel_device_get_name (self), gen);
      return FALSE;
    }
  return TRUE;
}

typedef struct {
  AccelDevice *self;
  guint generation;
  GError **error;
  gboolean ok;
  gboolean tolerate_foreign;
  gboolean foreign;          /* there was a buffer of another device */
} BufferCheck;

static void
check_op_buffer (AccelOp *op, GParamSpec *pspec, AccelBuffer *buffer, AccelAccess access, gpointer data)
{
  BufferCheck *check = data;
  if (!check->ok)
    return;
  /* The common case costs three comparisons; the message is made on failure. */
  if (G_LIKELY (accel_buffer_get_device (buffer) == check->self
                && accel_buffer_get_generation (buffer) == check->generation
                && !((access & ACCEL_ACCESS_WRITE) && _accel_buffer_may_overlap (buffer))))
    return;
  if (accel_buffer_get_device (buffer) != check->self && check->tolerate_foreign)
    {
      check->foreign = TRUE;
      return;
    }
  g_autofree char *what = pspec ? g_strdup_printf ("Property “%s” of “%s”", pspec->name, accel_op_get_type_name (op))
                                : g_strdup_printf ("A buffer argument of “%s”", accel_op_get_type_name (op));
  check->ok = _accel_device_check_buffer (check->self, buffer, what, check->error);
  if (check->ok)
    {
      /* A write to a broadcast (stride 0) would write its elements again
       * and again: a fill of 10^16 of them kept a device host busy. */
      g_autofree char *s = accel_shape_to_string (accel_buffer_get_shape (buffer));
      g_set_error (check->error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s is written, but its shape %s has elements that share memory (a broadcast)",
                   what, s);
      check->ok = FALSE;
    }
}

/* With @foreign, a buffer of another device is no error: *@foreign says
 * there was one. */
static gboolean
check_op_buffers (AccelDevice *self, AccelOp *op, gboolean *foreign, GError **error)
{
  AccelDevicePrivate *priv = _accel_device_get_private (self);
  BufferCheck check = { self, g_atomic_int_get (&priv->generation), error, TRUE, foreign != NULL, FALSE };

  _accel_op_foreach_buffer (op, check_op_buffer, &check);
  if (foreign)
    *foreign = check.foreign;
  return check.ok;
}

/* Every buffer of @op must be @self's, of its current generation. */
gboolean
_accel_device_check_op_buffers (AccelDevice *self, AccelOp *op, GError **error)
{
  return check_op_buffers (self, op, NULL, error);
}

gboolean
_accel_device_check_usable (AccelDevice *self, GError **error)
{
  AccelDevicePrivate *priv = _accel_device_get_private (self);

  if (G_UNLIKELY (g_atomic_int_get (&priv->state) == ACCEL_DEVICE_STATE_FAILED))
    {
      g_propagate_error (error, _accel_device_failure_error (self));
      return FALSE;
    }
  return TRUE;
}

/* Completion. */

static void
deliver_after_restart (gpointer data)
{
  AccelWork *work = data;
  _accel_device_maybe_restart (work->device);
  _accel_work_deliver (work, g_steal_pointer (&work->error));
}

/**
 * accel_device_complete_work: (skip)
 * @self: the device
 * @work: work given to the backend's execute
 * @error: (transfer full) (nullable): the failure, or %NULL for success
 *
 * For backends: completes @work, from any thread, exactly once. A failure
 * with %ACCEL_ERROR_CONTEXT_POISONED makes the device rebuild its context
 * before it serves anything else.
 */
void
accel_device_complete_work (AccelDevice *self, AccelWork *work, GError *error)
{
  g_return_if_fail (ACCEL_IS_DEVICE (self));
  g_return_if_fail (work != NULL && work->device == self);
  AccelDevicePrivate *priv = _accel_device_get_private (self);

  if (!g_atomic_int_compare_and_exchange (&work->completed, 0, 1))
    {
      g_critical ("Work on device “%s” completed twice", accel_device_get_name (self));
      g_clear_error (&error);
      return;
    }
  if (G_UNLIKELY (work->done_func != NULL))
    ((AccelWorkDoneFunc) work->done_func) (work, error, work->done_data);
  if (work->counted)
    {
      gboolean idle = g_atomic_int_dec_and_test (&priv->in_flight);
      gsize bytes = work->kind == ACCEL_WORK_WRITE || work->kind == ACCEL_WORK_READ ? work->size : 0;
      _accel_device_stats_done (&priv->stats, work->kind, bytes, error != NULL, idle);
    }
  else if (error)
    _accel_device_stats_refused (&priv->stats);
  if (error && g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED) && work->counted)
    {
      /* The op that poisoned the context is answered only once the new
       * context is in place: whoever sees its error also sees the new
       * generation (or the FAILED state). */
      _accel_device_request_restart (self, work->generation, error);
      if (accel_dispatcher_is_current (priv->dispatcher))
        _accel_device_maybe_restart (self);
      else
        {
          work->error = error;
          accel_dispatcher_post (priv->dispatcher, deliver_after_restart, work);
          return;
        }
    }
  _accel_work_deliver (work, error);
}

/* The mailbox path. */

static gboolean
work_buffers_current (AccelDevice *self, AccelWork *work, GError **error)
{
  if (work->kind == ACCEL_WORK_OP)
    return check_op_buffers (self, work->op, NULL, error);
  return _accel_device_check_buffer (self, work->buffer, "The buffer", error);
}

/* Serves one work item, on the device thread. */
void
_accel_device_run_work (gpointer data)
{
  AccelWork *work = data;
  AccelDevice *self = work->device;
  AccelDevicePrivate *priv = _accel_device_get_private (self);
  GError *error = NULL;

  _accel_device_maybe_restart (self);

  if (g_atomic_int_get (&priv->state) == ACCEL_DEVICE_STATE_FAILED)
    error = _accel_device_failure_error (self);
  else if (work->cancellable && g_cancellable_is_cancelled (work->cancellable))
    error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_CANCELLED,
                         "The %s was cancelled before it ran on “%s”",
                         work->op ? accel_op_get_type_name (work->op) : "transfer",
                         accel_device_get_name (self));
  else if (!work_buffers_current (self, work, &error))
    ;
  else if (!g_atomic_int_get (&priv->open))
    _accel_device_open_on_device (self, &error);

  if (error)
    {
      accel_device_complete_work (self, work, error);
      return;
    }

  work->generation = g_atomic_int_get (&priv->generation);
  work->counted = TRUE;
  if (g_atomic_int_add (&priv->in_flight, 1) == 0)
    _accel_device_stats_busy (&priv->stats);
  g_object_ref (self);
  AccelJournal *journal = g_atomic_pointer_get (&priv->journal);
  if (G_UNLIKELY (journal != NULL))
    _accel_journal_execute (journal, self, work);
  else
    ACCEL_DEVICE_GET_CLASS (self)->execute (self, work);
  _accel_device_maybe_restart (self);
  g_object_unref (self);
}

/* For the journal (accel-journal-record.c), on the device thread: the
 * backend runs @work, and @done sees how it ended (with the work, before
 * it is delivered: its op and buffers are still there). */
void
_accel_device_execute_observed (AccelDevice *self, AccelWork *work, AccelWorkDoneFunc done, gpointer data)
{
  work->done_func = (gpointer) done;
  work->done_data = data;
  ACCEL_DEVICE_GET_CLASS (self)->execute (self, work);
}

static void
observed_read_done (AccelWork *work, GError *error, gpointer data)
{
  g_clear_error (&error);   /* the observer has seen it */
  g_atomic_int_add (&_accel_device_get_private (work->device)->observing, -1);
}

/* For the journal, on the device thread: reads @buffer into @host now, in
 * order with the work run before and after; @done is called once, from
 * any thread, with the outcome. The read is not work of the device's user
 * (its stats leave it out), but accel_device_synchronize() waits for it:
 * @done records the op whose output it read. */
void
_accel_device_execute_read (AccelDevice *self, AccelBuffer *buffer, gpointer host, gsize size,
                            AccelWorkDoneFunc done, gpointer data)
{
  g_atomic_int_inc (&_accel_device_get_private (self)->observing);
  AccelWork *work = _accel_work_new (self, ACCEL_WORK_READ);
  work->mode = ACCEL_WORK_MODE_CALLBACK;
  work->buffer = g_object_ref (buffer);
  work->host = host;
  work->size = size;
  work->callback = observed_read_done;
  _accel_device_execute_observed (self, work, done, data);
}

/* The straight path: only when nothing is queued or running on the device
 * thread (so nothing submitted before can be overtaken), the context is
 * open, no restart is pending, and the generation the buffers were checked
 * against is still current. */
static gboolean
try_hand_over (AccelDevice *self, AccelDevicePrivate *priv, AccelWork *work)
{
  if (priv->hand_over == NULL
      || g_atomic_pointer_get (&priv->journal) != NULL
      || !_accel_dispatcher_is_idle (priv->dispatcher)
      || g_atomic_int_get (&priv->state) != ACCEL_DEVICE_STATE_READY
      || !g_atomic_int_get (&priv->open)
      || g_atomic_int_get (&priv->restart_gen) != 0
      || (guint) g_atomic_int_get (&priv->generation) != work->generation
      || (work->cancellable && g_cancellable_is_cancelled (work->cancellable)))
    return FALSE;

  work->counted = TRUE;
  if (g_atomic_int_add (&priv->in_flight, 1) == 0)
    _accel_device_stats_busy (&priv->stats);
  if (priv->hand_over (self, work))
    return TRUE;   /* @work may be complete and gone already */
  /* Not handed over: as if it had never been counted (the busy time
   * started is ended by the mailbox's own count, or the next idle). */
  work->counted = FALSE;
  g_atomic_int_add (&priv->in_flight, -1);
  return FALSE;
}

void
_accel_device_start_work (AccelDevice *self, AccelWork *work)
{
  AccelDevicePrivate *priv = _accel_device_get_private (self);

  if (!try_hand_over (self, priv, work))
    accel_dispatcher_post (priv->dispatcher, _accel_device_run_work, work);
}

/* A blocking caller's: sets WAIT mode, runs @work and waits for it. */
gboolean
_accel_device_run_work_sync (AccelDevice *self, AccelWork *work, GError **error)
{
  AccelDevicePrivate *priv = _accel_device_get_private (self);
  g_return_val_if_fail (!accel_dispatcher_is_current (priv->dispatcher), FALSE);
  AccelWaiter w;

  _accel_waiter_init (&w);
  work->mode = ACCEL_WORK_MODE_WAIT;
  work->waiter = &w;
  /* The backend may let us poll for the completion (in-process CUDA: the
   * lane flag); a remote device's hand-over puts its reply slot here. */
  work->poll = NULL;
  w.poll = _accel_work_waiter_poll;
  w.poll_data = work;
  _accel_device_start_work (self, work);
  _accel_waiter_wait (&w);
  /* Whoever completed the work, the backend's poll is over. */
  if (work->poll_destroy)
    work->poll_destroy (work->poll_data);
  if (w.error)
    {
      g_propagate_error (error, w.error);
      return FALSE;
    }
  return TRUE;
}

/* Validates @op and makes its work (in @storage, borrowing the caller's
 * references, if given). NULL with @error set, or with *@across when a
 * buffer belongs to another device (no error: see
 * accel-cross-device-copy.c). */
static AccelWork *
prepare_op (AccelDevice *self, AccelOp *op, AccelWork *storage, gboolean *across, GError **error)
{
  AccelDevicePrivate *priv = _accel_device_get_private (self);
  const AccelKernel *kernel = NULL;
  guint generation = g_atomic_int_get (&priv->generation);

  *across = FALSE;
  if (!_accel_device_check_usable (self, error))
    return NULL;
  /* An op submitted again unchanged to this device skips its validation
   * and kernel choice (the buffers' device and generation are checked
   * every time). */
  AccelRegistry *registry = _accel_backend_get_registry (priv->backend);
  guint kernels = _accel_registry_get_kernels_serial (registry);
  guint changes = _accel_op_get_changes (op);
  gconstpointer kept = NULL;
  if (_accel_op_ready_lookup (op, priv->serial, kernels, changes, &kept))
    {
      if (!check_op_buffers (self, op, across, error) || *across)
        return NULL;
      kernel = kept;
    }
  else
    {
      if (!accel_op_validate (op, error) || !check_op_buffers (self, op, across, error) || *across)
        return NULL;
      if (!priv->runs_elsewhere)
        {
          kernel = accel_registry_find_kernel (registry, op, self, error);
          if (kernel == NULL)
            return NULL;
        }
      _accel_op_ready_store (op, priv->serial, kernels, changes, kernel);
    }

  AccelWork *work;
  if (storage != NULL)
    {
      work = storage;
      _accel_work_init_borrowed (work, self, ACCEL_WORK_OP);
      work->op = op;
    }
  else
    {
      work = _accel_work_new (self, ACCEL_WORK_OP);
      work->op = g_object_ref (op);
    }
  work->kernel = kernel;
  work->lane = accel_op_get_lane (op);
  work->generation = generation;
  return work;
}

/**
 * accel_device_submit_async:
 * @self: a device
 * @op: the op; its buffers must belong to @self (a `copy` may have its other
 *   end on another device)
 * @cancellable: (nullable): cancels the op while it is queued
 * @callback: (scope async): called on the thread-default main context of
 *   the thread that called this function
 * @user_data: data for @callback
 *
 * Queues @op. Callable from any thread. Validation errors, stale buffers and
 * a missing kernel are reported through @callback without anything being
 * queued (for a device served by a host process, a missing kernel is
 * reported by the host). An op that already runs when @cancellable fires
 * completes, and its result is dropped.
 */
void
accel_device_submit_async (AccelDevice *self,
                           AccelOp *op,
                           GCancellable *cancellable,
                           GAsyncReadyCallback callback,
                           gpointer user_data)
{
  g_return_if_fail (ACCEL_IS_DEVICE (self));
  g_return_if_fail (ACCEL_IS_OP (op));

  GTask *task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, accel_device_submit_async);
  g_task_set_check_cancellable (task, FALSE);

  GError *error = NULL;
  gboolean across;
  AccelWork *work = prepare_op (self, op, NULL, &across, &error);
  if (G_UNLIKELY (work == NULL))
    {
      if (across)
        _accel_cross_device_copy_submit (self, op, task);
      else
        {
          g_task_return_error (task, error);
          g_object_unref (task);
        }
      return;
    }
  _accel_work_set_task (work, task);
  _accel_device_start_work (self, work);
}

/**
 * accel_device_submit_finish:
 * @self: a device
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Finishes accel_device_submit_async(): whether the op ran.
 *
 * Returns: %TRUE if the op ran; else %FALSE with @error in %ACCEL_ERROR
 */
gboolean
accel_device_submit_finish (AccelDevice *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
sync_task_done (GObject *source, GAsyncResult *result, gpointer data)
{
}

/* Rare: an op across devices runs through the async path on a private
 * main context. */
static gboolean
submit_across_sync (AccelDevice *self, AccelOp *op, GCancellable *cancellable, GError **error)
{
  g_autoptr(GMainContext) ctx = g_main_context_new ();
  g_main_context_push_thread_default (ctx);
  GTask *task = g_task_new (self, cancellable, sync_task_done, NULL);
  g_task_set_check_cancellable (task, FALSE);
  g_object_ref (task);
  _accel_cross_device_copy_submit (self, op, task);
  while (!g_task_get_completed (task))
    g_main_context_iteration (ctx, TRUE);
  gboolean ok = g_task_propagate_boolean (task, error);
  g_object_unref (task);
  g_main_context_pop_thread_default (ctx);
  return ok;
}

/**
 * accel_device_submit:
 * @self: a device
 * @op: the op
 * @cancellable: (nullable): cancels the op while it is queued
 * @error: return location for a #GError
 *
 * Runs @op and waits for it: the blocking form, for scripts and tests.
 * Callable from any thread but the device's own.
 *
 * Returns: %TRUE if the op ran; else %FALSE with @error in %ACCEL_ERROR
 */
gboolean
accel_device_submit (AccelDevice *self, AccelOp *op, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (self), FALSE);
  g_return_val_if_fail (ACCEL_IS_OP (op), FALSE);

  AccelWork storage;
  gboolean across;
  AccelWork *work = prepare_op (self, op, &storage, &across, error);
  if (G_UNLIKELY (work == NULL))
    return across ? submit_across_sync (self, op, cancellable, error) : FALSE;
  work->cancellable = cancellable ? g_object_ref (cancellable) : NULL;
  return _accel_device_run_work_sync (self, work, error);
}

static void
noop_on_device (gpointer data)
{
}

/**
 * accel_device_synchronize:
 * @self: a device
 * @error: return location for a #GError
 *
 * Waits until everything submitted before the call has completed, and
 * the device's #AccelDevice:journal holds its records (accel_journal_flush()
 * then writes them all).
 *
 * Returns: %FALSE with %ACCEL_ERROR_DEVICE_FAILED if the device has failed
 */
gboolean
accel_device_synchronize (AccelDevice *self, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (self), FALSE);
  AccelDevicePrivate *priv = _accel_device_get_private (self);

  _accel_device_run_on_thread_sync (self, noop_on_device, NULL);
  while (g_atomic_int_get (&priv->in_flight) > 0 || g_atomic_int_get (&priv->observing) > 0)
    g_usleep (20);
  return _accel_device_check_usable (self, error);
}

/* The private ways in. */

void
_accel_device_set_hand_over (AccelDevice *self, AccelDeviceHandOver hand_over)
{
  AccelDevicePrivate *priv = _accel_device_get_private (self);
  priv->hand_over = hand_over;
  priv->runs_elsewhere = hand_over != NULL;
}

static void
start_callback_work (AccelDevice *self, AccelWork *work, AccelWorkCallback callback, gpointer data)
{
  AccelDevicePrivate *priv = _accel_device_get_private (self);

  work->mode = ACCEL_WORK_MODE_CALLBACK;
  work->callback = callback;
  work->callback_data = data;
  /* On the device thread itself (the device host reads its channel
   * there): no trip through the mailbox. */
  if (accel_dispatcher_is_current (priv->dispatcher))
    _accel_device_run_work (work);
  else
    _accel_device_start_work (self, work);
}

void
_accel_device_submit_with_callback (AccelDevice *self, AccelOp *op, AccelWorkCallback callback, gpointer data)
{
  GError *error = NULL;
  gboolean across;
  AccelWork *work = prepare_op (self, op, NULL, &across, &error);

  if (work == NULL)
    {
      if (across)
        _accel_device_check_op_buffers (self, op, &error);
      callback (NULL, error, data);
      return;
    }
  start_callback_work (self, work, callback, data);
}

void
_accel_device_transfer_with_callback (AccelDevice *self,
                                      AccelWorkKind kind,
                                      AccelBuffer *buffer,
                                      gpointer host,
                                      gsize size,
                                      AccelWorkCallback callback,
                                      gpointer data)
{
  GError *error = NULL;

  if (!_accel_device_check_usable (self, &error) || !_accel_device_check_buffer (self, buffer, "The buffer", &error))
    {
      callback (NULL, error, data);
      return;
    }
  AccelWork *work = _accel_work_new (self, kind);
  work->buffer = g_object_ref (buffer);
  work->host = host;
  work->size = size;
  work->generation = accel_buffer_get_generation (buffer);
  start_callback_work (self, work, callback, data);
}

/* Work nobody waits for. */

static void
restored (AccelWork *work, GError *error, gpointer data)
{
  if (error)
    g_warning ("%s: could not make “%s” again in the new context: %s", accel_device_get_name (work->device),
               accel_op_get_type_name (work->op), error->message);
  g_clear_error (&error);
}

static void
detached_done (AccelWork *work, GError *error, gpointer data)
{
  if (error)
    g_debug ("%s: “%s” failed: %s", accel_device_get_name (work->device), accel_op_get_type_name (work->op),
             error->message);
  g_clear_error (&error);
}

/* Queues @op with nobody waiting for it (a module's unload, submitted when
 * the module goes, on whatever thread that is): no main context needs to
 * run for it to complete. Failures are only logged. Any thread. */
void
_accel_device_submit_detached (AccelDevice *self, AccelOp *op)
{
  AccelDevicePrivate *priv = _accel_device_get_private (self);
  GError *error = NULL;
  gboolean across;
  AccelWork *work = prepare_op (self, op, NULL, &across, &error);
  if (work == NULL)
    {
      g_debug ("%s: “%s” not queued: %s", accel_device_get_name (self), accel_op_get_type_name (op),
               error ? error->message : "its buffers are on another device");
      g_clear_error (&error);
      return;
    }
  work->mode = ACCEL_WORK_MODE_CALLBACK;
  work->callback = detached_done;
  accel_dispatcher_post (priv->dispatcher, _accel_device_run_work, work);
}

void
_accel_device_restore_resources (AccelDevice *self)
{
  AccelDevicePrivate *priv = _accel_device_get_private (self);
  g_autoptr(GPtrArray) ops = _accel_context_resources_ops (&priv->resources);

  for (guint i = 0; i < ops->len; i++)
    {
      GError *error = NULL;
      gboolean across;
      AccelWork *work = prepare_op (self, ops->pdata[i], NULL, &across, &error);
      if (work == NULL)
        {
          g_warning ("%s: could not make “%s” again in the new context: %s", accel_device_get_name (self),
                     accel_op_get_type_name (ops->pdata[i]), error ? error->message : "a buffer of another device");
          g_clear_error (&error);
          continue;
        }
      work->mode = ACCEL_WORK_MODE_CALLBACK;
      work->callback = restored;
      _accel_device_run_work (work);
    }
}
