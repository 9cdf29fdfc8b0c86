/* accel-model.c: the interface of what serving actors run.
 *
 * The interface functions wrap the implementation's: they check buffers
 * against the model's inputs and outputs before anything runs, and they
 * remember on which devices, at which generation, the model was prepared,
 * so a run after a device's context was rebuilt prepares the model again
 * first. That bookkeeping is here, once, rather than in every model.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"
#include "accel-work-private.h"

/**
 * AccelModel:
 *
 * A model a serving actor runs: its inputs and outputs are tensors whose
 * axis 0 is the batch axis (#AccelTensorSpec); accel_model_prepare() makes
 * it ready on a device (uploads its weights there) and
 * accel_model_run_async() runs one batch of buffers on that device.
 *
 * A model may be prepared on several devices at once (a replica pool does
 * so) and must accept runs on each of them. Its methods are called from
 * the serving actor's dispatcher thread; the completion of a run may come
 * from any thread, through the #GTask the implementation is given.
 *
 * In Python, a model is a GObject subclass:
 *
 * ```python
 * class Double(GObject.Object, Accel.Model):
 *     def do_get_input(self, index):
 *         return Accel.TensorSpec.new("x", Accel.DType.F32, [4]) if index == 0 else None
 *     def do_get_output(self, index):
 *         return Accel.TensorSpec.new("y", Accel.DType.F32, [4]) if index == 0 else None
 *     def do_prepare(self, device):
 *         return True
 *     def do_run_batch(self, device, inputs, outputs, task):
 *         ...   # submit ops reading inputs[0], writing outputs[0]
 *         task.return_boolean(True)   # when they are done
 * ```
 */
G_DEFINE_INTERFACE (AccelModel, accel_model, G_TYPE_OBJECT)

/* What the wrappers keep per model instance. */
typedef struct {
  GMutex lock;                 /* guards the fields below */
  GPtrArray *inputs;           /* AccelTensorSpec, cached on first use */
  GPtrArray *outputs;
  GHashTable *prepared;        /* AccelDevice (ref) -> generation + 1 */
  GMainContext *home;          /* where the implementation runs, or NULL: anywhere */
  GRecMutex prepare_lock;      /* one prepare at a time */
} ModelState;

static void
model_state_free (gpointer data)
{
  ModelState *state = data;
  g_clear_pointer (&state->inputs, g_ptr_array_unref);
  g_clear_pointer (&state->outputs, g_ptr_array_unref);
  g_hash_table_unref (state->prepared);
  g_clear_pointer (&state->home, g_main_context_unref);
  g_mutex_clear (&state->lock);
  g_rec_mutex_clear (&state->prepare_lock);
  g_free (state);
}

G_LOCK_DEFINE_STATIC (model_state);

static ModelState *
model_state (AccelModel *self)
{
  static GQuark quark;
  if (G_UNLIKELY (quark == 0))
    quark = g_quark_from_static_string ("accel-model-state");

  G_LOCK (model_state);
  ModelState *state = g_object_get_qdata (G_OBJECT (self), quark);
  if (state == NULL)
    {
      state = g_new0 (ModelState, 1);
      g_mutex_init (&state->lock);
      g_rec_mutex_init (&state->prepare_lock);
      state->prepared = g_hash_table_new_full (NULL, NULL, g_object_unref, NULL);
      g_object_set_qdata_full (G_OBJECT (self), quark, state, model_state_free);
    }
  G_UNLOCK (model_state);
  return state;
}

static void
accel_model_default_init (AccelModelInterface *iface)
{
}

static GMainContext *
home_of (AccelModel *self)
{
  ModelState *state = model_state (self);
  g_mutex_lock (&state->lock);
  GMainContext *home = state->home ? g_main_context_ref (state->home) : NULL;
  g_mutex_unlock (&state->lock);
  return home;
}

/* Runs @func (@data) where the implementation lives: here, or on its home
 * context (and then waits for it). */
static void
call_home (AccelModel *self, AccelDispatchFunc func, gpointer data)
{
  g_autoptr(GMainContext) home = home_of (self);
  if (home == NULL || g_main_context_is_owner (home))
    {
      func (data);
      return;
    }
  AccelSyncCall call;
  _accel_sync_call_init (&call, func, data);
  g_main_context_invoke (home, _accel_sync_call_run_source, &call);
  _accel_waiter_wait (&call.waiter);
}

/**
 * accel_model_set_main_context:
 * @self: a model
 * @context: (nullable): the context whose thread runs the implementation,
 *   or %NULL for any thread
 *
 * Makes every call into @self's implementation (get_input, get_output,
 * prepare, run_batch) happen on @context's thread. A model written in
 * JavaScript needs it (gjs runs JavaScript on its main thread only:
 * `model.set_main_context(GLib.MainContext.default())`); that context must
 * then be running while the model serves, so ask the serving actor with
 * `ask_async`, not the blocking `ask`, from that thread.
 */
void
accel_model_set_main_context (AccelModel *self, GMainContext *context)
{
  g_return_if_fail (ACCEL_IS_MODEL (self));
  ModelState *state = model_state (self);
  g_mutex_lock (&state->lock);
  g_clear_pointer (&state->home, g_main_context_unref);
  state->home = context ? g_main_context_ref (context) : NULL;
  g_mutex_unlock (&state->lock);
}

/**
 * accel_model_get_main_context:
 * @self: a model
 *
 * Gives the context set with accel_model_set_main_context().
 *
 * Returns: (transfer none) (nullable): the context, or %NULL
 */
GMainContext *
accel_model_get_main_context (AccelModel *self)
{
  g_return_val_if_fail (ACCEL_IS_MODEL (self), NULL);
  return model_state (self)->home;
}

/* The specs an implementation gives one by one, until it gives NULL. A
 * model with more than this many inputs or outputs is taken to be broken. */
#define MAX_SPECS 4096

typedef struct {
  AccelModel *self;
  AccelTensorSpec *(*get) (AccelModel *, guint);
  GPtrArray *out;
} AskSpecs;

static void
ask_specs_here (gpointer data)
{
  AskSpecs *ask = data;
  AccelTensorSpec *spec;
  for (guint i = 0; ask->get && i < MAX_SPECS && (spec = ask->get (ask->self, i)) != NULL; i++)
    g_ptr_array_add (ask->out, spec);
}

static GPtrArray *
ask_specs (AccelModel *self, AccelTensorSpec *(*get) (AccelModel *, guint))
{
  AskSpecs ask = { self, get, g_ptr_array_new_with_free_func ((GDestroyNotify) accel_tensor_spec_unref) };
  call_home (self, ask_specs_here, &ask);
  return ask.out;
}

static GPtrArray *
copy_specs (GPtrArray *specs)
{
  GPtrArray *out = g_ptr_array_new_full (specs->len, (GDestroyNotify) accel_tensor_spec_unref);
  for (guint i = 0; i < specs->len; i++)
    g_ptr_array_add (out, accel_tensor_spec_ref (specs->pdata[i]));
  return out;
}

static GPtrArray *
cached_specs (AccelModel *self, gboolean outputs)
{
  ModelState *state = model_state (self);
  AccelModelInterface *iface = ACCEL_MODEL_GET_IFACE (self);

  g_mutex_lock (&state->lock);
  GPtrArray **slot = outputs ? &state->outputs : &state->inputs;
  GPtrArray *specs = *slot ? g_ptr_array_ref (*slot) : NULL;
  g_mutex_unlock (&state->lock);
  if (specs)
    return specs;

  /* Asked outside the lock: the implementation may be in another language. */
  specs = ask_specs (self, outputs ? iface->get_output : iface->get_input);
  g_mutex_lock (&state->lock);
  if (*slot == NULL)
    *slot = g_ptr_array_ref (specs);
  g_mutex_unlock (&state->lock);
  return specs;
}

/**
 * accel_model_get_inputs:
 * @self: a model
 *
 * Lists the model's inputs, in the order accel_model_run_async() takes
 * their buffers. Asked from the implementation once and kept.
 *
 * Returns: (transfer container) (element-type AccelTensorSpec): the inputs;
 *   the array holds a reference to each and drops it when freed
 */
GPtrArray *
accel_model_get_inputs (AccelModel *self)
{
  g_return_val_if_fail (ACCEL_IS_MODEL (self), NULL);
  g_autoptr(GPtrArray) specs = cached_specs (self, FALSE);
  return copy_specs (specs);
}

/**
 * accel_model_get_outputs:
 * @self: a model
 *
 * Lists the model's outputs, in the order accel_model_run_async() takes
 * their buffers. Asked from the implementation once and kept.
 *
 * Returns: (transfer container) (element-type AccelTensorSpec): the outputs;
 *   the array holds a reference to each and drops it when freed
 */
GPtrArray *
accel_model_get_outputs (AccelModel *self)
{
  g_return_val_if_fail (ACCEL_IS_MODEL (self), NULL);
  g_autoptr(GPtrArray) specs = cached_specs (self, TRUE);
  return copy_specs (specs);
}

typedef struct {
  AccelModel *self;
  AccelDevice *device;
  GError **error;
  gboolean ok;
} PrepareCall;

static void
prepare_here (gpointer data)
{
  PrepareCall *call = data;
  call->ok = ACCEL_MODEL_GET_IFACE (call->self)->prepare (call->self, call->device, call->error);
}

/**
 * accel_model_prepare:
 * @self: a model
 * @device: the device to run on
 * @error: return location for a #GError
 *
 * Makes @self ready to run on @device (uploads its weights there) and
 * records the device's generation, so that accel_model_run_async()
 * prepares it again after that generation changed. Blocks; callable from
 * any thread.
 *
 * Returns: %TRUE on success
 */
gboolean
accel_model_prepare (AccelModel *self, AccelDevice *device, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_MODEL (self), FALSE);
  g_return_val_if_fail (ACCEL_IS_DEVICE (device), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  ModelState *state = model_state (self);
  AccelModelInterface *iface = ACCEL_MODEL_GET_IFACE (self);
  GError *local = NULL;

  g_rec_mutex_lock (&state->prepare_lock);
  /* Read before preparing: a rebuild during the upload must prepare again. */
  guint generation = accel_device_get_generation (device);
  PrepareCall call = { self, device, &local, TRUE };
  if (iface->prepare)
    call_home (self, prepare_here, &call);
  gboolean ok = call.ok;
  if (ok && local != NULL)
    {
      g_warning ("%s's prepare returned TRUE with an error set: %s", G_OBJECT_TYPE_NAME (self), local->message);
      g_clear_error (&local);
    }
  else if (!ok && local == NULL)
    g_set_error (&local, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                 "Model %s failed to prepare on %s without saying why",
                 G_OBJECT_TYPE_NAME (self), accel_device_get_name (device));
  g_mutex_lock (&state->lock);
  if (ok)
    g_hash_table_replace (state->prepared, g_object_ref (device), GUINT_TO_POINTER (generation + 1));
  else
    g_hash_table_remove (state->prepared, device);
  g_mutex_unlock (&state->lock);
  g_rec_mutex_unlock (&state->prepare_lock);

  if (local)
    g_propagate_error (error, local);
  return ok;
}

/**
 * accel_model_is_prepared:
 * @self: a model
 * @device: a device
 *
 * Says whether accel_model_prepare() succeeded on @device since the
 * device's last change of generation. Callable from any thread.
 *
 * Returns: whether @self was prepared on @device at its current generation
 */
gboolean
accel_model_is_prepared (AccelModel *self, AccelDevice *device)
{
  g_return_val_if_fail (ACCEL_IS_MODEL (self), FALSE);
  g_return_val_if_fail (ACCEL_IS_DEVICE (device), FALSE);

  ModelState *state = model_state (self);
  g_mutex_lock (&state->lock);
  guint stamp = GPOINTER_TO_UINT (g_hash_table_lookup (state->prepared, device));
  g_mutex_unlock (&state->lock);
  return stamp != 0 && stamp - 1 == accel_device_get_generation (device);
}

/* Checks one side of a run against the model's specs; returns the batch
 * size through @batch (or checks it against the one given). */
static gboolean
check_buffers (AccelModel *self,
               AccelDevice *device,
               GPtrArray *specs,
               AccelBuffer **buffers,
               guint n_buffers,
               const char *what,
               gint64 *batch,
               GError **error)
{
  if (n_buffers != specs->len)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "Model %s takes %u %ss, not %u", G_OBJECT_TYPE_NAME (self), specs->len, what, n_buffers);
      return FALSE;
    }
  for (guint i = 0; i < n_buffers; i++)
    {
      AccelTensorSpec *spec = specs->pdata[i];
      const char *name = accel_tensor_spec_get_name (spec);
      AccelBuffer *buffer = buffers[i];
      if (buffer == NULL)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "The buffer of %s “%s” is missing", what, name);
          return FALSE;
        }
      if (accel_buffer_get_device (buffer) != device)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_WRONG_DEVICE,
                       "The buffer of %s “%s” is on %s, not on %s", what, name,
                       accel_device_get_name (accel_buffer_get_device (buffer)), accel_device_get_name (device));
          return FALSE;
        }
      if (accel_buffer_is_stale (buffer))
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER,
                       "The buffer of %s “%s” belongs to an older generation of %s", what, name,
                       accel_device_get_name (device));
          return FALSE;
        }
      if (accel_buffer_get_dtype (buffer) != accel_tensor_spec_get_dtype (spec))
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "The buffer of %s “%s” holds %s; the model takes %s", what, name,
                       accel_dtype_get_name (accel_buffer_get_dtype (buffer)),
                       accel_dtype_get_name (accel_tensor_spec_get_dtype (spec)));
          return FALSE;
        }
      const AccelShape *shape = accel_buffer_get_shape (buffer);
      guint n_item = 0, rank = accel_shape_get_rank (shape);
      const gint64 *item = accel_tensor_spec_get_item_dims (spec, &n_item);
      gboolean fits = rank == n_item + 1 && accel_shape_is_contiguous (shape) && accel_shape_get_dim (shape, 0) >= 1;
      for (guint d = 0; fits && d < n_item; d++)
        fits = accel_shape_get_dim (shape, d + 1) == item[d];
      if (fits && *batch > 0)
        fits = accel_shape_get_dim (shape, 0) == *batch;
      if (!fits)
        {
          g_autofree char *have = accel_shape_to_string (shape);
          g_autofree char *want = accel_tensor_spec_to_string (spec);
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                       "The buffer of %s “%s” has the shape %s; the model takes %s%s", what, name, have, want,
                       *batch > 0 ? " with the same n as the other buffers, contiguous" : ", contiguous");
          return FALSE;
        }
      *batch = accel_shape_get_dim (shape, 0);
    }
  return TRUE;
}

/* The implementation completed its task: the run's own completes. */
static void
run_done (GObject *source, GAsyncResult *result, gpointer data)
{
  GTask *task = data;
  AccelModel *self = ACCEL_MODEL (source);
  GError *error = NULL;

  gboolean ok = g_task_propagate_boolean (G_TASK (result), &error);
  if (!ok && error == NULL)
    g_set_error (&error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                 "Model %s failed to run without saying why", G_OBJECT_TYPE_NAME (self));
  if (ok)
    {
      g_clear_error (&error);
      g_task_return_boolean (task, TRUE);
    }
  else
    g_task_return_error (task, error);
  g_object_unref (task);
}

typedef struct {
  AccelModel *self;
  AccelDevice *device;
  GPtrArray *inputs;
  GPtrArray *outputs;
  GTask *task;
} RunCall;

static gboolean
run_here (gpointer data)
{
  RunCall *call = data;
  ACCEL_MODEL_GET_IFACE (call->self)->run_batch (call->self, call->device, call->inputs, call->outputs, call->task);
  return G_SOURCE_REMOVE;
}

static void
free_run_call (gpointer data)
{
  RunCall *call = data;
  g_object_unref (call->self);
  g_object_unref (call->device);
  g_ptr_array_unref (call->inputs);
  g_ptr_array_unref (call->outputs);
  g_object_unref (call->task);
  g_free (call);
}

/**
 * accel_model_run_async:
 * @self: a model
 * @device: the device to run on
 * @inputs: (array length=n_inputs) (transfer none): one buffer per input, in
 *   the order of accel_model_get_inputs(), each `[n, item dims…]`,
 *   contiguous, on @device
 * @n_inputs: how many
 * @outputs: (array length=n_outputs) (transfer none): one buffer per
 *   output, likewise, with the same `n`
 * @n_outputs: how many
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the outputs are written
 * @user_data: data for @callback
 *
 * Runs one batch of `n` items. The buffers are checked against the
 * model's inputs and outputs first (a mismatch fails with
 * %ACCEL_ERROR_INVALID_ARGUMENT, %ACCEL_ERROR_SHAPE_MISMATCH,
 * %ACCEL_ERROR_WRONG_DEVICE or %ACCEL_ERROR_STALE_BUFFER naming the
 * buffer), and the model is prepared on @device if it was not, or was at
 * an older generation of it (which blocks). The callback runs on the
 * caller's thread-default main context.
 */
void
accel_model_run_async (AccelModel *self,
                       AccelDevice *device,
                       AccelBuffer **inputs,
                       guint n_inputs,
                       AccelBuffer **outputs,
                       guint n_outputs,
                       GCancellable *cancellable,
                       GAsyncReadyCallback callback,
                       gpointer user_data)
{
  g_return_if_fail (ACCEL_IS_MODEL (self));
  g_return_if_fail (ACCEL_IS_DEVICE (device));
  g_return_if_fail (n_inputs == 0 || inputs != NULL);
  g_return_if_fail (n_outputs == 0 || outputs != NULL);

  AccelModelInterface *iface = ACCEL_MODEL_GET_IFACE (self);
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, accel_model_run_async);
  GError *error = NULL;

  g_autoptr(GPtrArray) in_specs = cached_specs (self, FALSE);
  g_autoptr(GPtrArray) out_specs = cached_specs (self, TRUE);
  gint64 batch = 0;
  if (iface->run_batch == NULL)
    g_set_error (&error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                 "Model %s does not implement run_batch", G_OBJECT_TYPE_NAME (self));
  else if (check_buffers (self, device, in_specs, inputs, n_inputs, "input", &batch, &error)
           && check_buffers (self, device, out_specs, outputs, n_outputs, "output", &batch, &error)
           && !accel_model_is_prepared (self, device))
    accel_model_prepare (self, device, &error);
  if (error)
    {
      g_task_return_error (task, error);
      g_object_unref (task);
      return;
    }
  g_autoptr(GPtrArray) in = g_ptr_array_new_full (n_inputs, g_object_unref);
  g_autoptr(GPtrArray) out = g_ptr_array_new_full (n_outputs, g_object_unref);
  for (guint i = 0; i < n_inputs; i++)
    g_ptr_array_add (in, g_object_ref (inputs[i]));
  for (guint i = 0; i < n_outputs; i++)
    g_ptr_array_add (out, g_object_ref (outputs[i]));
  GTask *inner = g_task_new (self, cancellable, run_done, task);
  g_task_set_source_tag (inner, iface->run_batch);
  g_autoptr(GMainContext) home = home_of (self);
  if (home && !g_main_context_is_owner (home))
    {
      /* Started there, completed from there: nothing here waits for it. */
      RunCall *call = g_new (RunCall, 1);
      call->self = g_object_ref (self);
      call->device = g_object_ref (device);
      call->inputs = g_ptr_array_ref (in);
      call->outputs = g_ptr_array_ref (out);
      call->task = inner;
      g_main_context_invoke_full (home, G_PRIORITY_DEFAULT, run_here, call, free_run_call);
      return;
    }
  iface->run_batch (self, device, in, out, inner);
  g_object_unref (inner);
}

/**
 * accel_model_run_finish:
 * @self: a model
 * @result: the result given to the callback
 * @error: return location for a #GError
 *
 * Finishes accel_model_run_async().
 *
 * Returns: %TRUE when the outputs were written
 */
gboolean
accel_model_run_finish (AccelModel *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

typedef struct {
  gboolean done;
  gboolean ok;
  GError *error;
} SyncRun;

static void
sync_run_done (GObject *source, GAsyncResult *result, gpointer data)
{
  SyncRun *run = data;
  run->ok = accel_model_run_finish (ACCEL_MODEL (source), result, &run->error);
  run->done = TRUE;
}

/**
 * accel_model_run:
 * @self: a model
 * @device: the device to run on
 * @inputs: (array length=n_inputs) (transfer none): as for accel_model_run_async()
 * @n_inputs: how many
 * @outputs: (array length=n_outputs) (transfer none): as for accel_model_run_async()
 * @n_outputs: how many
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * The blocking form of accel_model_run_async(), for scripts and tests: it
 * runs a main context of its own until the run completes.
 *
 * Returns: %TRUE when the outputs were written
 */
gboolean
accel_model_run (AccelModel *self,
                 AccelDevice *device,
                 AccelBuffer **inputs,
                 guint n_inputs,
                 AccelBuffer **outputs,
                 guint n_outputs,
                 GCancellable *cancellable,
                 GError **error)
{
  g_return_val_if_fail (ACCEL_IS_MODEL (self), FALSE);
  g_return_val_if_fail (ACCEL_IS_DEVICE (device), FALSE);

  g_autoptr(GMainContext) context = g_main_context_new ();
  SyncRun run = { FALSE, FALSE, NULL };
  g_main_context_push_thread_default (context);
  accel_model_run_async (self, device, inputs, n_inputs, outputs, n_outputs, cancellable, sync_run_done, &run);
  while (!run.done)
    g_main_context_iteration (context, TRUE);
  g_main_context_pop_thread_default (context);
  if (run.error)
    g_propagate_error (error, run.error);
  return run.ok;
}
