/* Tests of the `batcher` actor type (and the server base every serving
 * pattern shares): replies against references on random data in f32, f16
 * and bf16; batch formation under max-batch-size, preferred sizes and the
 * queue delay; priorities and preserve-ordering; timeouts (reject and
 * delay); backpressure; bad input refused naming the field while the
 * batch runs for the others; a model that fails (restart under the
 * budget, pending asks failed, then stopped) or never completes
 * (watchdog); shutdown with asks pending; and the `linear` model's and
 * spawn's own errors.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "patterns-test.h"

#include <string.h>
#include <gobject/gvaluecollector.h>

#define D 5

#define spawn_affine(model, ...) pt_spawn ("batcher", "model", (model), "device", pt_cpu (), __VA_ARGS__)

/* A one-row request whose x[0] is @first (the rest random). */
static GVariant *
affine_request (double first, double **x_out)
{
  double *x = pt_random (ACCEL_DTYPE_F32, D, -1, 1);
  x[0] = first;
  GVariant *request = pt_request_end (pt_request ("x", ACCEL_DTYPE_F32, x, 1, D));
  if (x_out)
    *x_out = x;
  else
    g_free (x);
  return request;
}

static GVariant *
with_keys (GVariant *request, const char *key, GVariant *value)
{
  GVariantDict *dict = g_variant_dict_new (request);
  g_variant_unref (g_variant_ref_sink (request));
  g_variant_dict_insert_value (dict, key, value);
  return pt_request_end (dict);
}

static void
check_affine_reply (PtAnswer *answer, const double *x, double scale, double shift)
{
  g_assert_no_error (answer->error);
  guint rows;
  gint64 d;
  g_autofree double *y = pt_reply_output (answer->reply, "y", ACCEL_DTYPE_F32, &rows, &d);
  g_assert_cmpuint (rows, ==, 1);
  g_assert_cmpint (d, ==, D);
  for (guint i = 0; i < D; i++)
    g_assert_cmpfloat_with_epsilon (y[i], (float) (scale * (float) x[i] + shift), 1e-5);
}

static void
wait_queue_length (AccelActor *actor, guint n)
{
  gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  guint length = 0;
  while (g_object_get (actor, "queue-length", &length, NULL), length != n)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, end);
      g_main_context_iteration (NULL, FALSE);
      g_usleep (200);
    }
}

/* ---- replies against references ------------------------------------------ */

static void
check_linear (AccelDType dtype, const gint64 *sizes, guint n_sizes, const char *act, const char *out_act)
{
  PtLinear *linear = pt_linear_new (dtype, sizes, n_sizes, act, out_act);
  g_autoptr(GError) error = NULL;
  guint max_batch = g_test_rand_int_range (3, 9);
  g_autoptr(AccelActor) actor = accel_system_spawn (pt_system (), "batcher", &error,
                                                    "model", linear->model, "device", pt_cpu (),
                                                    "max-batch-size", max_batch,
                                                    "max-queue-delay-us", (guint64) 500, NULL);
  g_assert_no_error (error);

  guint n = g_test_rand_int_range (20, 40);
  gint64 k = sizes[0], out = sizes[n_sizes - 1];
  double **xs = g_new (double *, n);
  guint *rows = g_new (guint, n);
  PtAsks *asks = pt_asks_new (n);
  for (guint i = 0; i < n; i++)
    {
      rows[i] = g_test_rand_int_range (1, MIN (max_batch, 4) + 1);
      xs[i] = pt_random (dtype, rows[i] * k, -1, 1);
      GVariantDict *dict = pt_request ("x", dtype, xs[i], rows[i], k);
      g_variant_dict_insert (dict, "sequence", "t", (guint64) 1000 + i);
      pt_ask (asks, actor, i, pt_request_end (dict));
    }
  pt_asks_wait (asks, n);

  guint64 served_rows = 0;
  for (guint i = 0; i < n; i++)
    {
      PtAnswer *a = &asks->answers[i];
      g_assert_no_error (a->error);
      guint got_rows;
      gint64 d;
      g_autofree double *y = pt_reply_output (a->reply, "y", dtype, &got_rows, &d);
      g_assert_cmpuint (got_rows, ==, rows[i]);
      g_assert_cmpint (d, ==, out);
      double rtol = dtype == ACCEL_DTYPE_F32 ? 1e-4 : 2 * pt_eps (dtype);
      pt_linear_check (linear, "linear reply", xs[i], rows[i], y, rtol, 1e-5);
      g_assert_cmpuint (pt_reply_u32 (a->reply, "model-version"), ==, 1);
      guint32 batch = pt_reply_u32 (a->reply, "batch-size");
      g_assert_cmpuint (batch, >=, rows[i]);
      g_assert_cmpuint (batch, <=, max_batch);
      guint64 sequence = 0;
      gint64 queue_us = -1;
      g_assert_true (g_variant_lookup (a->reply, "sequence", "t", &sequence));
      g_assert_cmpuint (sequence, ==, 1000 + i);
      g_assert_true (g_variant_lookup (a->reply, "queue-us", "x", &queue_us));
      g_assert_cmpint (queue_us, >=, 0);
      guint64 batch_number = 0, started = 0;
      g_assert_true (g_variant_lookup (a->reply, "batch", "t", &batch_number));
      g_object_get (actor, "batches-started", &started, NULL);
      g_assert_cmpuint (batch_number, >=, 1);
      g_assert_cmpuint (batch_number, <=, started);
      served_rows += rows[i];
      g_free (xs[i]);
    }

  /* The histogram counts every row once. */
  g_autoptr(GVariant) histogram = NULL;
  guint64 batches = 0, completed = 0;
  double p50 = -1, p99 = -1;
  g_object_get (actor, "batch-size-histogram", &histogram, "batches-run", &batches, "requests-completed", &completed,
                "queue-delay-p50-us", &p50, "queue-delay-p99-us", &p99, NULL);
  gsize len;
  const guint64 *h = g_variant_get_fixed_array (histogram, &len, sizeof (guint64));
  g_assert_cmpuint (len, ==, max_batch + 1);
  guint64 rows_seen = 0, batches_seen = 0;
  for (gsize s = 0; s < len; s++)
    {
      rows_seen += s * h[s];
      batches_seen += h[s];
    }
  g_assert_cmpuint (rows_seen, ==, served_rows);
  g_assert_cmpuint (batches_seen, ==, batches);
  g_assert_cmpuint (completed, ==, n);
  g_assert_cmpfloat (p50, >=, 0);
  g_assert_cmpfloat (p99, >=, p50);

  accel_actor_stop (actor);
  pt_asks_free (asks);
  g_free (xs);
  g_free (rows);
  pt_linear_free (linear);
}

static void
test_reference (void)
{
  /* Sizes that are multiples of nothing; three layers with both activations. */
  gint64 deep[] = { g_test_rand_int_range (3, 40), g_test_rand_int_range (3, 40), g_test_rand_int_range (3, 40),
                    g_test_rand_int_range (1, 20) };
  check_linear (ACCEL_DTYPE_F32, deep, 4, "relu", "none");
  check_linear (ACCEL_DTYPE_F32, deep, 3, "gelu", "gelu");
  gint64 one[] = { g_test_rand_int_range (3, 40), g_test_rand_int_range (1, 30) };
  check_linear (ACCEL_DTYPE_F16, one, 2, "none", "relu");
  check_linear (ACCEL_DTYPE_BF16, one, 2, "none", "none");
}

/* ---- batch formation ------------------------------------------------------- */

/* Sends @n one-row requests while the actor's thread is held, so that they
 * are received in one go; returns each one's batch size. */
static guint *
burst (AccelActor *actor, guint n)
{
  PtAsks *asks = pt_asks_new (n);
  double **xs = g_new (double *, n);
  PtGate *gate = pt_gate_hold (actor);
  for (guint i = 0; i < n; i++)
    pt_ask (asks, actor, i, affine_request (g_test_rand_double_range (-1, 1), &xs[i]));
  pt_gate_release (gate);
  pt_asks_wait (asks, n);
  guint *sizes = g_new (guint, n);
  for (guint i = 0; i < n; i++)
    {
      check_affine_reply (&asks->answers[i], xs[i], 2, 1);
      sizes[i] = pt_reply_u32 (asks->answers[i].reply, "batch-size");
      g_free (xs[i]);
    }
  g_free (xs);
  pt_asks_free (asks);
  return sizes;
}

static void
test_formation (void)
{
  g_autoptr(PtAffine) model = pt_affine_new (D, 2, 1, FALSE);

  /* No delay: the first request goes alone; what came meanwhile goes next. */
  g_autoptr(AccelActor) eager = spawn_affine (model, "max-batch-size", 8, NULL);
  g_autofree guint *a = burst (eager, 5);
  guint want_a[] = { 1, 4, 4, 4, 4 };
  g_assert_cmpmem (a, sizeof want_a, want_a, sizeof want_a);

  /* A delay: fewer rows than any size wait for it, then go together. */
  g_autoptr(AccelActor) patient = spawn_affine (model, "max-batch-size", 8,
                                                "max-queue-delay-us", (guint64) 300000, NULL);
  g_autofree guint *b = burst (patient, 3);
  guint want_b[] = { 3, 3, 3 };
  g_assert_cmpmem (b, sizeof want_b, want_b, sizeof want_b);

  /* Preferred sizes go at once, without the (here endless) delay. */
  guint32 preferred[] = { 5, 3 };
  g_autoptr(AccelActor) sized = spawn_affine (model, "max-batch-size", 8,
                                              "max-queue-delay-us", (guint64) 3600 * G_USEC_PER_SEC,
                                              "preferred-batch-sizes",
                                              g_variant_new_fixed_array (G_VARIANT_TYPE_UINT32, preferred, 2, sizeof (guint32)),
                                              NULL);
  g_autofree guint *c = burst (sized, 8);
  guint want_c[] = { 3, 3, 3, 5, 5, 5, 5, 5 };
  g_assert_cmpmem (c, sizeof want_c, want_c, sizeof want_c);

  /* And max-batch-size caps a batch, also without waiting. */
  g_autoptr(AccelActor) capped = spawn_affine (model, "max-batch-size", 4,
                                               "max-queue-delay-us", (guint64) 3600 * G_USEC_PER_SEC, NULL);
  g_autofree guint *d = burst (capped, 8);
  guint want_d[] = { 4, 4, 4, 4, 4, 4, 4, 4 };
  g_assert_cmpmem (d, sizeof want_d, want_d, sizeof want_d);

  g_autoptr(GVariant) histogram = NULL;
  g_object_get (sized, "batch-size-histogram", &histogram, NULL);
  gsize len;
  const guint64 *h = g_variant_get_fixed_array (histogram, &len, sizeof (guint64));
  g_assert_cmpuint (h[3], ==, 1);
  g_assert_cmpuint (h[5], ==, 1);
  accel_actor_stop (eager);
  accel_actor_stop (patient);
  accel_actor_stop (sized);
  accel_actor_stop (capped);
}

/* ---- priority and ordering ------------------------------------------------- */

/* One held batch (B0, low), then L1, L2 (low) and H1, H2 (high) queued,
 * max-batch-size 2: returns the order of the five answers. */
static void
priority_round (gboolean preserve, guint *order)
{
  g_autoptr(PtAffine) model = pt_affine_new (D, 1, 0, FALSE);
  g_autoptr(AccelActor) actor = spawn_affine (model, "max-batch-size", 2, "priority-levels", 2,
                                              "preserve-ordering", preserve, NULL);
  PtAsks *asks = pt_asks_new (5);
  double *xs[5];
  guint priority[5] = { 2, 2, 2, 1, 1 };
  pt_affine_hold (model, TRUE);
  for (guint i = 0; i < 5; i++)
    {
      GVariant *request = affine_request (g_test_rand_double_range (-1, 1), &xs[i]);
      /* B0 and the low ones name their level; the default is the lowest too. */
      if (i != 1)
        request = with_keys (request, "priority", g_variant_new_uint32 (priority[i]));
      pt_ask (asks, actor, i, request);
      if (i == 0)
        while (pt_affine_get_runs (model) < 1)
          g_usleep (200);
    }
  wait_queue_length (actor, 4);
  pt_affine_hold (model, FALSE);
  pt_asks_wait (asks, 5);
  for (guint i = 0; i < 5; i++)
    {
      check_affine_reply (&asks->answers[i], xs[i], 1, 0);
      order[i] = asks->answers[i].order;
      g_free (xs[i]);
    }
  /* The high ones ran together, before the low ones. */
  g_assert_cmpuint (pt_reply_u32 (asks->answers[3].reply, "batch-size"), ==, 2);
  pt_asks_free (asks);
  accel_actor_stop (actor);
}

static void
test_priority_and_ordering (void)
{
  guint order[5];
  priority_round (FALSE, order);
  guint want_priority[] = { 0, 3, 4, 1, 2 };
  g_assert_cmpmem (order, sizeof order, want_priority, sizeof want_priority);
  priority_round (TRUE, order);
  guint want_arrival[] = { 0, 1, 2, 3, 4 };
  g_assert_cmpmem (order, sizeof order, want_arrival, sizeof want_arrival);
}

/* ---- timeouts ----------------------------------------------------------- */

static void
test_timeout_reject (void)
{
  g_autoptr(PtAffine) model = pt_affine_new (D, 1, 0, FALSE);
  g_autoptr(AccelActor) actor = spawn_affine (model, "default-timeout-us", (guint64) 3000, NULL);
  PtAsks *asks = pt_asks_new (4);
  pt_affine_hold (model, TRUE);
  /* B0 runs (held); R1 names 2 ms, R2 none (0), R3 takes the default. */
  pt_ask (asks, actor, 0, affine_request (0.5, NULL));
  while (pt_affine_get_runs (model) < 1)
    g_usleep (200);
  pt_ask (asks, actor, 1, with_keys (affine_request (0.5, NULL), "timeout-us", g_variant_new_int64 (2000)));
  pt_ask (asks, actor, 2, with_keys (affine_request (0.5, NULL), "timeout-us", g_variant_new_int64 (0)));
  pt_ask (asks, actor, 3, affine_request (0.5, NULL));
  pt_asks_wait (asks, 2);   /* R1 and R3, while B0 is still held */
  g_assert_error (asks->answers[1].error, ACCEL_ERROR, ACCEL_ERROR_TIMED_OUT);
  g_assert_error (asks->answers[3].error, ACCEL_ERROR, ACCEL_ERROR_TIMED_OUT);
  g_assert_nonnull (strstr (asks->answers[1].error->message, "timeout"));
  g_assert_cmpint (asks->answers[0].order, ==, -1);
  pt_affine_hold (model, FALSE);
  pt_asks_wait (asks, 4);
  g_assert_no_error (asks->answers[0].error);
  g_assert_no_error (asks->answers[2].error);
  guint64 timed_out = 0;
  g_object_get (actor, "requests-timed-out", &timed_out, NULL);
  g_assert_cmpuint (timed_out, ==, 2);
  pt_asks_free (asks);
  accel_actor_stop (actor);
}

static void
test_timeout_delay (void)
{
  g_autoptr(PtAffine) model = pt_affine_new (D, 1, 0, FALSE);
  g_autoptr(AccelActor) actor = spawn_affine (model, "max-batch-size", 1, "timeout-action", "delay", NULL);
  PtAsks *asks = pt_asks_new (4);
  pt_affine_hold (model, TRUE);
  pt_ask (asks, actor, 0, affine_request (0.5, NULL));
  while (pt_affine_get_runs (model) < 1)
    g_usleep (200);
  pt_ask (asks, actor, 1, with_keys (affine_request (0.5, NULL), "timeout-us", g_variant_new_int64 (1000)));
  pt_ask (asks, actor, 2, affine_request (0.5, NULL));
  pt_ask (asks, actor, 3, affine_request (0.5, NULL));
  pt_wait_for_stat (actor, "requests-timed-out", 1);
  pt_affine_hold (model, FALSE);
  pt_asks_wait (asks, 4);
  /* R1 timed out: it still ran, but after those that had not. */
  for (guint i = 0; i < 4; i++)
    g_assert_no_error (asks->answers[i].error);
  g_assert_cmpint (asks->answers[0].order, ==, 0);
  g_assert_cmpint (asks->answers[2].order, ==, 1);
  g_assert_cmpint (asks->answers[3].order, ==, 2);
  g_assert_cmpint (asks->answers[1].order, ==, 3);
  pt_asks_free (asks);
  accel_actor_stop (actor);
}

/* ---- backpressure -------------------------------------------------------- */

static void
test_backpressure (void)
{
  g_autoptr(PtAffine) model = pt_affine_new (D, 3, -1, FALSE);
  guint limit = g_test_rand_int_range (2, 6);
  g_autoptr(AccelActor) actor = spawn_affine (model, "max-queue-size", limit, "max-batch-size", 2, NULL);
  guint n = limit + 3;
  PtAsks *asks = pt_asks_new (n);
  double **xs = g_new0 (double *, n);
  pt_affine_hold (model, TRUE);
  pt_ask (asks, actor, 0, affine_request (0.25, &xs[0]));
  while (pt_affine_get_runs (model) < 1)
    g_usleep (200);
  for (guint i = 1; i <= limit; i++)
    pt_ask (asks, actor, i, affine_request (0.25, &xs[i]));
  wait_queue_length (actor, limit);
  /* The queue is full: what comes now is refused at once. */
  for (guint i = limit + 1; i < n; i++)
    pt_ask (asks, actor, i, affine_request (0.25, &xs[i]));
  pt_asks_wait (asks, 2);
  for (guint i = limit + 1; i < n; i++)
    {
      g_assert_error (asks->answers[i].error, ACCEL_ERROR, ACCEL_ERROR_BUSY);
      g_assert_nonnull (strstr (asks->answers[i].error->message, "max-queue-size"));
    }
  guint length = 0;
  g_object_get (actor, "queue-length", &length, NULL);
  g_assert_cmpuint (length, ==, limit);
  pt_affine_hold (model, FALSE);
  pt_asks_wait (asks, n);
  for (guint i = 0; i <= limit; i++)
    check_affine_reply (&asks->answers[i], xs[i], 3, -1);
  guint64 rejected = 0;
  g_object_get (actor, "requests-rejected", &rejected, NULL);
  g_assert_cmpuint (rejected, ==, 2);
  for (guint i = 0; i < n; i++)
    g_free (xs[i]);
  g_free (xs);
  pt_asks_free (asks);
  accel_actor_stop (actor);
}

/* ---- bad input -------------------------------------------------------------- */

static void
expect_invalid (AccelActor *actor, GVariant *request, const char *field)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = accel_actor_ask (actor, request, NULL, &error);
  g_assert_null (reply);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  if (strstr (error->message, field) == NULL)
    g_error ("“%s” does not name %s", error->message, field);
}

static GVariant *
raw_request (const char *dtype, const gint64 *dims, guint rank, gsize size)
{
  g_autofree guint8 *data = g_malloc0 (MAX (size, 1));
  GVariantDict *dict = g_variant_dict_new (NULL);
  g_variant_dict_insert_value (dict, "x",
                               g_variant_new ("(s@ax@ay)", dtype,
                                              g_variant_new_fixed_array (G_VARIANT_TYPE_INT64, dims, rank, sizeof (gint64)),
                                              g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, data, size, 1)));
  return pt_request_end (dict);
}

static void
test_bad_input (void)
{
  g_autoptr(PtAffine) model = pt_affine_new (D, 1, 2, FALSE);
  g_autoptr(AccelActor) actor = spawn_affine (model, "max-batch-size", 4, "priority-levels", 2,
                                              "max-queue-delay-us", (guint64) 200000, NULL);
  gint64 good[] = { 1, D }, wide[] = { 1, D + 1 }, flat[] = { D }, none[] = { 0, D }, many[] = { 5, D };

  expect_invalid (actor, g_variant_new_int32 (1), "a{sv}");
  expect_invalid (actor, g_variant_new ("a{sv}", NULL), "“x” is missing");
  expect_invalid (actor, with_keys (affine_request (1, NULL), "y", g_variant_new_int32 (1)), "“y”");
  GVariantDict *dict = g_variant_dict_new (NULL);
  g_variant_dict_insert (dict, "x", "i", 3);
  expect_invalid (actor, pt_request_end (dict), "“x”");
  expect_invalid (actor, raw_request ("f64", good, 2, D * 8), "“x” holds f64");
  expect_invalid (actor, raw_request ("f13", good, 2, D * 4), "“x” names the unknown dtype");
  expect_invalid (actor, raw_request ("f32", wide, 2, (D + 1) * 4), "“x” has the shape");
  expect_invalid (actor, raw_request ("f32", flat, 1, D * 4), "“x” has the shape");
  expect_invalid (actor, raw_request ("f32", none, 2, 0), "“x” has the shape");
  expect_invalid (actor, raw_request ("f32", good, 2, D * 4 - 1), "“x” has");
  expect_invalid (actor, raw_request ("f32", many, 2, 5 * D * 4), "max-batch-size");
  expect_invalid (actor, with_keys (affine_request (1, NULL), "priority", g_variant_new_uint32 (3)), "“priority”");
  expect_invalid (actor, with_keys (affine_request (1, NULL), "priority", g_variant_new_int32 (1)), "“priority”");
  expect_invalid (actor, with_keys (affine_request (1, NULL), "timeout-us", g_variant_new_int64 (-5)), "“timeout-us”");
  expect_invalid (actor, with_keys (affine_request (1, NULL), "timeout-us", g_variant_new_uint32 (5)), "“timeout-us”");
  expect_invalid (actor, with_keys (affine_request (1, NULL), "sequence", g_variant_new_string ("a")), "“sequence”");
  expect_invalid (actor, with_keys (affine_request (1, NULL), "tenant", g_variant_new_int32 (2)), "“tenant”");

  /* A bad request between two good ones: they still run, together. */
  PtAsks *asks = pt_asks_new (3);
  double *x0, *x2;
  PtGate *gate = pt_gate_hold (actor);
  pt_ask (asks, actor, 0, affine_request (0.5, &x0));
  pt_ask (asks, actor, 1, raw_request ("f32", wide, 2, (D + 1) * 4));
  pt_ask (asks, actor, 2, affine_request (0.5, &x2));
  pt_gate_release (gate);
  pt_asks_wait (asks, 3);
  g_assert_error (asks->answers[1].error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  check_affine_reply (&asks->answers[0], x0, 1, 2);
  check_affine_reply (&asks->answers[2], x2, 1, 2);
  g_assert_cmpuint (pt_reply_u32 (asks->answers[0].reply, "batch-size"), ==, 2);
  g_assert_cmpuint (pt_reply_u32 (asks->answers[2].reply, "batch-size"), ==, 2);
  g_assert_cmpuint (accel_actor_get_restart_count (actor), ==, 0);
  g_assert_cmpint (accel_actor_get_state (actor), ==, ACCEL_ACTOR_STATE_RUNNING);
  guint64 rejected = 0;
  g_object_get (actor, "requests-rejected", &rejected, NULL);
  g_assert_cmpuint (rejected, ==, 18);
  g_free (x0);
  g_free (x2);
  pt_asks_free (asks);
  accel_actor_stop (actor);
}

/* ---- supervision --------------------------------------------------------- */

static void
test_crash_restart (void)
{
  g_autoptr(PtAffine) model = pt_affine_new (D, 1, 0, FALSE);
  pt_affine_set_fail_on (model, 777);
  g_autoptr(GError) error = NULL;
  /* A supervisor of its own, allowing two restarts. */
  g_autoptr(AccelActor) supervisor = g_object_new (ACCEL_TYPE_ACTOR, "name", "test-supervisor", NULL);
  accel_actor_set_strategy (supervisor, 2, 60000, NULL, NULL, NULL);
  g_autoptr(AccelActor) actor = accel_system_spawn (pt_system (), "batcher", &error, "model", model,
                                                    "device", pt_cpu (), "max-batch-size", 1,
                                                    "parent", supervisor, "name", "crashy", NULL);
  g_assert_no_error (error);
  g_assert_true (accel_actor_get_parent (actor) == supervisor);

  for (guint round = 1; round <= 3; round++)
    {
      /* B0 held; then the failing request, then two that wait behind it. */
      PtAsks *asks = pt_asks_new (4);
      guint runs = pt_affine_get_runs (model);
      pt_affine_hold (model, TRUE);
      pt_ask (asks, actor, 0, affine_request (0.5, NULL));
      while (pt_affine_get_runs (model) < runs + 1)
        g_usleep (200);
      pt_ask (asks, actor, 1, affine_request (777, NULL));
      pt_ask (asks, actor, 2, affine_request (0.5, NULL));
      pt_ask (asks, actor, 3, affine_request (0.5, NULL));
      wait_queue_length (actor, 3);
      pt_affine_hold (model, FALSE);
      pt_asks_wait (asks, 4);
      g_assert_no_error (asks->answers[0].error);
      g_assert_error (asks->answers[1].error, ACCEL_ERROR, ACCEL_ERROR_FAILED);
      g_assert_nonnull (strstr (asks->answers[1].error->message, "asked to fail"));
      const char *why = round < 3 ? "was restarted after a failure" : "stopped";
      for (guint i = 2; i < 4; i++)
        {
          g_assert_error (asks->answers[i].error, ACCEL_ERROR, ACCEL_ERROR_FAILED);
          if (strstr (asks->answers[i].error->message, why) == NULL)
            g_error ("round %u: “%s” does not say “%s”", round, asks->answers[i].error->message, why);
          g_assert_nonnull (strstr (asks->answers[i].error->message, "crashy"));
        }
      pt_asks_free (asks);
      if (round < 3)
        {
          g_assert_cmpuint (accel_actor_get_restart_count (actor), ==, round);
          /* After a restart it serves again. */
          double *x;
          g_autoptr(GVariant) reply = accel_actor_ask (actor, affine_request (0.25, &x), NULL, &error);
          g_assert_no_error (error);
          g_autofree double *y = pt_reply_output (reply, "y", ACCEL_DTYPE_F32, NULL, NULL);
          g_assert_cmpfloat_with_epsilon (y[1], x[1], 1e-6);
          g_free (x);
        }
    }
  /* The third failure spent the budget: stopped, and later asks fail. */
  g_assert_cmpint (accel_actor_get_state (actor), ==, ACCEL_ACTOR_STATE_STOPPED);
  g_autoptr(GVariant) late = accel_actor_ask (actor, affine_request (0.5, NULL), NULL, &error);
  g_assert_null (late);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED);
  g_assert_cmpuint (accel_actor_get_n_pending (actor), ==, 0);
  accel_actor_stop (supervisor);
}

static void
test_watchdog (void)
{
  g_autoptr(PtAffine) model = pt_affine_new (D, 1, 0, FALSE);
  /* Long enough that the second ask is queued before the first run times
   * out, even on a loaded machine (it then fails with the restart). */
  g_autoptr(AccelActor) actor = spawn_affine (model, "run-timeout-ms", 1000, "max-batch-size", 1, NULL);
  g_autoptr(GError) error = NULL;
  PtAsks *asks = pt_asks_new (2);
  /* A run that never completes. */
  pt_affine_hold (model, TRUE);
  pt_ask (asks, actor, 0, affine_request (0.5, NULL));
  pt_ask (asks, actor, 1, affine_request (0.5, NULL));
  pt_asks_wait (asks, 2);
  g_assert_error (asks->answers[0].error, ACCEL_ERROR, ACCEL_ERROR_TIMED_OUT);
  g_assert_nonnull (strstr (asks->answers[0].error->message, "run-timeout-ms"));
  g_assert_error (asks->answers[1].error, ACCEL_ERROR, ACCEL_ERROR_FAILED);
  g_assert_nonnull (strstr (asks->answers[1].error->message, "restarted"));
  g_assert_cmpuint (accel_actor_get_restart_count (actor), ==, 1);
  /* The late completion is dropped; the restarted actor serves. */
  pt_affine_hold (model, FALSE);
  g_autoptr(GVariant) reply = accel_actor_ask (actor, affine_request (0.5, NULL), NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (reply);
  pt_asks_free (asks);
  accel_actor_stop (actor);
}

static void
test_shutdown_pending (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelSystem) system = accel_system_new (&error);
  g_assert_no_error (error);
  g_autoptr(AccelDevice) cpu = accel_system_get_device (system, "cpu:0", &error);
  g_assert_no_error (error);
  g_autoptr(PtAffine) model = pt_affine_new (D, 1, 0, FALSE);
  g_autoptr(AccelActor) actor = accel_system_spawn (system, "batcher", &error, "model", model, "device", cpu,
                                                    "max-batch-size", 1, NULL);
  g_assert_no_error (error);
  PtAsks *asks = pt_asks_new (3);
  pt_affine_hold (model, TRUE);
  for (guint i = 0; i < 3; i++)
    pt_ask (asks, actor, i, affine_request (0.5, NULL));
  wait_queue_length (actor, 2);
  accel_system_shutdown (system);
  pt_asks_wait (asks, 3);
  for (guint i = 0; i < 3; i++)
    {
      g_assert_error (asks->answers[i].error, ACCEL_ERROR, ACCEL_ERROR_FAILED);
      g_assert_nonnull (strstr (asks->answers[i].error->message, "stopped"));
    }
  g_assert_cmpint (accel_actor_get_state (actor), ==, ACCEL_ACTOR_STATE_STOPPED);
  pt_affine_hold (model, FALSE);
  pt_asks_free (asks);
}

/* ---- errors of spawn and of the linear model ------------------------------ */

static void
expect_spawn_error (AccelError code, const char *field, const char *type, const char *first, ...)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autoptr(GArray) values = g_array_new (FALSE, TRUE, sizeof (GValue));
  g_array_set_clear_func (values, (GDestroyNotify) g_value_unset);
  va_list args;
  va_start (args, first);
  for (const char *name = first; name; name = va_arg (args, const char *))
    {
      g_ptr_array_add (names, (gpointer) name);
      GValue *v = va_arg (args, GValue *);
      g_array_append_vals (values, v, 1);
      memset (v, 0, sizeof *v);
    }
  va_end (args);
  gpointer made = g_str_equal (type, "linear")
    ? (gpointer) accel_system_new_model_with_properties (pt_system (), type, names->len, (const char **) names->pdata,
                                                         (const GValue *) values->data, &error)
    : (gpointer) accel_system_spawn_with_properties (pt_system (), type, names->len, (const char **) names->pdata,
                                                     (const GValue *) values->data, &error);
  g_assert_null (made);
  g_assert_error (error, ACCEL_ERROR, (int) code);
  if (strstr (error->message, field) == NULL)
    g_error ("“%s” does not name %s", error->message, field);
}

static GValue *
value_of (GType type, ...)
{
  static GValue values[8];
  static guint next;
  GValue *v = &values[next++ % G_N_ELEMENTS (values)];
  memset (v, 0, sizeof *v);
  g_value_init (v, type);
  va_list args;
  va_start (args, type);
  g_autofree char *error = NULL;
  G_VALUE_COLLECT (v, args, 0, &error);
  va_end (args);
  g_assert_null (error);
  return v;
}

static void
test_spawn_errors (void)
{
  g_autoptr(PtAffine) model = pt_affine_new (D, 1, 0, FALSE);
  g_autoptr(GError) error = NULL;

  g_assert_null (accel_system_spawn (pt_system (), "no-such-pattern", &error, NULL));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE);
  g_clear_error (&error);
  expect_spawn_error (ACCEL_ERROR_INVALID_ARGUMENT, "“model” is not set", "batcher", NULL);
  expect_spawn_error (ACCEL_ERROR_INVALID_ARGUMENT, "no property “modle”", "batcher",
                      "modle", value_of (ACCEL_TYPE_MODEL, model), NULL);
  expect_spawn_error (ACCEL_ERROR_INVALID_ARGUMENT, "read-only", "batcher",
                      "model", value_of (ACCEL_TYPE_MODEL, model), "batches-run", value_of (G_TYPE_UINT64, (guint64) 1), NULL);
  expect_spawn_error (ACCEL_ERROR_INVALID_ARGUMENT, "“max-batch-size”", "batcher",
                      "model", value_of (ACCEL_TYPE_MODEL, model), "max-batch-size", value_of (G_TYPE_STRING, "many"), NULL);
  expect_spawn_error (ACCEL_ERROR_INVALID_ARGUMENT, "“timeout-action”", "batcher",
                      "model", value_of (ACCEL_TYPE_MODEL, model), "timeout-action", value_of (G_TYPE_STRING, "ignore"), NULL);
  guint32 too_big[] = { 2, 100 };
  expect_spawn_error (ACCEL_ERROR_INVALID_ARGUMENT, "“preferred-batch-sizes”", "batcher",
                      "model", value_of (ACCEL_TYPE_MODEL, model),
                      "preferred-batch-sizes", value_of (G_TYPE_VARIANT, g_variant_new_fixed_array (G_VARIANT_TYPE_UINT32, too_big, 2, 4)),
                      NULL);
  expect_spawn_error (ACCEL_ERROR_INVALID_ARGUMENT, "“default-priority”", "batcher",
                      "model", value_of (ACCEL_TYPE_MODEL, model), "priority-levels", value_of (G_TYPE_UINT, 2),
                      "default-priority", value_of (G_TYPE_UINT, 3), NULL);

  guint64 sizes[] = { 4, 3 };
  guint8 short_block[4 * 3 * 4 - 1] = { 0 };
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("aay"));
  g_variant_builder_add_value (&b, g_variant_new_fixed_array (G_VARIANT_TYPE_BYTE, short_block, sizeof short_block, 1));
  GVariant *one_short = g_variant_builder_end (&b);
  expect_spawn_error (ACCEL_ERROR_INVALID_ARGUMENT, "“weights”", "linear",
                      "layer-sizes", value_of (G_TYPE_VARIANT, g_variant_new_fixed_array (G_VARIANT_TYPE_UINT64, sizes, 2, 8)),
                      "weights", value_of (G_TYPE_VARIANT, one_short), NULL);
  expect_spawn_error (ACCEL_ERROR_INVALID_ARGUMENT, "“layer-sizes”", "linear",
                      "layer-sizes", value_of (G_TYPE_VARIANT, g_variant_new_fixed_array (G_VARIANT_TYPE_UINT64, sizes, 1, 8)),
                      "seed", value_of (G_TYPE_UINT64, (guint64) 7), NULL);
  expect_spawn_error (ACCEL_ERROR_INVALID_ARGUMENT, "“seed”", "linear",
                      "layer-sizes", value_of (G_TYPE_VARIANT, g_variant_new_fixed_array (G_VARIANT_TYPE_UINT64, sizes, 2, 8)),
                      NULL);
  expect_spawn_error (ACCEL_ERROR_INVALID_ARGUMENT, "“dtype”", "linear",
                      "layer-sizes", value_of (G_TYPE_VARIANT, g_variant_new_fixed_array (G_VARIANT_TYPE_UINT64, sizes, 2, 8)),
                      "seed", value_of (G_TYPE_UINT64, (guint64) 7), "dtype", value_of (G_TYPE_STRING, "i32"), NULL);
}

/* A `linear` model drawn from a seed on the device: deterministic, and
 * the same on every device. */
static void
test_linear_seeded (void)
{
  g_autoptr(GError) error = NULL;
  guint64 sizes[] = { g_test_rand_int_range (2, 30), g_test_rand_int_range (2, 30) };
  guint64 seed = g_test_rand_int_range (1, 1 << 30);
  g_autoptr(AccelModel) a = accel_system_new_model (pt_system (), "linear", &error, "layer-sizes",
                                                    g_variant_new_fixed_array (G_VARIANT_TYPE_UINT64, sizes, 2, 8),
                                                    "seed", seed, NULL);
  g_assert_no_error (error);
  g_autoptr(AccelModel) b = accel_system_new_model (pt_system (), "linear", &error, "layer-sizes",
                                                    g_variant_new_fixed_array (G_VARIANT_TYPE_UINT64, sizes, 2, 8),
                                                    "seed", seed, NULL);
  g_assert_no_error (error);
  g_autoptr(GPtrArray) inputs = accel_model_get_inputs (a);
  g_assert_cmpuint (inputs->len, ==, 1);
  g_assert_cmpstr (accel_tensor_spec_get_name (inputs->pdata[0]), ==, "x");
  gint64 rows = g_test_rand_int_range (1, 9);
  g_autoptr(AccelShape) xs = accel_shape_new_2d (rows, sizes[0]);
  g_autoptr(AccelShape) ys = accel_shape_new_2d (rows, sizes[1]);
  g_autoptr(AccelBuffer) x = accel_device_alloc (pt_cpu (), ACCEL_DTYPE_F32, xs, &error);
  g_autoptr(AccelBuffer) ya = accel_device_alloc (pt_cpu (), ACCEL_DTYPE_F32, ys, &error);
  g_autoptr(AccelBuffer) yb = accel_device_alloc (pt_cpu (), ACCEL_DTYPE_F32, ys, &error);
  g_autofree double *xv = pt_random (ACCEL_DTYPE_F32, rows * sizes[0], -1, 1);
  g_autoptr(GBytes) xbytes = pt_bytes (ACCEL_DTYPE_F32, xv, rows * sizes[0]);
  g_assert_true (accel_buffer_upload (x, xbytes, &error));
  g_assert_false (accel_model_is_prepared (a, pt_cpu ()));
  g_assert_true (accel_model_run (a, pt_cpu (), &x, 1, &ya, 1, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (accel_model_is_prepared (a, pt_cpu ()));
  g_assert_true (accel_model_run (b, pt_cpu (), &x, 1, &yb, 1, NULL, &error));
  g_autoptr(GBytes) ra = accel_buffer_download (ya, &error);
  g_autoptr(GBytes) rb = accel_buffer_download (yb, &error);
  g_assert_true (g_bytes_equal (ra, rb));
  /* Not all zero: weights were drawn. */
  const float *f = g_bytes_get_data (ra, NULL);
  gboolean nonzero = FALSE;
  for (gint64 i = 0; i < rows * (gint64) sizes[1]; i++)
    nonzero |= f[i] != 0;
  g_assert_true (nonzero);
  /* A buffer that does not fit is refused, naming it. */
  g_autoptr(AccelShape) wide = accel_shape_new_2d (rows, sizes[0] + 1);
  g_autoptr(AccelBuffer) xw = accel_device_alloc (pt_cpu (), ACCEL_DTYPE_F32, wide, &error);
  g_assert_false (accel_model_run (a, pt_cpu (), &xw, 1, &yb, 1, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH);
  g_assert_nonnull (strstr (error->message, "input “x”"));
}

/* A model whose calls go to its home context (set_main_context), served by
 * another thread: its specs and its prepare are asked from here and
 * waited for, and it answers as its twin without a home does. */
static gpointer
home_thread (gpointer data)
{
  GMainLoop *loop = data;
  g_main_context_push_thread_default (g_main_loop_get_context (loop));
  g_main_loop_run (loop);
  g_main_context_pop_thread_default (g_main_loop_get_context (loop));
  return NULL;
}

static void
test_model_home_context (void)
{
  g_autoptr(GError) error = NULL;
  guint64 sizes[] = { g_test_rand_int_range (2, 30), g_test_rand_int_range (2, 30) };
  guint64 seed = g_test_rand_int_range (1, 1 << 30);
  AccelModel *models[2];
  for (guint i = 0; i < 2; i++)
    {
      models[i] = accel_system_new_model (pt_system (), "linear", &error, "layer-sizes",
                                          g_variant_new_fixed_array (G_VARIANT_TYPE_UINT64, sizes, 2, 8),
                                          "seed", seed, NULL);
      g_assert_no_error (error);
    }
  g_autoptr(GMainContext) home = g_main_context_new ();
  g_autoptr(GMainLoop) loop = g_main_loop_new (home, FALSE);
  GThread *thread = g_thread_new ("model-home", home_thread, loop);
  accel_model_set_main_context (models[0], home);

  g_autoptr(GPtrArray) inputs = accel_model_get_inputs (models[0]);
  g_assert_cmpuint (inputs->len, ==, 1);
  g_assert_cmpstr (accel_tensor_spec_get_name (inputs->pdata[0]), ==, "x");
  g_assert_true (accel_model_prepare (models[0], pt_cpu (), &error));
  g_assert_no_error (error);
  g_assert_true (accel_model_is_prepared (models[0], pt_cpu ()));

  gint64 rows = g_test_rand_int_range (1, 9);
  g_autoptr(AccelShape) xs = accel_shape_new_2d (rows, sizes[0]);
  g_autoptr(AccelShape) ys = accel_shape_new_2d (rows, sizes[1]);
  g_autoptr(AccelBuffer) x = accel_device_alloc (pt_cpu (), ACCEL_DTYPE_F32, xs, &error);
  g_autofree double *xv = pt_random (ACCEL_DTYPE_F32, rows * sizes[0], -1, 1);
  g_autoptr(GBytes) xbytes = pt_bytes (ACCEL_DTYPE_F32, xv, rows * sizes[0]);
  g_assert_true (accel_buffer_upload (x, xbytes, &error));
  GBytes *results[2];
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(AccelBuffer) y = accel_device_alloc (pt_cpu (), ACCEL_DTYPE_F32, ys, &error);
      g_assert_true (accel_model_run (models[i], pt_cpu (), &x, 1, &y, 1, NULL, &error));
      g_assert_no_error (error);
      results[i] = accel_buffer_download (y, &error);
      g_assert_no_error (error);
    }
  g_assert_true (g_bytes_equal (results[0], results[1]));

  g_main_loop_quit (loop);
  g_thread_join (thread);
  for (guint i = 0; i < 2; i++)
    {
      g_bytes_unref (results[i]);
      g_object_unref (models[i]);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/batcher/reference", test_reference);
  g_test_add_func ("/batcher/formation", test_formation);
  g_test_add_func ("/batcher/priority-and-ordering", test_priority_and_ordering);
  g_test_add_func ("/batcher/timeout-reject", test_timeout_reject);
  g_test_add_func ("/batcher/timeout-delay", test_timeout_delay);
  g_test_add_func ("/batcher/backpressure", test_backpressure);
  g_test_add_func ("/batcher/bad-input", test_bad_input);
  g_test_add_func ("/batcher/crash-restart", test_crash_restart);
  g_test_add_func ("/batcher/watchdog", test_watchdog);
  g_test_add_func ("/batcher/shutdown-pending", test_shutdown_pending);
  g_test_add_func ("/batcher/spawn-errors", test_spawn_errors);
  g_test_add_func ("/batcher/linear-seeded", test_linear_seeded);
  g_test_add_func ("/batcher/model-home-context", test_model_home_context);
  return pt_run ();
}
