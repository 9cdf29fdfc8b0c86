/* accel-actor-private.h: what accel-actor.c and accel-supervisor.c share.
 * Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-private.h"

G_BEGIN_DECLS

typedef struct {
  char *name;
  AccelActor *parent;             /* weak */
  GPtrArray *children;            /* strong, guarded by lock */
  AccelDispatcher *dispatcher;
  gint state;                     /* AccelActorState, atomic */
  guint restart_count;            /* atomic: read from any thread */
  GArray *restart_times;          /* gint64 µs, guarded by lock */

  guint max_restarts;
  guint within_ms;
  AccelDecider decider;
  gpointer decider_data;
  GDestroyNotify decider_destroy;

  GHashTable *pending;            /* ticket -> Asker, guarded by lock */
  guint64 last_ticket;            /* guarded by lock */
  struct _Mail *current;          /* the mail being received; dispatcher thread only */
  GWeakRef system;                /* set on the root of a system's tree */

  GMutex lock;
} AccelActorPrivate;

AccelActorPrivate *_accel_actor_get_private (AccelActor *self);
void _accel_actor_set_state (AccelActor *self, AccelActorState state);
/* Fails every ask the actor deferred and has not answered: "Actor “NAME”
 * WHY before it replied (REASON)". */
void _accel_actor_fail_pending (AccelActor *self, const char *why, const GError *reason);
/* Applies the supervisor's strategy to a failure of @self; on its
 * dispatcher thread. */
void _accel_actor_handle_failure (AccelActor *self, const GError *error);

G_END_DECLS
