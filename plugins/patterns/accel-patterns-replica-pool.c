/* accel-patterns-replica-pool.c: the `replica-pool` actor type: one model
 * replicated on several devices, batches placed round-robin or on the
 * replica with the fewest rows in flight.
 *
 * A batch that fails because its replica's device lost its context (a
 * CUDA fault, a device host that died) is run once more on another
 * replica; if none is free it waits, ahead of new batches, for the first
 * that is. The failed replica takes batches again once its device is
 * ready: the model is prepared again there at the new generation before
 * its next run (accel_model_run_async() sees to that). A replica whose
 * device failed for good is left out.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-patterns-replica-pool.h"
#include "accel-patterns-runner.h"
#include "accel-patterns-enums.h"

typedef struct {
  AccelDevice *device;
  GPtrArray *runners;           /* AccelPatternsRunner */
  guint64 rows_in_flight;
  guint64 batches;
  gulong state_handler;
} Replica;

struct _AccelPatternsReplicaPool {
  AccelPatternsServer parent_instance;

  AccelModel *model;
  char **device_names;
  AccelPatternsPlacement placement;
  guint batches_per_replica;

  GPtrArray *replicas;          /* Replica */
  guint next;                   /* round-robin */
  GQueue retries;               /* AccelPatternsBatch waiting for another replica */
  GMutex stats_lock;
  guint64 failovers;
};

/**
 * AccelPatternsReplicaPool:
 *
 * `replica-pool`: serves as `batcher` does, with `model` replicated on each
 * of `devices` (`cpu:0`, `cuda:1`, or any name the system knows); each
 * replica runs `batches-per-replica` batches at once, placed by
 * `placement`. A batch that meets a device fault is run again on another
 * replica: nothing is lost.
 */
G_DEFINE_FINAL_TYPE (AccelPatternsReplicaPool, accel_patterns_replica_pool, ACCEL_PATTERNS_TYPE_SERVER)

static const AccelPropertyField replica_pool_fields[] = {
  ACCEL_FIELD_OBJECT (AccelPatternsReplicaPool, model, "model", "Model served on every replica",
                      accel_model_get_type, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_BOXED (AccelPatternsReplicaPool, device_names, "devices", "Names of the devices to replicate the model on",
                     g_strv_get_type, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_ENUM (AccelPatternsReplicaPool, placement, "placement", "Which replica takes the next batch",
                    accel_patterns_placement_get_type, ACCEL_PATTERNS_PLACEMENT_LEAST_OUTSTANDING,
                    ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_UINT (AccelPatternsReplicaPool, batches_per_replica, "batches-per-replica",
                    "Batches each replica runs at once", 1, 64, 1, ACCEL_FIELD_CONSTRUCT),
};

/* The statistics, read under the stats lock: `replica-batches` (computed;
 * its id follows the fields'), then the counters. */
enum {
  PROP_REPLICA_BATCHES = G_N_ELEMENTS (replica_pool_fields) + 1,
};

static const AccelPropertyField stat_fields[] = {
  ACCEL_FIELD_UINT64 (AccelPatternsReplicaPool, failovers, "failovers", "Batches run again after a device fault",
                      0, G_MAXUINT64, 0, ACCEL_FIELD_READABLE),
};

static void
free_replica (gpointer data)
{
  Replica *replica = data;
  g_object_unref (replica->device);
  g_ptr_array_unref (replica->runners);
  g_free (replica);
}

static void start_retries (AccelPatternsReplicaPool *self);

/* A replica's device became ready again (or failed): what waits for a
 * replica may go now. */
static gboolean
device_changed_on_thread (gpointer data)
{
  AccelPatternsReplicaPool *self = data;
  start_retries (self);
  accel_patterns_server_schedule (ACCEL_PATTERNS_SERVER (self));
  g_object_unref (self);
  return G_SOURCE_REMOVE;
}

static void
device_state_changed (GObject *device, GParamSpec *pspec, gpointer data)
{
  AccelPatternsReplicaPool *self = g_weak_ref_get (data);
  if (self)
    accel_patterns_server_run_on_thread (ACCEL_PATTERNS_SERVER (self), device_changed_on_thread, self);
}

static void
free_weak_ref (gpointer data, GClosure *closure)
{
  g_weak_ref_clear (data);
  g_free (data);
}

static void
accel_patterns_replica_pool_dispose (GObject *object)
{
  AccelPatternsReplicaPool *self = ACCEL_PATTERNS_REPLICA_POOL (object);
  for (guint i = 0; i < self->replicas->len; i++)
    {
      Replica *replica = self->replicas->pdata[i];
      if (replica->state_handler)
        g_signal_handler_disconnect (replica->device, replica->state_handler);
      replica->state_handler = 0;
    }
  G_OBJECT_CLASS (accel_patterns_replica_pool_parent_class)->dispose (object);
}

static void
accel_patterns_replica_pool_finalize (GObject *object)
{
  AccelPatternsReplicaPool *self = ACCEL_PATTERNS_REPLICA_POOL (object);
  accel_object_finalize_fields (object, ACCEL_PATTERNS_TYPE_REPLICA_POOL);
  g_ptr_array_unref (self->replicas);
  g_queue_clear (&self->retries);
  g_mutex_clear (&self->stats_lock);
  G_OBJECT_CLASS (accel_patterns_replica_pool_parent_class)->finalize (object);
}

static void
accel_patterns_replica_pool_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelPatternsReplicaPool *self = ACCEL_PATTERNS_REPLICA_POOL (object);

  if (prop_id != PROP_REPLICA_BATCHES)
    {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }
  GVariantBuilder builder;
  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a{st}"));
  g_mutex_lock (&self->stats_lock);
  for (guint i = 0; i < self->replicas->len; i++)
    {
      Replica *replica = self->replicas->pdata[i];
      g_variant_builder_add (&builder, "{st}", accel_device_get_name (replica->device), replica->batches);
    }
  g_mutex_unlock (&self->stats_lock);
  g_value_set_variant (value, g_variant_builder_end (&builder));
}

static void
make_runners (AccelPatternsReplicaPool *self, Replica *replica)
{
  g_ptr_array_set_size (replica->runners, 0);
  for (guint i = 0; i < self->batches_per_replica; i++)
    g_ptr_array_add (replica->runners, accel_patterns_runner_new (self->model, replica->device));
}

static gboolean
accel_patterns_replica_pool_setup (AccelPatternsServer *server, GError **error)
{
  AccelPatternsReplicaPool *self = ACCEL_PATTERNS_REPLICA_POOL (server);
  const char *name = accel_actor_get_name (ACCEL_ACTOR (self));

  if (self->model == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "%s: “model” is not set", name);
      return FALSE;
    }
  if (self->device_names == NULL || self->device_names[0] == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “devices” is empty; name the devices to replicate the model on", name);
      return FALSE;
    }
  for (guint i = 0; self->device_names[i]; i++)
    {
      g_autoptr(GError) local = NULL;
      AccelDevice *device = accel_patterns_server_find_device (server, self->device_names[i], &local);
      if (device == NULL)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "%s: “devices”: %s", name, local->message);
          return FALSE;
        }
      for (guint j = 0; j < self->replicas->len; j++)
        if (((Replica *) self->replicas->pdata[j])->device == device)
          {
            g_object_unref (device);
            g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                         "%s: “devices” names %s twice", name, self->device_names[i]);
            return FALSE;
          }
      Replica *replica = g_new0 (Replica, 1);
      replica->device = device;
      replica->runners = g_ptr_array_new_with_free_func ((GDestroyNotify) accel_patterns_runner_unref);
      make_runners (self, replica);
      GWeakRef *weak = g_new (GWeakRef, 1);
      g_weak_ref_init (weak, self);
      replica->state_handler = g_signal_connect_data (device, "notify::device-state",
                                                      G_CALLBACK (device_state_changed), weak, free_weak_ref, 0);
      g_ptr_array_add (self->replicas, replica);
    }
  g_autoptr(GPtrArray) inputs = accel_model_get_inputs (self->model);
  g_autoptr(GPtrArray) outputs = accel_model_get_outputs (self->model);
  accel_patterns_server_set_io (server, inputs, outputs);
  return TRUE;
}

static AccelPatternsRunner *
idle_runner (Replica *replica)
{
  if (accel_device_get_state (replica->device) != ACCEL_DEVICE_STATE_READY)
    return NULL;
  for (guint i = 0; i < replica->runners->len; i++)
    if (!accel_patterns_runner_is_busy (replica->runners->pdata[i]))
      return replica->runners->pdata[i];
  return NULL;
}

static guint
idle_runners (AccelPatternsReplicaPool *self)
{
  guint idle = 0;
  for (guint r = 0; r < self->replicas->len; r++)
    {
      Replica *replica = self->replicas->pdata[r];
      if (accel_device_get_state (replica->device) != ACCEL_DEVICE_STATE_READY)
        continue;
      for (guint i = 0; i < replica->runners->len; i++)
        idle += !accel_patterns_runner_is_busy (replica->runners->pdata[i]);
    }
  return idle;
}

static gboolean all_failed (AccelPatternsReplicaPool *self);

static guint
accel_patterns_replica_pool_get_capacity (AccelPatternsServer *server)
{
  AccelPatternsReplicaPool *self = ACCEL_PATTERNS_REPLICA_POOL (server);
  /* With no replica left, batches are formed only to fail at once: what is
   * queued and what comes later hears why rather than waiting. */
  if (all_failed (self))
    return G_MAXUINT;
  guint idle = idle_runners (self);
  return idle > self->retries.length ? idle - self->retries.length : 0;
}

/* The replica for a batch: by placement, among those with a free runner,
 * not @avoid unless it is the only one left. */
static Replica *
place (AccelPatternsReplicaPool *self, Replica *avoid)
{
  Replica *best = NULL;
  guint n = self->replicas->len;
  for (guint k = 0; k < n; k++)
    {
      guint r = (self->next + k) % n;
      Replica *replica = self->replicas->pdata[r];
      if (replica == avoid || idle_runner (replica) == NULL)
        continue;
      if (self->placement == ACCEL_PATTERNS_PLACEMENT_ROUND_ROBIN)
        {
          self->next = (r + 1) % n;
          return replica;
        }
      if (best == NULL || replica->rows_in_flight < best->rows_in_flight)
        best = replica;
    }
  if (best == NULL && avoid != NULL && n == 1 && idle_runner (avoid))
    best = avoid;
  return best;
}

static void start_on (AccelPatternsReplicaPool *self, AccelPatternsBatch *batch, Replica *replica);

/* Whether every replica's device failed for good. */
static gboolean
all_failed (AccelPatternsReplicaPool *self)
{
  for (guint i = 0; i < self->replicas->len; i++)
    if (accel_device_get_state (((Replica *) self->replicas->pdata[i])->device) != ACCEL_DEVICE_STATE_FAILED)
      return FALSE;
  return TRUE;
}

/* Starts the batches waiting for a replica (other than the one that failed
 * them, if any), where one is free; fails them if no replica is left. */
static void
start_retries (AccelPatternsReplicaPool *self)
{
  if (self->retries.length && all_failed (self))
    {
      g_autoptr(GError) error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED,
                                             "%s: the device of every replica failed",
                                             accel_actor_get_name (ACCEL_ACTOR (self)));
      while (self->retries.length)
        accel_patterns_server_finish_batch (ACCEL_PATTERNS_SERVER (self), g_queue_pop_head (&self->retries),
                                            NULL, error);
      return;
    }
  for (GList *l = self->retries.head; l;)
    {
      GList *next = l->next;
      AccelPatternsBatch *batch = l->data;
      Replica *replica = place (self, batch->slot);
      if (replica)
        {
          g_queue_delete_link (&self->retries, l);
          start_on (self, batch, replica);
        }
      l = next;
    }
}

static void
batch_ran (GObject *source, GAsyncResult *result, gpointer data)
{
  AccelPatternsBatch *batch = data;
  AccelPatternsReplicaPool *self = batch->server;
  Replica *replica = batch->slot;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) outputs = accel_patterns_runner_run_finish (NULL, result, &error);
  gboolean current = accel_patterns_server_batch_is_current (ACCEL_PATTERNS_SERVER (self), batch);

  if (current)
    {
      replica->rows_in_flight -= batch->rows;
      if (error == NULL)
        {
          g_mutex_lock (&self->stats_lock);
          replica->batches++;
          g_mutex_unlock (&self->stats_lock);
        }
    }
  if (accel_patterns_server_batch_may_retry (ACCEL_PATTERNS_SERVER (self), batch, error))
    {
      g_debug ("%s: a batch of %u rows failed on %s (%s); running it on another replica",
               accel_actor_get_name (ACCEL_ACTOR (self)), batch->rows, accel_device_get_name (replica->device),
               error->message);
      g_mutex_lock (&self->stats_lock);
      self->failovers++;
      g_mutex_unlock (&self->stats_lock);
      Replica *other = place (self, replica);
      if (other)
        start_on (self, batch, other);
      else
        g_queue_push_tail (&self->retries, batch);   /* batch->slot says which replica to avoid */
    }
  else
    accel_patterns_server_finish_batch (ACCEL_PATTERNS_SERVER (self), batch, outputs, error);
  if (current)
    {
      start_retries (self);
      accel_patterns_server_schedule (ACCEL_PATTERNS_SERVER (self));
    }
  g_object_unref (self);
}

static void
start_on (AccelPatternsReplicaPool *self, AccelPatternsBatch *batch, Replica *replica)
{
  AccelPatternsRunner *runner = idle_runner (replica);
  batch->slot = replica;
  batch->attempts++;
  replica->rows_in_flight += batch->rows;
  g_object_ref (self);
  accel_patterns_runner_run_async (runner, batch->rows, (GBytes **) batch->inputs->pdata, batch_ran, batch);
}

static void
accel_patterns_replica_pool_execute (AccelPatternsServer *server, AccelPatternsBatch *batch)
{
  AccelPatternsReplicaPool *self = ACCEL_PATTERNS_REPLICA_POOL (server);
  Replica *replica = place (self, NULL);
  if (replica)
    start_on (self, batch, replica);
  else
    {
      /* A replica's device changed state since the capacity was counted:
       * the batch waits for the next free one. */
      batch->slot = NULL;
      g_queue_push_tail (&self->retries, batch);
      start_retries (self);
    }
}

static void
accel_patterns_replica_pool_reset (AccelPatternsServer *server)
{
  AccelPatternsReplicaPool *self = ACCEL_PATTERNS_REPLICA_POOL (server);
  /* The batches waiting for a retry were abandoned with the rest. */
  while (self->retries.length)
    accel_patterns_server_finish_batch (server, g_queue_pop_head (&self->retries), NULL, NULL);
  for (guint i = 0; i < self->replicas->len; i++)
    {
      Replica *replica = self->replicas->pdata[i];
      replica->rows_in_flight = 0;
      make_runners (self, replica);
    }
}

static void
accel_patterns_replica_pool_class_init (AccelPatternsReplicaPoolClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelPatternsServerClass *server_class = ACCEL_PATTERNS_SERVER_CLASS (klass);

  object_class->dispose = accel_patterns_replica_pool_dispose;
  object_class->finalize = accel_patterns_replica_pool_finalize;
  object_class->get_property = accel_patterns_replica_pool_get_property;
  server_class->setup = accel_patterns_replica_pool_setup;
  server_class->get_capacity = accel_patterns_replica_pool_get_capacity;
  server_class->execute = accel_patterns_replica_pool_execute;
  server_class->reset = accel_patterns_replica_pool_reset;
  accel_actor_class_set_metadata (ACCEL_ACTOR_CLASS (klass), "replica-pool",
                                  "One model replicated on several devices, with failover");

  accel_object_class_install_fields (object_class, replica_pool_fields, G_N_ELEMENTS (replica_pool_fields));
  g_object_class_install_property (object_class, PROP_REPLICA_BATCHES,
                                   g_param_spec_variant ("replica-batches", NULL,
                                                         "Batches each replica completed (a{st}, by device name)",
                                                         G_VARIANT_TYPE ("a{st}"), NULL,
                                                         ACCEL_FIELD_READABLE));
  accel_object_class_install_locked_fields (object_class, stat_fields, G_N_ELEMENTS (stat_fields),
                                            G_STRUCT_OFFSET (AccelPatternsReplicaPool, stats_lock));
}

static void
accel_patterns_replica_pool_init (AccelPatternsReplicaPool *self)
{
  self->replicas = g_ptr_array_new_with_free_func (free_replica);
  self->placement = ACCEL_PATTERNS_PLACEMENT_LEAST_OUTSTANDING;
  self->batches_per_replica = 1;
  g_queue_init (&self->retries);
  g_mutex_init (&self->stats_lock);
}
