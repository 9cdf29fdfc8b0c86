/* retry.c: device faults in the `cascade` and `moe-router` actors, which
 * end their batches through accel_patterns_server_finish_or_retry(): a
 * batch whose run fails with a device fault runs once more; a second
 * fault fails its requests, and the actor goes on serving.
 *
 * The faults are injected into TestAffine models (patterns-test.c):
 * ACCEL_ERROR_DEVICE_FAILED from a chosen run on. Answers are checked
 * against references computed from the models' parameters, on random
 * inputs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "patterns-test.h"

#include <math.h>
#include <string.h>

/* Adds the serial of the batch that answered @reply to @batches (a set of
 * gint64). */
static void
note_batch (GHashTable *batches, GVariant *reply)
{
  gint64 *serial = g_new (gint64, 1);
  g_assert_true (g_variant_lookup (reply, "batch", "t", serial));
  g_hash_table_add (batches, serial);
}

static guint64
stat_of (AccelActor *actor, const char *name)
{
  guint64 v = 0;
  g_object_get (actor, name, &v, NULL);
  return v;
}

/* Rows of @n requests: 1 .. @max each. */
static void
random_rows (guint *rows, guint n, guint max)
{
  for (guint i = 0; i < n; i++)
    rows[i] = g_test_rand_int_range (1, max + 1);
}

/* Rows of three requests that fill a batch of @total rows together, each
 * at least one. */
static void
split_rows (guint *rows, guint total)
{
  rows[0] = g_test_rand_int_range (1, total / 3 + 1);
  rows[1] = g_test_rand_int_range (1, total / 3 + 1);
  rows[2] = total - rows[0] - rows[1];
}

/* Every answer of @asks (@n of them) failed with the injected device fault. */
static void
check_all_faulted (PtAsks *asks, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      g_assert_error (asks->answers[i].error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED);
      g_assert_nonnull (strstr (asks->answers[i].error->message, "injected device fault"));
    }
}

/* ---- cascade -------------------------------------------------------------- */

#define CASCADE_BATCH 8
#define ENDLESS_US (600 * G_USEC_PER_SEC)

typedef struct {
  gint64 d;
  double threshold;
  double scale[2], shift[2];    /* small, large */
  PtAffine *model[2];
  AccelActor *actor;
  guint64 answered;             /* requests answered so far */
  guint64 rows;                 /* their rows */
  guint64 escalated;
} Cascade;

/* With @delay_us, a batch waits that long to fill up (the tests that form
 * batches by filling them give an endless delay). */
static Cascade *
cascade_new (double threshold, guint64 delay_us)
{
  Cascade *c = g_new0 (Cascade, 1);
  c->d = g_test_rand_int_range (3, 12);
  c->threshold = threshold;
  c->scale[0] = g_test_rand_double_range (0.5, 3);
  c->shift[0] = g_test_rand_double_range (-1, 1);
  c->scale[1] = g_test_rand_double_range (-3, -0.5);
  c->shift[1] = g_test_rand_double_range (-1, 1);
  for (guint m = 0; m < 2; m++)
    c->model[m] = pt_affine_new (c->d, c->scale[m], c->shift[m], m == 0);
  c->actor = pt_spawn ("cascade", "small-model", c->model[0], "large-model", c->model[1], "device", pt_cpu (),
                       "threshold", threshold, "max-batch-size", CASCADE_BATCH,
                       "max-queue-delay-us", delay_us, NULL);
  return c;
}

static void
cascade_free (Cascade *c)
{
  accel_actor_stop (c->actor);
  g_object_unref (c->actor);
  g_object_unref (c->model[0]);
  g_object_unref (c->model[1]);
  g_free (c);
}

/* Sends @n requests of @rows rows, random inputs in @xs. */
static void
cascade_send (Cascade *c, PtAsks *asks, double **xs, const guint *rows, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      xs[i] = pt_random (ACCEL_DTYPE_F32, rows[i] * c->d, -1, 1);
      pt_ask (asks, c->actor, i, pt_request_end (pt_request ("x", ACCEL_DTYPE_F32, xs[i], rows[i], c->d)));
    }
}

/* Checks the @n answers of @asks to the requests @xs of @rows rows against
 * the two models, counts them, and returns the serials of the batches
 * that escalated rows to the large model. */
static GHashTable *
cascade_check (Cascade *c, PtAsks *asks, double **xs, const guint *rows, guint n)
{
  GHashTable *escalating = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint i = 0; i < n; i++)
    {
      PtAnswer *a = &asks->answers[i];
      g_assert_no_error (a->error);
      guint escalated = pt_cascade_check_reply (a->reply, xs[i], rows[i], c->d, c->threshold, c->scale, c->shift);
      if (escalated > 0)
        note_batch (escalating, a->reply);
      c->escalated += escalated;
      c->rows += rows[i];
      c->answered++;
    }
  return escalating;
}

/* Sends a wave of @n requests of 1 .. @max_rows rows, waits for them,
 * checks them; returns the serials of the batches that escalated. */
static GHashTable *
cascade_wave (Cascade *c, guint n, guint max_rows)
{
  PtAsks *asks = pt_asks_new (n);
  double **xs = g_new0 (double *, n);
  guint *rows = g_new (guint, n);
  random_rows (rows, n, max_rows);
  cascade_send (c, asks, xs, rows, n);
  pt_asks_wait (asks, n);
  GHashTable *escalating = cascade_check (c, asks, xs, rows, n);
  for (guint i = 0; i < n; i++)
    g_free (xs[i]);
  g_free (xs);
  g_free (rows);
  pt_asks_free (asks);
  return escalating;
}

/* The statistics count each answered request and row once, retried or
 * not; @failed requests failed; the actor runs, never restarted. */
static void
cascade_check_stats (Cascade *c, guint64 failed)
{
  g_assert_cmpuint (stat_of (c->actor, "small-rows"), ==, c->rows);
  g_assert_cmpuint (stat_of (c->actor, "large-rows"), ==, c->escalated);
  g_assert_cmpuint (stat_of (c->actor, "requests-completed"), ==, c->answered);
  g_assert_cmpuint (stat_of (c->actor, "requests-failed"), ==, failed);
  g_assert_cmpuint (accel_actor_get_restart_count (c->actor), ==, 0);
  g_assert_cmpint (accel_actor_get_state (c->actor), ==, ACCEL_ACTOR_STATE_RUNNING);
}

/* A device fault in one run of model @which (0 small, 1 large) during a
 * stream: that batch runs again from the small model on, and every answer
 * is right. */
static void
cascade_fault_once (guint which)
{
  Cascade *c = cascade_new (g_test_rand_double_range (-0.5, 0.5), 0);
  /* A first wave without faults, so that the fault comes mid-stream. */
  GHashTable *escalating = cascade_wave (c, 8, 3);
  guint escalating_batches = g_hash_table_size (escalating);
  g_hash_table_unref (escalating);
  guint skip = which == 0 ? g_test_rand_int_range (0, 3) : 0;
  pt_affine_inject_device_faults (c->model[which], skip, 1);
  escalating = cascade_wave (c, 40, 3);
  escalating_batches += g_hash_table_size (escalating);
  g_hash_table_unref (escalating);

  g_assert_cmpuint (pt_affine_get_faults_pending (c->model[which]), ==, 0);
  g_assert_cmpuint (c->escalated, >, 0);
  g_assert_cmpuint (c->escalated, <, c->rows);
  cascade_check_stats (c, 0);
  /* The small model ran once per batch answered, and once more for the
   * retried batch; the large model once per batch that escalated rows,
   * and once more where it faulted. */
  guint64 batches = stat_of (c->actor, "batches-run");
  g_assert_cmpuint (pt_affine_get_runs (c->model[0]), ==, batches + 1);
  g_assert_cmpuint (pt_affine_get_runs (c->model[1]), ==, escalating_batches + which);
  cascade_free (c);
}

static void
test_cascade_small_fault (void)
{
  cascade_fault_once (0);
}

static void
test_cascade_large_fault (void)
{
  cascade_fault_once (1);
}

/* A device fault on both runs of one batch, in model @which: each of its
 * requests fails with it; the actor then serves the next ones. The
 * batches go when full: the three requests fill the first. */
static void
cascade_fault_twice (guint which)
{
  /* Where the large model faults, every row goes to it. */
  double threshold = which == 0 ? g_test_rand_double_range (-0.5, 0.5) : g_test_rand_double_range (1.5, 3);
  Cascade *c = cascade_new (threshold, ENDLESS_US);
  const guint n = 3;
  PtAsks *asks = pt_asks_new (n);
  double *xs[3];
  guint rows[3];
  split_rows (rows, CASCADE_BATCH);
  pt_affine_inject_device_faults (c->model[which], 0, 2);
  cascade_send (c, asks, xs, rows, n);
  pt_asks_wait (asks, n);
  check_all_faulted (asks, n);
  for (guint i = 0; i < n; i++)
    g_free (xs[i]);
  pt_asks_free (asks);
  g_assert_cmpuint (pt_affine_get_faults_pending (c->model[which]), ==, 0);
  g_assert_cmpuint (pt_affine_get_runs (c->model[0]), ==, 2);
  g_assert_cmpuint (pt_affine_get_runs (c->model[1]), ==, which == 1 ? 2 : 0);
  g_assert_cmpuint (stat_of (c->actor, "batches-run"), ==, 1);
  cascade_check_stats (c, n);

  /* One-row requests, full batches. */
  g_hash_table_unref (cascade_wave (c, CASCADE_BATCH * g_test_rand_int_range (2, 4), 1));
  cascade_check_stats (c, n);
  cascade_free (c);
}

static void
test_cascade_small_fault_twice (void)
{
  cascade_fault_twice (0);
}

static void
test_cascade_large_fault_twice (void)
{
  cascade_fault_twice (1);
}

/* ---- moe-router ------------------------------------------------------------- */

typedef struct {
  guint n_experts;
  guint k;
  gint64 d;
  PtLinear *gate;
  double *scale, *shift;        /* per expert */
  PtAffine **experts;
  AccelActor *actor;
  guint64 answered;             /* requests answered so far */
  guint64 rows;                 /* their rows */
} Moe;

#define MOE_BATCH 16

/* @delay_us as for cascade_new(). */
static Moe *
moe_new (guint64 delay_us)
{
  Moe *m = g_new0 (Moe, 1);
  m->n_experts = g_test_rand_int_range (3, 7);
  m->k = g_test_rand_int_range (1, m->n_experts);
  m->d = g_test_rand_int_range (4, 20);
  gint64 gate_sizes[] = { m->d, m->n_experts };
  m->gate = pt_linear_new (ACCEL_DTYPE_F32, gate_sizes, 2, "none", "none");
  m->scale = g_new (double, m->n_experts);
  m->shift = g_new (double, m->n_experts);
  m->experts = g_new (PtAffine *, m->n_experts);
  g_autoptr(GListStore) store = g_list_store_new (G_TYPE_OBJECT);
  for (guint e = 0; e < m->n_experts; e++)
    {
      m->scale[e] = g_test_rand_double_range (-3, 3);
      m->shift[e] = g_test_rand_double_range (-1, 1);
      m->experts[e] = pt_affine_new (m->d, m->scale[e], m->shift[e], FALSE);
      g_list_store_append (store, m->experts[e]);
    }
  m->actor = pt_spawn ("moe-router", "gate", m->gate->model, "experts", store, "top-k", m->k, "device", pt_cpu (),
                       "max-batch-size", MOE_BATCH, "max-queue-delay-us", delay_us, NULL);
  return m;
}

static void
moe_free (Moe *m)
{
  accel_actor_stop (m->actor);
  g_object_unref (m->actor);
  for (guint e = 0; e < m->n_experts; e++)
    g_object_unref (m->experts[e]);
  g_free (m->experts);
  g_free (m->scale);
  g_free (m->shift);
  pt_linear_free (m->gate);
  g_free (m);
}

/* Sends @n requests of @rows rows; returns the expert the gate clearly
 * ranks first for the first row. */
static guint
moe_send (Moe *m, PtAsks *asks, double **xs, const guint *rows, guint n)
{
  guint best = 0;
  for (guint i = 0; i < n; i++)
    {
      for (;;)
        {
          xs[i] = pt_random (ACCEL_DTYPE_F32, rows[i] * m->d, -1, 1);
          if (i > 0)
            break;
          g_autofree double *s = pt_linear_reference (m->gate, xs[i], 1);
          guint second = G_MAXUINT;
          best = 0;
          for (guint e = 1; e < m->n_experts; e++)
            if (s[e] > s[best])
              {
                second = best;
                best = e;
              }
            else if (second == G_MAXUINT || s[e] > s[second])
              second = e;
          if (s[best] - s[second] > 1e-3)
            break;
          g_free (xs[i]);
        }
      pt_ask (asks, m->actor, i, pt_request_end (pt_request ("x", ACCEL_DTYPE_F32, xs[i], rows[i], m->d)));
    }
  return best;
}

/* Checks the @n answers of @asks against the gate and the experts; returns
 * how many of their batches routed rows to @expert. */
static guint
moe_check (Moe *m, PtAsks *asks, double **xs, const guint *rows, guint n, guint expert)
{
  g_autoptr(GHashTable) routing = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  guint checked = 0;
  for (guint i = 0; i < n; i++)
    {
      PtAnswer *a = &asks->answers[i];
      g_assert_no_error (a->error);
      g_autofree double *scores = pt_linear_reference (m->gate, xs[i], rows[i]);
      double **outs = g_new (double *, m->n_experts);
      for (guint e = 0; e < m->n_experts; e++)
        {
          outs[e] = g_new (double, rows[i] * m->d);
          for (gint64 j = 0; j < rows[i] * m->d; j++)
            outs[e][j] = pt_affine_value (m->scale[e], m->shift[e], xs[i][j]);
        }
      checked += pt_moe_check_reply (a->reply, rows[i], scores, outs, m->n_experts, m->k, m->d);
      /* The experts' routing, as the reply says it was. */
      g_autoptr(GVariant) chosen_v = g_variant_lookup_value (a->reply, "experts", G_VARIANT_TYPE ("au"));
      gsize n_chosen;
      const guint32 *chosen = g_variant_get_fixed_array (chosen_v, &n_chosen, sizeof (guint32));
      for (guint j = 0; j < n_chosen; j++)
        if (chosen[j] == expert)
          note_batch (routing, a->reply);
      for (guint e = 0; e < m->n_experts; e++)
        g_free (outs[e]);
      g_free (outs);
      m->rows += rows[i];
      m->answered++;
    }
  g_assert_cmpuint (checked, >, 0);
  return g_hash_table_size (routing);
}

/* Each request answered is counted once, and each of its rows once for
 * each of its k experts; @failed requests failed; the actor runs, never
 * restarted. */
static void
moe_check_stats (Moe *m, guint64 failed)
{
  g_autoptr(GVariant) expert_rows = NULL;
  g_object_get (m->actor, "expert-rows", &expert_rows, NULL);
  gsize n;
  const guint64 *per = g_variant_get_fixed_array (expert_rows, &n, sizeof (guint64));
  g_assert_cmpuint (n, ==, m->n_experts);
  guint64 sum = 0;
  for (guint e = 0; e < n; e++)
    sum += per[e];
  g_assert_cmpuint (sum, ==, m->rows * m->k);
  g_assert_cmpuint (stat_of (m->actor, "requests-completed"), ==, m->answered);
  g_assert_cmpuint (stat_of (m->actor, "requests-failed"), ==, failed);
  g_assert_cmpuint (accel_actor_get_restart_count (m->actor), ==, 0);
  g_assert_cmpint (accel_actor_get_state (m->actor), ==, ACCEL_ACTOR_STATE_RUNNING);
}

/* Sends @n requests of 1 .. @max_rows rows, the first request's best
 * expert faulting in its first @fault_count runs, and checks the answers
 * and the statistics (@failed requests before). */
static void
moe_wave (Moe *m, guint n, guint max_rows, guint fault_count, guint64 failed)
{
  PtAsks *asks = pt_asks_new (n);
  double **xs = g_new0 (double *, n);
  guint *rows = g_new (guint, n);
  random_rows (rows, n, max_rows);
  /* The first request's best expert faults, so that the fault surely
   * comes: it runs in the first batch. */
  PtGate *gate = pt_gate_hold (m->actor);
  guint expert = moe_send (m, asks, xs, rows, n);
  guint runs = pt_affine_get_runs (m->experts[expert]);
  pt_affine_inject_device_faults (m->experts[expert], 0, fault_count);
  pt_gate_release (gate);
  pt_asks_wait (asks, n);
  g_assert_cmpuint (pt_affine_get_faults_pending (m->experts[expert]), ==, 0);
  guint batches = moe_check (m, asks, xs, rows, n, expert);
  /* Its runs: one per batch routed to it, and the faulted one. */
  g_assert_cmpuint (pt_affine_get_runs (m->experts[expert]) - runs, ==, batches + fault_count);
  moe_check_stats (m, failed);
  for (guint i = 0; i < n; i++)
    g_free (xs[i]);
  g_free (xs);
  g_free (rows);
  pt_asks_free (asks);
}

/* A device fault in one expert's run: the batch runs again, from the gate
 * on, and every answer is right. */
static void
test_moe_expert_fault (void)
{
  Moe *m = moe_new (0);
  moe_wave (m, 6, 4, 0, 0);
  moe_wave (m, 30, 4, 1, 0);
  moe_free (m);
}

/* A device fault in both runs of one batch: its requests fail with it; the
 * actor serves the next ones. The batches go when full: the three
 * requests fill the first. */
static void
test_moe_expert_fault_twice (void)
{
  Moe *m = moe_new (ENDLESS_US);
  const guint n = 3;
  PtAsks *asks = pt_asks_new (n);
  double *xs[3];
  guint rows[3];
  split_rows (rows, MOE_BATCH);
  PtGate *gate = pt_gate_hold (m->actor);
  guint expert = moe_send (m, asks, xs, rows, n);
  pt_affine_inject_device_faults (m->experts[expert], 0, 2);
  pt_gate_release (gate);
  pt_asks_wait (asks, n);
  check_all_faulted (asks, n);
  for (guint i = 0; i < n; i++)
    g_free (xs[i]);
  pt_asks_free (asks);
  g_assert_cmpuint (pt_affine_get_faults_pending (m->experts[expert]), ==, 0);
  g_assert_cmpuint (pt_affine_get_runs (m->experts[expert]), ==, 2);
  g_assert_cmpuint (stat_of (m->actor, "batches-run"), ==, 1);
  moe_check_stats (m, n);

  /* One-row requests, full batches. */
  moe_wave (m, MOE_BATCH * g_test_rand_int_range (2, 4), 1, 0, n);
  moe_free (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/retry/cascade-small-fault", test_cascade_small_fault);
  g_test_add_func ("/retry/cascade-large-fault", test_cascade_large_fault);
  g_test_add_func ("/retry/cascade-small-fault-twice", test_cascade_small_fault_twice);
  g_test_add_func ("/retry/cascade-large-fault-twice", test_cascade_large_fault_twice);
  g_test_add_func ("/retry/moe-expert-fault", test_moe_expert_fault);
  g_test_add_func ("/retry/moe-expert-fault-twice", test_moe_expert_fault_twice);
  return pt_run ();
}
