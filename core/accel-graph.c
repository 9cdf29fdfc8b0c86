/* accel-graph.c: a recorded sequence of ops, replayed with one submit.
 *
 * Recording validates each op against the graph's device (its buffers,
 * their generation, that a kernel exists) and keeps a copy of it made
 * through its serialised form, so that changing the op afterwards does not
 * change the graph, and so that the graph has a serialised form (the list
 * of its ops) made once. A replay is a `replay` op: its buffers are
 * the union of the recorded ops' buffers, each with the union of its
 * accesses, so lane hazards and generations work for a replay as for one
 * op. Backends run it their own way: the CPU as the list it is, CUDA as a
 * CUDA graph captured from the ops' kernels once and then launched.
 *
 * A device host reads the graph from the replay op (its handle and its
 * serialised ops); it keeps the graphs it has built by handle, and builds
 * one again only when the content under a handle differs, so that a
 * replay costs the host no parsing of the ops.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-module-private.h"

/**
 * AccelGraph:
 *
 * A sequence of ops recorded for one device and lane, replayed with one
 * submit: accel_graph_add() each op, accel_graph_instantiate() once, then
 * accel_graph_replay() (or submit the op of accel_graph_new_replay() as
 * often as wanted). On CUDA a replay is one `cudaGraphLaunch` of a graph
 * captured from the ops' kernels at the first replay; on the CPU the ops
 * run in order. Either way the ops run in the order they were added, on
 * one lane, and a replay is ordered after the last writers of the buffers
 * it reads like any op.
 *
 * The graph keeps copies of the ops as they were when added, and their
 * buffers: a graph recorded before its device rebuilt its context refers to
 * memory that is gone, and its replays fail with %ACCEL_ERROR_STALE_BUFFER.
 * Ops that only compute can be recorded; kernels that check their results
 * on the host (a solver's info code) cannot be captured by CUDA and fail
 * at the first replay.
 */
struct _AccelGraph {
  GObject parent_instance;

  AccelDevice *device;          /* NULL for a graph read in a device host */
  int lane;
  guint generation;
  guint64 handle;
  gboolean sealed;
  GPtrArray *ops;               /* the copies */
  GPtrArray *originals;         /* the ops added: they keep alive what the
                                   copies name by handle only (a launch's
                                   module, whose code must outlive the graph) */
  GPtrArray *serialised;        /* their forms, GVariant (sa{sv}) */
  GVariant *content;            /* a(sa{sv}), once sealed */
  GPtrArray *buffers;           /* the union: AccelBuffer */
  GArray *access;               /* AccelAccess of each */

  GMutex lock;                  /* guards the kernel choice */
  AccelDevice *kernel_device;   /* weak: what @kernels were chosen for */
  GPtrArray *kernels;           /* const AccelKernel * */
};

G_DEFINE_FINAL_TYPE (AccelGraph, accel_graph, G_TYPE_OBJECT)

static guint64 next_handle;

static void
accel_graph_finalize (GObject *object)
{
  AccelGraph *self = ACCEL_GRAPH (object);

  g_clear_object (&self->device);
  g_ptr_array_unref (self->ops);
  g_ptr_array_unref (self->originals);
  g_ptr_array_unref (self->serialised);
  g_clear_pointer (&self->content, g_variant_unref);
  g_ptr_array_unref (self->buffers);
  g_array_unref (self->access);
  g_clear_pointer (&self->kernels, g_ptr_array_unref);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (accel_graph_parent_class)->finalize (object);
}

static void
accel_graph_class_init (AccelGraphClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = accel_graph_finalize;
}

static void
accel_graph_init (AccelGraph *self)
{
  self->lane = -1;
  self->handle = __atomic_add_fetch (&next_handle, 1, __ATOMIC_RELAXED);
  self->ops = g_ptr_array_new_with_free_func (g_object_unref);
  self->originals = g_ptr_array_new_with_free_func (g_object_unref);
  self->serialised = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  self->buffers = g_ptr_array_new_with_free_func (g_object_unref);
  self->access = g_array_new (FALSE, FALSE, sizeof (AccelAccess));
  g_mutex_init (&self->lock);
}

/**
 * accel_graph_new:
 * @device: the device the graph runs on
 * @lane: the lane its replays run on, or -1 for the next free one
 *
 * Makes an empty graph for @device's current generation.
 *
 * Returns: (transfer full): the graph
 */
AccelGraph *
accel_graph_new (AccelDevice *device, int lane)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (device), NULL);
  g_return_val_if_fail (lane >= -1 && lane <= ACCEL_LANE_MAX, NULL);

  AccelGraph *self = g_object_new (ACCEL_TYPE_GRAPH, NULL);
  self->device = g_object_ref (device);
  self->lane = lane;
  self->generation = accel_device_get_generation (device);
  return self;
}

static void
add_to_union (AccelOp *op, GParamSpec *pspec, AccelBuffer *buffer, AccelAccess access, gpointer data)
{
  AccelGraph *self = data;
  guint index;

  if (g_ptr_array_find (self->buffers, buffer, &index))
    g_array_index (self->access, AccelAccess, index) |= access;
  else
    {
      g_ptr_array_add (self->buffers, g_object_ref (buffer));
      g_array_append_val (self->access, access);
    }
}

/* Adds a copy of an op, made from its serialised form @form (which it
 * takes), to the list. */
static gboolean
add_copy (AccelGraph *self, GVariant *form, AccelBufferResolveFunc resolve, gpointer user_data, GError **error)
{
  AccelOp *copy = accel_op_deserialize (form, resolve, user_data, error);
  if (copy == NULL)
    {
      g_variant_unref (form);
      return FALSE;
    }
  g_ptr_array_add (self->ops, copy);
  g_ptr_array_add (self->serialised, form);
  _accel_op_foreach_buffer (copy, add_to_union, self);
  return TRUE;
}

static void
index_buffer (AccelOp *op, GParamSpec *pspec, AccelBuffer *buffer, AccelAccess access, gpointer data)
{
  guint64 *key = g_new (guint64, 1);
  *key = accel_buffer_get_handle (buffer);
  g_hash_table_insert (data, key, buffer);
}

/* The op's own buffers, by handle (borrowed from the op). */
static AccelBuffer *
resolve_recorded (guint64 handle, gpointer data)
{
  AccelBuffer *b = g_hash_table_lookup (data, &handle);
  return b ? g_object_ref (b) : NULL;
}

/**
 * accel_graph_add:
 * @self: a graph that is not instantiated yet
 * @op: the op to record; the graph keeps a copy of it as it is now
 * @error: return location for a #GError
 *
 * Records @op after the ops added before. The op is checked as a submit
 * would check it (accel_op_validate(), its buffers' device and generation,
 * that the device has a kernel for it); nothing runs.
 *
 * Returns: %TRUE if it was recorded; else %FALSE with the error a submit
 *   would give, or %ACCEL_ERROR_NOT_SUPPORTED for an op that cannot be in
 *   a graph (a replay, a module load)
 */
gboolean
accel_graph_add (AccelGraph *self, AccelOp *op, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_GRAPH (self), FALSE);
  g_return_val_if_fail (ACCEL_IS_OP (op), FALSE);
  g_return_val_if_fail (self->device != NULL, FALSE);

  if (self->sealed)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "The graph is instantiated; no op can be added to it");
      return FALSE;
    }
  if (ACCEL_IS_REPLAY (op) || ACCEL_IS_MODULE_LOAD (op))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "An op “%s” cannot be recorded in a graph", accel_op_get_type_name (op));
      return FALSE;
    }
  guint gen = accel_device_get_generation (self->device);
  if (gen != self->generation)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER,
                   "The graph was made in generation %u of “%s”, which is now at generation %u",
                   self->generation, accel_device_get_name (self->device), gen);
      return FALSE;
    }
  if (!accel_op_validate (op, error))
    return FALSE;

  if (!_accel_device_check_op_buffers (self->device, op, error))
    return FALSE;
  AccelSystem *system = accel_device_get_system (self->device);
  if (system && accel_registry_find_kernel (accel_system_get_registry (system), op, self->device, error) == NULL)
    return FALSE;

  g_autoptr(GHashTable) by_handle = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  _accel_op_foreach_buffer (op, index_buffer, by_handle);
  if (!add_copy (self, accel_op_serialize (op), resolve_recorded, by_handle, error))
    return FALSE;
  g_ptr_array_add (self->originals, g_object_ref (op));
  return TRUE;
}

static void
seal (AccelGraph *self)
{
  self->content = g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("(sa{sv})"),
                                                           (GVariant **) self->serialised->pdata,
                                                           self->serialised->len));
  self->sealed = TRUE;
}

/**
 * accel_graph_instantiate:
 * @self: a graph
 * @error: return location for a #GError
 *
 * Ends the recording: the graph can be replayed, and no op can be added.
 * The device makes its own form of the graph (a CUDA graph) once, at the
 * first replay. Instantiating twice does nothing more.
 *
 * Returns: %FALSE with %ACCEL_ERROR_INVALID_ARGUMENT for a graph with no op
 */
gboolean
accel_graph_instantiate (AccelGraph *self, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_GRAPH (self), FALSE);

  if (self->sealed)
    return TRUE;
  if (self->ops->len == 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "A graph needs at least one op");
      return FALSE;
    }
  seal (self);
  return TRUE;
}

/**
 * accel_graph_is_instantiated:
 * @self: a graph
 *
 * Whether accel_graph_instantiate() has ended its recording.
 *
 * Returns: whether accel_graph_instantiate() has ended its recording
 */
gboolean
accel_graph_is_instantiated (AccelGraph *self)
{
  g_return_val_if_fail (ACCEL_IS_GRAPH (self), FALSE);
  return self->sealed;
}

/**
 * accel_graph_get_device:
 * @self: a graph
 *
 * The device it was made for; %NULL for a graph a device host read from a
 * replay.
 *
 * Returns: (transfer none) (nullable): the device it was made for; %NULL
 *   for a graph a device host read from a replay
 */
AccelDevice *
accel_graph_get_device (AccelGraph *self)
{
  g_return_val_if_fail (ACCEL_IS_GRAPH (self), NULL);
  return self->device;
}

/**
 * accel_graph_get_lane:
 * @self: a graph
 *
 * The lane its replays run on, or -1 for any.
 *
 * Returns: the lane its replays run on, or -1 for any
 */
int
accel_graph_get_lane (AccelGraph *self)
{
  g_return_val_if_fail (ACCEL_IS_GRAPH (self), -1);
  return self->lane;
}

/**
 * accel_graph_get_generation:
 * @self: a graph
 *
 * The generation of its device it was made in.
 *
 * Returns: the generation of its device it was made in
 */
guint
accel_graph_get_generation (AccelGraph *self)
{
  g_return_val_if_fail (ACCEL_IS_GRAPH (self), 0);
  return self->generation;
}

/**
 * accel_graph_get_n_ops:
 * @self: a graph
 *
 * How many ops it holds.
 *
 * Returns: how many ops it holds
 */
guint
accel_graph_get_n_ops (AccelGraph *self)
{
  g_return_val_if_fail (ACCEL_IS_GRAPH (self), 0);
  return self->ops->len;
}

/**
 * accel_graph_get_op:
 * @self: a graph
 * @index: below accel_graph_get_n_ops()
 *
 * The graph's copy of op @index; do not change it.
 *
 * Returns: (transfer none): the graph's copy of op @index; do not change it
 */
AccelOp *
accel_graph_get_op (AccelGraph *self, guint index)
{
  g_return_val_if_fail (ACCEL_IS_GRAPH (self), NULL);
  g_return_val_if_fail (index < self->ops->len, NULL);
  return self->ops->pdata[index];
}

/**
 * accel_graph_get_kernel: (skip)
 * @self: an instantiated graph
 * @index: an op index
 * @device: the device that runs the graph (in a device host, its own)
 * @error: return location for a #GError
 *
 * For backends: the kernel chosen for op @index on @device, chosen once
 * for all the ops when first asked. On the device thread.
 *
 * Returns: (transfer none) (nullable): the kernel, or %NULL with @error set
 */
const AccelKernel *
accel_graph_get_kernel (AccelGraph *self, guint index, AccelDevice *device, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_GRAPH (self), NULL);
  g_return_val_if_fail (ACCEL_IS_DEVICE (device), NULL);
  g_return_val_if_fail (index < self->ops->len, NULL);

  g_mutex_lock (&self->lock);
  if (self->kernels == NULL || self->kernel_device != device)
    {
      AccelSystem *system = accel_device_get_system (device);
      g_autoptr(GPtrArray) kernels = g_ptr_array_new ();
      for (guint i = 0; i < self->ops->len; i++)
        {
          const AccelKernel *k = system ? accel_registry_find_kernel (accel_system_get_registry (system),
                                                                      self->ops->pdata[i], device, error)
                                        : NULL;
          if (k == NULL)
            {
              if (system == NULL)
                g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL, "The device belongs to no system");
              g_mutex_unlock (&self->lock);
              return NULL;
            }
          g_ptr_array_add (kernels, (gpointer) k);
        }
      g_clear_pointer (&self->kernels, g_ptr_array_unref);
      self->kernels = g_steal_pointer (&kernels);
      self->kernel_device = device;
    }
  const AccelKernel *k = self->kernels->pdata[index];
  g_mutex_unlock (&self->lock);
  return k;
}

/* For the replay op. */

guint64
_accel_graph_get_handle (AccelGraph *self)
{
  return self->handle;
}

GVariant *
_accel_graph_get_content (AccelGraph *self)
{
  return self->content;
}

guint
_accel_graph_get_n_buffers (AccelGraph *self)
{
  return self->buffers->len;
}

AccelBuffer *
_accel_graph_peek_buffer (AccelGraph *self, guint index, AccelAccess *access)
{
  *access = g_array_index (self->access, AccelAccess, index);
  return self->buffers->pdata[index];
}

/* Graphs read from replays, in a device host. */

#define MAX_CACHED_GRAPHS 64

G_LOCK_DEFINE_STATIC (read_graphs);
static GHashTable *read_graphs;   /* handle -> AccelGraph */

static gboolean
same_content (GVariant *a, GVariant *b)
{
  gsize n = g_variant_get_size (a);
  if (n != g_variant_get_size (b))
    return FALSE;
  gconstpointer da = g_variant_get_data (a), db = g_variant_get_data (b);
  return da && db ? memcmp (da, db, n) == 0 : g_variant_equal (a, b);
}

AccelGraph *
_accel_graph_lookup_or_build (guint64 handle,
                              GVariant *content,
                              AccelBufferResolveFunc resolve,
                              gpointer user_data,
                              GError **error)
{
  if (!g_variant_is_of_type (content, G_VARIANT_TYPE ("a(sa{sv})")) || g_variant_n_children (content) == 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "replay: the serialised graph has type %s, or no op", g_variant_get_type_string (content));
      return NULL;
    }

  G_LOCK (read_graphs);
  if (read_graphs == NULL)
    read_graphs = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_object_unref);
  AccelGraph *graph = g_hash_table_lookup (read_graphs, &handle);
  if (graph && same_content (graph->content, content))
    {
      g_object_ref (graph);
      G_UNLOCK (read_graphs);
      return graph;
    }
  G_UNLOCK (read_graphs);

  g_autoptr(AccelGraph) built = g_object_new (ACCEL_TYPE_GRAPH, NULL);
  built->handle = handle;
  gsize n = g_variant_n_children (content);
  for (gsize i = 0; i < n; i++)
    {
      if (!add_copy (built, g_variant_get_child_value (content, i), resolve, user_data, error))
        {
          g_prefix_error (error, "replay: op %" G_GSIZE_FORMAT ": ", i);
          return NULL;
        }
      AccelOp *op = built->ops->pdata[i];
      if (ACCEL_IS_REPLAY (op) || ACCEL_IS_MODULE_LOAD (op) || !accel_op_validate (op, error))
        {
          if (error && *error == NULL)
            g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                         "replay: op %" G_GSIZE_FORMAT " cannot be in a graph", i);
          return NULL;
        }
    }
  built->content = g_variant_ref (content);
  built->sealed = TRUE;

  G_LOCK (read_graphs);
  if (g_hash_table_size (read_graphs) >= MAX_CACHED_GRAPHS)
    g_hash_table_remove_all (read_graphs);
  guint64 *key = g_new (guint64, 1);
  *key = handle;
  g_hash_table_replace (read_graphs, key, g_object_ref (built));
  G_UNLOCK (read_graphs);
  return g_steal_pointer (&built);
}

/* Replays. */

/**
 * accel_graph_new_replay:
 * @self: an instantiated graph
 *
 * Makes the op that replays @self on its lane: submit it to the graph's
 * device as often as wanted (the same op may be in flight several times).
 *
 * Returns: (transfer full): a new `replay` op
 */
AccelOp *
accel_graph_new_replay (AccelGraph *self)
{
  g_return_val_if_fail (ACCEL_IS_GRAPH (self), NULL);
  AccelOp *op = accel_replay_new (self);
  accel_op_set_lane (op, self->lane);
  return op;
}

/**
 * accel_graph_replay:
 * @self: an instantiated graph
 * @cancellable: (nullable): cancels the replay while it is queued
 * @error: return location for a #GError
 *
 * Runs the graph's ops once, in order, on its device and lane, and waits.
 *
 * Returns: %TRUE if every op ran; else %FALSE with the error
 *   (%ACCEL_ERROR_STALE_BUFFER for a graph of an older generation)
 */
gboolean
accel_graph_replay (AccelGraph *self, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_GRAPH (self), FALSE);
  g_return_val_if_fail (self->device != NULL, FALSE);
  g_autoptr(AccelOp) op = accel_graph_new_replay (self);
  return accel_device_submit (self->device, op, cancellable, error);
}

static void
replayed (GObject *source, GAsyncResult *result, gpointer data)
{
  GTask *task = data;
  GError *error = NULL;
  if (accel_device_submit_finish (ACCEL_DEVICE (source), result, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
  g_object_unref (task);
}

/**
 * accel_graph_replay_async:
 * @self: an instantiated graph
 * @cancellable: (nullable): cancels the replay while it is queued
 * @callback: (scope async): called on the caller's thread-default main
 *   context when the replay has run
 * @user_data: data for @callback
 *
 * Queues one replay of the graph.
 */
void
accel_graph_replay_async (AccelGraph *self, GCancellable *cancellable, GAsyncReadyCallback callback,
                          gpointer user_data)
{
  g_return_if_fail (ACCEL_IS_GRAPH (self));
  g_return_if_fail (self->device != NULL);
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, accel_graph_replay_async);
  g_autoptr(AccelOp) op = accel_graph_new_replay (self);
  accel_device_submit_async (self->device, op, cancellable, replayed, task);
}

/**
 * accel_graph_replay_finish:
 * @self: a graph
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Finishes accel_graph_replay_async().
 *
 * Returns: %TRUE if every op ran
 */
gboolean
accel_graph_replay_finish (AccelGraph *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}
