/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "../accel-types.h"

G_BEGIN_DECLS

/**
 * AccelDirective:
 * @ACCEL_DIRECTIVE_RESUME: keep the failed actor's state and go on
 * @ACCEL_DIRECTIVE_RESTART: reset the failed actor (counts against the restart budget)
 * @ACCEL_DIRECTIVE_STOP: stop the failed actor
 * @ACCEL_DIRECTIVE_ESCALATE: fail the supervisor itself, so its own parent decides
 *
 * What a supervisor does with a child that failed.
 */
typedef enum {
  ACCEL_DIRECTIVE_RESUME,
  ACCEL_DIRECTIVE_RESTART,
  ACCEL_DIRECTIVE_STOP,
  ACCEL_DIRECTIVE_ESCALATE,
} AccelDirective;

/**
 * AccelActorState:
 * @ACCEL_ACTOR_STATE_RUNNING: serving its mailbox
 * @ACCEL_ACTOR_STATE_RESTARTING: being reset; messages queue meanwhile
 * @ACCEL_ACTOR_STATE_STOPPED: stopped; messages are refused
 *
 * The life-cycle state of an actor.
 */
typedef enum {
  ACCEL_ACTOR_STATE_RUNNING,
  ACCEL_ACTOR_STATE_RESTARTING,
  ACCEL_ACTOR_STATE_STOPPED,
} AccelActorState;

/**
 * AccelDecider:
 * @supervisor: the actor whose child failed
 * @child: the failed actor (may be @supervisor itself for a device's own context)
 * @error: why it failed
 * @user_data: closure data
 *
 * Maps a failure to a directive.
 *
 * Returns: the directive
 */
typedef AccelDirective (*AccelDecider) (AccelActor *supervisor,
                                        AccelActor *child,
                                        const GError *error,
                                        gpointer user_data);

#define ACCEL_TYPE_ACTOR (accel_actor_get_type ())
ACCEL_API
G_DECLARE_DERIVABLE_TYPE (AccelActor, accel_actor, ACCEL, ACTOR, GObject)

/**
 * AccelActorClass:
 * @parent_class: the parent class
 * @receive: handles one message on the actor's dispatcher thread; returns a
 *   reply (may be %NULL) or sets @error, which the supervisor then judges
 * @restart: resets the actor's state after a RESTART directive
 * @stopped: class closure of the #AccelActor::stopped signal
 *
 * The class of every actor type.
 */
struct _AccelActorClass {
  GObjectClass parent_class;

  GVariant *(*receive) (AccelActor *self, GVariant *message, GError **error);
  gboolean (*restart) (AccelActor *self, const GError *reason, GError **error);
  void (*stopped) (AccelActor *self);

  /*< private >*/
  gpointer padding[8];
};

ACCEL_API
const char *accel_actor_get_name (AccelActor *self);
ACCEL_API
AccelActor *accel_actor_get_parent (AccelActor *self);
ACCEL_API
GPtrArray *accel_actor_get_children (AccelActor *self);
ACCEL_API
AccelDispatcher *accel_actor_get_dispatcher (AccelActor *self);
ACCEL_API
AccelActorState accel_actor_get_state (AccelActor *self);
ACCEL_API
guint accel_actor_get_restart_count (AccelActor *self);

ACCEL_API
void accel_actor_tell (AccelActor *self, GVariant *message);
ACCEL_API
void accel_actor_ask_async (AccelActor *self,
                            GVariant *message,
                            GCancellable *cancellable,
                            GAsyncReadyCallback callback,
                            gpointer user_data);
ACCEL_API
GVariant *accel_actor_ask_finish (AccelActor *self, GAsyncResult *result, GError **error);
ACCEL_API
GVariant *accel_actor_ask (AccelActor *self, GVariant *message, GCancellable *cancellable, GError **error);
ACCEL_API
void accel_actor_stop (AccelActor *self);
ACCEL_API
guint64 accel_actor_defer_reply (AccelActor *self);
ACCEL_API
gboolean accel_actor_reply (AccelActor *self, guint64 ticket, GVariant *reply);
ACCEL_API
gboolean accel_actor_reply_error (AccelActor *self, guint64 ticket, const GError *error);
ACCEL_API
guint accel_actor_get_n_pending (AccelActor *self);
ACCEL_API
void accel_actor_fail (AccelActor *self, const GError *error);
ACCEL_API
AccelSystem *accel_actor_get_system (AccelActor *self);

ACCEL_API
void accel_actor_class_set_metadata (AccelActorClass *klass, const char *name, const char *description);
ACCEL_API
const char *accel_actor_class_get_type_name (AccelActorClass *klass);
ACCEL_API
const char *accel_actor_class_get_description (AccelActorClass *klass);

ACCEL_API
void accel_actor_set_strategy (AccelActor *self,
                               guint max_restarts,
                               guint within_ms,
                               AccelDecider decider,
                               gpointer user_data,
                               GDestroyNotify destroy);
ACCEL_API
AccelDirective accel_actor_default_decider (AccelActor *supervisor,
                                            AccelActor *child,
                                            const GError *error,
                                            gpointer user_data);
ACCEL_API
AccelDirective accel_actor_judge_failure (AccelActor *self, AccelActor *child, const GError *error);

G_END_DECLS
