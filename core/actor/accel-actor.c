/* accel-actor.c: an object with a mailbox served by a dispatcher, with
 * supervision by its parent.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"

typedef struct {
  char *name;
  AccelActor *parent;             /* weak */
  GPtrArray *children;            /* strong, guarded by lock */
  AccelDispatcher *dispatcher;
  gint state;                     /* AccelActorState, atomic */
  guint restart_count;
  GArray *restart_times;          /* gint64 µs, guarded by lock */

  guint max_restarts;
  guint within_ms;
  AccelDecider decider;
  gpointer decider_data;
  GDestroyNotify decider_destroy;

  GMutex lock;
} AccelActorPrivate;

/**
 * AccelActor:
 *
 * An object with a mailbox served on its #AccelDispatcher's thread.
 * accel_actor_tell() sends a #GVariant message; accel_actor_ask_async() /
 * accel_actor_ask_finish() also get the reply. Actors form a tree: a
 * supervisor applies its strategy (accel_actor_set_strategy()) to a child
 * that fails, resuming, restarting or stopping it.
 */
G_DEFINE_TYPE_WITH_PRIVATE (AccelActor, accel_actor, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_NAME,
  PROP_PARENT,
  PROP_DISPATCHER,
  PROP_STATE,
  PROP_RESTART_COUNT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum {
  SIGNAL_STOPPED,
  SIGNAL_RESTARTED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

typedef struct {
  AccelActor *actor;
  GVariant *message;
  GTask *task;                    /* NULL for tell */
} Mail;

static AccelDispatcher *
shared_dispatcher (void)
{
  static gsize once = 0;
  static AccelDispatcher *dispatcher;
  if (g_once_init_enter (&once))
    {
      dispatcher = accel_dispatcher_new ("accel-actors");
      g_once_init_leave (&once, 1);
    }
  return dispatcher;
}

void
_accel_actor_set_dispatcher (AccelActor *self, AccelDispatcher *dispatcher)
{
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  g_set_object (&priv->dispatcher, dispatcher);
}

static void
accel_actor_constructed (GObject *object)
{
  AccelActor *self = ACCEL_ACTOR (object);
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);

  G_OBJECT_CLASS (accel_actor_parent_class)->constructed (object);

  if (priv->dispatcher == NULL)
    {
      if (priv->parent != NULL)
        priv->dispatcher = g_object_ref (accel_actor_get_dispatcher (priv->parent));
      else
        priv->dispatcher = g_object_ref (shared_dispatcher ());
    }
  if (priv->name == NULL)
    priv->name = g_strdup_printf ("%s-%p", G_OBJECT_TYPE_NAME (self), (void *) self);

  if (priv->parent != NULL)
    {
      AccelActorPrivate *ppriv = accel_actor_get_instance_private (priv->parent);
      g_mutex_lock (&ppriv->lock);
      g_ptr_array_add (ppriv->children, g_object_ref (self));
      g_mutex_unlock (&ppriv->lock);
    }
}

static void
accel_actor_dispose (GObject *object)
{
  AccelActor *self = ACCEL_ACTOR (object);
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);

  if (g_atomic_int_get (&priv->state) != ACCEL_ACTOR_STATE_STOPPED)
    accel_actor_stop (self);

  g_mutex_lock (&priv->lock);
  g_ptr_array_set_size (priv->children, 0);
  g_mutex_unlock (&priv->lock);

  if (priv->parent)
    {
      g_object_remove_weak_pointer (G_OBJECT (priv->parent), (gpointer *) &priv->parent);
      priv->parent = NULL;
    }

  G_OBJECT_CLASS (accel_actor_parent_class)->dispose (object);
}

static void
accel_actor_finalize (GObject *object)
{
  AccelActor *self = ACCEL_ACTOR (object);
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);

  if (priv->decider_destroy)
    priv->decider_destroy (priv->decider_data);
  g_clear_object (&priv->dispatcher);
  g_ptr_array_unref (priv->children);
  g_array_unref (priv->restart_times);
  g_mutex_clear (&priv->lock);
  g_free (priv->name);

  G_OBJECT_CLASS (accel_actor_parent_class)->finalize (object);
}

static void
accel_actor_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelActor *self = ACCEL_ACTOR (object);
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_NAME:
      g_free (priv->name);
      priv->name = g_value_dup_string (value);
      break;
    case PROP_PARENT:
      priv->parent = g_value_get_object (value);
      if (priv->parent)
        g_object_add_weak_pointer (G_OBJECT (priv->parent), (gpointer *) &priv->parent);
      break;
    case PROP_DISPATCHER:
      if (g_value_get_object (value))
        g_set_object (&priv->dispatcher, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_actor_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelActor *self = ACCEL_ACTOR (object);
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_NAME:
      g_value_set_string (value, priv->name);
      break;
    case PROP_PARENT:
      g_value_set_object (value, priv->parent);
      break;
    case PROP_DISPATCHER:
      g_value_set_object (value, priv->dispatcher);
      break;
    case PROP_STATE:
      g_value_set_enum (value, g_atomic_int_get (&priv->state));
      break;
    case PROP_RESTART_COUNT:
      g_value_set_uint (value, priv->restart_count);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_actor_class_init (AccelActorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = accel_actor_constructed;
  object_class->dispose = accel_actor_dispose;
  object_class->finalize = accel_actor_finalize;
  object_class->set_property = accel_actor_set_property;
  object_class->get_property = accel_actor_get_property;

  /**
   * AccelActor:name:
   *
   * A name for logs and lookups.
   */
  properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, "Name of the actor", NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AccelActor:parent:
   *
   * The supervising actor, or %NULL for a root actor (which supervises itself).
   */
  properties[PROP_PARENT] =
    g_param_spec_object ("parent", NULL, "Supervising actor", ACCEL_TYPE_ACTOR,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AccelActor:dispatcher:
   *
   * The dispatcher whose thread serves the mailbox; by default the parent's,
   * or a dispatcher shared by root actors.
   */
  properties[PROP_DISPATCHER] =
    g_param_spec_object ("dispatcher", NULL, "Dispatcher serving the mailbox", ACCEL_TYPE_DISPATCHER,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * AccelActor:state:
   *
   * The life-cycle state.
   */
  properties[PROP_STATE] =
    g_param_spec_enum ("state", NULL, "Life-cycle state", ACCEL_TYPE_ACTOR_STATE,
                       ACCEL_ACTOR_STATE_RUNNING,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AccelActor:restart-count:
   *
   * How many times the actor was restarted.
   */
  properties[PROP_RESTART_COUNT] =
    g_param_spec_uint ("restart-count", NULL, "Restarts so far", 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * AccelActor::stopped:
   * @self: the actor
   *
   * Emitted once, on the thread that stopped the actor: the death watch.
   */
  signals[SIGNAL_STOPPED] =
    g_signal_new ("stopped", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  G_STRUCT_OFFSET (AccelActorClass, stopped), NULL, NULL, NULL,
                  G_TYPE_NONE, 0);
  /**
   * AccelActor::restarted:
   * @self: the actor
   * @reason: the failure that caused the restart
   *
   * Emitted on the actor's dispatcher thread after each restart.
   */
  signals[SIGNAL_RESTARTED] =
    g_signal_new ("restarted", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
}

static void
accel_actor_init (AccelActor *self)
{
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);

  g_mutex_init (&priv->lock);
  priv->children = g_ptr_array_new_with_free_func (g_object_unref);
  priv->restart_times = g_array_new (FALSE, FALSE, sizeof (gint64));
  priv->state = ACCEL_ACTOR_STATE_RUNNING;
  priv->max_restarts = 10;
  priv->within_ms = 60000;
}

/**
 * accel_actor_get_name:
 * @self: an actor
 *
 * Gets its name.
 *
 * Returns: its name
 */
const char *
accel_actor_get_name (AccelActor *self)
{
  g_return_val_if_fail (ACCEL_IS_ACTOR (self), NULL);
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  return priv->name;
}

/**
 * accel_actor_get_parent:
 * @self: an actor
 *
 * Gets its supervisor.
 *
 * Returns: (transfer none) (nullable): its supervisor
 */
AccelActor *
accel_actor_get_parent (AccelActor *self)
{
  g_return_val_if_fail (ACCEL_IS_ACTOR (self), NULL);
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  return priv->parent;
}

/**
 * accel_actor_get_children:
 * @self: an actor
 *
 * Gets its children now.
 *
 * Returns: (transfer container) (element-type AccelActor): its children now
 */
GPtrArray *
accel_actor_get_children (AccelActor *self)
{
  g_return_val_if_fail (ACCEL_IS_ACTOR (self), NULL);
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  GPtrArray *out = g_ptr_array_new_with_free_func (g_object_unref);
  g_mutex_lock (&priv->lock);
  for (guint i = 0; i < priv->children->len; i++)
    g_ptr_array_add (out, g_object_ref (priv->children->pdata[i]));
  g_mutex_unlock (&priv->lock);
  return out;
}

/**
 * accel_actor_get_dispatcher:
 * @self: an actor
 *
 * Gets the dispatcher serving its mailbox.
 *
 * Returns: (transfer none): the dispatcher serving its mailbox
 */
AccelDispatcher *
accel_actor_get_dispatcher (AccelActor *self)
{
  g_return_val_if_fail (ACCEL_IS_ACTOR (self), NULL);
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  return priv->dispatcher;
}

/**
 * accel_actor_get_state:
 * @self: an actor
 *
 * Gets its life-cycle state.
 *
 * Returns: its life-cycle state
 */
AccelActorState
accel_actor_get_state (AccelActor *self)
{
  g_return_val_if_fail (ACCEL_IS_ACTOR (self), ACCEL_ACTOR_STATE_STOPPED);
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  return g_atomic_int_get (&priv->state);
}

/**
 * accel_actor_get_restart_count:
 * @self: an actor
 *
 * Gets how many times it was restarted.
 *
 * Returns: how many times it was restarted
 */
guint
accel_actor_get_restart_count (AccelActor *self)
{
  g_return_val_if_fail (ACCEL_IS_ACTOR (self), 0);
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  return priv->restart_count;
}

/**
 * accel_actor_set_strategy:
 * @self: the supervising actor
 * @max_restarts: restarts allowed per child within @within_ms; one more stops it
 * @within_ms: the window, in milliseconds
 * @decider: (nullable) (scope notified) (closure user_data) (destroy destroy):
 *   maps a failure to a directive; %NULL uses accel_actor_default_decider()
 * @user_data: data for @decider
 * @destroy: (nullable): frees @user_data
 *
 * Sets the one-for-one strategy @self applies to its children (and, for a
 * root actor, to itself).
 */
void
accel_actor_set_strategy (AccelActor *self,
                          guint max_restarts,
                          guint within_ms,
                          AccelDecider decider,
                          gpointer user_data,
                          GDestroyNotify destroy)
{
  g_return_if_fail (ACCEL_IS_ACTOR (self));
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);

  g_mutex_lock (&priv->lock);
  if (priv->decider_destroy)
    priv->decider_destroy (priv->decider_data);
  priv->max_restarts = max_restarts;
  priv->within_ms = within_ms;
  priv->decider = decider;
  priv->decider_data = user_data;
  priv->decider_destroy = destroy;
  g_mutex_unlock (&priv->lock);
}

/**
 * accel_actor_default_decider:
 * @supervisor: the supervisor
 * @child: the failed actor
 * @error: the failure
 * @user_data: unused
 *
 * The decider used when none is set: a poisoned context, a library failure
 * or a generic failure restart the actor; cancellation and errors caused by
 * bad input resume it; a failed device escalates.
 *
 * Returns: the directive
 */
AccelDirective
accel_actor_default_decider (AccelActor *supervisor,
                             AccelActor *child,
                             const GError *error,
                             gpointer user_data)
{
  if (error == NULL || error->domain != ACCEL_ERROR)
    return ACCEL_DIRECTIVE_RESTART;
  switch ((AccelError) error->code)
    {
    case ACCEL_ERROR_CONTEXT_POISONED:
    case ACCEL_ERROR_LIBRARY:
    case ACCEL_ERROR_FAILED:
    case ACCEL_ERROR_TIMED_OUT:
      return ACCEL_DIRECTIVE_RESTART;
    case ACCEL_ERROR_DEVICE_FAILED:
      return ACCEL_DIRECTIVE_ESCALATE;
    default:
      return ACCEL_DIRECTIVE_RESUME;
    }
}

/**
 * accel_actor_judge_failure:
 * @self: the supervisor
 * @child: the failed actor (@self itself for a root actor)
 * @error: the failure
 *
 * Applies @self's strategy to a failure of @child: asks the decider, and
 * turns a RESTART into STOP once @child has used up its restart budget (the
 * restart is counted when it is granted).
 *
 * Returns: the directive to carry out
 */
AccelDirective
accel_actor_judge_failure (AccelActor *self, AccelActor *child, const GError *error)
{
  g_return_val_if_fail (ACCEL_IS_ACTOR (self), ACCEL_DIRECTIVE_STOP);
  g_return_val_if_fail (ACCEL_IS_ACTOR (child), ACCEL_DIRECTIVE_STOP);

  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  AccelActorPrivate *cpriv = accel_actor_get_instance_private (child);

  g_mutex_lock (&priv->lock);
  AccelDecider decider = priv->decider ? priv->decider : accel_actor_default_decider;
  gpointer data = priv->decider_data;
  guint max_restarts = priv->max_restarts;
  gint64 window = (gint64) priv->within_ms * 1000;
  g_mutex_unlock (&priv->lock);

  AccelDirective d = decider (self, child, error, data);
  if (d != ACCEL_DIRECTIVE_RESTART)
    return d;

  gint64 now = g_get_monotonic_time ();
  g_mutex_lock (&cpriv->lock);
  guint keep = 0;
  for (guint i = 0; i < cpriv->restart_times->len; i++)
    if (now - g_array_index (cpriv->restart_times, gint64, i) <= window)
      g_array_index (cpriv->restart_times, gint64, keep++) = g_array_index (cpriv->restart_times, gint64, i);
  g_array_set_size (cpriv->restart_times, keep);
  if (keep >= max_restarts)
    d = ACCEL_DIRECTIVE_STOP;
  else
    g_array_append_val (cpriv->restart_times, now);
  g_mutex_unlock (&cpriv->lock);
  return d;
}

void
_accel_actor_count_restart (AccelActor *self, const GError *reason)
{
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  priv->restart_count++;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RESTART_COUNT]);
  g_signal_emit (self, signals[SIGNAL_RESTARTED], 0, reason);
}

static void handle_failure (AccelActor *self, const GError *error);

static void
escalate_cb (gpointer data)
{
  gpointer *pair = data;
  AccelActor *parent = pair[0];
  GError *error = pair[1];
  handle_failure (parent, error);
  g_object_unref (parent);
  g_error_free (error);
  g_free (pair);
}

/* On @self's dispatcher thread. */
static void
handle_failure (AccelActor *self, const GError *error)
{
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  AccelActor *supervisor = priv->parent ? priv->parent : self;
  AccelDirective d = accel_actor_judge_failure (supervisor, self, error);

  switch (d)
    {
    case ACCEL_DIRECTIVE_RESUME:
      break;
    case ACCEL_DIRECTIVE_RESTART:
      {
        AccelActorClass *klass = ACCEL_ACTOR_GET_CLASS (self);
        g_autoptr(GError) restart_error = NULL;
        g_atomic_int_set (&priv->state, ACCEL_ACTOR_STATE_RESTARTING);
        g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
        gboolean ok = klass->restart ? klass->restart (self, error, &restart_error) : TRUE;
        if (!ok)
          {
            g_warning ("actor %s failed to restart: %s", priv->name, restart_error->message);
            accel_actor_stop (self);
            break;
          }
        g_atomic_int_set (&priv->state, ACCEL_ACTOR_STATE_RUNNING);
        g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
        _accel_actor_count_restart (self, error);
      }
      break;
    case ACCEL_DIRECTIVE_STOP:
      accel_actor_stop (self);
      break;
    case ACCEL_DIRECTIVE_ESCALATE:
      if (priv->parent)
        {
          gpointer *pair = g_new (gpointer, 2);
          pair[0] = g_object_ref (priv->parent);
          pair[1] = g_error_copy (error);
          accel_dispatcher_post (accel_actor_get_dispatcher (priv->parent), escalate_cb, pair);
        }
      else
        accel_actor_stop (self);
      break;
    }
}

static void
deliver (gpointer data)
{
  Mail *mail = data;
  AccelActor *self = mail->actor;
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  g_autoptr(GError) error = NULL;
  GVariant *reply = NULL;

  if (g_atomic_int_get (&priv->state) == ACCEL_ACTOR_STATE_STOPPED)
    g_set_error (&error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                 "Actor “%s” is stopped", priv->name);
  else if (mail->task && g_cancellable_is_cancelled (g_task_get_cancellable (mail->task)))
    g_set_error (&error, ACCEL_ERROR, ACCEL_ERROR_CANCELLED,
                 "Message to actor “%s” was cancelled", priv->name);
  else
    {
      AccelActorClass *klass = ACCEL_ACTOR_GET_CLASS (self);
      if (klass->receive)
        reply = klass->receive (self, mail->message, &error);
      if (reply)
        g_variant_ref_sink (reply);
      if (error)
        handle_failure (self, error);
    }

  if (mail->task)
    {
      if (error)
        g_task_return_error (mail->task, g_steal_pointer (&error));
      else
        g_task_return_pointer (mail->task, reply ? g_steal_pointer (&reply) : NULL,
                               (GDestroyNotify) g_variant_unref);
      g_object_unref (mail->task);
    }
  g_clear_pointer (&reply, g_variant_unref);
  g_clear_pointer (&mail->message, g_variant_unref);
  g_object_unref (mail->actor);
  g_free (mail);
}

static void
post_mail (AccelActor *self, GVariant *message, GTask *task)
{
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  Mail *mail = g_new0 (Mail, 1);
  mail->actor = g_object_ref (self);
  mail->message = message ? g_variant_ref_sink (message) : NULL;
  mail->task = task;
  accel_dispatcher_post (priv->dispatcher, deliver, mail);
}

/**
 * accel_actor_tell:
 * @self: an actor
 * @message: (nullable): the message; a floating reference is sunk
 *
 * Sends a message and does not wait for a reply. Callable from any thread.
 */
void
accel_actor_tell (AccelActor *self, GVariant *message)
{
  g_return_if_fail (ACCEL_IS_ACTOR (self));
  post_mail (self, message, NULL);
}

/**
 * accel_actor_ask_async:
 * @self: an actor
 * @message: (nullable): the message; a floating reference is sunk
 * @cancellable: (nullable): cancels the message if it has not been handled yet
 * @callback: (scope async): called on the thread-default main context of the caller
 * @user_data: data for @callback
 *
 * Sends a message and gets its reply through @callback.
 */
void
accel_actor_ask_async (AccelActor *self,
                       GVariant *message,
                       GCancellable *cancellable,
                       GAsyncReadyCallback callback,
                       gpointer user_data)
{
  g_return_if_fail (ACCEL_IS_ACTOR (self));
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, accel_actor_ask_async);
  g_task_set_check_cancellable (task, FALSE);
  post_mail (self, message, task);
}

/**
 * accel_actor_ask_finish:
 * @self: an actor
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Finishes accel_actor_ask_async(): the actor's reply to the message.
 *
 * Returns: (transfer full) (nullable): the reply, which may be %NULL when the
 *   actor replied with nothing; %NULL with @error set on failure
 */
GVariant *
accel_actor_ask_finish (AccelActor *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

typedef struct {
  GMutex lock;
  GCond cond;
  gboolean done;
  GVariant *reply;
  GError *error;
} SyncAsk;

static void
sync_ask_deliver (gpointer data)
{
  gpointer *pack = data;
  AccelActor *self = pack[0];
  GVariant *message = pack[1];
  SyncAsk *sync = pack[2];
  GCancellable *cancellable = pack[3];
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  GError *error = NULL;
  GVariant *reply = NULL;

  if (g_atomic_int_get (&priv->state) == ACCEL_ACTOR_STATE_STOPPED)
    g_set_error (&error, ACCEL_ERROR, ACCEL_ERROR_FAILED, "Actor “%s” is stopped", priv->name);
  else if (g_cancellable_is_cancelled (cancellable))
    g_set_error (&error, ACCEL_ERROR, ACCEL_ERROR_CANCELLED, "Message to actor “%s” was cancelled", priv->name);
  else
    {
      AccelActorClass *klass = ACCEL_ACTOR_GET_CLASS (self);
      if (klass->receive)
        reply = klass->receive (self, message, &error);
      if (reply)
        g_variant_ref_sink (reply);
      if (error)
        handle_failure (self, error);
    }
  g_mutex_lock (&sync->lock);
  sync->reply = reply;
  sync->error = error;
  sync->done = TRUE;
  g_cond_signal (&sync->cond);
  g_mutex_unlock (&sync->lock);
  g_free (pack);
}

/**
 * accel_actor_ask:
 * @self: an actor
 * @message: (nullable): the message; a floating reference is sunk
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * The blocking form of accel_actor_ask_async(). Must not be called from
 * @self's dispatcher thread.
 *
 * Returns: (transfer full) (nullable): the reply
 */
GVariant *
accel_actor_ask (AccelActor *self, GVariant *message, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_ACTOR (self), NULL);
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  g_return_val_if_fail (!accel_dispatcher_is_current (priv->dispatcher), NULL);

  SyncAsk sync = { 0 };
  g_mutex_init (&sync.lock);
  g_cond_init (&sync.cond);
  gpointer *pack = g_new (gpointer, 4);
  pack[0] = self;
  pack[1] = message ? g_variant_ref_sink (message) : NULL;
  pack[2] = &sync;
  pack[3] = cancellable;
  accel_dispatcher_post (priv->dispatcher, sync_ask_deliver, pack);

  g_mutex_lock (&sync.lock);
  while (!sync.done)
    g_cond_wait (&sync.cond, &sync.lock);
  g_mutex_unlock (&sync.lock);
  g_mutex_clear (&sync.lock);
  g_cond_clear (&sync.cond);
  if (message)
    g_variant_unref (message);

  if (sync.error)
    {
      g_propagate_error (error, sync.error);
      g_clear_pointer (&sync.reply, g_variant_unref);
      return NULL;
    }
  return sync.reply;
}

/**
 * accel_actor_stop:
 * @self: an actor
 *
 * Stops the actor and its children (children first). Later messages are
 * refused. Emits #AccelActor::stopped once. Idempotent.
 */
void
accel_actor_stop (AccelActor *self)
{
  g_return_if_fail (ACCEL_IS_ACTOR (self));
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);

  if (g_atomic_int_exchange (&priv->state, ACCEL_ACTOR_STATE_STOPPED) == ACCEL_ACTOR_STATE_STOPPED)
    return;

  g_autoptr(GPtrArray) children = accel_actor_get_children (self);
  for (guint i = 0; i < children->len; i++)
    accel_actor_stop (children->pdata[i]);

  g_object_ref (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
  g_signal_emit (self, signals[SIGNAL_STOPPED], 0);

  if (priv->parent)
    {
      AccelActorPrivate *ppriv = accel_actor_get_instance_private (priv->parent);
      g_mutex_lock (&ppriv->lock);
      g_ptr_array_remove (ppriv->children, self);
      g_mutex_unlock (&ppriv->lock);
    }
  g_object_unref (self);
}
