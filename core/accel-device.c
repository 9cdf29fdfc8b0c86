/* accel-device.c: the device actor: its stable address, its backend
 * context and the restarts that replace it.
 *
 * An AccelDevice is the stable outer actor: its address (the object, its
 * name) never changes, while the backend context inside it is the
 * restartable inner part. A completion with ACCEL_ERROR_CONTEXT_POISONED
 * makes the device judge the failure with its supervision strategy, bump
 * its generation, drop the old context (whose in-flight work the backend
 * fails) and open a new one before it serves the next queued message.
 * Work and its completion are in accel-device-submit.c, the work items in
 * accel-work.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-device-private.h"
#include "accel-journal-private.h"
#include "accel-remote-private.h"

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

AccelDevicePrivate *
_accel_device_get_private (AccelDevice *self)
{
  return accel_device_get_instance_private (self);
}

static const AccelPropertyField device_fields[] = {
  /**
   * AccelDevice:backend:
   *
   * The backend that made the device.
   */
  ACCEL_FIELD_OBJECT (AccelDevicePrivate, backend, "backend", "Backend", accel_backend_get_type, ACCEL_FIELD_CONSTRUCT),
  /**
   * AccelDevice:backend-name:
   *
   * The backend's name (`cpu`, `cuda`).
   */
  ACCEL_ACCESSOR_STRING (AccelDevice, accel_device_get_backend_name, "backend-name", "Backend name", NULL,
                         ACCEL_FIELD_READABLE),
  /**
   * AccelDevice:generation:
   *
   * Goes up each time the context is rebuilt; `notify::generation` is the
   * watch (emitted on the device thread).
   */
  ACCEL_ACCESSOR_UINT (AccelDevice, accel_device_get_generation, NULL, "generation", "Context generation",
                       0, G_MAXUINT, 0, ACCEL_FIELD_READABLE | G_PARAM_EXPLICIT_NOTIFY),
  /**
   * AccelDevice:device-state:
   *
   * READY, RESTARTING or FAILED.
   */
  ACCEL_ACCESSOR_ENUM (AccelDevice, accel_device_get_state, "device-state", "Device state",
                       accel_device_state_get_type, ACCEL_DEVICE_STATE_READY,
                       ACCEL_FIELD_READABLE | G_PARAM_EXPLICIT_NOTIFY),
  /**
   * AccelDevice:lanes:
   *
   * How many lanes (streams) the device runs work on.
   */
  ACCEL_FIELD_UINT (AccelDevicePrivate, lanes, "lanes", "Number of lanes", 1, 64, 1, ACCEL_FIELD_CONSTRUCT),
  /**
   * AccelDevice:memory-total:
   *
   * Device memory in bytes.
   */
  ACCEL_ACCESSOR_UINT64 (AccelDevice, accel_device_get_memory_total, NULL, "memory-total", "Total memory in bytes",
                         0, G_MAXUINT64, 0, ACCEL_FIELD_READABLE),
  /**
   * AccelDevice:memory-free:
   *
   * Free device memory in bytes, read when asked.
   */
  ACCEL_ACCESSOR_UINT64 (AccelDevice, accel_device_get_memory_free, NULL, "memory-free", "Free memory in bytes",
                         0, G_MAXUINT64, 0, ACCEL_FIELD_READABLE),
  /**
   * AccelDevice:stats:
   *
   * What the device has done since it was made (accel_device_get_stats()).
   */
  ACCEL_ACCESSOR_VARIANT (AccelDevice, accel_device_get_stats, "stats",
                          "Ops, transfers, errors, bytes moved and busy time", "a{sv}", ACCEL_FIELD_READABLE),
};

/* The journal, hand-written, comes after the table's properties. */
#define PROP_JOURNAL (G_N_ELEMENTS (device_fields) + 1)

/* The pspecs notified by hand. */
enum {
  PROP_GENERATION,
  PROP_DEVICE_STATE,
  N_NOTIFIED
};

static GParamSpec *properties[N_NOTIFIED];

/* Runs @func on the device thread and waits for it. */
void
_accel_device_run_on_thread_sync (AccelDevice *self, AccelDispatchFunc func, gpointer data)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);

  if (accel_dispatcher_is_current (priv->dispatcher))
    {
      func (data);
      return;
    }
  AccelSyncCall call;
  _accel_sync_call_init (&call, func, data);
  accel_dispatcher_post (priv->dispatcher, _accel_sync_call_run, &call);
  _accel_waiter_wait (&call.waiter);
}

GError *
_accel_device_failure_error (AccelDevice *self)
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

/* Opens the context if it is not open. On the device thread. */
void
_accel_device_open_on_device (AccelDevice *self, GError **error)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  AccelDeviceClass *klass = ACCEL_DEVICE_GET_CLASS (self);
  GError *local = NULL;

  if (g_atomic_int_get (&priv->open))
    return;
  if (g_atomic_int_get (&priv->state) == ACCEL_DEVICE_STATE_FAILED)
    {
      g_propagate_error (error, _accel_device_failure_error (self));
      return;
    }
  g_rw_lock_writer_lock (&priv->ctx_lock);
  gboolean ok = klass->open_context ? klass->open_context (self, &local) : TRUE;
  if (ok)
    g_atomic_int_set (&priv->open, 1);
  g_rw_lock_writer_unlock (&priv->ctx_lock);
  if (!ok)
    {
      accel_device_set_state_failed (self, local);
      g_propagate_error (error, local);
    }
}

typedef struct {
  AccelDevice *self;
  GError *error;
} OpenCall;

static void
open_cb (gpointer data)
{
  OpenCall *call = data;
  _accel_device_open_on_device (call->self, &call->error);
}

gboolean
_accel_device_ensure_open (AccelDevice *self, GError **error)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);

  if (G_LIKELY (g_atomic_int_get (&priv->open)))
    return TRUE;
  OpenCall call = { self, NULL };
  _accel_device_run_on_thread_sync (self, open_cb, &call);
  if (call.error)
    {
      g_propagate_error (error, call.error);
      return FALSE;
    }
  if (!g_atomic_int_get (&priv->open))
    {
      g_propagate_error (error, _accel_device_failure_error (self));
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

/* Carries out a restart asked for by a poisoned completion, before the next
 * message is served. On the device thread. */
void
_accel_device_maybe_restart (AccelDevice *self)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  AccelDeviceClass *klass = ACCEL_DEVICE_GET_CLASS (self);

  /* Served before every work item: no lock unless a restart was asked for
   * (note_restart() sets the word under the lock, on this thread too when
   * it restarts at once). */
  if (G_LIKELY (g_atomic_int_get (&priv->restart_gen) == 0))
    return;
  g_mutex_lock (&priv->fail_lock);
  guint gen_plus_one = priv->restart_gen;
  GError *reason = g_steal_pointer (&priv->restart_reason);
  g_atomic_int_set (&priv->restart_gen, 0);
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
  _accel_device_restore_resources (self);
}

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
  _accel_device_request_restart (self, g_atomic_int_get (&priv->generation), reason);
  if (accel_dispatcher_is_current (priv->dispatcher))
    _accel_device_maybe_restart (self);
}

static void
restart_cb (gpointer data)
{
  AccelDevice *self = data;
  _accel_device_maybe_restart (self);
  g_object_unref (self);
}

/* Records that @generation's context is lost, once; TRUE if this call did. */
static gboolean
note_restart (AccelDevice *self, guint generation, const GError *reason)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  gboolean noted = FALSE;

  g_mutex_lock (&priv->fail_lock);
  if (generation == (guint) g_atomic_int_get (&priv->generation) && priv->restart_gen != generation + 1)
    {
      g_atomic_int_set (&priv->restart_gen, generation + 1);
      g_clear_error (&priv->restart_reason);
      priv->restart_reason = g_error_copy (reason);
      noted = TRUE;
    }
  g_mutex_unlock (&priv->fail_lock);
  return noted;
}

/* For the remote connection: like accel_device_report_context_lost(), but
 * only if the device still runs @generation, so that the death of a host
 * the device has already replaced (a fault reported by its work got there
 * first) cannot restart the new one. Any thread. Always through the
 * mailbox, even from the device thread: the caller may hold the context
 * lock (a buffer's memory being released). */
void
_accel_device_report_context_lost_at (AccelDevice *self, guint generation, const GError *reason)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);

  if (note_restart (self, generation, reason))
    accel_dispatcher_post (priv->dispatcher, restart_cb, g_object_ref (self));
}

/* On the device thread the restart happens right after execute returns;
 * from elsewhere it is queued behind what is already waiting. */
void
_accel_device_request_restart (AccelDevice *self, guint generation, const GError *reason)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);

  if (note_restart (self, generation, reason) && !accel_dispatcher_is_current (priv->dispatcher))
    accel_dispatcher_post (priv->dispatcher, restart_cb, g_object_ref (self));
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

  if (!_accel_device_check_usable (self, error) || !_accel_device_ensure_open (self, error))
    return NULL;

  g_rw_lock_reader_lock (&priv->ctx_lock);
  guint gen = g_atomic_int_get (&priv->generation);
  gpointer memory = NULL;
  GError *local = NULL;
  if (!g_atomic_int_get (&priv->open))
    local = _accel_device_failure_error (self);
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

/* Context resources (modules): made again in each new context. */

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

guint64
_accel_device_next_handle (AccelDevice *self)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  return __atomic_add_fetch (&priv->next_handle, 1, __ATOMIC_RELAXED);
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
  if (priv->journal == NULL)
    priv->journal = _accel_journal_ref_from_environment ();

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
  _accel_device_run_on_thread_sync (self, close_on_device, self);
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

  accel_object_finalize_fields (object, ACCEL_TYPE_DEVICE);
  g_clear_object (&priv->journal);
  g_clear_error (&priv->failure);
  g_clear_error (&priv->restart_reason);
  g_rw_lock_clear (&priv->ctx_lock);
  g_mutex_clear (&priv->fail_lock);
  _accel_context_resources_clear (&priv->resources);
  G_OBJECT_CLASS (accel_device_parent_class)->finalize (object);
}

/* The journal is read atomically, and the one it replaces let go on the
 * device thread. */
static void
accel_device_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (ACCEL_DEVICE (object));

  if (prop_id != PROP_JOURNAL)
    {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }
  AccelJournal *old = g_atomic_pointer_exchange (&priv->journal, g_value_dup_object (value));
  /* Work running now may still record into it: let it go on the device thread. */
  if (old)
    accel_dispatcher_post (priv->dispatcher, g_object_unref, old);
}

static void
accel_device_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelDevicePrivate *priv = accel_device_get_instance_private (ACCEL_DEVICE (object));

  if (prop_id == PROP_JOURNAL)
    g_value_set_object (value, g_atomic_pointer_get (&priv->journal));
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
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

  accel_object_class_install_private_fields (object_class, device_fields, G_N_ELEMENTS (device_fields));
  properties[PROP_GENERATION] = g_object_class_find_property (object_class, "generation");
  properties[PROP_DEVICE_STATE] = g_object_class_find_property (object_class, "device-state");
  /**
   * AccelDevice:journal:
   *
   * Where the device records the work it runs, for accel-replay; %NULL
   * records nothing. Devices made while `ACCEL_JOURNAL` names a file all
   * record into that journal. Settable at any time, from any thread.
   */
  g_object_class_install_property (object_class, PROP_JOURNAL,
                                   g_param_spec_object ("journal", NULL, "Journal of the work run", ACCEL_TYPE_JOURNAL,
                                                        G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
}

static void
accel_device_init (AccelDevice *self)
{
  static guint64 serials;
  AccelDevicePrivate *priv = accel_device_get_instance_private (self);
  priv->serial = __atomic_add_fetch (&serials, 1, __ATOMIC_RELAXED);
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
