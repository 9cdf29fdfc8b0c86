/* accel-supervisor.c: what an actor's supervisor does with its failures:
 * the one-for-one strategy, the restart budget and the directives.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"
#include "accel-actor-private.h"

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
  AccelActorPrivate *priv = _accel_actor_get_private (self);

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

  AccelActorPrivate *priv = _accel_actor_get_private (self);
  AccelActorPrivate *cpriv = _accel_actor_get_private (child);

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



static void
escalate_cb (gpointer data)
{
  gpointer *pair = data;
  AccelActor *parent = pair[0];
  GError *error = pair[1];
  _accel_actor_handle_failure (parent, error);
  g_object_unref (parent);
  g_error_free (error);
  g_free (pair);
}

/* On @self's dispatcher thread. */
void
_accel_actor_handle_failure (AccelActor *self, const GError *error)
{
  AccelActorPrivate *priv = _accel_actor_get_private (self);
  AccelActor *supervisor = priv->parent ? priv->parent : self;

  if (g_atomic_int_get (&priv->state) == ACCEL_ACTOR_STATE_STOPPED)
    return;
  AccelDirective d = accel_actor_judge_failure (supervisor, self, error);
  switch (d)
    {
    case ACCEL_DIRECTIVE_RESUME:
      break;
    case ACCEL_DIRECTIVE_RESTART:
      {
        AccelActorClass *klass = ACCEL_ACTOR_GET_CLASS (self);
        g_autoptr(GError) restart_error = NULL;
        _accel_actor_set_state (self, ACCEL_ACTOR_STATE_RESTARTING);
        gboolean ok = klass->restart ? klass->restart (self, error, &restart_error) : TRUE;
        if (!ok)
          {
            g_warning ("actor %s failed to restart: %s", priv->name, restart_error->message);
            accel_actor_stop (self);
            break;
          }
        _accel_actor_set_state (self, ACCEL_ACTOR_STATE_RUNNING);
        _accel_actor_count_restart (self, error);
        /* What it deferred, it will not answer from its reset state; the
         * askers hear of it once the restart is counted. */
        _accel_actor_fail_pending (self, "was restarted after a failure", error);
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
fail_cb (gpointer data)
{
  gpointer *pair = data;
  _accel_actor_handle_failure (pair[0], pair[1]);
  g_object_unref (pair[0]);
  g_error_free (pair[1]);
  g_free (pair);
}

/**
 * accel_actor_fail:
 * @self: an actor
 * @error: what went wrong
 *
 * Reports a failure @self met outside #AccelActorClass.receive (in the
 * completion of work it started, say) to its supervisor, which resumes,
 * restarts or stops it as for a failed `receive`. Handled on @self's
 * dispatcher thread after the current message. Callable from any thread.
 */
void
accel_actor_fail (AccelActor *self, const GError *error)
{
  g_return_if_fail (ACCEL_IS_ACTOR (self));
  g_return_if_fail (error != NULL);
  AccelActorPrivate *priv = _accel_actor_get_private (self);
  gpointer *pair = g_new (gpointer, 2);
  pair[0] = g_object_ref (self);
  pair[1] = g_error_copy (error);
  accel_dispatcher_post (priv->dispatcher, fail_cb, pair);
}
