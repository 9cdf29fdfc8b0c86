/* Tests of AccelDispatcher and AccelActor: mailbox order, ask/tell,
 * supervision with a restart budget, escalation, stop and the death watch.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>

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
  return g_test_run ();
}
