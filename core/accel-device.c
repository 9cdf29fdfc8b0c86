/* accel-device.c: the device actor.
 *
 * An AccelDevice is the stable outer actor: its address (the object, its
 * name) never changes, while the backend context inside it is the
 * restartable inner part. Work reaches the device's dispatcher thread as
 * AccelWork items; the backend runs or enqueues each one and completes it,
 * from any thread, exactly once. A completion with
 * ACCEL_ERROR_CONTEXT_POISONED makes the device judge the failure with its
 * supervision strategy, bump its generation, drop the old context (whose
 * in-flight work the backend fails) and open a new one before it serves the
 * next queued message.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-device-private.h"
#include "accel-remote-private.h"

typedef struct {
  AccelBackend *backend;
  AccelDispatcher *dispatcher;
  guint lanes;

  guint generation;          /* atomic */
  gint state;                /* AccelDeviceState, atomic */
  gint open;                 /* atomic: context is open */
  GRWLock ctx_lock;          /* readers: memory calls; writer: context swaps */

  GMutex fail_lock;
  guint restart_gen;         /* generation whose poisoning awaits a restart, +1; 0 for none */
  GError *restart_reason;
  GError *failure;           /* set once the device is FAILED */

  gint in_flight;            /* atomic */
  guint64 next_handle;       /* atomic */
  AccelDeviceStats stats;
  AccelContextResources resources;
} AccelDevicePrivate;

/**
 * AccelDevice:
 *
 * A device actor (`cpu:0`, `cuda:1`): the stable address that ops are
 * submitted to, with accel_device_submit_async() / accel_device_submit_finish()
 * (completion on the caller's thread-default main context) or the blocking
 * accel_device_submit().
 *
 * The backend context inside is the restartable part: when a kernel poisons
 * it, the op that did it fails with %ACCEL_ERROR_CONTEXT_POISONED, the
 * device's #AccelDevice:generation goes up, and the work queued behind runs
 * on a new context. Devices are made by their backend and listed by
 * accel_system_list_devices(); all methods may be called from any thread.
 */
G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (AccelDevice, accel_device, ACCEL_TYPE_ACTOR)

enum {
  PROP_0,
  PROP_BACKEND,
  PROP_BACKEND_NAME,
  PROP_GENERATION,
  PROP_DEVICE_STATE,
  PROP_LANES,
  PROP_MEMORY_TOTAL,
  PROP_MEMORY_FREE,
  PROP_STATS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

typedef enum {
  MODE_TASK,
  MODE_WAIT,
  MODE_CALLBACK,
} CompletionMode;

/* A blocking submit's rendezvous with the thread that completes its work.
 * WAITER_PENDING until then; the signaller moves it to WAITER_DONE with one
 * compare-and-swap, and touches the waiter no more, unless the waiter has
 * gone to sleep (WAITER_PARKED): then it sets WAITER_DONE under the lock
 * and signals. A spinning waiter is so never made to take a contended lock
 * (a futex sleep and wake, several microseconds, on the round trip). */
enum {
  WAITER_PENDING,
  WAITER_PARKED,
  WAITER_DONE,
};

/* The first cache line holds what the signaller writes and the spinning
 * waiter reads, and nothing else: the work beside it on the caller's stack
 * is written by other threads while the waiter spins. */
typedef struct {
  gint state;
  GError *error;
  GMutex lock __attribute__ ((aligned (64)));
  GCond cond;
} __attribute__ ((aligned (64))) Waiter;

typedef void (*WorkCallback) (AccelWork *work, GError *error, gpointer data);

struct _AccelWork {
  AccelWorkKind kind;
  CompletionMode mode;
  AccelDevice *device;
  AccelOp *op;
  const AccelKernel *kernel;
  AccelBuffer *buffer;
  gpointer host;
  gsize size;
  GBytes *bytes;
  gboolean owns_host;
  int lane;
  guint generation;
  gboolean counted;
  gint completed;
  gboolean borrowed;         /* holds no references: see work_borrow() */
  GCancellable *cancellable;
  GTask *task;
  Waiter *waiter;
  WorkCallback callback;
  gpointer callback_data;
};

static gint64
spin_us (void)
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

static void
waiter_init (Waiter *w)
{
  w->state = WAITER_PENDING;
  w->error = NULL;
  g_mutex_init (&w->lock);
  g_cond_init (&w->cond);
}

/* Spin briefly, then park. */
static void
waiter_wait (Waiter *w)
{
  gint64 budget = spin_us ();
  if (budget > 0)
    {
      gint64 deadline = g_get_monotonic_time () + budget;
      guint n = 0;
      while (__atomic_load_n (&w->state, __ATOMIC_ACQUIRE) == WAITER_PENDING)
        {
          /* The clock only now and then: the spin must notice DONE soon. */
          if ((++n & 63) == 0 && g_get_monotonic_time () >= deadline)
            break;
          _accel_cpu_relax ();
        }
    }
  if (__atomic_load_n (&w->state, __ATOMIC_ACQUIRE) != WAITER_DONE)
    {
      g_mutex_lock (&w->lock);
      gint expected = WAITER_PENDING;
      if (__atomic_compare_exchange_n (&w->state, &expected, WAITER_PARKED, FALSE, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE))
        while (__atomic_load_n (&w->state, __ATOMIC_ACQUIRE) != WAITER_DONE)
          g_cond_wait (&w->cond, &w->lock);
      g_mutex_unlock (&w->lock);
    }
  g_mutex_clear (&w->lock);
  g_cond_clear (&w->cond);
}

static void
waiter_signal (Waiter *w, GError *error)
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

typedef struct {
  AccelDispatchFunc func;
  gpointer data;
  Waiter waiter;
} SyncCall;

static void
sync_call_trampoline (gpointer data)
{
  SyncCall *call = data;
  call->func (call->data);
  waiter_signal (&call->waiter, NULL);
}

/* Runs @func on the device thread and waits for it. */
static void
run_on_device_sync (AccelDevice *self, AccelDispatchFunc func, gpointer data)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);

  if (accel_dispatcher_is_current (priv->dispatcher))
    {
      func (data);
      return;
    }
  SyncCall call = { func, data };
  waiter_init (&call.waiter);
  accel_dispatcher_post (priv->dispatcher, sync_call_trampoline, &call);
  waiter_wait (&call.waiter);
}

static GError *
failure_error (AccelDevice *self)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  GError *error;
  g_mutex_lock (&priv->fail_lock);
  if (priv->failure)
    error = g_error_copy (priv->failure);
  else
    error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED,
                         "Device “%s” has failed", accel_device_get_name (self));
  g_mutex_unlock (&priv->fail_lock);
  return error;
}

/* Context life-cycle, on the device thread. */

typedef struct {
  AccelDevice *self;
  GError *error;
} OpenCall;

static void
open_on_device (gpointer data)
{
  OpenCall *call = data;
  AccelDevice *self = call->self;
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  AccelDeviceClass *klass = ACCEL_DEVICE_GET_CLASS (self);

  if (g_atomic_int_get (&priv->open))
    return;
  if (g_atomic_int_get (&priv->state) == ACCEL_DEVICE_STATE_FAILED)
    {
      call->error = failure_error (self);
      return;
    }
  g_rw_lock_writer_lock (&priv->ctx_lock);
  gboolean ok = klass->open_context ? klass->open_context (self, &call->error) : TRUE;
  if (ok)
    g_atomic_int_set (&priv->open, 1);
  g_rw_lock_writer_unlock (&priv->ctx_lock);
  if (!ok)
    accel_device_set_state_failed (self, call->error);
}

static gboolean
ensure_open (AccelDevice *self, GError **error)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);

  if (G_LIKELY (g_atomic_int_get (&priv->open)))
    return TRUE;
  OpenCall call = { self, NULL };
  run_on_device_sync (self, open_on_device, &call);
  if (call.error)
    {
      g_propagate_error (error, call.error);
      return FALSE;
    }
  if (!g_atomic_int_get (&priv->open))
    {
      g_propagate_error (error, failure_error (self));
      return FALSE;
    }
  return TRUE;
}

static void
set_state (AccelDevice *self, AccelDeviceState state)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  if (g_atomic_int_get (&priv->state) == (gint) state)
    return;
  g_atomic_int_set (&priv->state, state);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DEVICE_STATE]);
}

/* On the device thread. */
static void
close_context (AccelDevice *self)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  AccelDeviceClass *klass = ACCEL_DEVICE_GET_CLASS (self);

  if (!g_atomic_int_get (&priv->open))
    return;
  g_rw_lock_writer_lock (&priv->ctx_lock);
  g_atomic_int_set (&priv->open, 0);
  if (klass->close_context)
    klass->close_context (self);
  g_rw_lock_writer_unlock (&priv->ctx_lock);
}

/**
 * accel_device_set_state_failed:
 * @self: a device
 * @reason: (nullable): why
 *
 * For backends and the runtime: moves the device to its final FAILED state.
 * Every later request fails with %ACCEL_ERROR_DEVICE_FAILED carrying
 * @reason's message. Emits #AccelActor::stopped.
 */
void
accel_device_set_state_failed (AccelDevice *self, const GError *reason)
{
  g_return_if_fail (ACCEL_IS_DEVICE (self));
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);

  g_mutex_lock (&priv->fail_lock);
  if (priv->failure == NULL)
    priv->failure = g_error_new (ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED,
                                 "Device “%s” has failed: %s", accel_device_get_name (self),
                                 reason ? reason->message : "unknown reason");
  g_mutex_unlock (&priv->fail_lock);
  set_state (self, ACCEL_DEVICE_STATE_FAILED);
  accel_actor_stop (ACCEL_ACTOR (self));
}

static void restore_resources (AccelDevice *self);

/* Carries out a restart asked for by a poisoned completion, before the next
 * message is served. On the device thread. */
static void
maybe_restart (AccelDevice *self)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  AccelDeviceClass *klass = ACCEL_DEVICE_GET_CLASS (self);

  g_mutex_lock (&priv->fail_lock);
  guint gen_plus_one = priv->restart_gen;
  GError *reason = g_steal_pointer (&priv->restart_reason);
  priv->restart_gen = 0;
  g_mutex_unlock (&priv->fail_lock);

  if (gen_plus_one == 0)
    return;
  if (gen_plus_one - 1 != (guint) g_atomic_int_get (&priv->generation)
      || g_atomic_int_get (&priv->state) == ACCEL_DEVICE_STATE_FAILED)
    {
      g_clear_error (&reason);
      return;
    }

  AccelActor *actor = ACCEL_ACTOR (self);
  AccelActor *supervisor = accel_actor_get_parent (actor) ? accel_actor_get_parent (actor) : actor;
  AccelDirective d = accel_actor_judge_failure (supervisor, actor, reason);

  if (d == ACCEL_DIRECTIVE_STOP || d == ACCEL_DIRECTIVE_ESCALATE)
    {
      g_autoptr(GError) why = g_error_new (ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED,
                                           "its restart budget is spent (last fault: %s)",
                                           reason->message);
      close_context (self);
      accel_device_set_state_failed (self, why);
      g_clear_error (&reason);
      return;
    }

  set_state (self, ACCEL_DEVICE_STATE_RESTARTING);
  g_rw_lock_writer_lock (&priv->ctx_lock);
  /* The generation moves first: memory of the old one that is released
   * while the context closes is then known to be gone with it. */
  g_atomic_int_inc (&priv->generation);
  g_atomic_int_set (&priv->open, 0);
  if (klass->close_context)
    klass->close_context (self);
  g_autoptr(GError) open_error = NULL;
  gboolean ok = klass->open_context ? klass->open_context (self, &open_error) : TRUE;
  if (ok)
    g_atomic_int_set (&priv->open, 1);
  g_rw_lock_writer_unlock (&priv->ctx_lock);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_GENERATION]);
  if (!ok)
    {
      accel_device_set_state_failed (self, open_error);
      g_clear_error (&reason);
      return;
    }
  set_state (self, ACCEL_DEVICE_STATE_READY);
  _accel_actor_count_restart (actor, reason);
  g_clear_error (&reason);
  restore_resources (self);
}

static void request_restart (AccelDevice *self, guint generation, const GError *reason);

/**
 * accel_device_report_context_lost: (skip)
 * @self: a device
 * @reason: why the context is gone (a host process died while idle, say)
 *
 * For backends: the context of the current generation is lost although no
 * work reported it. The device restarts as after a poisoned completion,
 * before it serves anything else. Any thread.
 */
void
accel_device_report_context_lost (AccelDevice *self, const GError *reason)
{
  g_return_if_fail (ACCEL_IS_DEVICE (self));
  g_return_if_fail (reason != NULL);
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  request_restart (self, g_atomic_int_get (&priv->generation), reason);
  if (accel_dispatcher_is_current (priv->dispatcher))
    maybe_restart (self);
}

static void restart_cb (gpointer data);

/* For the remote connection: like accel_device_report_context_lost(), but
 * only if the device still runs @generation, so that the death of a host
 * the device has already replaced (a fault reported by its work got there
 * first) cannot restart the new one. Any thread. */
void
_accel_device_report_context_lost_at (AccelDevice *self, guint generation, const GError *reason)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  gboolean post = FALSE;

  g_mutex_lock (&priv->fail_lock);
  if (generation == (guint) g_atomic_int_get (&priv->generation) && priv->restart_gen != generation + 1)
    {
      priv->restart_gen = generation + 1;
      g_clear_error (&priv->restart_reason);
      priv->restart_reason = g_error_copy (reason);
      post = TRUE;
    }
  g_mutex_unlock (&priv->fail_lock);

  /* Always through the mailbox, even from the device thread: the caller
   * may hold the context lock (a buffer's memory being released). */
  if (post)
    accel_dispatcher_post (priv->dispatcher, restart_cb, g_object_ref (self));
}

static void
restart_cb (gpointer data)
{
  AccelDevice *self = data;
  maybe_restart (self);
  g_object_unref (self);
}

static void
request_restart (AccelDevice *self, guint generation, const GError *reason)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  gboolean post = FALSE;

  g_mutex_lock (&priv->fail_lock);
  if (generation == (guint) g_atomic_int_get (&priv->generation) && priv->restart_gen != generation + 1)
    {
      priv->restart_gen = generation + 1;
      g_clear_error (&priv->restart_reason);
      priv->restart_reason = g_error_copy (reason);
      post = TRUE;
    }
  g_mutex_unlock (&priv->fail_lock);

  /* On the device thread the restart happens right after execute returns;
   * from elsewhere it is queued behind what is already waiting. */
  if (post && !accel_dispatcher_is_current (priv->dispatcher))
    accel_dispatcher_post (priv->dispatcher, restart_cb, g_object_ref (self));
}

/* Work items. */

static AccelWork *
work_new (AccelDevice *self, AccelWorkKind kind)
{
  AccelWork *work = g_new0 (AccelWork, 1);
  work->kind = kind;
  work->device = g_object_ref (self);
  work->lane = -1;
  return work;
}

/* A blocking submit's caller holds the op, its buffers and the device
 * until the work is answered, so its work (on the caller's stack) takes no
 * references of its own: see prepare_op_full(). */
static void
work_free (AccelWork *work)
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
  g_clear_object (&work->cancellable);
  g_clear_object (&work->device);
  g_free (work);
}

static gboolean
check_buffer_cb_error (AccelDevice *self, AccelBuffer *buffer, const char *what, GError **error)
{
  return _accel_device_check_buffer (self, buffer, what, error);
}

gboolean
_accel_device_check_buffer (AccelDevice *self, AccelBuffer *buffer, const char *what, GError **error)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);

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
  GError **error;
  gboolean ok;
} BufferCheck;

static void
check_op_buffer (AccelOp *op, GParamSpec *pspec, AccelBuffer *buffer, AccelAccess access, gpointer data)
{
  BufferCheck *check = data;
  AccelDevicePrivate *priv = accel_device_get_instance_private (check->self);
  if (!check->ok)
    return;
  /* The common case costs two comparisons; the message is made on failure. */
  if (G_LIKELY (accel_buffer_get_device (buffer) == check->self
                && accel_buffer_get_generation (buffer) == (guint) g_atomic_int_get (&priv->generation)))
    return;
  g_autofree char *what = pspec ? g_strdup_printf ("Property “%s” of “%s”", pspec->name, accel_op_get_type_name (op))
                                : g_strdup_printf ("A buffer argument of “%s”", accel_op_get_type_name (op));
  check->ok = check_buffer_cb_error (check->self, buffer, what, check->error);
}

/* Every buffer of @op belongs to @self, in its current generation. */
gboolean
_accel_device_check_op_buffers (AccelDevice *self, AccelOp *op, GError **error)
{
  BufferCheck check = { self, error, TRUE };
  _accel_op_foreach_buffer (op, check_op_buffer, &check);
  return check.ok;
}

static void
deliver (AccelWork *work, GError *error)
{
  switch (work->mode)
    {
    case MODE_TASK:
      {
        GTask *task = g_steal_pointer (&work->task);
        if (error)
          g_task_return_error (task, error);
        else if (work->kind == ACCEL_WORK_READ && work->owns_host)
          {
            work->owns_host = FALSE;
            g_task_return_pointer (task, g_bytes_new_take (work->host, work->size),
                                   (GDestroyNotify) g_bytes_unref);
          }
        else
          g_task_return_boolean (task, TRUE);
        work_free (work);
        g_object_unref (task);
      }
      break;
    case MODE_WAIT:
      {
        Waiter *w = work->waiter;
        work_free (work);
        waiter_signal (w, error);
      }
      break;
    case MODE_CALLBACK:
      work->callback (work, error, work->callback_data);
      work_free (work);
      break;
    }
}

typedef struct {
  AccelWork *work;
  GError *error;
} PendingDelivery;

static void
deliver_after_restart (gpointer data)
{
  PendingDelivery *pd = data;
  maybe_restart (pd->work->device);
  deliver (pd->work, pd->error);
  g_free (pd);
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
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);

  if (!g_atomic_int_compare_and_exchange (&work->completed, 0, 1))
    {
      g_critical ("Work on device “%s” completed twice", accel_device_get_name (self));
      g_clear_error (&error);
      return;
    }
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
      request_restart (self, work->generation, error);
      if (accel_dispatcher_is_current (priv->dispatcher))
        maybe_restart (self);
      else
        {
          PendingDelivery *pd = g_new (PendingDelivery, 1);
          pd->work = work;
          pd->error = error;
          accel_dispatcher_post (priv->dispatcher, deliver_after_restart, pd);
          return;
        }
    }
  deliver (work, error);
}

static gboolean
work_buffers_current (AccelDevice *self, AccelWork *work, GError **error)
{
  if (work->kind == ACCEL_WORK_OP)
    return _accel_device_check_op_buffers (self, work->op, error);
  return _accel_device_check_buffer (self, work->buffer, "The buffer", error);
}

/* Serves one work item, on the device thread. */
static void
run_work (gpointer data)
{
  AccelWork *work = data;
  AccelDevice *self = work->device;
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  GError *error = NULL;

  maybe_restart (self);

  if (g_atomic_int_get (&priv->state) == ACCEL_DEVICE_STATE_FAILED)
    error = failure_error (self);
  else if (work->cancellable && g_cancellable_is_cancelled (work->cancellable))
    error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_CANCELLED,
                         "The %s was cancelled before it ran on “%s”",
                         work->op ? accel_op_get_type_name (work->op) : "transfer",
                         accel_device_get_name (self));
  else if (!work_buffers_current (self, work, &error))
    ;
  else if (!g_atomic_int_get (&priv->open))
    {
      OpenCall call = { self, NULL };
      open_on_device (&call);
      error = call.error;
    }

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
  ACCEL_DEVICE_GET_CLASS (self)->execute (self, work);
  maybe_restart (self);
  g_object_unref (self);
}

static AccelWork *
prepare_op_full (AccelDevice *self, AccelOp *op, AccelWork *storage, GError **error);

static AccelWork *
prepare_op (AccelDevice *self, AccelOp *op, GError **error)
{
  return prepare_op_full (self, op, NULL, error);
}

/* With @storage (a blocking submit's, on its caller's stack), the work is
 * made there and borrows the caller's references: no allocation, and no
 * free on the completion thread (which, with glibc, ends up taking the
 * arena lock the caller's next allocation wants). */
static AccelWork *
prepare_op_full (AccelDevice *self, AccelOp *op, AccelWork *storage, GError **error)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);

  if (G_UNLIKELY (g_atomic_int_get (&priv->state) == ACCEL_DEVICE_STATE_FAILED))
    {
      g_propagate_error (error, failure_error (self));
      return NULL;
    }
  if (!accel_op_validate (op, error))
    return NULL;
  if (!_accel_device_check_op_buffers (self, op, error))
    return NULL;

  const AccelKernel *kernel = accel_registry_find_kernel (_accel_backend_get_registry (priv->backend), op, self,
                                                          error);
  if (kernel == NULL)
    return NULL;

  AccelWork *work;
  if (storage != NULL)
    {
      work = storage;
      memset (work, 0, sizeof *work);
      work->kind = ACCEL_WORK_OP;
      work->device = self;
      work->op = op;
      work->borrowed = TRUE;
    }
  else
    {
      work = work_new (self, ACCEL_WORK_OP);
      work->op = g_object_ref (op);
    }
  work->kernel = kernel;
  work->lane = accel_op_get_lane (op);
  return work;
}

/* Context resources. */

void
_accel_device_add_context_resource (AccelDevice *self, GObject *resource, AccelContextOpsFunc make_ops)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  _accel_context_resources_add (&priv->resources, resource, make_ops);
}

void
_accel_device_remove_context_resource (AccelDevice *self, GObject *resource)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  _accel_context_resources_remove (&priv->resources, resource);
}

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
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  GError *error = NULL;
  AccelWork *work = prepare_op (self, op, &error);
  if (work == NULL)
    {
      g_debug ("%s: “%s” not queued: %s", accel_device_get_name (self), accel_op_get_type_name (op),
               error->message);
      g_error_free (error);
      return;
    }
  work->mode = MODE_CALLBACK;
  work->callback = detached_done;
  accel_dispatcher_post (priv->dispatcher, run_work, work);
}

/* On the device thread, once a rebuilt context is ready: what lived in the
 * old one is made again before anything queued is served. */
static void
restore_resources (AccelDevice *self)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  g_autoptr(GPtrArray) ops = _accel_context_resources_ops (&priv->resources);

  for (guint i = 0; i < ops->len; i++)
    {
      GError *error = NULL;
      AccelWork *work = prepare_op (self, ops->pdata[i], &error);
      if (work == NULL)
        {
          g_warning ("%s: could not make “%s” again in the new context: %s", accel_device_get_name (self),
                     accel_op_get_type_name (ops->pdata[i]), error->message);
          g_clear_error (&error);
          continue;
        }
      work->mode = MODE_CALLBACK;
      work->callback = restored;
      run_work (work);
    }
}

/* Copies between two devices: a read on the source device, then a write on
 * the destination, each ordered on its own device. */

typedef struct {
  AccelDevice *dst_device;
  AccelBuffer *dst;
  guint8 *staging;
  gsize size;
  GTask *task;
} CrossCopy;

static void
cross_copy_free (CrossCopy *cc)
{
  g_clear_object (&cc->dst_device);
  g_clear_object (&cc->dst);
  g_free (cc->staging);
  g_free (cc);
}

static void
cross_copy_written (AccelWork *work, GError *error, gpointer data)
{
  CrossCopy *cc = data;
  if (error)
    g_task_return_error (cc->task, error);
  else
    g_task_return_boolean (cc->task, TRUE);
  g_object_unref (cc->task);
  cross_copy_free (cc);
}

static void
cross_copy_read (AccelWork *work, GError *error, gpointer data)
{
  CrossCopy *cc = data;
  if (error)
    {
      g_task_return_error (cc->task, error);
      g_object_unref (cc->task);
      cross_copy_free (cc);
      return;
    }
  AccelDevicePrivate *dpriv = accel_device_get_instance_private (cc->dst_device);
  AccelWork *w = work_new (cc->dst_device, ACCEL_WORK_WRITE);
  w->mode = MODE_CALLBACK;
  w->buffer = g_object_ref (cc->dst);
  w->host = cc->staging;
  w->size = cc->size;
  w->callback = cross_copy_written;
  w->callback_data = cc;
  accel_dispatcher_post (dpriv->dispatcher, run_work, w);
}

static gboolean
is_cross_device_copy (AccelDevice *self, AccelOp *op)
{
  if (!ACCEL_IS_COPY (op))
    return FALSE;
  AccelCopy *copy = ACCEL_COPY (op);
  return copy->src && copy->dst && accel_buffer_get_device (copy->src) != accel_buffer_get_device (copy->dst);
}

static void
submit_cross_copy (AccelDevice *self, AccelOp *op, GTask *task)
{
  AccelCopy *copy = ACCEL_COPY (op);
  GError *error = NULL;

  if (!accel_op_validate (op, &error)
      || !accel_op_check_contiguous (op, "src", &error)
      || !accel_op_check_contiguous (op, "dst", &error)
      || !_accel_device_check_buffer (accel_buffer_get_device (copy->src), copy->src, "Property “src” of “copy”", &error)
      || !_accel_device_check_buffer (accel_buffer_get_device (copy->dst), copy->dst, "Property “dst” of “copy”", &error))
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  if (accel_buffer_get_device (copy->dst) != self && accel_buffer_get_device (copy->src) != self)
    {
      g_task_return_new_error (task, ACCEL_ERROR, ACCEL_ERROR_WRONG_DEVICE,
                               "A copy submitted to “%s” must have its source or destination there",
                               accel_device_get_name (self));
      g_object_unref (task);
      return;
    }

  AccelDevice *src_device = accel_buffer_get_device (copy->src);
  AccelDevicePrivate *spriv = accel_device_get_instance_private (src_device);
  CrossCopy *cc = g_new0 (CrossCopy, 1);
  cc->dst_device = g_object_ref (accel_buffer_get_device (copy->dst));
  cc->dst = g_object_ref (copy->dst);
  cc->size = accel_buffer_get_size (copy->src);
  cc->staging = g_malloc (cc->size ? cc->size : 1);
  cc->task = task;

  AccelWork *w = work_new (src_device, ACCEL_WORK_READ);
  w->mode = MODE_CALLBACK;
  w->buffer = g_object_ref (copy->src);
  w->host = cc->staging;
  w->size = cc->size;
  w->callback = cross_copy_read;
  w->callback_data = cc;
  accel_dispatcher_post (spriv->dispatcher, run_work, w);
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
 * queued. An op that already runs when @cancellable fires completes, and
 * its result is dropped.
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
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);

  GTask *task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, accel_device_submit_async);
  g_task_set_check_cancellable (task, FALSE);

  if (G_UNLIKELY (is_cross_device_copy (self, op)))
    {
      submit_cross_copy (self, op, task);
      return;
    }

  GError *error = NULL;
  AccelWork *work = prepare_op (self, op, &error);
  if (work == NULL)
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  work->mode = MODE_TASK;
  work->task = task;
  work->cancellable = cancellable ? g_object_ref (cancellable) : NULL;
  accel_dispatcher_post (priv->dispatcher, run_work, work);
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
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  g_return_val_if_fail (!accel_dispatcher_is_current (priv->dispatcher), FALSE);

  if (G_UNLIKELY (is_cross_device_copy (self, op)))
    {
      /* Rare: run it through the async path on a private main context. */
      g_autoptr(GMainContext) ctx = g_main_context_new ();
      g_main_context_push_thread_default (ctx);
      GTask *task = g_task_new (self, cancellable, sync_task_done, NULL);
      g_task_set_check_cancellable (task, FALSE);
      g_object_ref (task);
      submit_cross_copy (self, op, task);
      while (!g_task_get_completed (task))
        g_main_context_iteration (ctx, TRUE);
      gboolean ok = g_task_propagate_boolean (task, error);
      g_object_unref (task);
      g_main_context_pop_thread_default (ctx);
      return ok;
    }

  AccelWork storage;
  AccelWork *work = prepare_op_full (self, op, &storage, error);
  if (work == NULL)
    return FALSE;

  Waiter w;
  waiter_init (&w);
  work->mode = MODE_WAIT;
  work->waiter = &w;
  work->cancellable = cancellable ? g_object_ref (cancellable) : NULL;
  accel_dispatcher_post (priv->dispatcher, run_work, work);
  waiter_wait (&w);
  if (w.error)
    {
      g_propagate_error (error, w.error);
      return FALSE;
    }
  return TRUE;
}

gboolean
_accel_device_transfer_sync (AccelDevice *self,
                             AccelWorkKind kind,
                             AccelBuffer *buffer,
                             gpointer host,
                             gsize size,
                             GError **error)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);

  if (G_UNLIKELY (g_atomic_int_get (&priv->state) == ACCEL_DEVICE_STATE_FAILED))
    {
      g_propagate_error (error, failure_error (self));
      return FALSE;
    }
  if (!_accel_device_check_buffer (self, buffer, "The buffer", error))
    return FALSE;
  g_return_val_if_fail (!accel_dispatcher_is_current (priv->dispatcher), FALSE);

  AccelWork *work = work_new (self, kind);
  Waiter w;
  waiter_init (&w);
  work->mode = MODE_WAIT;
  work->waiter = &w;
  work->buffer = g_object_ref (buffer);
  work->host = host;
  work->size = size;
  accel_dispatcher_post (priv->dispatcher, run_work, work);
  waiter_wait (&w);
  if (w.error)
    {
      g_propagate_error (error, w.error);
      return FALSE;
    }
  return TRUE;
}

void
_accel_device_transfer_async (AccelDevice *self,
                              AccelWorkKind kind,
                              AccelBuffer *buffer,
                              GBytes *bytes,
                              GTask *task)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  GError *error = NULL;

  if (!_accel_device_check_buffer (self, buffer, "The buffer", &error))
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  AccelWork *work = work_new (self, kind);
  work->mode = MODE_TASK;
  work->task = task;
  work->buffer = g_object_ref (buffer);
  work->size = accel_buffer_get_size (buffer);
  GCancellable *cancellable = g_task_get_cancellable (task);
  work->cancellable = cancellable ? g_object_ref (cancellable) : NULL;
  if (kind == ACCEL_WORK_WRITE)
    {
      work->bytes = g_bytes_ref (bytes);
      work->host = (gpointer) g_bytes_get_data (bytes, NULL);
    }
  else
    {
      work->host = g_malloc (work->size ? work->size : 1);
      work->owns_host = TRUE;
    }
  accel_dispatcher_post (priv->dispatcher, run_work, work);
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
 * Waits until everything submitted before the call has completed.
 *
 * Returns: %FALSE with %ACCEL_ERROR_DEVICE_FAILED if the device has failed
 */
gboolean
accel_device_synchronize (AccelDevice *self, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (self), FALSE);
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);

  run_on_device_sync (self, noop_on_device, NULL);
  while (g_atomic_int_get (&priv->in_flight) > 0)
    g_usleep (20);
  if (g_atomic_int_get (&priv->state) == ACCEL_DEVICE_STATE_FAILED)
    {
      g_propagate_error (error, failure_error (self));
      return FALSE;
    }
  return TRUE;
}

/**
 * accel_device_alloc:
 * @self: a device
 * @dtype: the element type
 * @shape: the shape (strides in elements; the buffer spans its extent)
 * @error: return location for a #GError
 *
 * Allocates device memory in the current generation. Its contents are
 * undefined until written.
 *
 * Returns: (transfer full): the buffer, or %NULL with
 *   %ACCEL_ERROR_OUT_OF_MEMORY, %ACCEL_ERROR_INVALID_ARGUMENT or
 *   %ACCEL_ERROR_DEVICE_FAILED
 */
AccelBuffer *
accel_device_alloc (AccelDevice *self,
                    AccelDType dtype,
                    const AccelShape *shape,
                    GError **error)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (self), NULL);
  g_return_val_if_fail (shape != NULL, NULL);
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  AccelDeviceClass *klass = ACCEL_DEVICE_GET_CLASS (self);

  gsize esize = accel_dtype_get_size (dtype);
  if (esize == 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "Invalid dtype %d", (int) dtype);
      return NULL;
    }
  gint64 extent = accel_shape_get_extent (shape);
  guint rank = accel_shape_get_rank (shape);
  for (guint i = 0; i < rank; i++)
    if (accel_shape_get_stride (shape, i) < 0)
      {
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "Buffers cannot have negative strides");
        return NULL;
      }
  if (extent < 0 || (guint64) extent > G_MAXSIZE / esize)
    {
      g_autofree char *s = accel_shape_to_string (shape);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY,
                   "A buffer of %s %s is too large to address", accel_dtype_get_name (dtype), s);
      return NULL;
    }
  gsize size = (gsize) extent * esize;

  if (G_UNLIKELY (g_atomic_int_get (&priv->state) == ACCEL_DEVICE_STATE_FAILED))
    {
      g_propagate_error (error, failure_error (self));
      return NULL;
    }
  if (!ensure_open (self, error))
    return NULL;

  g_rw_lock_reader_lock (&priv->ctx_lock);
  guint gen = g_atomic_int_get (&priv->generation);
  gpointer memory = NULL;
  GError *local = NULL;
  if (!g_atomic_int_get (&priv->open))
    local = failure_error (self);
  else
    memory = klass->mem_alloc (self, size ? size : 1, &local);
  g_rw_lock_reader_unlock (&priv->ctx_lock);
  if (memory == NULL)
    {
      if (local == NULL)
        local = g_error_new (ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY,
                             "Device “%s” could not allocate %" G_GSIZE_FORMAT " bytes",
                             accel_device_get_name (self), size);
      g_propagate_error (error, local);
      return NULL;
    }
  return _accel_buffer_new (self, dtype, shape, memory, size, gen, _accel_device_next_handle (self));
}

void
_accel_device_release_memory (AccelDevice *self, gpointer memory, gsize size, guint generation)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  AccelDeviceClass *klass = ACCEL_DEVICE_GET_CLASS (self);

  /* Memory of an older generation, or of a closed context, went with its
   * context. Checked before locking: a context swap or shutdown in progress
   * on this thread holds the lock. */
  if (generation != (guint) g_atomic_int_get (&priv->generation) || !g_atomic_int_get (&priv->open))
    return;
  g_rw_lock_reader_lock (&priv->ctx_lock);
  if (generation == (guint) g_atomic_int_get (&priv->generation) && g_atomic_int_get (&priv->open))
    klass->mem_free (self, memory, size ? size : 1);
  g_rw_lock_reader_unlock (&priv->ctx_lock);
}

/* Under the context lock, as release_memory: memory of an older
 * generation, or of a closed context, is gone and cannot be detached. */
gboolean
_accel_device_detach_memory (AccelDevice *self, gpointer memory, gsize size, guint generation)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  AccelDeviceClass *klass = ACCEL_DEVICE_GET_CLASS (self);
  gboolean ok = FALSE;

  g_rw_lock_reader_lock (&priv->ctx_lock);
  if (generation == (guint) g_atomic_int_get (&priv->generation) && g_atomic_int_get (&priv->open))
    ok = klass->detach_memory (self, memory, size ? size : 1);
  g_rw_lock_reader_unlock (&priv->ctx_lock);
  return ok;
}

guint64
_accel_device_next_handle (AccelDevice *self)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  return __atomic_add_fetch (&priv->next_handle, 1, __ATOMIC_RELAXED);
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
 * Returns: (transfer none) (nullable): the kernel chosen for the op
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

/* GObject */

static void
accel_device_constructed (GObject *object)
{
  AccelDevice *self = ACCEL_DEVICE (object);
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  g_autofree char *name = NULL;

  g_object_get (object, "name", &name, NULL);
  g_autofree char *thread_name = g_strdup_printf ("accel-%s", name ? name : "device");
  priv->dispatcher = accel_dispatcher_new (thread_name);
  _accel_actor_set_dispatcher (ACCEL_ACTOR (self), priv->dispatcher);

  G_OBJECT_CLASS (accel_device_parent_class)->constructed (object);
}

static void
close_on_device (gpointer data)
{
  close_context (data);
}

/* Ends the device: its context is closed, queued work fails, the thread ends. */
void
_accel_device_shutdown (AccelDevice *self)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);

  if (priv->dispatcher == NULL)
    return;
  if (g_atomic_int_get (&priv->state) != ACCEL_DEVICE_STATE_FAILED)
    {
      g_autoptr(GError) why = g_error_new_literal (ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED,
                                                   "the system was shut down");
      accel_device_set_state_failed (self, why);
    }
  run_on_device_sync (self, close_on_device, self);
  accel_dispatcher_stop (priv->dispatcher);
}

static void
accel_device_dispose (GObject *object)
{
  AccelDevice *self = ACCEL_DEVICE (object);
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);

  if (priv->dispatcher)
    {
      _accel_device_shutdown (self);
      g_clear_object (&priv->dispatcher);
    }
  G_OBJECT_CLASS (accel_device_parent_class)->dispose (object);
}

static void
accel_device_finalize (GObject *object)
{
  AccelDevice *self = ACCEL_DEVICE (object);
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);

  g_clear_object (&priv->backend);
  g_clear_error (&priv->failure);
  g_clear_error (&priv->restart_reason);
  g_rw_lock_clear (&priv->ctx_lock);
  g_mutex_clear (&priv->fail_lock);
  _accel_context_resources_clear (&priv->resources);
  G_OBJECT_CLASS (accel_device_parent_class)->finalize (object);
}

static void
accel_device_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (ACCEL_DEVICE (object));
  switch (prop_id)
    {
    case PROP_BACKEND:
      g_set_object (&priv->backend, g_value_get_object (value));
      break;
    case PROP_LANES:
      priv->lanes = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_device_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelDevice *self = ACCEL_DEVICE (object);
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  switch (prop_id)
    {
    case PROP_BACKEND: g_value_set_object (value, priv->backend); break;
    case PROP_BACKEND_NAME: g_value_set_string (value, accel_device_get_backend_name (self)); break;
    case PROP_GENERATION: g_value_set_uint (value, accel_device_get_generation (self)); break;
    case PROP_DEVICE_STATE: g_value_set_enum (value, accel_device_get_state (self)); break;
    case PROP_LANES: g_value_set_uint (value, priv->lanes); break;
    case PROP_MEMORY_TOTAL: g_value_set_uint64 (value, accel_device_get_memory_total (self)); break;
    case PROP_MEMORY_FREE: g_value_set_uint64 (value, accel_device_get_memory_free (self)); break;
    case PROP_STATS: g_value_take_variant (value, accel_device_get_stats (self)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_device_class_init (AccelDeviceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = accel_device_constructed;
  object_class->dispose = accel_device_dispose;
  object_class->finalize = accel_device_finalize;
  object_class->set_property = accel_device_set_property;
  object_class->get_property = accel_device_get_property;

  /**
   * AccelDevice:backend:
   *
   * The backend that made the device.
   */
  properties[PROP_BACKEND] =
    g_param_spec_object ("backend", NULL, "Backend", ACCEL_TYPE_BACKEND,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AccelDevice:backend-name:
   *
   * The backend's name (`cpu`, `cuda`).
   */
  properties[PROP_BACKEND_NAME] =
    g_param_spec_string ("backend-name", NULL, "Backend name", NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AccelDevice:generation:
   *
   * Goes up each time the context is rebuilt; `notify::generation` is the
   * watch (emitted on the device thread).
   */
  properties[PROP_GENERATION] =
    g_param_spec_uint ("generation", NULL, "Context generation", 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AccelDevice:device-state:
   *
   * READY, RESTARTING or FAILED.
   */
  properties[PROP_DEVICE_STATE] =
    g_param_spec_enum ("device-state", NULL, "Device state", ACCEL_TYPE_DEVICE_STATE,
                       ACCEL_DEVICE_STATE_READY,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AccelDevice:lanes:
   *
   * How many lanes (streams) the device runs work on.
   */
  properties[PROP_LANES] =
    g_param_spec_uint ("lanes", NULL, "Number of lanes", 1, 64, 1,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AccelDevice:memory-total:
   *
   * Device memory in bytes.
   */
  properties[PROP_MEMORY_TOTAL] =
    g_param_spec_uint64 ("memory-total", NULL, "Total memory in bytes", 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AccelDevice:memory-free:
   *
   * Free device memory in bytes, read when asked.
   */
  properties[PROP_MEMORY_FREE] =
    g_param_spec_uint64 ("memory-free", NULL, "Free memory in bytes", 0, G_MAXUINT64, 0,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * AccelDevice:stats:
   *
   * What the device has done since it was made (accel_device_get_stats()).
   */
  properties[PROP_STATS] =
    g_param_spec_variant ("stats", NULL, "Ops, transfers, errors, bytes moved and busy time",
                          G_VARIANT_TYPE_VARDICT, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
accel_device_init (AccelDevice *self)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  g_rw_lock_init (&priv->ctx_lock);
  g_mutex_init (&priv->fail_lock);
  _accel_context_resources_init (&priv->resources);
  priv->lanes = 1;
  priv->state = ACCEL_DEVICE_STATE_READY;
}

/**
 * accel_device_get_name:
 * @self: a device
 *
 * Gets its name, such as `cpu:0` or `cuda:1`.
 *
 * Returns: its name, such as `cpu:0` or `cuda:1`
 */
const char *
accel_device_get_name (AccelDevice *self)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (self), NULL);
  return accel_actor_get_name (ACCEL_ACTOR (self));
}

/**
 * accel_device_get_backend:
 * @self: a device
 *
 * Gets its backend.
 *
 * Returns: (transfer none): its backend
 */
AccelBackend *
accel_device_get_backend (AccelDevice *self)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (self), NULL);
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  return priv->backend;
}

/**
 * accel_device_get_backend_name:
 * @self: a device
 *
 * Gets the backend's name.
 *
 * Returns: the backend's name
 */
const char *
accel_device_get_backend_name (AccelDevice *self)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (self), NULL);
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  return priv->backend ? accel_backend_get_name (priv->backend) : NULL;
}

/**
 * accel_device_get_system:
 * @self: a device
 *
 * Gets the system it belongs to.
 *
 * Returns: (transfer none) (nullable): the system it belongs to
 */
AccelSystem *
accel_device_get_system (AccelDevice *self)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (self), NULL);
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  return priv->backend ? accel_backend_get_system (priv->backend) : NULL;
}

/**
 * accel_device_get_generation:
 * @self: a device
 *
 * Gets the current context generation.
 *
 * Returns: the current context generation
 */
guint
accel_device_get_generation (AccelDevice *self)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (self), 0);
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  return g_atomic_int_get (&priv->generation);
}

/**
 * accel_device_get_state:
 * @self: a device
 *
 * Gets its state.
 *
 * Returns: its state
 */
AccelDeviceState
accel_device_get_state (AccelDevice *self)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (self), ACCEL_DEVICE_STATE_FAILED);
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  return g_atomic_int_get (&priv->state);
}

/**
 * accel_device_get_failure:
 * @self: a device
 *
 * Gets why the device failed, or %NULL.
 *
 * Returns: (transfer none) (nullable): why the device failed, or %NULL
 */
const GError *
accel_device_get_failure (AccelDevice *self)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (self), NULL);
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  return priv->failure;
}

/**
 * accel_device_get_lanes:
 * @self: a device
 *
 * Gets the number of lanes.
 *
 * Returns: the number of lanes
 */
guint
accel_device_get_lanes (AccelDevice *self)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (self), 0);
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  return priv->lanes;
}

static void
query_memory (AccelDevice *self, guint64 *total, guint64 *free_bytes)
{
  AccelDeviceClass *klass = ACCEL_DEVICE_GET_CLASS (self);
  *total = *free_bytes = 0;
  if (klass->query_memory)
    klass->query_memory (self, total, free_bytes);
}

/**
 * accel_device_get_memory_total:
 * @self: a device
 *
 * Gets device memory in bytes (0 if unknown).
 *
 * Returns: device memory in bytes (0 if unknown)
 */
guint64
accel_device_get_memory_total (AccelDevice *self)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (self), 0);
  guint64 total, free_bytes;
  query_memory (self, &total, &free_bytes);
  return total;
}

/**
 * accel_device_get_memory_free:
 * @self: a device
 *
 * Gets free device memory in bytes (0 if unknown).
 *
 * Returns: free device memory in bytes (0 if unknown)
 */
guint64
accel_device_get_memory_free (AccelDevice *self)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (self), 0);
  guint64 total, free_bytes;
  query_memory (self, &total, &free_bytes);
  return free_bytes;
}

/**
 * accel_device_get_stats:
 * @self: a device
 *
 * What the device has done since it was made, as an `a{sv}` of `uint64`s:
 * `ops-completed` and `transfers-completed` (work its backend ran, with
 * or without an error), `errors` (work that completed with an error, also
 * work refused on the device's thread: a stale buffer, a cancellation;
 * ops refused by validation when submitted are not counted),
 * `bytes-written` and `bytes-read` (uploaded to and downloaded from the
 * device), `bytes-moved` (their sum), and `busy-us`: the microseconds
 * during which the device had work in flight. Counted in this process:
 * for a device served by a host process, what this process handed it.
 *
 * Returns: (transfer full): the figures, a floating reference
 */
GVariant *
accel_device_get_stats (AccelDevice *self)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (self), NULL);
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  return _accel_device_stats_to_variant (&priv->stats, g_atomic_int_get (&priv->in_flight) > 0);
}
