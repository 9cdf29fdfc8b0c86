/* Tests of AccelDispatcher and AccelActor: mailbox order, ask/tell,
 * supervision with a restart budget, escalation, stop and the death watch;
 * replies deferred and given from other threads, failures reported from
 * outside receive, deferred asks failed by a restart or a stop; the
 * system's supervision tree.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include <string.h>

/* A test actor: replies to ("add", n) with its running total; ("fail", code)
 * fails with that ACCEL_ERROR code; restart resets the total. */
#define TEST_TYPE_COUNTER (test_counter_get_type ())
G_DECLARE_FINAL_TYPE (TestCounter, test_counter, TEST, COUNTER, AccelActor)

struct _TestCounter {
  AccelActor parent_instance;
  gint64 total;
  guint restarts;
  GThread *thread_seen;
};

G_DEFINE_FINAL_TYPE (TestCounter, test_counter, ACCEL_TYPE_ACTOR)

static GVariant *
test_counter_receive (AccelActor *actor, GVariant *message, GError **error)
{
  TestCounter *self = TEST_COUNTER (actor);
  const char *verb;
  gint64 arg;

  self->thread_seen = g_thread_self ();
  g_variant_get (message, "(&sx)", &verb, &arg);
  if (g_str_equal (verb, "add"))
    {
      self->total += arg;
      return g_variant_new_int64 (self->total);
    }
  if (g_str_equal (verb, "fail"))
    {
      g_set_error (error, ACCEL_ERROR, (int) arg, "asked to fail with %d", (int) arg);
      return NULL;
    }
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "unknown verb %s", verb);
  return NULL;
}

static gboolean
test_counter_restart (AccelActor *actor, const GError *reason, GError **error)
{
  TestCounter *self = TEST_COUNTER (actor);
  self->total = 0;
  self->restarts++;
  return TRUE;
}

static void
test_counter_class_init (TestCounterClass *klass)
{
  ACCEL_ACTOR_CLASS (klass)->receive = test_counter_receive;
  ACCEL_ACTOR_CLASS (klass)->restart = test_counter_restart;
}

static void
test_counter_init (TestCounter *self)
{
}

static gint64
ask_add (AccelActor *actor, gint64 n)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = accel_actor_ask (actor, g_variant_new ("(sx)", "add", n), NULL, &error);
  g_assert_no_error (error);
  return g_variant_get_int64 (reply);
}

static void
ask_fail (AccelActor *actor, AccelError code)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = accel_actor_ask (actor, g_variant_new ("(sx)", "fail", (gint64) code), NULL, &error);
  g_assert_error (error, ACCEL_ERROR, (int) code);
  g_assert_null (reply);
}

typedef struct {
  gint count;
  gint64 sum;
  GMutex lock;
  GArray *order;
} Posted;

static void
record (gpointer data)
{
  gpointer *pair = data;
  Posted *p = pair[0];
  g_mutex_lock (&p->lock);
  gint v = GPOINTER_TO_INT (pair[1]);
  g_array_append_val (p->order, v);
  g_mutex_unlock (&p->lock);
  g_atomic_int_inc (&p->count);
  g_free (pair);
}

static void
test_dispatcher_order (void)
{
  g_autoptr(AccelDispatcher) d = accel_dispatcher_new ("test");
  Posted p = { 0 };
  g_mutex_init (&p.lock);
  p.order = g_array_new (FALSE, FALSE, sizeof (gint));
  guint n = 2000 + g_test_rand_int_range (0, 1000);

  for (guint i = 0; i < n; i++)
    {
      gpointer *pair = g_new (gpointer, 2);
      pair[0] = &p;
      pair[1] = GINT_TO_POINTER ((gint) i);
      accel_dispatcher_post (d, record, pair);
      if (i % 97 == 0)
        g_usleep (g_test_rand_int_range (0, 200));  /* let it park now and then */
    }
  accel_dispatcher_stop (d);
  g_assert_cmpint (p.count, ==, (gint) n);
  for (guint i = 0; i < n; i++)
    g_assert_cmpint (g_array_index (p.order, gint, i), ==, (gint) i);
  g_array_unref (p.order);
  g_mutex_clear (&p.lock);
}

static void
test_actor_ask_tell (void)
{
  g_autoptr(AccelActor) actor = g_object_new (TEST_TYPE_COUNTER, "name", "counter", NULL);
  gint64 expect = 0;
  for (int i = 0; i < 50; i++)
    {
      gint64 v = g_test_rand_int_range (-1000, 1000);
      if (i % 2)
        accel_actor_tell (actor, g_variant_new ("(sx)", "add", v));
      else
        g_assert_cmpint (ask_add (actor, v), ==, expect + v);
      expect += v;
    }
  g_assert_cmpint (ask_add (actor, 0), ==, expect);
  g_assert_cmpstr (accel_actor_get_name (actor), ==, "counter");
  /* Served on the dispatcher's thread, not ours. */
  g_assert_true (TEST_COUNTER (actor)->thread_seen != g_thread_self ());
}

static void
ask_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  GVariant **out = data;
  g_autoptr(GError) error = NULL;
  *out = accel_actor_ask_finish (ACCEL_ACTOR (source), result, &error);
  g_assert_no_error (error);
}

static void
test_actor_ask_async (void)
{
  g_autoptr(AccelActor) actor = g_object_new (TEST_TYPE_COUNTER, NULL);
  GVariant *reply = NULL;
  gint64 n = g_test_rand_int_range (1, 100000);

  accel_actor_ask_async (actor, g_variant_new ("(sx)", "add", n), NULL, ask_cb, &reply);
  while (reply == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpint (g_variant_get_int64 (reply), ==, n);
  g_variant_unref (reply);
}

static void
count_stopped (guint *count)
{
  (*count)++;
}

static void
test_actor_supervision_budget (void)
{
  g_autoptr(AccelActor) actor = g_object_new (TEST_TYPE_COUNTER, NULL);
  accel_actor_set_strategy (actor, 3, 60000, NULL, NULL, NULL);

  ask_add (actor, 5);
  /* Bad input resumes: state kept. */
  ask_fail (actor, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_cmpint (ask_add (actor, 1), ==, 6);
  /* A failure restarts: state reset, counted. */
  for (guint i = 0; i < 3; i++)
    {
      ask_fail (actor, ACCEL_ERROR_CONTEXT_POISONED);
      g_assert_cmpuint (accel_actor_get_restart_count (actor), ==, i + 1);
      g_assert_cmpint (ask_add (actor, 2), ==, 2);
    }
  /* The budget is spent: the next failure stops the actor. */
  guint stopped = 0;
  g_signal_connect_swapped (actor, "stopped", G_CALLBACK (count_stopped), &stopped);
  ask_fail (actor, ACCEL_ERROR_CONTEXT_POISONED);
  g_assert_cmpint (accel_actor_get_state (actor), ==, ACCEL_ACTOR_STATE_STOPPED);
  g_assert_cmpuint (stopped, ==, 1);   /* the death watch fired once */
  accel_actor_stop (actor);
  g_assert_cmpuint (stopped, ==, 1);

  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = accel_actor_ask (actor, g_variant_new ("(sx)", "add", (gint64) 1), NULL, &error);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED);
}

static AccelDirective
decide_escalate (AccelActor *supervisor, AccelActor *child, const GError *error, gpointer data)
{
  guint *calls = data;
  (*calls)++;
  return supervisor == child ? ACCEL_DIRECTIVE_RESTART : ACCEL_DIRECTIVE_ESCALATE;
}

static void
test_actor_escalation (void)
{
  g_autoptr(AccelActor) parent = g_object_new (TEST_TYPE_COUNTER, "name", "parent", NULL);
  g_autoptr(AccelActor) child = g_object_new (TEST_TYPE_COUNTER, "name", "child", "parent", parent, NULL);
  guint calls = 0;
  accel_actor_set_strategy (parent, 5, 60000, decide_escalate, &calls, NULL);

  g_autoptr(GPtrArray) kids = accel_actor_get_children (parent);
  g_assert_cmpuint (kids->len, ==, 1);
  g_assert_true (kids->pdata[0] == child);
  g_assert_true (accel_actor_get_parent (child) == parent);

  ask_add (parent, 7);
  ask_fail (child, ACCEL_ERROR_FAILED);
  /* The child's failure escalated: the parent judged itself and restarted. */
  g_assert_cmpint (ask_add (parent, 0), ==, 0);
  g_assert_cmpuint (TEST_COUNTER (parent)->restarts, ==, 1);
  g_assert_cmpuint (calls, ==, 2);
}

static void
test_actor_stop_children (void)
{
  g_autoptr(AccelActor) parent = g_object_new (TEST_TYPE_COUNTER, NULL);
  AccelActor *child = g_object_new (TEST_TYPE_COUNTER, "parent", parent, NULL);
  g_object_add_weak_pointer (G_OBJECT (child), (gpointer *) &child);
  g_object_unref (child);       /* the parent keeps it */
  g_assert_nonnull (child);
  accel_actor_stop (parent);
  g_assert_null (child);        /* stopped and released with its parent */
  g_assert_cmpint (accel_actor_get_state (parent), ==, ACCEL_ACTOR_STATE_STOPPED);
}

/* A test actor that answers later: ("later", n) replies n + 1 from another
 * thread; ("later-error", code) fails with code from another thread;
 * ("keep", 0) defers and never answers; ("fail", code) defers, then
 * reports a failure with @code from another thread. */
#define TEST_TYPE_DEFERRER (test_deferrer_get_type ())
G_DECLARE_FINAL_TYPE (TestDeferrer, test_deferrer, TEST, DEFERRER, AccelActor)

struct _TestDeferrer {
  AccelActor parent_instance;
  guint64 last_ticket;
};

G_DEFINE_FINAL_TYPE (TestDeferrer, test_deferrer, ACCEL_TYPE_ACTOR)

typedef struct {
  AccelActor *actor;
  guint64 ticket;
  char *verb;
  gint64 arg;
} Later;

static gpointer
answer_later (gpointer data)
{
  Later *later = data;
  g_usleep (g_test_rand_int_range (0, 2000));
  if (g_str_equal (later->verb, "later"))
    g_assert_true (accel_actor_reply (later->actor, later->ticket, g_variant_new_int64 (later->arg + 1)));
  else
    {
      g_autoptr(GError) error = g_error_new (ACCEL_ERROR, (int) later->arg, "later, %d", (int) later->arg);
      if (g_str_equal (later->verb, "later-error"))
        g_assert_true (accel_actor_reply_error (later->actor, later->ticket, error));
      else
        accel_actor_fail (later->actor, error);
    }
  /* Answered once: a second answer finds nobody waiting. */
  if (g_str_equal (later->verb, "later"))
    g_assert_false (accel_actor_reply (later->actor, later->ticket, NULL));
  g_object_unref (later->actor);
  g_free (later->verb);
  g_free (later);
  return NULL;
}

static GVariant *
test_deferrer_receive (AccelActor *actor, GVariant *message, GError **error)
{
  const char *verb;
  gint64 arg;
  g_variant_get (message, "(&sx)", &verb, &arg);
  guint64 ticket = accel_actor_defer_reply (actor);
  g_assert_cmpuint (accel_actor_defer_reply (actor), ==, ticket);   /* the same ticket again */
  TEST_DEFERRER (actor)->last_ticket = ticket;
  if (g_str_equal (verb, "keep"))
    return NULL;
  Later *later = g_new (Later, 1);
  later->actor = g_object_ref (actor);
  later->ticket = ticket;
  later->verb = g_strdup (verb);
  later->arg = arg;
  g_thread_unref (g_thread_new ("later", answer_later, later));
  return NULL;
}

static void
test_deferrer_class_init (TestDeferrerClass *klass)
{
  ACCEL_ACTOR_CLASS (klass)->receive = test_deferrer_receive;
  accel_actor_class_set_metadata (ACCEL_ACTOR_CLASS (klass), "deferrer", "answers later");
}

static void
test_deferrer_init (TestDeferrer *self)
{
}

typedef struct {
  guint done;
  GVariant *replies[64];
  GError *errors[64];
} Collected;

static void
collect_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  gpointer *pair = data;
  Collected *c = pair[0];
  guint i = GPOINTER_TO_UINT (pair[1]);
  c->replies[i] = accel_actor_ask_finish (ACCEL_ACTOR (source), result, &c->errors[i]);
  c->done++;
  g_free (pair);
}

static void
collect (Collected *c, AccelActor *actor, guint i, const char *verb, gint64 arg)
{
  gpointer *pair = g_new (gpointer, 2);
  pair[0] = c;
  pair[1] = GUINT_TO_POINTER (i);
  accel_actor_ask_async (actor, g_variant_new ("(sx)", verb, arg), NULL, collect_cb, pair);
}

static void
collected_clear (Collected *c, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      g_clear_pointer (&c->replies[i], g_variant_unref);
      g_clear_error (&c->errors[i]);
    }
}

static void
test_actor_deferred (void)
{
  g_autoptr(AccelActor) actor = g_object_new (TEST_TYPE_DEFERRER, NULL);
  g_autoptr(GError) error = NULL;
  /* The default name comes from the type name. */
  g_assert_true (g_str_has_prefix (accel_actor_get_name (actor), "deferrer-"));
  g_assert_cmpstr (accel_actor_class_get_type_name (ACCEL_ACTOR_GET_CLASS (actor)), ==, "deferrer");

  /* Blocking and async asks, answered from other threads, in any order. */
  gint64 n = g_test_rand_int_range (-1000, 1000);
  g_autoptr(GVariant) reply = accel_actor_ask (actor, g_variant_new ("(sx)", "later", n), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_variant_get_int64 (reply), ==, n + 1);
  Collected c = { 0 };
  const guint k = 40;
  for (guint i = 0; i < k; i++)
    collect (&c, actor, i, i % 5 == 4 ? "later-error" : "later", i % 5 == 4 ? ACCEL_ERROR_SHAPE_MISMATCH : (gint64) i);
  while (c.done < k)
    g_main_context_iteration (NULL, TRUE);
  for (guint i = 0; i < k; i++)
    if (i % 5 == 4)
      g_assert_error (c.errors[i], ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH);
    else
      {
        g_assert_no_error (c.errors[i]);
        g_assert_cmpint (g_variant_get_int64 (c.replies[i]), ==, (gint64) i + 1);
      }
  collected_clear (&c, k);
  /* Errors given to the asker are the asker's: the supervisor did nothing. */
  g_assert_cmpuint (accel_actor_get_restart_count (actor), ==, 0);
  /* Ticket 0 and unknown tickets find nobody. */
  g_assert_false (accel_actor_reply (actor, 0, NULL));
  g_assert_false (accel_actor_reply (actor, G_MAXUINT64, g_variant_new_int32 (1)));
  g_assert_cmpuint (accel_actor_get_n_pending (actor), ==, 0);
}

static void
test_actor_deferred_restart_stop (void)
{
  g_autoptr(AccelActor) actor = g_object_new (TEST_TYPE_DEFERRER, "name", "keeper", NULL);
  Collected c = { 0 };

  /* Asks it keeps, then a failure reported from elsewhere: it restarts and
   * the kept asks fail with a message naming it and the reason. */
  for (guint i = 0; i < 3; i++)
    collect (&c, actor, i, "keep", 0);
  collect (&c, actor, 3, "fail", ACCEL_ERROR_LIBRARY);
  while (c.done < 4)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (accel_actor_get_restart_count (actor), ==, 1);
  for (guint i = 0; i < 4; i++)
    {
      g_assert_error (c.errors[i], ACCEL_ERROR, ACCEL_ERROR_FAILED);
      g_assert_nonnull (strstr (c.errors[i]->message, "keeper"));
      g_assert_nonnull (strstr (c.errors[i]->message, "restarted"));
      g_assert_nonnull (strstr (c.errors[i]->message, "later, 10"));
    }
  collected_clear (&c, 4);

  /* A failure the decider resumes leaves them waiting. */
  c.done = 0;
  collect (&c, actor, 0, "keep", 0);
  collect (&c, actor, 1, "fail", ACCEL_ERROR_INVALID_ARGUMENT);
  while (accel_actor_get_n_pending (actor) < 1)
    g_main_context_iteration (NULL, FALSE);
  g_usleep (5000);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (accel_actor_get_restart_count (actor), ==, 1);
  g_assert_cmpuint (accel_actor_get_n_pending (actor), >=, 1);

  /* Stopping fails what waits. */
  accel_actor_stop (actor);
  while (c.done < 2)
    g_main_context_iteration (NULL, TRUE);
  for (guint i = 0; i < 2; i++)
    {
      g_assert_error (c.errors[i], ACCEL_ERROR, ACCEL_ERROR_FAILED);
      g_assert_nonnull (strstr (c.errors[i]->message, "stopped"));
    }
  collected_clear (&c, 2);
  g_assert_cmpuint (accel_actor_get_n_pending (actor), ==, 0);
}

static void
test_actor_system_tree (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelSystem) system = accel_system_new (&error);
  g_assert_no_error (error);
  AccelActor *root = accel_system_get_root_actor (system);
  g_assert_true (accel_system_get_root_actor (system) == root);
  g_autoptr(AccelSystem) found = accel_actor_get_system (root);
  g_assert_true (found == system);
  g_autoptr(AccelActor) child = g_object_new (TEST_TYPE_COUNTER, "parent", root, NULL);
  g_autoptr(AccelActor) grandchild = g_object_new (TEST_TYPE_DEFERRER, "parent", child, NULL);
  g_autoptr(AccelSystem) via = accel_actor_get_system (grandchild);
  g_assert_true (via == system);
  g_autoptr(AccelActor) outside = g_object_new (TEST_TYPE_COUNTER, NULL);
  g_assert_null (accel_actor_get_system (outside));

  /* An actor type no plugin registers is unknown to spawn. */
  g_assert_null (accel_system_spawn (system, "deferrer", &error, NULL));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE);
  g_clear_error (&error);

  /* Shutting the system down stops its tree, and fails what waits. */
  Collected c = { 0 };
  collect (&c, grandchild, 0, "keep", 0);
  while (accel_actor_get_n_pending (grandchild) < 1)
    g_main_context_iteration (NULL, FALSE);
  accel_system_shutdown (system);
  while (c.done < 1)
    g_main_context_iteration (NULL, TRUE);
  g_assert_error (c.errors[0], ACCEL_ERROR, ACCEL_ERROR_FAILED);
  collected_clear (&c, 1);
  g_assert_cmpint (accel_actor_get_state (child), ==, ACCEL_ACTOR_STATE_STOPPED);
  g_assert_cmpint (accel_actor_get_state (grandchild), ==, ACCEL_ACTOR_STATE_STOPPED);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/actor/dispatcher-order", test_dispatcher_order);
  g_test_add_func ("/actor/ask-tell", test_actor_ask_tell);
  g_test_add_func ("/actor/ask-async", test_actor_ask_async);
  g_test_add_func ("/actor/supervision-budget", test_actor_supervision_budget);
  g_test_add_func ("/actor/escalation", test_actor_escalation);
  g_test_add_func ("/actor/stop-children", test_actor_stop_children);
  g_test_add_func ("/actor/deferred", test_actor_deferred);
  g_test_add_func ("/actor/deferred-restart-stop", test_actor_deferred_restart_stop);
  g_test_add_func ("/actor/system-tree", test_actor_system_tree);
  return g_test_run ();
}
