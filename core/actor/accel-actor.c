/* accel-actor.c: an object with a mailbox served by a dispatcher, with
 * supervision by its parent (accel-supervisor.c) and replies that may come
 * later than the message.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"
#include "accel-actor-private.h"


/**
 * AccelActor:
 *
 * An object with a mailbox served on its #AccelDispatcher's thread.
 * accel_actor_tell() sends a #GVariant message; accel_actor_ask_async() /
 * accel_actor_ask_finish() also get the reply. Actors form a tree: a
 * supervisor applies its strategy (accel_actor_set_strategy()) to a child
 * that fails, resuming, restarting or stopping it.
 *
 * An actor that answers an ask later (after work it started completes)
 * calls accel_actor_defer_reply() in #AccelActorClass.receive and answers
 * through accel_actor_reply() from any thread; a failure it meets outside
 * `receive` goes to its supervisor through accel_actor_fail(). The asks it
 * has not answered yet fail when it is restarted or stopped, so no caller
 * waits forever on an actor that lost its state.
 */
G_DEFINE_TYPE_WITH_PRIVATE (AccelActor, accel_actor, G_TYPE_OBJECT)

/* The pspecs notified by hand. */
enum {
  PROP_STATE,
  PROP_RESTART_COUNT,
  N_NOTIFIED
};

static GParamSpec *properties[N_NOTIFIED];

static const AccelPropertyField actor_name_field[] = {
  /**
   * AccelActor:name:
   *
   * A name for logs and lookups.
   */
  ACCEL_FIELD_STRING (AccelActorPrivate, name, "name", "Name of the actor", NULL, ACCEL_FIELD_CONSTRUCT),
};

/* The parent, a weak pointer, is hand-written, between the name and the
 * other properties (their ids follow the order of installation). */
#define PROP_PARENT (G_N_ELEMENTS (actor_name_field) + 1)

static const AccelPropertyField actor_fields[] = {
  /**
   * AccelActor:dispatcher:
   *
   * The dispatcher whose thread serves the mailbox; by default the parent's,
   * or a dispatcher shared by root actors.
   */
  ACCEL_FIELD_OBJECT (AccelActorPrivate, dispatcher, "dispatcher", "Dispatcher serving the mailbox",
                      accel_dispatcher_get_type, ACCEL_FIELD_CONSTRUCT),
  /**
   * AccelActor:state:
   *
   * The life-cycle state.
   */
  ACCEL_ACCESSOR_ENUM (AccelActor, accel_actor_get_state, "state", "Life-cycle state", accel_actor_state_get_type,
                       ACCEL_ACTOR_STATE_RUNNING, (ACCEL_FIELD_READABLE | G_PARAM_EXPLICIT_NOTIFY)),
  /**
   * AccelActor:restart-count:
   *
   * How many times the actor was restarted.
   */
  ACCEL_ACCESSOR_UINT (AccelActor, accel_actor_get_restart_count, NULL, "restart-count", "Restarts so far",
                       0, G_MAXUINT, 0, (ACCEL_FIELD_READABLE | G_PARAM_EXPLICIT_NOTIFY)),
};

enum {
  SIGNAL_STOPPED,
  SIGNAL_RESTARTED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

typedef struct {
  GMutex lock;
  GCond cond;
  gboolean done;
  GVariant *reply;
  GError *error;
} SyncAsk;

/* Who waits for the reply to an ask: a task (accel_actor_ask_async()) or a
 * blocked thread (accel_actor_ask()); neither for a tell. */
typedef struct {
  GTask *task;
  SyncAsk *sync;
} Asker;

typedef struct _Mail {
  AccelActor *actor;
  GVariant *message;
  GCancellable *cancellable;      /* of a blocking ask */
  Asker asker;
  guint64 deferred;               /* the ticket, once the reply was deferred */
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
    {
      const char *type_name = accel_actor_class_get_type_name (ACCEL_ACTOR_GET_CLASS (self));
      priv->name = g_strdup_printf ("%s-%p", type_name ? type_name : G_OBJECT_TYPE_NAME (self), (void *) self);
    }

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
  accel_object_finalize_fields (object, ACCEL_TYPE_ACTOR);
  g_hash_table_unref (priv->pending);
  g_weak_ref_clear (&priv->system);
  g_ptr_array_unref (priv->children);
  g_array_unref (priv->restart_times);
  g_mutex_clear (&priv->lock);

  G_OBJECT_CLASS (accel_actor_parent_class)->finalize (object);
}

static void
accel_actor_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelActorPrivate *priv = accel_actor_get_instance_private (ACCEL_ACTOR (object));

  if (prop_id != PROP_PARENT)
    {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }
  priv->parent = g_value_get_object (value);
  if (priv->parent)
    g_object_add_weak_pointer (G_OBJECT (priv->parent), (gpointer *) &priv->parent);
}

static void
accel_actor_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelActorPrivate *priv = accel_actor_get_instance_private (ACCEL_ACTOR (object));

  if (prop_id == PROP_PARENT)
    g_value_set_object (value, priv->parent);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
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

  accel_object_class_install_private_fields (object_class, actor_name_field, G_N_ELEMENTS (actor_name_field));
  /**
   * AccelActor:parent:
   *
   * The supervising actor, or %NULL for a root actor (which supervises itself).
   */
  g_object_class_install_property (object_class, PROP_PARENT,
                                   g_param_spec_object ("parent", NULL, "Supervising actor", ACCEL_TYPE_ACTOR,
                                                        ACCEL_FIELD_CONSTRUCT));
  accel_object_class_install_private_fields (object_class, actor_fields, G_N_ELEMENTS (actor_fields));
  properties[PROP_STATE] = g_object_class_find_property (object_class, "state");
  properties[PROP_RESTART_COUNT] = g_object_class_find_property (object_class, "restart-count");

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
  priv->pending = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_weak_ref_init (&priv->system, NULL);
  priv->state = ACCEL_ACTOR_STATE_RUNNING;
  priv->max_restarts = 10;
  priv->within_ms = 60000;
}

static GQuark
metadata_quark (gboolean description)
{
  static GQuark quarks[2];
  if (G_UNLIKELY (quarks[0] == 0))
    {
      quarks[1] = g_quark_from_static_string ("accel-actor-class-description");
      quarks[0] = g_quark_from_static_string ("accel-actor-class-name");
    }
  return quarks[description ? 1 : 0];
}

/**
 * accel_actor_class_set_metadata:
 * @klass: an actor class, in its class_init
 * @name: the actor type name users spawn (`batcher`)
 * @description: (nullable): one line for `accel-inspect`
 *
 * Names an actor type: accel_plugin_register_actor_type() registers it
 * under @name rather than under its GType name. Not inherited.
 */
void
accel_actor_class_set_metadata (AccelActorClass *klass, const char *name, const char *description)
{
  g_return_if_fail (ACCEL_IS_ACTOR_CLASS (klass));
  g_return_if_fail (name != NULL && *name != '\0');
  GType type = G_TYPE_FROM_CLASS (klass);
  /* Kept for the process, as the class is. */
  g_type_set_qdata (type, metadata_quark (FALSE), (gpointer) g_intern_string (name));
  g_type_set_qdata (type, metadata_quark (TRUE), (gpointer) g_intern_string (description));
}

/**
 * accel_actor_class_get_type_name:
 * @klass: an actor class
 *
 * Returns: (nullable): the actor type name given by
 * accel_actor_class_set_metadata()
 */
const char *
accel_actor_class_get_type_name (AccelActorClass *klass)
{
  g_return_val_if_fail (ACCEL_IS_ACTOR_CLASS (klass), NULL);
  return g_type_get_qdata (G_TYPE_FROM_CLASS (klass), metadata_quark (FALSE));
}

/**
 * accel_actor_class_get_description:
 * @klass: an actor class
 *
 * Returns: (nullable): the description given by accel_actor_class_set_metadata()
 */
const char *
accel_actor_class_get_description (AccelActorClass *klass)
{
  g_return_val_if_fail (ACCEL_IS_ACTOR_CLASS (klass), NULL);
  return g_type_get_qdata (G_TYPE_FROM_CLASS (klass), metadata_quark (TRUE));
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
  g_mutex_lock (&priv->lock);
  GPtrArray *out = g_ptr_array_copy (priv->children, (GCopyFunc) g_object_ref, NULL);
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
  return g_atomic_int_get (&priv->restart_count);
}


/* Answers an ask: completes its task or wakes its blocked caller. Takes
 * @reply (a full reference, may be NULL) and @error. Any thread. */
void
_accel_actor_count_restart (AccelActor *self, const GError *reason)
{
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  g_atomic_int_inc (&priv->restart_count);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RESTART_COUNT]);
  g_signal_emit (self, signals[SIGNAL_RESTARTED], 0, reason);
}

AccelActorPrivate *
_accel_actor_get_private (AccelActor *self)
{
  return accel_actor_get_instance_private (self);
}

void
_accel_actor_set_state (AccelActor *self, AccelActorState state)
{
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  g_atomic_int_set (&priv->state, state);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
}

static void
answer (Asker *asker, GVariant *reply, GError *error)
{
  if (asker->task)
    {
      if (error)
        g_task_return_error (asker->task, error);
      else
        g_task_return_pointer (asker->task, reply, (GDestroyNotify) g_variant_unref);
      g_clear_object (&asker->task);
      return;
    }
  if (asker->sync)
    {
      SyncAsk *sync = asker->sync;
      g_mutex_lock (&sync->lock);
      sync->reply = reply;
      sync->error = error;
      sync->done = TRUE;
      g_cond_signal (&sync->cond);
      g_mutex_unlock (&sync->lock);
      asker->sync = NULL;
      return;
    }
  g_clear_pointer (&reply, g_variant_unref);
  g_clear_error (&error);
}

/* Fails every ask @self deferred and has not answered. */
void
_accel_actor_fail_pending (AccelActor *self, const char *why, const GError *reason)
{
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);

  g_mutex_lock (&priv->lock);
  if (g_hash_table_size (priv->pending) == 0)
    {
      g_mutex_unlock (&priv->lock);
      return;
    }
  GHashTable *pending = priv->pending;
  priv->pending = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  g_mutex_unlock (&priv->lock);

  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, pending);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    answer (value, NULL,
            g_error_new (ACCEL_ERROR, ACCEL_ERROR_FAILED, "Actor “%s” %s before it replied%s%s%s",
                         priv->name, why, reason ? " (" : "", reason ? reason->message : "", reason ? ")" : ""));
  g_hash_table_unref (pending);
}


static Asker
take_pending (AccelActor *self, guint64 ticket)
{
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  Asker asker = { NULL, NULL };
  gpointer key = NULL, value = NULL;

  g_mutex_lock (&priv->lock);
  if (ticket != 0 && g_hash_table_steal_extended (priv->pending, &ticket, &key, &value))
    {
      asker = *(Asker *) value;
      g_free (key);
      g_free (value);
    }
  g_mutex_unlock (&priv->lock);
  return asker;
}

static void
deliver (gpointer data)
{
  Mail *mail = data;
  AccelActor *self = mail->actor;
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  GCancellable *cancellable = mail->asker.task ? g_task_get_cancellable (mail->asker.task) : mail->cancellable;
  GError *error = NULL;
  GVariant *reply = NULL;

  if (g_atomic_int_get (&priv->state) == ACCEL_ACTOR_STATE_STOPPED)
    g_set_error (&error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                 "Actor “%s” is stopped", priv->name);
  else if (g_cancellable_is_cancelled (cancellable))
    g_set_error (&error, ACCEL_ERROR, ACCEL_ERROR_CANCELLED,
                 "Message to actor “%s” was cancelled", priv->name);
  else
    {
      AccelActorClass *klass = ACCEL_ACTOR_GET_CLASS (self);
      priv->current = mail;
      if (klass->receive)
        reply = klass->receive (self, mail->message, &error);
      priv->current = NULL;
      if (reply)
        g_variant_ref_sink (reply);
      /* Deferred, then failed or answered at once after all: take the ask
       * back, so that a restart does not fail it with another reason. */
      if (mail->deferred && (reply || error))
        {
          if (reply && !error)
            g_warning ("Actor “%s” deferred its reply and returned one too; the returned one is used", priv->name);
          mail->asker = take_pending (self, mail->deferred);
        }
      if (error)
        _accel_actor_handle_failure (self, error);
    }

  /* The supervisor has acted when the asker hears of the failure. */
  if (error)
    {
      g_clear_pointer (&reply, g_variant_unref);
      answer (&mail->asker, NULL, error);
    }
  else
    answer (&mail->asker, reply, NULL);
  g_clear_pointer (&mail->message, g_variant_unref);
  g_object_unref (mail->actor);
  g_free (mail);
}

static void
post_mail (AccelActor *self, GVariant *message, GTask *task, SyncAsk *sync, GCancellable *cancellable)
{
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  Mail *mail = g_new0 (Mail, 1);
  mail->actor = g_object_ref (self);
  mail->message = message ? g_variant_ref_sink (message) : NULL;
  mail->asker.task = task;
  mail->asker.sync = sync;
  mail->cancellable = cancellable;
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
  post_mail (self, message, NULL, NULL, NULL);
}

/**
 * accel_actor_ask_async:
 * @self: an actor
 * @message: (nullable): the message; a floating reference is sunk
 * @cancellable: (nullable): cancels the message if it has not been handled yet
 * @callback: (scope async): called on the thread-default main context of the caller
 * @user_data: data for @callback
 *
 * Sends a message and gets its reply through @callback. Callable from any
 * thread.
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
  post_mail (self, message, task, NULL, NULL);
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
  post_mail (self, message, NULL, &sync, cancellable);

  g_mutex_lock (&sync.lock);
  while (!sync.done)
    g_cond_wait (&sync.cond, &sync.lock);
  g_mutex_unlock (&sync.lock);
  g_mutex_clear (&sync.lock);
  g_cond_clear (&sync.cond);

  if (sync.error)
    {
      g_propagate_error (error, sync.error);
      g_clear_pointer (&sync.reply, g_variant_unref);
      return NULL;
    }
  return sync.reply;
}

/**
 * accel_actor_defer_reply:
 * @self: an actor, in its #AccelActorClass.receive
 *
 * Says that the message being received will be answered later, with
 * accel_actor_reply() or accel_actor_reply_error(), and returns the ticket
 * that answer needs. `receive` then returns %NULL without an error, and the
 * asker waits. Asks deferred and not answered fail with %ACCEL_ERROR_FAILED
 * when the actor is restarted or stopped. Called on @self's dispatcher
 * thread, within `receive`; calling it twice returns the same ticket.
 *
 * Returns: the ticket, or 0 for a message that was told (nobody waits for
 *   its reply; answering ticket 0 does nothing)
 */
guint64
accel_actor_defer_reply (AccelActor *self)
{
  g_return_val_if_fail (ACCEL_IS_ACTOR (self), 0);
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  g_return_val_if_fail (accel_dispatcher_is_current (priv->dispatcher), 0);
  Mail *mail = priv->current;
  g_return_val_if_fail (mail != NULL, 0);

  if (mail->deferred || (mail->asker.task == NULL && mail->asker.sync == NULL))
    return mail->deferred;
  Asker *asker = g_new (Asker, 1);
  *asker = mail->asker;
  mail->asker.task = NULL;
  mail->asker.sync = NULL;
  g_mutex_lock (&priv->lock);
  guint64 *ticket = g_new (guint64, 1);
  *ticket = ++priv->last_ticket;
  g_hash_table_insert (priv->pending, ticket, asker);
  g_mutex_unlock (&priv->lock);
  mail->deferred = *ticket;
  return mail->deferred;
}

/**
 * accel_actor_reply:
 * @self: an actor
 * @ticket: what accel_actor_defer_reply() returned
 * @reply: (nullable): the reply; a floating reference is sunk
 *
 * Answers a deferred ask. Callable from any thread.
 *
 * Returns: %TRUE if the ask was waiting; %FALSE if @ticket is 0, was
 *   answered already, or failed because the actor restarted or stopped
 */
gboolean
accel_actor_reply (AccelActor *self, guint64 ticket, GVariant *reply)
{
  g_return_val_if_fail (ACCEL_IS_ACTOR (self), FALSE);
  if (reply)
    g_variant_ref_sink (reply);
  Asker asker = take_pending (self, ticket);
  gboolean waiting = asker.task != NULL || asker.sync != NULL;
  answer (&asker, reply, NULL);
  return waiting;
}

/**
 * accel_actor_reply_error:
 * @self: an actor
 * @ticket: what accel_actor_defer_reply() returned
 * @error: the failure the asker gets
 *
 * Fails a deferred ask. The failure is the asker's, not the actor's: the
 * supervisor does not hear of it (accel_actor_fail() is for that).
 * Callable from any thread.
 *
 * Returns: %TRUE if the ask was waiting
 */
gboolean
accel_actor_reply_error (AccelActor *self, guint64 ticket, const GError *error)
{
  g_return_val_if_fail (ACCEL_IS_ACTOR (self), FALSE);
  g_return_val_if_fail (error != NULL, FALSE);
  Asker asker = take_pending (self, ticket);
  gboolean waiting = asker.task != NULL || asker.sync != NULL;
  answer (&asker, NULL, g_error_copy (error));
  return waiting;
}


/**
 * accel_actor_get_n_pending:
 * @self: an actor
 *
 * Counts the asks @self deferred (accel_actor_defer_reply()) and has not
 * answered yet. Callable from any thread.
 *
 * Returns: how many deferred asks wait for their answer
 */
guint
accel_actor_get_n_pending (AccelActor *self)
{
  g_return_val_if_fail (ACCEL_IS_ACTOR (self), 0);
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  g_mutex_lock (&priv->lock);
  guint n = g_hash_table_size (priv->pending);
  g_mutex_unlock (&priv->lock);
  return n;
}

void
_accel_actor_set_system (AccelActor *self, AccelSystem *system)
{
  AccelActorPrivate *priv = accel_actor_get_instance_private (self);
  g_weak_ref_set (&priv->system, system);
}

/**
 * accel_actor_get_system:
 * @self: an actor
 *
 * Finds the system whose supervision tree @self is in: actors made by
 * accel_system_spawn() are children of accel_system_get_root_actor().
 *
 * Returns: (transfer full) (nullable): the system, or %NULL for an actor
 *   outside every system's tree
 */
AccelSystem *
accel_actor_get_system (AccelActor *self)
{
  g_return_val_if_fail (ACCEL_IS_ACTOR (self), NULL);
  g_autoptr(AccelActor) actor = g_object_ref (self);
  for (;;)
    {
      AccelActorPrivate *priv = accel_actor_get_instance_private (actor);
      AccelSystem *system = g_weak_ref_get (&priv->system);
      if (system)
        return system;
      AccelActor *parent = priv->parent;
      if (parent == NULL)
        return NULL;
      g_object_ref (parent);
      g_object_unref (actor);
      actor = parent;
    }
}

/**
 * accel_actor_stop:
 * @self: an actor
 *
 * Stops the actor and its children (children first). Later messages are
 * refused, and the asks it deferred fail. Emits #AccelActor::stopped once.
 * Idempotent.
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
  _accel_actor_fail_pending (self, "stopped", NULL);
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
