/* Tests of the serving patterns beyond the batcher: hot-swap (no request
 * fails under load, each reply names the version that answered, nothing
 * sent after a swap meets an older version), fair-share (a light tenant
 * beside a flooding one), replica-pool (placement, and failover when a
 * replica's device host is killed mid-stream, with nothing lost and the
 * replica prepared again on its new generation), cascade (routing by the
 * small model's confidence) and moe-router (against a dense reference).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "patterns-test.h"

#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>

static void
check_linear_reply (PtLinear *linear, PtAnswer *answer, const double *x, guint rows)
{
  g_assert_no_error (answer->error);
  guint got_rows;
  gint64 d;
  g_autofree double *y = pt_reply_output (answer->reply, "y", linear->dtype, &got_rows, &d);
  g_assert_cmpuint (got_rows, ==, rows);
  g_assert_cmpint (d, ==, linear->sizes[linear->n_layers]);
  pt_linear_check (linear, "reply", x, rows, y, 1e-4, 1e-6);
}

/* ---- hot-swap ---------------------------------------------------------------- */

typedef struct {
  AccelActor *actor;
  PtAsks *asks;
  double **xs;
  guint *sent_after;            /* swaps done when each was sent */
  guint next;
  guint total;
  guint swaps_done;
  gint64 k;
} Load;

static void load_send (Load *load);

static void
load_answered (GObject *source, GAsyncResult *result, gpointer data)
{
  gpointer *pair = data;
  Load *load = pair[0];
  guint index = GPOINTER_TO_UINT (pair[1]);
  PtAnswer *answer = &load->asks->answers[index];
  g_free (pair);
  answer->reply = accel_actor_ask_finish (ACCEL_ACTOR (source), result, &answer->error);
  answer->order = load->asks->done++;
  load_send (load);
}

/* Each answer sends the next request: a closed loop of clients. */
static void
load_send (Load *load)
{
  if (load->next >= load->total)
    return;
  guint i = load->next++;
  load->xs[i] = pt_random (ACCEL_DTYPE_F32, load->k, -1, 1);
  load->sent_after[i] = load->swaps_done;
  gpointer *pair = g_new (gpointer, 2);
  pair[0] = load;
  pair[1] = GUINT_TO_POINTER (i);
  accel_actor_ask_async (load->actor, pt_request_end (pt_request ("x", ACCEL_DTYPE_F32, load->xs[i], 1, load->k)),
                         NULL, load_answered, pair);
}

static void
test_hot_swap (void)
{
  gint64 sizes[] = { g_test_rand_int_range (4, 30), g_test_rand_int_range (4, 30) };
  const guint versions = 4, clients = 12, total = 600;
  PtLinear *linear[4];
  for (guint v = 0; v < versions; v++)
    linear[v] = pt_linear_new (ACCEL_DTYPE_F32, sizes, 2, "none", "relu");
  g_autoptr(AccelActor) actor = pt_spawn ("hot-swap", "model", linear[0]->model, "device", pt_cpu (),
                                       "max-batch-size", 6, "max-inflight", 2, NULL);
  guint version = 0;
  g_object_get (actor, "model-version", &version, NULL);
  g_assert_cmpuint (version, ==, 1);

  Load load = { actor, pt_asks_new (total), g_new0 (double *, total), g_new0 (guint, total), 0, total, 0, sizes[0] };
  for (guint c = 0; c < clients; c++)
    load_send (&load);
  /* Swap while they run: each set returns once the new model serves. */
  for (guint v = 1; v < versions; v++)
    {
      pt_asks_wait (load.asks, v * total / versions);
      g_object_set (actor, "model", linear[v]->model, NULL);
      load.swaps_done = v;
      g_object_get (actor, "model-version", &version, NULL);
      g_assert_cmpuint (version, ==, v + 1);
      g_assert_true (accel_model_is_prepared (linear[v]->model, pt_cpu ()));
    }
  pt_asks_wait (load.asks, total);

  guint per_version[4] = { 0 };
  for (guint i = 0; i < total; i++)
    {
      PtAnswer *a = &load.asks->answers[i];
      g_assert_no_error (a->error);   /* none failed, none was dropped */
      guint32 v = pt_reply_u32 (a->reply, "model-version");
      g_assert_cmpuint (v, >=, 1);
      g_assert_cmpuint (v, <=, versions);
      /* Sent after swap s returned: answered by version s + 1 or later. */
      g_assert_cmpuint (v, >=, load.sent_after[i] + 1);
      check_linear_reply (linear[v - 1], a, load.xs[i], 1);
      per_version[v - 1]++;
      g_free (load.xs[i]);
    }
  for (guint v = 0; v < versions; v++)
    g_assert_cmpuint (per_version[v], >, 0);
  g_test_message ("answers per version: %u %u %u %u", per_version[0], per_version[1], per_version[2], per_version[3]);

  accel_actor_stop (actor);
  pt_asks_free (load.asks);
  g_free (load.xs);
  g_free (load.sent_after);
  for (guint v = 0; v < versions; v++)
    pt_linear_free (linear[v]);
}

/* A model that takes other inputs is refused with a warning; the served
 * one stays. In a subprocess, where the warning is not fatal. */
static void
test_hot_swap_refused (void)
{
  if (g_test_subprocess ())
    {
      g_log_set_always_fatal (G_LOG_FATAL_MASK);
      g_log_set_fatal_mask ("Accel-patterns", G_LOG_FATAL_MASK);
      gint64 sizes[] = { 6, 4 }, other[] = { 7, 4 };
      PtLinear *served = pt_linear_new (ACCEL_DTYPE_F32, sizes, 2, "none", "none");
      PtLinear *wrong = pt_linear_new (ACCEL_DTYPE_F32, other, 2, "none", "none");
      g_autoptr(AccelActor) actor = pt_spawn ("hot-swap", "model", served->model, "device", pt_cpu (), NULL);
      g_object_set (actor, "model", wrong->model, NULL);
      guint version = 0;
      AccelModel *model = NULL;
      g_object_get (actor, "model-version", &version, "model", &model, NULL);
      g_assert_cmpuint (version, ==, 1);
      g_assert_true (model == served->model);
      g_object_unref (model);
      accel_actor_stop (actor);
      pt_linear_free (served);
      pt_linear_free (wrong);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*does not take and give what the old one did; the model stays*");
}

/* ---- fair-share ------------------------------------------------------------------ */

/* A heavy tenant queues ten times what a light one does, first; returns
 * the position (0-based, in answer order) of the light tenant's last
 * answer. */
static guint
flood (const char *type, guint *answered_before)
{
  g_autoptr(PtAffine) model = pt_affine_new (4, 1, 0, FALSE);
  const char *tenants[] = { "heavy", "light", NULL };
  g_autoptr(AccelActor) actor = g_str_equal (type, "fair-share")
    ? pt_spawn (type, "model", model, "device", pt_cpu (), "max-batch-size", 4, "tenants", tenants, NULL)
    : pt_spawn (type, "model", model, "device", pt_cpu (), "max-batch-size", 4, NULL);
  const guint light = 6, heavy = 10 * light, n = 1 + heavy + light;
  PtAsks *asks = pt_asks_new (n);
  pt_affine_hold (model, TRUE);
  for (guint i = 0; i < n; i++)
    {
      g_autofree double *x = pt_random (ACCEL_DTYPE_F32, 4, -1, 1);
      GVariantDict *dict = pt_request ("x", ACCEL_DTYPE_F32, x, 1, 4);
      g_variant_dict_insert (dict, "tenant", "s", i <= heavy ? "heavy" : "light");
      pt_ask (asks, actor, i, pt_request_end (dict));
      if (i == 0)
        while (pt_affine_get_runs (model) < 1)
          g_usleep (200);
    }
  gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  guint length = 0;
  while (g_object_get (actor, "queue-length", &length, NULL), length != n - 1)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, end);
      g_usleep (200);
    }
  pt_affine_hold (model, FALSE);
  pt_asks_wait (asks, n);
  guint last_light = 0;
  for (guint i = 0; i < n; i++)
    {
      g_assert_no_error (asks->answers[i].error);
      if (i > heavy)
        last_light = MAX (last_light, (guint) asks->answers[i].order);
    }
  *answered_before = last_light;
  pt_asks_free (asks);
  accel_actor_stop (actor);
  return last_light;
}

static void
test_fair_share (void)
{
  guint fair = 0, fifo = 0;
  flood ("fair-share", &fair);
  flood ("batcher", &fifo);
  /* Equal weights: the light tenant's six rows go within the first four
   * batches of four (after B0), half of each; in arrival order they would
   * come last. */
  g_test_message ("last light answer: %u with fair-share, %u in arrival order", fair, fifo);
  g_assert_cmpuint (fair, <=, 1 + 12);
  g_assert_cmpuint (fifo, ==, 66);

  /* A request without a tenant, or with an unknown one, is refused naming it. */
  g_autoptr(PtAffine) model = pt_affine_new (4, 1, 0, FALSE);
  const char *tenants[] = { "a:2", "b:0.5", NULL };
  g_autoptr(AccelActor) actor = pt_spawn ("fair-share", "model", model, "device", pt_cpu (), "tenants", tenants, NULL);
  g_autofree double *x = pt_random (ACCEL_DTYPE_F32, 4, -1, 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) none = accel_actor_ask (actor, pt_request_end (pt_request ("x", ACCEL_DTYPE_F32, x, 1, 4)),
                                              NULL, &error);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "“tenant” is missing"));
  g_clear_error (&error);
  GVariantDict *dict = pt_request ("x", ACCEL_DTYPE_F32, x, 1, 4);
  g_variant_dict_insert (dict, "tenant", "s", "c");
  g_autoptr(GVariant) unknown = accel_actor_ask (actor, pt_request_end (dict), NULL, &error);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "“tenant” “c” is unknown"));
  g_clear_error (&error);
  dict = pt_request ("x", ACCEL_DTYPE_F32, x, 1, 4);
  g_variant_dict_insert (dict, "tenant", "s", "b");
  g_autoptr(GVariant) known = accel_actor_ask (actor, pt_request_end (dict), NULL, &error);
  g_assert_no_error (error);
  accel_actor_stop (actor);

  /* Bad tenant lists are refused at spawn. */
  const char *bad[] = { "a:0", NULL };
  g_autoptr(AccelActor) refused = accel_system_spawn (pt_system (), "fair-share", &error, "model", model,
                                                      "tenants", bad, NULL);
  g_assert_null (refused);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "“tenants”"));
}

/* ---- replica-pool ------------------------------------------------------------ */

static AccelDevice *
remote_cpu (guint index)
{
  g_autoptr(GError) error = NULL;
  AccelBackend *cpu = accel_system_get_backend (pt_system (), "cpu", &error);
  g_assert_no_error (error);
  g_autofree char *name = g_strdup_printf ("remote-cpu:%u", index);
  AccelDevice *device = accel_remote_device_new (cpu, name, "cpu:0", NULL, &error);
  g_assert_no_error (error);
  g_assert_true (accel_system_add_device (pt_system (), device, &error));
  g_assert_no_error (error);
  /* A second device of that name is refused. */
  g_assert_false (accel_system_add_device (pt_system (), device, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  return device;
}

static guint64
replica_batches (AccelActor *pool, const char *device)
{
  g_autoptr(GVariant) batches = NULL;
  guint64 n = 0;
  g_object_get (pool, "replica-batches", &batches, NULL);
  g_assert_true (g_variant_lookup (batches, device, "t", &n));
  return n;
}

static void
send_wave (AccelActor *pool, PtAsks *asks, double **xs, guint from, guint to, gint64 k)
{
  for (guint i = from; i < to; i++)
    {
      xs[i] = pt_random (ACCEL_DTYPE_F32, k, -1, 1);
      pt_ask (asks, pool, i, pt_request_end (pt_request ("x", ACCEL_DTYPE_F32, xs[i], 1, k)));
    }
}

/* Checks the one-row answers 0 .. @n - 1 of @asks against @linear on the
 * inputs @xs that send_wave() made, and frees those. */
static void
check_wave (PtLinear *linear, PtAsks *asks, double **xs, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      check_linear_reply (linear, &asks->answers[i], xs[i], 1);
      g_free (xs[i]);
    }
}

/* Sends @n one-row requests to @actor and checks every answer against
 * @linear. */
static void
serve_wave (AccelActor *actor, PtLinear *linear, guint n)
{
  PtAsks *asks = pt_asks_new (n);
  double **xs = g_new0 (double *, n);
  send_wave (actor, asks, xs, 0, n, linear->sizes[0]);
  pt_asks_wait (asks, n);
  check_wave (linear, asks, xs, n);
  pt_asks_free (asks);
  g_free (xs);
}

static void
test_replica_failover (void)
{
  g_autoptr(AccelDevice) r0 = remote_cpu (0);
  g_autoptr(AccelDevice) r1 = remote_cpu (1);
  gint64 sizes[] = { g_test_rand_int_range (40, 90), g_test_rand_int_range (40, 90), g_test_rand_int_range (8, 30) };
  PtLinear *linear = pt_linear_new (ACCEL_DTYPE_F32, sizes, 3, "relu", "none");
  const char *devices[] = { "remote-cpu:0", "remote-cpu:1", NULL };
  g_autoptr(AccelActor) pool = pt_spawn ("replica-pool", "model", linear->model, "devices", devices,
                                      "placement", "round-robin", "batches-per-replica", 2,
                                      "max-batch-size", 4, NULL);
  const guint first = 400, second = 60, n = first + second;
  PtAsks *asks = pt_asks_new (n);
  double **xs = g_new0 (double *, n);

  /* Stream; kill the host of replica 0 while a good part is in flight. */
  send_wave (pool, asks, xs, 0, first, sizes[0]);
  pt_asks_wait (asks, first / 4);
  GPid host = accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (r0));
  g_assert_cmpint (host, >, 0);
  g_assert_cmpuint (replica_batches (pool, "remote-cpu:0"), >, 0);
  g_assert_cmpint (kill (host, SIGKILL), ==, 0);
  pt_asks_wait (asks, first);
  guint64 failovers = 0;
  g_object_get (pool, "failovers", &failovers, NULL);
  g_test_message ("failovers: %" G_GUINT64_FORMAT, failovers);

  /* Replica 0 serves again once its new host is up, its model prepared
   * on the new generation. (The death is noticed by the device's watcher:
   * the first wave may all be answered before, on a loaded machine.) */
  gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  while (accel_device_get_generation (r0) < 1 || accel_device_get_state (r0) != ACCEL_DEVICE_STATE_READY
         || accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (r0)) == host)
    {
      g_assert_cmpint (g_get_monotonic_time (), <, end);
      g_usleep (1000);
    }
  g_assert_cmpuint (accel_device_get_generation (r0), ==, 1);
  guint64 before = replica_batches (pool, "remote-cpu:0");
  send_wave (pool, asks, xs, first, n, sizes[0]);
  pt_asks_wait (asks, n);
  g_assert_cmpuint (replica_batches (pool, "remote-cpu:0"), >, before);
  g_assert_true (accel_model_is_prepared (linear->model, r0));

  /* Nothing failed, nothing was lost, every answer is right. */
  check_wave (linear, asks, xs, n);
  guint64 completed = 0, failed = 0;
  g_object_get (pool, "requests-completed", &completed, "requests-failed", &failed, NULL);
  g_assert_cmpuint (completed, ==, n);
  g_assert_cmpuint (failed, ==, 0);
  accel_actor_stop (pool);
  pt_asks_free (asks);
  g_free (xs);
  pt_linear_free (linear);

  /* Names the system does not know are refused at spawn, naming the property. */
  g_autoptr(GError) error = NULL;
  const char *unknown[] = { "cpu:0", "cpu:7", NULL };
  g_autoptr(AccelActor) refused = accel_system_spawn (pt_system (), "replica-pool", &error,
                                                      "model", linear ? NULL : NULL, "devices", unknown, NULL);
  g_assert_null (refused);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
}

/* A pool whose only replica's device fails for good (no restart allowed)
 * fails what it holds and what comes after, naming why; nothing waits. */
static void
test_replica_all_failed (void)
{
  g_autoptr(AccelDevice) dev = remote_cpu (2);
  accel_actor_set_strategy (ACCEL_ACTOR (dev), 0, 60000, NULL, NULL, NULL);
  gint64 sizes[] = { 64, 32 };
  PtLinear *linear = pt_linear_new (ACCEL_DTYPE_F32, sizes, 2, "none", "none");
  const char *devices[] = { "remote-cpu:2", NULL };
  g_autoptr(AccelActor) pool = pt_spawn ("replica-pool", "model", linear->model, "devices", devices,
                                         "max-batch-size", 2, NULL);
  const guint n = 60;
  PtAsks *asks = pt_asks_new (n);
  double **xs = g_new0 (double *, n);
  /* Four answered, then the rest sent to a host that is stopped, so that
   * they are surely in flight when it dies (sent to a running host, all 60
   * could be answered before the kill on a loaded machine). */
  send_wave (pool, asks, xs, 0, 4, sizes[0]);
  pt_asks_wait (asks, 4);
  /* The host starts with the first op. */
  GPid host = accel_remote_device_get_host_pid (ACCEL_REMOTE_DEVICE (dev));
  g_assert_cmpint (host, >, 0);
  g_assert_cmpint (kill (host, SIGSTOP), ==, 0);
  send_wave (pool, asks, xs, 4, n, sizes[0]);
  g_assert_cmpint (kill (host, SIGKILL), ==, 0);
  pt_asks_wait (asks, n);
  guint ok = 0, failed = 0;
  for (guint i = 0; i < n; i++)
    {
      PtAnswer *a = &asks->answers[i];
      if (a->error == NULL)
        {
          check_linear_reply (linear, a, xs[i], 1);
          ok++;
        }
      else
        {
          g_assert_true (a->error->domain == ACCEL_ERROR);
          g_assert_true (a->error->code == ACCEL_ERROR_DEVICE_FAILED || a->error->code == ACCEL_ERROR_CONTEXT_POISONED
                         || a->error->code == ACCEL_ERROR_STALE_BUFFER);
          failed++;
        }
      g_free (xs[i]);
    }
  g_test_message ("%u answered before the host died, %u failed with it", ok, failed);
  g_assert_cmpuint (ok, >=, 4);
  g_assert_cmpuint (failed, >, 0);
  g_assert_cmpint (accel_device_get_state (dev), ==, ACCEL_DEVICE_STATE_FAILED);
  /* Later requests fail at once too. */
  g_autofree double *x = pt_random (ACCEL_DTYPE_F32, sizes[0], -1, 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) late = accel_actor_ask (pool, pt_request_end (pt_request ("x", ACCEL_DTYPE_F32, x, 1, sizes[0])),
                                              NULL, &error);
  g_assert_null (late);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED);
  accel_actor_stop (pool);
  pt_asks_free (asks);
  g_free (xs);
  pt_linear_free (linear);
}

static void
test_replica_placement (void)
{
  gint64 sizes[] = { 8, 5 };
  PtLinear *linear = pt_linear_new (ACCEL_DTYPE_F32, sizes, 2, "none", "none");
  const char *devices[] = { "cpu:0", NULL };
  g_autoptr(AccelActor) pool = pt_spawn ("replica-pool", "model", linear->model, "devices", devices, NULL);
  serve_wave (pool, linear, 50);
  guint64 batches = 0;
  g_object_get (pool, "batches-run", &batches, NULL);
  g_assert_cmpuint (replica_batches (pool, "cpu:0"), ==, batches);
  accel_actor_stop (pool);
  pt_linear_free (linear);
}

/* ---- linear from buffers --------------------------------------------------- */

static AccelBuffer *
upload_block (AccelDevice *device, const double *values, const gint64 *dims, guint rank)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelShape) shape = accel_shape_new (dims, rank);
  AccelBuffer *buffer = accel_device_alloc (device, ACCEL_DTYPE_F32, shape, &error);
  g_assert_no_error (error);
  g_autoptr(GBytes) bytes = pt_bytes (ACCEL_DTYPE_F32, values, accel_shape_get_n_elements (shape));
  g_assert_true (accel_buffer_upload (buffer, bytes, &error));
  return buffer;
}

/* The same weights as buffers on cpu:0 serve like the bytes they hold, in
 * place on cpu:0 and copied to another device. */
static void
test_linear_buffers (void)
{
  gint64 sizes[] = { g_test_rand_int_range (3, 40), g_test_rand_int_range (3, 40), g_test_rand_int_range (2, 30) };
  PtLinear *linear = pt_linear_new (ACCEL_DTYPE_F32, sizes, 3, "gelu", "none");
  g_autoptr(GListStore) weights = g_list_store_new (ACCEL_TYPE_BUFFER);
  g_autoptr(GListStore) biases = g_list_store_new (ACCEL_TYPE_BUFFER);
  for (guint i = 0; i < 2; i++)
    {
      gint64 wd[] = { sizes[i], sizes[i + 1] };
      g_autoptr(AccelBuffer) w = upload_block (pt_cpu (), linear->weights[i], wd, 2);
      g_autoptr(AccelBuffer) b = upload_block (pt_cpu (), linear->biases[i], wd + 1, 1);
      g_list_store_append (weights, w);
      g_list_store_append (biases, b);
    }
  g_autoptr(GError) error = NULL;
  guint64 u[] = { sizes[0], sizes[1], sizes[2] };
  g_autoptr(AccelModel) from_buffers = accel_system_new_model (pt_system (), "linear", &error,
                                                               "layer-sizes", g_variant_new_fixed_array (G_VARIANT_TYPE_UINT64, u, 3, 8),
                                                               "weight-buffers", weights, "bias-buffers", biases,
                                                               "activation", 2 /* gelu */, NULL);
  g_assert_no_error (error);
  g_autoptr(AccelDevice) other = remote_cpu (3);
  AccelDevice *devices[] = { pt_cpu (), other };
  for (guint d = 0; d < 2; d++)
    {
      g_autoptr(AccelActor) actor = pt_spawn ("batcher", "model", from_buffers, "device", devices[d], NULL);
      serve_wave (actor, linear, 12);
      accel_actor_stop (actor);
    }

  /* A buffer of the wrong shape is refused, naming the property. */
  g_autoptr(GListStore) wrong = g_list_store_new (ACCEL_TYPE_BUFFER);
  g_autoptr(AccelBuffer) b0 = g_list_model_get_item (G_LIST_MODEL (biases), 0);
  g_autoptr(AccelBuffer) w1 = g_list_model_get_item (G_LIST_MODEL (weights), 1);
  g_list_store_append (wrong, b0);
  g_list_store_append (wrong, w1);
  g_autoptr(AccelModel) refused = accel_system_new_model (pt_system (), "linear", &error,
                                                          "layer-sizes", g_variant_new_fixed_array (G_VARIANT_TYPE_UINT64, u, 3, 8),
                                                          "weight-buffers", wrong, NULL);
  g_assert_null (refused);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "“weight-buffers”"));
  pt_linear_free (linear);
}

/* ---- cascade -------------------------------------------------------------- */

static void
test_cascade (void)
{
  const gint64 d = 6;
  /* small: y = 2x + 1, confidence x[0]; large: y = -x. */
  const double scale[] = { 2, -1 }, shift[] = { 1, 0 };
  g_autoptr(PtAffine) small = pt_affine_new (d, scale[0], shift[0], TRUE);
  g_autoptr(PtAffine) large = pt_affine_new (d, scale[1], shift[1], FALSE);
  double threshold = g_test_rand_double_range (-0.5, 0.5);
  g_autoptr(AccelActor) cascade = pt_spawn ("cascade", "small-model", small, "large-model", large,
                                         "device", pt_cpu (), "threshold", threshold, "max-batch-size", 8, NULL);
  const guint n = 40;
  PtAsks *asks = pt_asks_new (n);
  double **xs = g_new0 (double *, n);
  guint *rows = g_new (guint, n);
  guint escalated = 0, total = 0;
  for (guint i = 0; i < n; i++)
    {
      rows[i] = g_test_rand_int_range (1, 4);
      xs[i] = pt_random (ACCEL_DTYPE_F32, rows[i] * d, -1, 1);
      pt_ask (asks, cascade, i, pt_request_end (pt_request ("x", ACCEL_DTYPE_F32, xs[i], rows[i], d)));
    }
  pt_asks_wait (asks, n);
  for (guint i = 0; i < n; i++)
    {
      PtAnswer *a = &asks->answers[i];
      g_assert_no_error (a->error);
      g_assert_null (g_variant_lookup_value (a->reply, "confidence", NULL));
      escalated += pt_cascade_check_reply (a->reply, xs[i], rows[i], d, threshold, scale, shift);
      total += rows[i];
      g_free (xs[i]);
    }
  guint64 small_rows = 0, large_rows = 0;
  g_object_get (cascade, "small-rows", &small_rows, "large-rows", &large_rows, NULL);
  g_assert_cmpuint (small_rows, ==, total);
  g_assert_cmpuint (large_rows, ==, escalated);
  g_assert_cmpuint (escalated, >, 0);
  g_assert_cmpuint (escalated, <, total);
  accel_actor_stop (cascade);
  pt_asks_free (asks);
  g_free (xs);
  g_free (rows);

  /* A confidence output the small model lacks is refused at spawn. */
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelActor) refused = accel_system_spawn (pt_system (), "cascade", &error, "small-model", large,
                                                      "large-model", small, NULL);
  g_assert_null (refused);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "“confidence-output”"));
}

/* ---- moe-router ------------------------------------------------------------- */

static void
test_moe_router (void)
{
  guint n_experts = g_test_rand_int_range (3, 7), k = g_test_rand_int_range (1, n_experts);
  gint64 d = g_test_rand_int_range (4, 24), h = g_test_rand_int_range (3, 17);
  gint64 gate_sizes[] = { d, n_experts }, expert_sizes[] = { d, h };
  PtLinear *gate = pt_linear_new (ACCEL_DTYPE_F32, gate_sizes, 2, "none", "none");
  g_autoptr(GListStore) experts = g_list_store_new (G_TYPE_OBJECT);
  PtLinear **expert = g_new (PtLinear *, n_experts);
  for (guint e = 0; e < n_experts; e++)
    {
      expert[e] = pt_linear_new (ACCEL_DTYPE_F32, expert_sizes, 2, "none", e % 2 ? "relu" : "none");
      g_list_store_append (experts, expert[e]->model);
    }
  g_autoptr(AccelActor) router = pt_spawn ("moe-router", "gate", gate->model, "experts", experts, "top-k", k,
                                        "device", pt_cpu (), "max-batch-size", 16, NULL);
  const guint n = 30;
  PtAsks *asks = pt_asks_new (n);
  double **xs = g_new0 (double *, n);
  guint *rows = g_new (guint, n);
  for (guint i = 0; i < n; i++)
    {
      rows[i] = g_test_rand_int_range (1, 5);
      xs[i] = pt_random (ACCEL_DTYPE_F32, rows[i] * d, -1, 1);
      pt_ask (asks, router, i, pt_request_end (pt_request ("x", ACCEL_DTYPE_F32, xs[i], rows[i], d)));
    }
  pt_asks_wait (asks, n);

  guint checked = 0;
  for (guint i = 0; i < n; i++)
    {
      PtAnswer *a = &asks->answers[i];
      g_assert_no_error (a->error);
      /* The dense reference: every expert on every row, then the gate's
       * top k by softmax weight. */
      g_autofree double *scores = pt_linear_reference (gate, xs[i], rows[i]);
      double **outs = g_new (double *, n_experts);
      for (guint e = 0; e < n_experts; e++)
        outs[e] = pt_linear_reference (expert[e], xs[i], rows[i]);
      checked += pt_moe_check_reply (a->reply, rows[i], scores, outs, n_experts, k, h);
      for (guint e = 0; e < n_experts; e++)
        g_free (outs[e]);
      g_free (outs);
      g_free (xs[i]);
    }
  g_assert_cmpuint (checked, >, 0);
  g_autoptr(GVariant) expert_rows = NULL;
  g_object_get (router, "expert-rows", &expert_rows, NULL);
  g_assert_cmpuint (g_variant_n_children (expert_rows), ==, n_experts);
  accel_actor_stop (router);
  pt_asks_free (asks);
  g_free (xs);
  g_free (rows);

  /* top-k above the experts is refused, naming it. */
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelActor) refused = accel_system_spawn (pt_system (), "moe-router", &error, "gate", gate->model,
                                                      "experts", experts, "top-k", n_experts + 1, NULL);
  g_assert_null (refused);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "“top-k”"));
  for (guint e = 0; e < n_experts; e++)
    pt_linear_free (expert[e]);
  g_free (expert);
  pt_linear_free (gate);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/serving/hot-swap", test_hot_swap);
  g_test_add_func ("/serving/hot-swap-refused", test_hot_swap_refused);
  g_test_add_func ("/serving/fair-share", test_fair_share);
  g_test_add_func ("/serving/replica-placement", test_replica_placement);
  g_test_add_func ("/serving/replica-failover", test_replica_failover);
  g_test_add_func ("/serving/replica-all-failed", test_replica_all_failed);
  g_test_add_func ("/serving/linear-buffers", test_linear_buffers);
  g_test_add_func ("/serving/cascade", test_cascade);
  g_test_add_func ("/serving/moe-router", test_moe_router);
  return pt_run ();
}
