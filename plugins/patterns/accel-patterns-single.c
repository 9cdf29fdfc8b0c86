/* accel-patterns-single.c: a serving actor with one model on one device:
 * the base of `batcher`, `hot-swap` and `fair-share`.
 *
 * `max-inflight` runners (accel-patterns-runner.c) each run one batch at
 * a time. A batch that fails because the device lost its context is run
 * once more: the model is prepared again on the new generation first, so
 * a device fault costs those requests time, not their answers.
 *
 * Where a subclass makes `model` writable (`hot-swap`), setting it
 * prepares the new model on the caller's thread, checks that it takes and
 * gives what the old one did, and then swaps the runners on the actor's
 * thread before returning: a request sent after that only meets the new
 * model, while batches already running finish on the old one. A model
 * that does not fit is refused with a warning and the old one stays.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-patterns-single.h"
#include "accel-patterns-runner.h"

typedef struct {
  AccelModel *model;
  AccelDevice *device;
  guint max_inflight;
  GPtrArray *runners;           /* AccelPatternsRunner, dispatcher thread */
  guint32 version;              /* atomic */
  gboolean set_up;
} AccelPatternsSinglePrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (AccelPatternsSingle, accel_patterns_single, ACCEL_PATTERNS_TYPE_SERVER)

static const AccelPropertyField single_fields[] = {
  ACCEL_FIELD_OBJECT (AccelPatternsSinglePrivate, device, "device",
                      "Device the model runs on (default: the system's best)", accel_device_get_type,
                      ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_UINT (AccelPatternsSinglePrivate, max_inflight, "max-inflight", "Batches running at once",
                    1, 64, 1, ACCEL_FIELD_CONSTRUCT),
  /* Read atomically. */
  ACCEL_ACCESSOR_UINT (AccelPatternsSingle, accel_patterns_single_get_model_version, NULL, "model-version",
                       "Version of the model now served: 1, then one more per swap", 0, G_MAXUINT32, 1,
                       ACCEL_FIELD_READABLE),
};

/* What is not a field or an accessor: `model`, which subclasses install
 * and which swaps the model when set once serving. Its id follows the
 * fields'. */
enum {
  PROP_MODEL = G_N_ELEMENTS (single_fields) + 1,
};

#define PRIV(self) ((AccelPatternsSinglePrivate *) accel_patterns_single_get_instance_private (ACCEL_PATTERNS_SINGLE (self)))

static void
accel_patterns_single_finalize (GObject *object)
{
  AccelPatternsSinglePrivate *priv = PRIV (object);
  g_clear_object (&priv->model);
  accel_object_finalize_fields (object, ACCEL_PATTERNS_TYPE_SINGLE);
  g_ptr_array_unref (priv->runners);
  G_OBJECT_CLASS (accel_patterns_single_parent_class)->finalize (object);
}

static void
make_runners (AccelPatternsSingle *self, GPtrArray *runners, AccelModel *model)
{
  AccelPatternsSinglePrivate *priv = PRIV (self);
  g_ptr_array_set_size (runners, 0);
  for (guint i = 0; i < priv->max_inflight; i++)
    g_ptr_array_add (runners, accel_patterns_runner_new (model, priv->device));
}

typedef struct {
  AccelPatternsSingle *self;
  AccelModel *model;
  GPtrArray *runners;
  GMutex lock;
  GCond cond;
  gboolean done;
} Swap;

static gboolean
swap_on_thread (gpointer data)
{
  Swap *swap = data;
  AccelPatternsSinglePrivate *priv = PRIV (swap->self);

  g_set_object (&priv->model, swap->model);
  g_ptr_array_unref (priv->runners);
  priv->runners = g_ptr_array_ref (swap->runners);
  g_atomic_int_inc (&priv->version);
  accel_patterns_server_schedule (ACCEL_PATTERNS_SERVER (swap->self));
  /* The last touch: the setter's frame, which holds @swap, may go at once. */
  g_mutex_lock (&swap->lock);
  swap->done = TRUE;
  g_cond_signal (&swap->cond);
  g_mutex_unlock (&swap->lock);
  return G_SOURCE_REMOVE;
}

/* Replaces the model of a running actor; see the top of the file. */
static void
swap_model (AccelPatternsSingle *self, AccelModel *model)
{
  AccelPatternsSinglePrivate *priv = PRIV (self);
  const char *name = accel_actor_get_name (ACCEL_ACTOR (self));
  g_autoptr(GError) error = NULL;

  if (model == NULL)
    {
      g_warning ("%s: “model” cannot be set to nothing; the model stays", name);
      return;
    }
  g_autoptr(GPtrArray) old_in = accel_model_get_inputs (priv->model);
  g_autoptr(GPtrArray) old_out = accel_model_get_outputs (priv->model);
  g_autoptr(GPtrArray) new_in = accel_model_get_inputs (model);
  g_autoptr(GPtrArray) new_out = accel_model_get_outputs (model);
  if (!accel_patterns_specs_equal (old_in, new_in) || !accel_patterns_specs_equal (old_out, new_out))
    {
      g_warning ("%s: the new “model” (%s) does not take and give what the old one did; the model stays",
                 name, G_OBJECT_TYPE_NAME (model));
      return;
    }
  if (!accel_model_prepare (model, priv->device, &error))
    {
      g_warning ("%s: the new “model” failed to prepare on %s: %s; the model stays", name,
                 accel_device_get_name (priv->device), error->message);
      return;
    }

  Swap swap = { self, model, g_ptr_array_new_with_free_func ((GDestroyNotify) accel_patterns_runner_unref) };
  make_runners (self, swap.runners, model);
  g_mutex_init (&swap.lock);
  g_cond_init (&swap.cond);
  if (accel_dispatcher_is_current (accel_actor_get_dispatcher (ACCEL_ACTOR (self))))
    swap_on_thread (&swap);
  else
    {
      accel_patterns_server_run_on_thread (ACCEL_PATTERNS_SERVER (self), swap_on_thread, &swap);
      g_mutex_lock (&swap.lock);
      while (!swap.done)
        g_cond_wait (&swap.cond, &swap.lock);
      g_mutex_unlock (&swap.lock);
    }
  g_mutex_clear (&swap.lock);
  g_cond_clear (&swap.cond);
  g_ptr_array_unref (swap.runners);
}

static void
accel_patterns_single_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelPatternsSingle *self = ACCEL_PATTERNS_SINGLE (object);
  AccelPatternsSinglePrivate *priv = PRIV (self);

  switch (prop_id)
    {
    case PROP_MODEL:
      if (priv->set_up)
        swap_model (self, g_value_get_object (value));
      else
        g_set_object (&priv->model, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_patterns_single_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelPatternsSinglePrivate *priv = PRIV (object);

  switch (prop_id)
    {
    case PROP_MODEL:
      g_value_set_object (value, priv->model);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static gboolean
accel_patterns_single_setup (AccelPatternsServer *server, GError **error)
{
  AccelPatternsSingle *self = ACCEL_PATTERNS_SINGLE (server);
  AccelPatternsSinglePrivate *priv = PRIV (self);
  const char *name = accel_actor_get_name (ACCEL_ACTOR (self));

  if (priv->model == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "%s: “model” is not set", name);
      return FALSE;
    }
  if (priv->device == NULL)
    {
      priv->device = accel_patterns_server_find_device (server, "default", error);
      if (priv->device == NULL)
        return FALSE;
    }
  g_autoptr(GPtrArray) inputs = accel_model_get_inputs (priv->model);
  g_autoptr(GPtrArray) outputs = accel_model_get_outputs (priv->model);
  if (inputs->len == 0 || outputs->len == 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “model” (%s) has no inputs or no outputs", name, G_OBJECT_TYPE_NAME (priv->model));
      return FALSE;
    }
  accel_patterns_server_set_io (server, inputs, outputs);
  make_runners (self, priv->runners, priv->model);
  priv->set_up = TRUE;
  return TRUE;
}

static guint
accel_patterns_single_get_capacity (AccelPatternsServer *server)
{
  AccelPatternsSinglePrivate *priv = PRIV (server);
  guint idle = 0;
  for (guint i = 0; i < priv->runners->len; i++)
    idle += !accel_patterns_runner_is_busy (priv->runners->pdata[i]);
  return idle;
}

static void run_batch (AccelPatternsSingle *self, AccelPatternsBatch *batch, AccelPatternsRunner *runner);

static void
batch_ran (GObject *source, GAsyncResult *result, gpointer data)
{
  AccelPatternsBatch *batch = data;
  AccelPatternsSingle *self = batch->server;
  AccelPatternsRunner *runner = batch->slot;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) outputs = accel_patterns_runner_run_finish (runner, result, &error);

  batch->slot = NULL;
  if (accel_patterns_server_batch_may_retry (ACCEL_PATTERNS_SERVER (self), batch, error)
      && accel_device_get_state (accel_patterns_runner_get_device (runner)) != ACCEL_DEVICE_STATE_FAILED)
    {
      g_debug ("%s: a batch of %u rows failed (%s); running it once more",
               accel_actor_get_name (ACCEL_ACTOR (self)), batch->rows, error->message);
      run_batch (self, batch, runner);
    }
  else
    accel_patterns_server_finish_batch (ACCEL_PATTERNS_SERVER (self), batch, outputs, error);
  accel_patterns_runner_unref (runner);
  g_object_unref (self);
}

static void
run_batch (AccelPatternsSingle *self, AccelPatternsBatch *batch, AccelPatternsRunner *runner)
{
  batch->attempts++;
  batch->slot = accel_patterns_runner_ref (runner);
  accel_patterns_runner_run_async (runner, batch->rows, (GBytes **) batch->inputs->pdata, batch_ran,
                                   batch);
  g_object_ref (self);
}

static void
accel_patterns_single_execute (AccelPatternsServer *server, AccelPatternsBatch *batch)
{
  AccelPatternsSinglePrivate *priv = PRIV (server);
  AccelPatternsRunner *runner = NULL;
  for (guint i = 0; i < priv->runners->len && runner == NULL; i++)
    if (!accel_patterns_runner_is_busy (priv->runners->pdata[i]))
      runner = priv->runners->pdata[i];
  g_return_if_fail (runner != NULL);
  batch->model_version = g_atomic_int_get (&priv->version);
  run_batch (ACCEL_PATTERNS_SINGLE (server), batch, runner);
}

static void
accel_patterns_single_reset (AccelPatternsServer *server)
{
  AccelPatternsSinglePrivate *priv = PRIV (server);
  /* Runners still busy with abandoned batches are dropped with them. */
  g_autoptr(GPtrArray) fresh = g_ptr_array_new_with_free_func ((GDestroyNotify) accel_patterns_runner_unref);
  make_runners (ACCEL_PATTERNS_SINGLE (server), fresh, priv->model);
  g_ptr_array_unref (priv->runners);
  priv->runners = g_steal_pointer (&fresh);
}

static void
accel_patterns_single_class_init (AccelPatternsSingleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelPatternsServerClass *server_class = ACCEL_PATTERNS_SERVER_CLASS (klass);

  object_class->finalize = accel_patterns_single_finalize;
  object_class->set_property = accel_patterns_single_set_property;
  object_class->get_property = accel_patterns_single_get_property;
  server_class->setup = accel_patterns_single_setup;
  server_class->get_capacity = accel_patterns_single_get_capacity;
  server_class->execute = accel_patterns_single_execute;
  server_class->reset = accel_patterns_single_reset;

  accel_object_class_install_private_fields (object_class, single_fields, G_N_ELEMENTS (single_fields));
}

static void
accel_patterns_single_init (AccelPatternsSingle *self)
{
  AccelPatternsSinglePrivate *priv = PRIV (self);
  priv->max_inflight = 1;
  priv->version = 1;
  priv->runners = g_ptr_array_new_with_free_func ((GDestroyNotify) accel_patterns_runner_unref);
}

/* Installs `model` on a subclass: fixed once spawned, or @swappable. */
void
accel_patterns_single_class_install_model (AccelPatternsSingleClass *klass, gboolean swappable)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS
                      | (swappable ? G_PARAM_CONSTRUCT : G_PARAM_CONSTRUCT_ONLY);

  /* GObject does not inherit the property functions; a subclass with
   * properties of its own sets its own and passes the rest on. */
  if (object_class->set_property == NULL)
    {
      object_class->set_property = accel_patterns_single_set_property;
      object_class->get_property = accel_patterns_single_get_property;
    }
  g_object_class_install_property (object_class, PROP_MODEL,
                                   g_param_spec_object ("model", NULL,
                                                        swappable ? "Model served; set it to swap models while serving"
                                                                  : "Model served",
                                                        ACCEL_TYPE_MODEL, flags));
}

guint32
accel_patterns_single_get_model_version (AccelPatternsSingle *self)
{
  return g_atomic_int_get (&PRIV (self)->version);
}
