/* accel-bench-patterns.c: the `patterns` group of accel-bench: the serving
 * actors of plugins/patterns under load.
 *
 * A `linear` model 4096 → 4096 (bf16 on a GPU, f32 on a CPU) on the
 * measured device; 64 clients, each sending a one-row request as soon as
 * its last one is answered:
 *
 * - patterns.batcher.requests-per-s: through a `batcher` (max-batch-size
 *   64, max-queue-delay-us 1000), beside the same load run unbatched (each
 *   request one upload, one model run and one download of its own row).
 * - patterns.batcher.latency-p99-us: the 99th percentile of those
 *   requests' round trips, beside the bound the issue sets for it:
 *   max-queue-delay-us + twice the run time of one batch of 64 rows
 *   (measured here, median of a few direct runs).
 * - patterns.fair-share.victim-share: two tenants of equal weight; the
 *   heavy one queues ten times as many one-row requests, first, then the
 *   light one its share (two full batches' worth or more); the light
 *   tenant's part of the rows in the batches that started while it had
 *   work queued (replies say which batch they ran in). Through
 *   `fair-share`, beside the same burst through a `batcher` (arrival
 *   order).
 *
 * The `replica-scaling` group: the same closed-loop load (64 clients for
 * each batch a replica runs at once: one on a CPU, two on a GPU) through
 * a `replica-pool` over the first k devices of the
 * measured device's backend (cuda:0 … cuda:k-1, as the system lists
 * them), k = 2, 4, … and all of
 * them: patterns.replica-pool.scaling-K in requests/s, beside K times the
 * pool of one device (the ratio is the scaling efficiency; issue 17 asks
 * ≥ 0.9). With one device there is nothing to scale, and it says so.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "accel-bench.h"

extern const AccelBenchGroup accel_bench_patterns_groups[];

#define FEATURES 4096
#define CLIENTS 64
#define MAX_BATCH 64
#define QUEUE_DELAY_US 1000

typedef struct _Load Load;

typedef struct {
  Load *load;
  double t_sent;
  guint index;
  AccelBuffer *x;               /* unbatched only */
  AccelBuffer *y;
} Client;

struct _Load {
  AccelActor *actor;            /* NULL: unbatched */
  AccelModel *model;
  AccelDevice *device;
  GVariant *request;
  GBytes *row;
  guint total;
  guint sent;
  guint done;
  double *latency;
  double t_end;
  GError *error;
};

static void
keep_error (Load *load, GError *error)
{
  if (load->error == NULL)
    load->error = error;
  else
    g_error_free (error);
}

static void send_next (Client *client);

static void
answered (Client *client)
{
  Load *load = client->load;
  double now = accel_bench_now ();
  load->latency[client->index] = now - client->t_sent;
  load->done++;
  load->t_end = now;
  send_next (client);
}

static void
asked (GObject *source, GAsyncResult *result, gpointer data)
{
  Client *client = data;
  GError *error = NULL;
  g_autoptr(GVariant) reply = accel_actor_ask_finish (ACCEL_ACTOR (source), result, &error);
  if (reply == NULL)
    keep_error (client->load, error);
  answered (client);
}

static void
downloaded (GObject *source, GAsyncResult *result, gpointer data)
{
  Client *client = data;
  GError *error = NULL;
  g_autoptr(GBytes) bytes = accel_buffer_download_finish (ACCEL_BUFFER (source), result, &error);
  if (bytes == NULL)
    keep_error (client->load, error);
  answered (client);
}

static void
ran (GObject *source, GAsyncResult *result, gpointer data)
{
  Client *client = data;
  GError *error = NULL;
  if (!accel_model_run_finish (ACCEL_MODEL (source), result, &error))
    {
      keep_error (client->load, error);
      answered (client);
      return;
    }
  accel_buffer_download_async (client->y, NULL, downloaded, client);
}

static void
uploaded (GObject *source, GAsyncResult *result, gpointer data)
{
  Client *client = data;
  GError *error = NULL;
  if (!accel_buffer_upload_finish (ACCEL_BUFFER (source), result, &error))
    {
      keep_error (client->load, error);
      answered (client);
      return;
    }
  accel_model_run_async (client->load->model, client->load->device, &client->x, 1, &client->y, 1, NULL, ran, client);
}

static void
send_next (Client *client)
{
  Load *load = client->load;
  if (load->sent >= load->total || load->error)
    return;
  client->index = load->sent++;
  client->t_sent = accel_bench_now ();
  if (load->actor)
    accel_actor_ask_async (load->actor, load->request, NULL, asked, client);
  else
    accel_buffer_upload_async (client->x, load->row, NULL, uploaded, client);
}

/* Runs @total requests from @n_clients closed-loop clients; returns
 * requests/s. */
static double
run_load (Load *load, guint n_clients, guint total, GError **error)
{
  g_autofree Client *clients = g_new0 (Client, n_clients);
  load->total = total;
  load->sent = load->done = 0;
  load->latency = g_new0 (double, total);
  g_autoptr(GPtrArray) specs = accel_model_get_inputs (load->model);
  g_autoptr(GPtrArray) out_specs = accel_model_get_outputs (load->model);
  for (guint c = 0; c < n_clients; c++)
    {
      clients[c].load = load;
      if (load->actor == NULL)
        {
          g_autoptr(AccelShape) xs = accel_tensor_spec_get_batch_shape (specs->pdata[0], 1);
          g_autoptr(AccelShape) ys = accel_tensor_spec_get_batch_shape (out_specs->pdata[0], 1);
          clients[c].x = accel_device_alloc (load->device, accel_tensor_spec_get_dtype (specs->pdata[0]), xs, error);
          clients[c].y = clients[c].x ? accel_device_alloc (load->device, accel_tensor_spec_get_dtype (out_specs->pdata[0]), ys, error) : NULL;
          if (clients[c].y == NULL)
            return -1;
        }
    }
  double t0 = accel_bench_now ();
  for (guint c = 0; c < n_clients; c++)
    send_next (&clients[c]);
  while (load->done < load->sent || (load->sent < load->total && load->error == NULL))
    g_main_context_iteration (NULL, TRUE);
  for (guint c = 0; c < n_clients; c++)
    {
      g_clear_object (&clients[c].x);
      g_clear_object (&clients[c].y);
    }
  if (load->error)
    {
      g_propagate_error (error, g_steal_pointer (&load->error));
      return -1;
    }
  return total / (load->t_end - t0);
}

static GVariant *
tensor (AccelDType dtype, GBytes *row)
{
  gint64 dims[2] = { 1, FEATURES };
  return g_variant_new ("(s@ax@ay)", accel_dtype_get_name (dtype),
                        g_variant_new_fixed_array (G_VARIANT_TYPE_INT64, dims, 2, sizeof (gint64)),
                        g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, row, TRUE));
}

static GVariant *
request_of (AccelDType dtype, GBytes *row, const char *tenant)
{
  GVariantDict dict;
  g_variant_dict_init (&dict, NULL);
  g_variant_dict_insert_value (&dict, "x", tensor (dtype, row));
  if (tenant)
    g_variant_dict_insert (&dict, "tenant", "s", tenant);
  return g_variant_ref_sink (g_variant_dict_end (&dict));
}

/* The median run time of one full batch, in seconds. */
static double
batch_run_time (AccelModel *model, AccelDevice *device, AccelDType dtype, GError **error)
{
  g_autoptr(AccelShape) shape = accel_shape_new_2d (MAX_BATCH, FEATURES);
  g_autoptr(AccelBuffer) x = accel_device_alloc (device, dtype, shape, error);
  g_autoptr(AccelBuffer) y = x ? accel_device_alloc (device, dtype, shape, error) : NULL;
  if (y == NULL)
    return -1;
  if (!accel_buffer_zero (x, error))
    return -1;
  double samples[5];
  for (guint i = 0; i <= G_N_ELEMENTS (samples); i++)
    {
      double t0 = accel_bench_now ();
      if (!accel_model_run (model, device, &x, 1, &y, 1, NULL, error))
        return -1;
      if (i > 0)
        samples[i - 1] = accel_bench_now () - t0;
    }
  return accel_bench_quantile (samples, G_N_ELEMENTS (samples), 0.5);
}

/* Whether @device is a CPU one: f32 models and lighter loads there. */
static gboolean
on_cpu (AccelDevice *device)
{
  return g_strcmp0 (accel_device_get_backend_name (device), "cpu") == 0;
}

static AccelActor *
spawn (AccelSystem *system, const char *type, AccelModel *model, AccelDevice *device, GError **error)
{
  const char *tenants[] = { "heavy", "light", NULL };
  gboolean gpu = !on_cpu (device);
  if (g_str_equal (type, "fair-share"))
    return accel_system_spawn (system, type, error, "model", model, "device", device,
                               "max-batch-size", MAX_BATCH, "max-queue-delay-us", (guint64) QUEUE_DELAY_US,
                               "max-inflight", gpu ? 2 : 1, "tenants", tenants, NULL);
  return accel_system_spawn (system, type, error, "model", model, "device", device,
                             "max-batch-size", MAX_BATCH, "max-queue-delay-us", (guint64) QUEUE_DELAY_US,
                             "max-inflight", gpu ? 2 : 1, NULL);
}

typedef struct {
  guint remaining;
  guint64 *batch;               /* per request: the number of its batch */
  GError *error;
} Burst;

static void
burst_answered (GObject *source, GAsyncResult *result, gpointer data)
{
  gpointer *pair = data;
  Burst *burst = pair[0];
  guint index = GPOINTER_TO_UINT (pair[1]);
  GError *error = NULL;
  g_autoptr(GVariant) reply = accel_actor_ask_finish (ACCEL_ACTOR (source), result, &error);
  if (reply == NULL && burst->error == NULL)
    burst->error = error;
  else
    g_clear_error (&error);
  if (reply)
    g_variant_lookup (reply, "batch", "t", &burst->batch[index]);
  burst->remaining--;
  g_free (pair);
}

typedef struct {
  GMutex lock;
  GCond cond;
  gboolean passed;
} Barrier;

static void
barrier_pass (gpointer data)
{
  Barrier *barrier = data;
  g_mutex_lock (&barrier->lock);
  barrier->passed = TRUE;
  g_cond_signal (&barrier->cond);
  g_mutex_unlock (&barrier->lock);
}

/* Returns once @actor's thread has received everything sent to it before. */
static void
wait_received (AccelActor *actor)
{
  Barrier barrier = { .passed = FALSE };
  g_mutex_init (&barrier.lock);
  g_cond_init (&barrier.cond);
  accel_dispatcher_post (accel_actor_get_dispatcher (actor), barrier_pass, &barrier);
  g_mutex_lock (&barrier.lock);
  while (!barrier.passed)
    g_cond_wait (&barrier.cond, &barrier.lock);
  g_mutex_unlock (&barrier.lock);
  g_mutex_clear (&barrier.lock);
  g_cond_clear (&barrier.cond);
}

/* Heavy queues 10 × @light requests, then light its @light; returns the
 * light tenant's share of the rows in the batches that started while it
 * had work queued: from the first batch started after its first request
 * arrived (the actor's batches-started, read once the heavy requests have
 * all arrived, says which) to the batch of its last. */
static double
victim_share (AccelActor *actor, AccelDType dtype, GBytes *row, guint light, GError **error)
{
  guint heavy = 10 * light, n = heavy + light;
  g_autoptr(GVariant) heavy_request = request_of (dtype, row, "heavy");
  g_autoptr(GVariant) light_request = request_of (dtype, row, "light");
  Burst burst = { n, g_new0 (guint64, n), NULL };
  guint64 started = 0;
  for (guint i = 0; i < n; i++)
    {
      gpointer *pair = g_new (gpointer, 2);
      pair[0] = &burst;
      pair[1] = GUINT_TO_POINTER (i);
      if (i == heavy)
        {
          wait_received (actor);
          g_object_get (actor, "batches-started", &started, NULL);
        }
      accel_actor_ask_async (actor, i < heavy ? heavy_request : light_request, NULL,
                             burst_answered, pair);
    }
  while (burst.remaining > 0)
    g_main_context_iteration (NULL, TRUE);
  double share = -1;
  if (burst.error)
    g_propagate_error (error, g_steal_pointer (&burst.error));
  else
    {
      guint64 last = 0;
      for (guint i = heavy; i < n; i++)
        last = MAX (last, burst.batch[i]);
      guint heavy_rows = 0;
      for (guint i = 0; i < heavy; i++)
        heavy_rows += burst.batch[i] > started && burst.batch[i] <= last;
      share = (double) light / (light + heavy_rows);
    }
  g_free (burst.batch);
  return share;
}

/* The model every group serves: linear FEATURES -> FEATURES. */
static AccelModel *
new_linear (AccelSystem *system, AccelDType dtype, GError **error)
{
  guint64 sizes[] = { FEATURES, FEATURES };
  return accel_system_new_model (system, "linear", error,
                                 "layer-sizes", g_variant_new_fixed_array (G_VARIANT_TYPE_UINT64, sizes, 2, 8),
                                 "seed", (guint64) 1, "dtype", dtype, NULL);
}

/* One row of random data in @dtype (zeros would be no load). */
static GBytes *
random_row (AccelDType dtype)
{
  gsize row_size = FEATURES * accel_dtype_get_size (dtype);
  guint8 *row_data = g_malloc (row_size);
  for (gsize i = 0; i < row_size; i++)
    row_data[i] = g_random_int_range (0x10, 0x3f);   /* small finite values in every dtype */
  return g_bytes_new_take (row_data, row_size);
}

static gboolean
run_patterns (AccelBench *bench, GError **error)
{
  AccelSystem *system = accel_bench_get_system (bench);
  AccelDevice *device = accel_bench_get_device (bench);
  gboolean quick = accel_bench_is_quick (bench);
  gboolean cpu = on_cpu (device);
  AccelDType dtype = cpu ? ACCEL_DTYPE_F32 : ACCEL_DTYPE_BF16;

  accel_bench_progress (bench, "patterns: preparing linear %d -> %d (%s)", FEATURES, FEATURES, accel_dtype_get_name (dtype));
  g_autoptr(AccelModel) model = new_linear (system, dtype, error);
  if (model == NULL || !accel_model_prepare (model, device, error))
    return FALSE;
  double batch_s = batch_run_time (model, device, dtype, error);
  if (batch_s < 0)
    return FALSE;
  g_autoptr(GBytes) row = random_row (dtype);

  /* Unbatched: one model run per request. */
  guint unbatched_total = quick ? 2 * CLIENTS : (cpu ? 8 : 32) * CLIENTS;
  Load unbatched = { NULL, model, device, NULL, row };
  accel_bench_progress (bench, "patterns: %u requests unbatched", unbatched_total);
  double unbatched_rate = run_load (&unbatched, CLIENTS, unbatched_total, error);
  g_free (unbatched.latency);
  if (unbatched_rate < 0)
    return FALSE;

  /* Batched. */
  g_autoptr(AccelActor) batcher = spawn (system, "batcher", model, device, error);
  if (batcher == NULL)
    return FALSE;
  guint batched_total = quick ? 8 * CLIENTS : (cpu ? 40 : 200) * CLIENTS;
  g_autoptr(GVariant) request = request_of (dtype, row, NULL);
  Load batched = { batcher, model, device, request, row };
  accel_bench_progress (bench, "patterns: %u requests through a batcher", batched_total);
  double batched_rate = run_load (&batched, CLIENTS, batched_total, error);
  if (batched_rate < 0)
    {
      g_free (batched.latency);
      return FALSE;
    }
  double p99 = accel_bench_quantile (batched.latency, batched_total, 0.99);
  g_free (batched.latency);

  accel_bench_report (bench, "patterns.batcher.requests-per-s", "req/s", batched_rate, unbatched_rate);
  accel_bench_report (bench, "patterns.batcher.latency-p99-us", "us", p99 * 1e6, QUEUE_DELAY_US + 2 * batch_s * 1e6);

  /* Fair share under a flood, beside arrival order. */
  guint light = quick ? 2 * MAX_BATCH : 4 * MAX_BATCH;
  g_autoptr(AccelActor) fair = spawn (system, "fair-share", model, device, error);
  if (fair == NULL)
    return FALSE;
  accel_bench_progress (bench, "patterns: a flood of %u beside %u, fair-share", 10 * light, light);
  double fair_share = victim_share (fair, dtype, row, light, error);
  if (fair_share < 0)
    return FALSE;
  accel_bench_progress (bench, "patterns: a flood of %u beside %u, arrival order", 10 * light, light);
  double fifo_share = victim_share (batcher, dtype, row, light, error);
  if (fifo_share < 0)
    return FALSE;
  accel_bench_report (bench, "patterns.fair-share.victim-share", "share", fair_share, fifo_share);

  accel_actor_stop (batcher);
  accel_actor_stop (fair);
  return TRUE;
}

/* replica-scaling */

/* The names of the devices of @device's backend, in the system's order,
 * NULL-terminated. */
static GPtrArray *
backend_devices (AccelSystem *system, AccelDevice *device)
{
  const char *backend = accel_device_get_backend_name (device);
  g_autoptr(GPtrArray) all = accel_system_list_devices (system);
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < all->len; i++)
    if (g_strcmp0 (accel_device_get_backend_name (all->pdata[i]), backend) == 0)
      g_ptr_array_add (names, g_strdup (accel_device_get_name (all->pdata[i])));
  g_ptr_array_add (names, NULL);
  return names;
}

/* Requests/s through a replica pool over the first @k of @names, with 64
 * clients a replica batch in flight; one request a client first, untimed
 * (each replica prepares the model on its device). */
static double
pool_rate (AccelBench *bench, AccelModel *model, GPtrArray *names, guint k, AccelDType dtype, GBytes *row,
           GError **error)
{
  AccelSystem *system = accel_bench_get_system (bench);
  AccelDevice *device = accel_bench_get_device (bench);
  gboolean cpu = on_cpu (device);
  guint per_replica = cpu ? 1 : 2;
  g_autofree const char **devices = g_new0 (const char *, k + 1);
  for (guint i = 0; i < k; i++)
    devices[i] = names->pdata[i];
  g_autoptr(AccelActor) pool = accel_system_spawn (system, "replica-pool", error, "model", model, "devices", devices,
                                                   "max-batch-size", MAX_BATCH,
                                                   "max-queue-delay-us", (guint64) QUEUE_DELAY_US,
                                                   "batches-per-replica", per_replica, NULL);
  if (pool == NULL)
    return -1;
  g_autoptr(GVariant) request = request_of (dtype, row, NULL);
  Load load = { pool, model, device, request, row };
  guint clients = CLIENTS * per_replica * k;
  guint total = (accel_bench_is_quick (bench) ? 8 : cpu ? 40 : 200) * clients;
  accel_bench_progress (bench, "replica-scaling: %u requests through a pool of %u", total, k);
  double rate = run_load (&load, clients, clients, error);
  g_clear_pointer (&load.latency, g_free);
  if (rate >= 0)
    rate = run_load (&load, clients, total, error);
  g_free (load.latency);
  accel_actor_stop (pool);
  return rate;
}

static gboolean
run_replica_scaling (AccelBench *bench, GError **error)
{
  AccelSystem *system = accel_bench_get_system (bench);
  AccelDevice *device = accel_bench_get_device (bench);
  gboolean cpu = on_cpu (device);
  AccelDType dtype = cpu ? ACCEL_DTYPE_F32 : ACCEL_DTYPE_BF16;
  g_autoptr(GPtrArray) names = backend_devices (system, device);
  guint n = names->len - 1;
  if (n < 2)
    {
      accel_bench_progress (bench, "replica-scaling: %u device of this backend, nothing to scale", n);
      return TRUE;
    }
  g_autoptr(AccelModel) model = new_linear (system, dtype, error);
  if (model == NULL)
    return FALSE;
  g_autoptr(GBytes) row = random_row (dtype);
  double one = pool_rate (bench, model, names, 1, dtype, row, error);
  if (one < 0)
    return FALSE;
  for (guint k = 2; k <= n; k = k < n && 2 * k > n ? n : 2 * k)
    {
      double rate = pool_rate (bench, model, names, k, dtype, row, error);
      if (rate < 0)
        return FALSE;
      g_autofree char *label = g_strdup_printf ("patterns.replica-pool.scaling-%u", k);
      accel_bench_report (bench, label, "req/s", rate, k * one);
    }
  return TRUE;
}

const AccelBenchGroup accel_bench_patterns_groups[] = {
  { "patterns", "batcher throughput beside unbatched, its p99 latency beside the bound, fair-share under a flood",
    run_patterns },
  { "replica-scaling", "a replica pool over 1, 2, 4 … all devices of the backend, beside linear scaling",
    run_replica_scaling },
  { NULL, NULL, NULL },
};
