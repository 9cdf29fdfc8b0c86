/* accel-patterns-cascade.c: the `cascade` actor type: a small model
 * answers every row first; the large model answers again only the rows
 * where the small model's own confidence output is below `threshold`.
 *
 * The rule is data, not code: `confidence-output` names an output of the
 * small model with one real number per row. The rows to escalate are
 * gathered into one batch for the large model, whose answers replace the
 * small model's in the replies; the reply's `stage` (au) says per row
 * which model answered (0 small, 1 large).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-patterns-cascade.h"
#include "accel-patterns-runner.h"
#include "accel-patterns-rows.h"

#include <string.h>

struct _AccelPatternsCascade {
  AccelPatternsServer parent_instance;

  AccelModel *small;
  AccelModel *large;
  AccelDevice *device;
  double threshold;
  char *confidence_output;

  AccelPatternsRunner *small_runner;
  AccelPatternsRunner *large_runner;
  GPtrArray *small_outputs;     /* AccelTensorSpec */
  GPtrArray *large_outputs;
  guint confidence_index;
  guint *answer_index;          /* per large output: the small output of that name */
  gboolean busy;

  GMutex stats_lock;
  guint64 small_rows;
  guint64 large_rows;
};

/**
 * AccelPatternsCascade:
 *
 * `cascade`: `small-model` runs on every batch; rows whose
 * `confidence-output` is below `threshold` (or not a number) go through
 * `large-model` as well, which gives the answer for them. Both models take
 * the same inputs; every output of the large model must be an output of
 * the small one too (same dtype and item shape), and those are what the
 * replies carry.
 */
G_DEFINE_FINAL_TYPE (AccelPatternsCascade, accel_patterns_cascade, ACCEL_PATTERNS_TYPE_SERVER)

static const AccelPropertyField cascade_fields[] = {
  ACCEL_FIELD_OBJECT (AccelPatternsCascade, small, "small-model", "Model that answers every row first",
                      accel_model_get_type, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_OBJECT (AccelPatternsCascade, large, "large-model", "Model that answers the rows of low confidence",
                      accel_model_get_type, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_OBJECT (AccelPatternsCascade, device, "device", "Device both models run on (default: the system's best)",
                      accel_device_get_type, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_DOUBLE (AccelPatternsCascade, threshold, "threshold",
                      "Rows whose confidence is below this go to the large model", -G_MAXDOUBLE, G_MAXDOUBLE, 0.5,
                      ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_STRING (AccelPatternsCascade, confidence_output, "confidence-output",
                      "Output of the small model giving each row's confidence", "confidence", ACCEL_FIELD_CONSTRUCT),
};

/* The statistics, read under the stats lock. */
static const AccelPropertyField stat_fields[] = {
  ACCEL_FIELD_UINT64 (AccelPatternsCascade, small_rows, "small-rows", "Rows the small model ran",
                      0, G_MAXUINT64, 0, ACCEL_FIELD_READABLE),
  ACCEL_FIELD_UINT64 (AccelPatternsCascade, large_rows, "large-rows", "Rows the large model answered",
                      0, G_MAXUINT64, 0, ACCEL_FIELD_READABLE),
};

typedef struct {
  AccelPatternsCascade *self;
  AccelPatternsBatch *batch;
  GPtrArray *small_outputs;     /* GBytes */
  GArray *escalated;            /* guint row indices */
} Step;

static void
free_step (Step *step)
{
  g_clear_pointer (&step->small_outputs, g_ptr_array_unref);
  g_clear_pointer (&step->escalated, g_array_unref);
  g_object_unref (step->self);
  g_free (step);
}

static void
accel_patterns_cascade_finalize (GObject *object)
{
  AccelPatternsCascade *self = ACCEL_PATTERNS_CASCADE (object);
  accel_object_finalize_fields (object, ACCEL_PATTERNS_TYPE_CASCADE);
  g_clear_pointer (&self->small_runner, accel_patterns_runner_unref);
  g_clear_pointer (&self->large_runner, accel_patterns_runner_unref);
  g_clear_pointer (&self->small_outputs, g_ptr_array_unref);
  g_clear_pointer (&self->large_outputs, g_ptr_array_unref);
  g_free (self->answer_index);
  g_mutex_clear (&self->stats_lock);
  G_OBJECT_CLASS (accel_patterns_cascade_parent_class)->finalize (object);
}

static gint
find_spec (GPtrArray *specs, const char *name)
{
  for (guint i = 0; i < specs->len; i++)
    if (g_strcmp0 (accel_tensor_spec_get_name (specs->pdata[i]), name) == 0)
      return (gint) i;
  return -1;
}

static gboolean
accel_patterns_cascade_setup (AccelPatternsServer *server, GError **error)
{
  AccelPatternsCascade *self = ACCEL_PATTERNS_CASCADE (server);
  const char *name = accel_actor_get_name (ACCEL_ACTOR (self));

  if (self->small == NULL || self->large == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "%s: “%s” is not set", name,
                   self->small ? "large-model" : "small-model");
      return FALSE;
    }
  if (self->device == NULL && !(self->device = accel_patterns_server_find_device (server, "default", error)))
    return FALSE;

  g_autoptr(GPtrArray) small_in = accel_model_get_inputs (self->small);
  g_autoptr(GPtrArray) large_in = accel_model_get_inputs (self->large);
  if (small_in->len == 0 || !accel_patterns_specs_equal (small_in, large_in))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “small-model” and “large-model” must take the same inputs", name);
      return FALSE;
    }
  self->small_outputs = accel_model_get_outputs (self->small);
  self->large_outputs = accel_model_get_outputs (self->large);
  gint c = find_spec (self->small_outputs, self->confidence_output);
  if (c < 0 || accel_tensor_spec_get_item_elements (self->small_outputs->pdata[c]) != 1
      || !accel_patterns_dtype_is_real (accel_tensor_spec_get_dtype (self->small_outputs->pdata[c])))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “confidence-output” (“%s”) must name an output of “small-model” with one real number per row",
                   name, self->confidence_output ? self->confidence_output : "");
      return FALSE;
    }
  self->confidence_index = c;
  if (self->large_outputs->len == 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "%s: “large-model” has no outputs", name);
      return FALSE;
    }
  self->answer_index = g_new (guint, self->large_outputs->len);
  for (guint j = 0; j < self->large_outputs->len; j++)
    {
      AccelTensorSpec *spec = self->large_outputs->pdata[j];
      gint i = find_spec (self->small_outputs, accel_tensor_spec_get_name (spec));
      if (i < 0 || !accel_tensor_spec_equal (self->small_outputs->pdata[i], spec))
        {
          g_autofree char *s = accel_tensor_spec_to_string (spec);
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "%s: “small-model” lacks the output %s of “large-model”", name, s);
          return FALSE;
        }
      self->answer_index[j] = i;
    }
  accel_patterns_server_set_io (server, small_in, self->large_outputs);
  self->small_runner = accel_patterns_runner_new (self->small, self->device);
  self->large_runner = accel_patterns_runner_new (self->large, self->device);
  return TRUE;
}

static guint
accel_patterns_cascade_get_capacity (AccelPatternsServer *server)
{
  return !ACCEL_PATTERNS_CASCADE (server)->busy;
}

/* Ends a batch (or runs it once more after a device fault). */
static void
end (AccelPatternsCascade *self, AccelPatternsBatch *batch, GPtrArray *outputs, const GError *error)
{
  if (accel_patterns_server_batch_is_current (ACCEL_PATTERNS_SERVER (self), batch))
    {
      self->busy = FALSE;
      if (!error)
        {
          g_mutex_lock (&self->stats_lock);
          self->small_rows += batch->rows;
          for (guint i = 0; i < batch->rows; i++)
            self->large_rows += g_array_index (batch->tags, guint32, i);
          g_mutex_unlock (&self->stats_lock);
        }
    }
  accel_patterns_server_finish_or_retry (ACCEL_PATTERNS_SERVER (self), batch, outputs, error);
}

static void
large_done (GObject *source, GAsyncResult *result, gpointer data)
{
  Step *step = data;
  AccelPatternsCascade *self = step->self;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) large = accel_patterns_runner_run_finish (NULL, result, &error);
  g_autoptr(GPtrArray) answers = NULL;

  if (large)
    {
      /* The small model's answers, with the escalated rows replaced. */
      answers = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
      for (guint j = 0; j < self->large_outputs->len; j++)
        {
          gsize item = accel_tensor_spec_get_item_size (self->large_outputs->pdata[j]);
          gsize size = 0;
          guint8 *merged = g_bytes_unref_to_data (g_bytes_ref (step->small_outputs->pdata[self->answer_index[j]]), &size);
          const guint8 *fresh = g_bytes_get_data (large->pdata[j], NULL);
          for (guint i = 0; i < step->escalated->len; i++)
            memcpy (merged + (gsize) g_array_index (step->escalated, guint, i) * item, fresh + i * item, item);
          g_ptr_array_add (answers, g_bytes_new_take (merged, size));
        }
    }
  end (self, step->batch, answers, error);
  free_step (step);
}

static void
small_done (GObject *source, GAsyncResult *result, gpointer data)
{
  Step *step = data;
  AccelPatternsCascade *self = step->self;
  AccelPatternsBatch *batch = step->batch;
  g_autoptr(GError) error = NULL;

  step->small_outputs = accel_patterns_runner_run_finish (NULL, result, &error);
  if (step->small_outputs == NULL || !accel_patterns_server_batch_is_current (ACCEL_PATTERNS_SERVER (self), batch))
    {
      end (self, batch, NULL, error);
      free_step (step);
      return;
    }

  AccelTensorSpec *spec = self->small_outputs->pdata[self->confidence_index];
  g_autofree float *confidence = g_new (float, batch->rows);
  accel_patterns_to_f32 (accel_tensor_spec_get_dtype (spec),
                         g_bytes_get_data (step->small_outputs->pdata[self->confidence_index], NULL),
                         confidence, batch->rows);
  g_clear_pointer (&batch->tags, g_array_unref);
  batch->tags = g_array_sized_new (FALSE, TRUE, sizeof (guint32), batch->rows);
  batch->tags_key = "stage";
  batch->tags_per_row = 1;
  step->escalated = g_array_new (FALSE, FALSE, sizeof (guint));
  for (guint i = 0; i < batch->rows; i++)
    {
      guint32 stage = !(confidence[i] >= self->threshold);
      g_array_append_val (batch->tags, stage);
      if (stage)
        g_array_append_val (step->escalated, i);
    }

  if (step->escalated->len == 0)
    {
      g_autoptr(GPtrArray) answers = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
      for (guint j = 0; j < self->large_outputs->len; j++)
        g_ptr_array_add (answers, g_bytes_ref (step->small_outputs->pdata[self->answer_index[j]]));
      end (self, batch, answers, NULL);
      free_step (step);
      return;
    }
  g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autoptr(GPtrArray) in_specs = accel_model_get_inputs (self->large);
  for (guint i = 0; i < in_specs->len; i++)
    g_ptr_array_add (inputs, accel_patterns_rows_gather (batch->inputs->pdata[i],
                                                         accel_tensor_spec_get_item_size (in_specs->pdata[i]),
                                                         (const guint *) step->escalated->data, step->escalated->len));
  accel_patterns_runner_run_async (self->large_runner, step->escalated->len, (GBytes **) inputs->pdata,
                                   large_done, step);
}

/* Runs a batch (once more, after a device fault). */
static void
accel_patterns_cascade_execute (AccelPatternsServer *server, AccelPatternsBatch *batch)
{
  AccelPatternsCascade *self = ACCEL_PATTERNS_CASCADE (server);
  Step *step = g_new0 (Step, 1);
  step->self = g_object_ref (self);
  step->batch = batch;
  batch->attempts++;
  self->busy = TRUE;
  accel_patterns_runner_run_async (self->small_runner, batch->rows, (GBytes **) batch->inputs->pdata,
                                   small_done, step);
}

static void
accel_patterns_cascade_reset (AccelPatternsServer *server)
{
  AccelPatternsCascade *self = ACCEL_PATTERNS_CASCADE (server);
  self->busy = FALSE;
  g_clear_pointer (&self->small_runner, accel_patterns_runner_unref);
  g_clear_pointer (&self->large_runner, accel_patterns_runner_unref);
  self->small_runner = accel_patterns_runner_new (self->small, self->device);
  self->large_runner = accel_patterns_runner_new (self->large, self->device);
}

static void
accel_patterns_cascade_class_init (AccelPatternsCascadeClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelPatternsServerClass *server_class = ACCEL_PATTERNS_SERVER_CLASS (klass);

  object_class->finalize = accel_patterns_cascade_finalize;
  server_class->setup = accel_patterns_cascade_setup;
  server_class->get_capacity = accel_patterns_cascade_get_capacity;
  server_class->execute = accel_patterns_cascade_execute;
  server_class->reset = accel_patterns_cascade_reset;
  accel_actor_class_set_metadata (ACCEL_ACTOR_CLASS (klass), "cascade",
                                  "A small model first; the large one only where the small one's confidence is low");

  accel_object_class_install_fields (object_class, cascade_fields, G_N_ELEMENTS (cascade_fields));
  accel_object_class_install_locked_fields (object_class, stat_fields, G_N_ELEMENTS (stat_fields),
                                            G_STRUCT_OFFSET (AccelPatternsCascade, stats_lock));
}

static void
accel_patterns_cascade_init (AccelPatternsCascade *self)
{
  self->threshold = 0.5;
  self->confidence_output = g_strdup ("confidence");
  g_mutex_init (&self->stats_lock);
}
