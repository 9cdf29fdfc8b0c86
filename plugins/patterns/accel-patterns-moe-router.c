/* accel-patterns-moe-router.c: the `moe-router` actor type: a gating model
 * scores the experts for each row; each row goes through its `top-k`
 * experts, and their outputs are summed with the softmax of the chosen
 * scores as weights (as Mixtral routes tokens).
 *
 * Per batch: one run of the gate; then, per expert, one batch of the rows
 * routed to it (the experts run at once, each on its own runner); then
 * the weighted sum, in f32, on the host. The reply's `experts` (au) lists
 * each row's k experts, best first.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-patterns-moe-router.h"
#include "accel-patterns-runner.h"
#include "accel-patterns-rows.h"

#include <math.h>
#include <string.h>

struct _AccelPatternsMoeRouter {
  AccelPatternsServer parent_instance;

  AccelModel *gate;
  GListModel *experts;
  AccelDevice *device;
  guint top_k;
  char *gate_output;

  guint n_experts;
  guint gate_index;
  AccelPatternsRunner *gate_runner;
  GPtrArray *expert_runners;    /* AccelPatternsRunner */
  GPtrArray *in_specs;          /* AccelTensorSpec */
  GPtrArray *out_specs;
  gboolean busy;

  GMutex stats_lock;
  guint64 *expert_rows;
};

/**
 * AccelPatternsMoeRouter:
 *
 * `moe-router`: `gate` takes the request's inputs and gives, in
 * `gate-output` (its first output by default), one real score per expert
 * for each row; `experts` (a #GListModel of models that all take the
 * gate's inputs and give the same outputs) are the experts. Each row's
 * answer is the sum over its `top-k` best-scored experts of the expert's
 * output weighted by the softmax of those k scores.
 */
G_DEFINE_FINAL_TYPE (AccelPatternsMoeRouter, accel_patterns_moe_router, ACCEL_PATTERNS_TYPE_SERVER)

static GVariant *get_expert_rows (AccelPatternsMoeRouter *self);

static const AccelPropertyField moe_router_fields[] = {
  ACCEL_FIELD_OBJECT (AccelPatternsMoeRouter, gate, "gate", "Model scoring the experts for each row",
                      accel_model_get_type, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_OBJECT (AccelPatternsMoeRouter, experts, "experts", "The expert models (a GListModel of AccelModel)",
                      g_list_model_get_type, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_OBJECT (AccelPatternsMoeRouter, device, "device",
                      "Device the gate and the experts run on (default: the system's best)",
                      accel_device_get_type, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_UINT (AccelPatternsMoeRouter, top_k, "top-k", "Experts per row", 1, 1024, 2, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_STRING (AccelPatternsMoeRouter, gate_output, "gate-output",
                      "Output of the gate with the scores (default: its first)", NULL, ACCEL_FIELD_CONSTRUCT),
  /* The statistics, read under the stats lock. */
  ACCEL_ACCESSOR_VARIANT (AccelPatternsMoeRouter, get_expert_rows, "expert-rows", "Rows each expert ran (at)", "at",
                          ACCEL_FIELD_READABLE),
};

/* One batch on its way through the gate and the experts. */
typedef struct {
  AccelPatternsMoeRouter *self;
  AccelPatternsBatch *batch;
  float *weights;               /* rows × k */
  GArray **routed;              /* per expert: guint (row × k + slot) */
  GPtrArray **expert_outputs;   /* per expert: GBytes per output */
  guint remaining;
  GError *error;
} Step;

static void
free_step (Step *step)
{
  for (guint e = 0; e < step->self->n_experts; e++)
    {
      g_clear_pointer (&step->routed[e], g_array_unref);
      g_clear_pointer (&step->expert_outputs[e], g_ptr_array_unref);
    }
  g_free (step->routed);
  g_free (step->expert_outputs);
  g_free (step->weights);
  g_clear_error (&step->error);
  g_object_unref (step->self);
  g_free (step);
}

static void
accel_patterns_moe_router_finalize (GObject *object)
{
  AccelPatternsMoeRouter *self = ACCEL_PATTERNS_MOE_ROUTER (object);
  accel_object_finalize_fields (object, ACCEL_PATTERNS_TYPE_MOE_ROUTER);
  g_clear_pointer (&self->gate_runner, accel_patterns_runner_unref);
  g_clear_pointer (&self->expert_runners, g_ptr_array_unref);
  g_clear_pointer (&self->in_specs, g_ptr_array_unref);
  g_clear_pointer (&self->out_specs, g_ptr_array_unref);
  g_free (self->expert_rows);
  g_mutex_clear (&self->stats_lock);
  G_OBJECT_CLASS (accel_patterns_moe_router_parent_class)->finalize (object);
}

static GVariant *
get_expert_rows (AccelPatternsMoeRouter *self)
{
  g_mutex_lock (&self->stats_lock);
  GVariant *rows = g_variant_new_fixed_array (G_VARIANT_TYPE_UINT64, self->expert_rows,
                                              self->expert_rows ? self->n_experts : 0, sizeof (guint64));
  g_mutex_unlock (&self->stats_lock);
  return rows;
}

static void
make_runners (AccelPatternsMoeRouter *self)
{
  g_clear_pointer (&self->gate_runner, accel_patterns_runner_unref);
  g_clear_pointer (&self->expert_runners, g_ptr_array_unref);
  self->gate_runner = accel_patterns_runner_new (self->gate, self->device);
  self->expert_runners = g_ptr_array_new_with_free_func ((GDestroyNotify) accel_patterns_runner_unref);
  for (guint e = 0; e < self->n_experts; e++)
    {
      g_autoptr(AccelModel) expert = g_list_model_get_item (self->experts, e);
      g_ptr_array_add (self->expert_runners, accel_patterns_runner_new (expert, self->device));
    }
}

static gboolean
accel_patterns_moe_router_setup (AccelPatternsServer *server, GError **error)
{
  AccelPatternsMoeRouter *self = ACCEL_PATTERNS_MOE_ROUTER (server);
  const char *name = accel_actor_get_name (ACCEL_ACTOR (self));

  if (self->gate == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "%s: “gate” is not set", name);
      return FALSE;
    }
  self->n_experts = self->experts ? g_list_model_get_n_items (self->experts) : 0;
  if (self->n_experts == 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "%s: “experts” is empty", name);
      return FALSE;
    }
  if (self->top_k < 1 || self->top_k > self->n_experts)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “top-k” is %u; it must be 1 .. the %u experts", name, self->top_k, self->n_experts);
      return FALSE;
    }
  if (self->device == NULL && !(self->device = accel_patterns_server_find_device (server, "default", error)))
    return FALSE;

  self->in_specs = accel_model_get_inputs (self->gate);
  g_autoptr(GPtrArray) gate_out = accel_model_get_outputs (self->gate);
  gint g = -1;
  for (guint i = 0; i < gate_out->len && g < 0; i++)
    if (self->gate_output == NULL || g_str_equal (accel_tensor_spec_get_name (gate_out->pdata[i]), self->gate_output))
      g = (gint) i;
  guint n_item = 0;
  const gint64 *item = g >= 0 ? accel_tensor_spec_get_item_dims (gate_out->pdata[g], &n_item) : NULL;
  if (g < 0 || n_item != 1 || item[0] != self->n_experts
      || !accel_patterns_dtype_is_real (accel_tensor_spec_get_dtype (gate_out->pdata[g])))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “gate-output” (“%s”) must name an output of “gate” with one real score per expert [%u]",
                   name, self->gate_output ? self->gate_output : "the first", self->n_experts);
      return FALSE;
    }
  self->gate_index = g;

  for (guint e = 0; e < self->n_experts; e++)
    {
      g_autoptr(GObject) item_object = g_list_model_get_item (self->experts, e);
      if (!ACCEL_IS_MODEL (item_object))
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "%s: item %u of “experts” (%s) is not an AccelModel", name, e, G_OBJECT_TYPE_NAME (item_object));
          return FALSE;
        }
      g_autoptr(GPtrArray) in = accel_model_get_inputs (ACCEL_MODEL (item_object));
      g_autoptr(GPtrArray) out = accel_model_get_outputs (ACCEL_MODEL (item_object));
      if (e == 0)
        self->out_specs = g_ptr_array_ref (out);
      gboolean real = out->len > 0;
      for (guint i = 0; i < out->len; i++)
        real = real && accel_patterns_dtype_is_real (accel_tensor_spec_get_dtype (out->pdata[i]));
      if (!accel_patterns_specs_equal (in, self->in_specs) || !accel_patterns_specs_equal (out, self->out_specs) || !real)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "%s: expert %u of “experts” must take the gate's inputs and give real outputs like expert 0's",
                       name, e);
          return FALSE;
        }
    }
  self->expert_rows = g_new0 (guint64, self->n_experts);
  accel_patterns_server_set_io (server, self->in_specs, self->out_specs);
  make_runners (self);
  return TRUE;
}

static guint
accel_patterns_moe_router_get_capacity (AccelPatternsServer *server)
{
  return !ACCEL_PATTERNS_MOE_ROUTER (server)->busy;
}

static void
end (Step *step, GPtrArray *outputs, const GError *error)
{
  AccelPatternsMoeRouter *self = step->self;
  AccelPatternsBatch *batch = step->batch;

  if (accel_patterns_server_batch_is_current (ACCEL_PATTERNS_SERVER (self), batch))
    self->busy = FALSE;
  accel_patterns_server_finish_or_retry (ACCEL_PATTERNS_SERVER (self), batch, outputs, error);
  free_step (step);
}

/* Every expert answered: the weighted sums. */
static void
combine (Step *step)
{
  AccelPatternsMoeRouter *self = step->self;
  AccelPatternsBatch *batch = step->batch;
  g_autoptr(GPtrArray) outputs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);

  for (guint o = 0; o < self->out_specs->len; o++)
    {
      AccelTensorSpec *spec = self->out_specs->pdata[o];
      AccelDType dtype = accel_tensor_spec_get_dtype (spec);
      gsize n_item = accel_tensor_spec_get_item_elements (spec);
      g_autofree float *sum = g_new0 (float, batch->rows * n_item);
      g_autofree float *row = g_new (float, n_item);
      for (guint e = 0; e < self->n_experts; e++)
        {
          GArray *routed = step->routed[e];
          if (routed->len == 0)
            continue;
          const guint8 *data = g_bytes_get_data (step->expert_outputs[e]->pdata[o], NULL);
          for (guint i = 0; i < routed->len; i++)
            {
              guint slot = g_array_index (routed, guint, i);
              float w = step->weights[slot];
              accel_patterns_to_f32 (dtype, data + i * accel_tensor_spec_get_item_size (spec), row, n_item);
              float *dst = sum + (gsize) (slot / self->top_k) * n_item;
              for (gsize j = 0; j < n_item; j++)
                dst[j] += w * row[j];
            }
        }
      gsize size = batch->rows * accel_tensor_spec_get_item_size (spec);
      guint8 *out = g_malloc (MAX (size, 1));
      accel_patterns_from_f32 (dtype, sum, out, batch->rows * n_item);
      g_ptr_array_add (outputs, g_bytes_new_take (out, size));
    }
  g_mutex_lock (&self->stats_lock);
  for (guint e = 0; e < self->n_experts; e++)
    self->expert_rows[e] += step->routed[e]->len;
  g_mutex_unlock (&self->stats_lock);
  end (step, outputs, NULL);
}

static void
expert_done (GObject *source, GAsyncResult *result, gpointer data)
{
  gpointer *pair = data;
  Step *step = pair[0];
  guint e = GPOINTER_TO_UINT (pair[1]);
  GError *error = NULL;

  g_free (pair);
  step->expert_outputs[e] = accel_patterns_runner_run_finish (NULL, result, &error);
  accel_patterns_keep_first_error (&step->error, error);
  if (--step->remaining > 0)
    return;
  if (step->error)
    {
      GError *failure = g_steal_pointer (&step->error);
      end (step, NULL, failure);
      g_error_free (failure);
    }
  else
    combine (step);
}

/* Picks each row's k best experts and their softmax weights. */
static void
route (Step *step, const float *scores)
{
  AccelPatternsMoeRouter *self = step->self;
  guint k = self->top_k, n = self->n_experts;
  AccelPatternsBatch *batch = step->batch;

  g_clear_pointer (&batch->tags, g_array_unref);
  batch->tags = g_array_sized_new (FALSE, TRUE, sizeof (guint32), batch->rows * k);
  g_array_set_size (batch->tags, batch->rows * k);
  batch->tags_key = "experts";
  batch->tags_per_row = k;
  guint32 *chosen = (guint32 *) batch->tags->data;
  step->weights = g_new (float, batch->rows * k);
  for (guint r = 0; r < batch->rows; r++)
    {
      const float *s = scores + (gsize) r * n;
      guint32 *c = chosen + (gsize) r * k;
      /* Insertion into the k best so far; NaN scores rank last. */
      for (guint j = 0; j < k; j++)
        c[j] = G_MAXUINT32;
      for (guint e = 0; e < n; e++)
        {
          float v = isnan (s[e]) ? -INFINITY : s[e];
          for (guint j = 0; j < k; j++)
            if (c[j] == G_MAXUINT32 || v > (isnan (s[c[j]]) ? -INFINITY : s[c[j]]))
              {
                memmove (c + j + 1, c + j, (k - j - 1) * sizeof (guint32));
                c[j] = e;
                break;
              }
        }
      /* The softmax of the k scores; even weights where they say nothing
       * (none finite). */
      double top = s[c[0]], total = 0;
      for (guint j = 0; j < k && isfinite (top); j++)
        total += exp ((isnan (s[c[j]]) ? -INFINITY : s[c[j]]) - top);
      for (guint j = 0; j < k; j++)
        {
          step->weights[r * k + j] = isfinite (top) ? (float) (exp ((isnan (s[c[j]]) ? -INFINITY : s[c[j]]) - top) / total)
                                                    : 1.0f / k;
          guint slot = r * k + j;
          g_array_append_val (step->routed[c[j]], slot);
        }
    }
}

static void
gate_done (GObject *source, GAsyncResult *result, gpointer data)
{
  Step *step = data;
  AccelPatternsMoeRouter *self = step->self;
  AccelPatternsBatch *batch = step->batch;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) gate = accel_patterns_runner_run_finish (NULL, result, &error);

  if (gate == NULL || !accel_patterns_server_batch_is_current (ACCEL_PATTERNS_SERVER (self), batch))
    {
      end (step, NULL, error);
      return;
    }
  g_autoptr(GPtrArray) gate_specs = accel_model_get_outputs (self->gate);
  g_autofree float *scores = g_new (float, (gsize) batch->rows * self->n_experts);
  accel_patterns_to_f32 (accel_tensor_spec_get_dtype (gate_specs->pdata[self->gate_index]),
                         g_bytes_get_data (gate->pdata[self->gate_index], NULL), scores,
                         (gsize) batch->rows * self->n_experts);
  route (step, scores);

  for (guint e = 0; e < self->n_experts; e++)
    step->remaining += step->routed[e]->len > 0;
  for (guint e = 0; e < self->n_experts; e++)
    {
      GArray *routed = step->routed[e];
      if (routed->len == 0)
        continue;
      g_autofree guint *rows = g_new (guint, routed->len);
      for (guint i = 0; i < routed->len; i++)
        rows[i] = g_array_index (routed, guint, i) / self->top_k;
      g_autoptr(GPtrArray) inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
      for (guint i = 0; i < self->in_specs->len; i++)
        g_ptr_array_add (inputs, accel_patterns_rows_gather (batch->inputs->pdata[i],
                                                             accel_tensor_spec_get_item_size (self->in_specs->pdata[i]),
                                                             rows, routed->len));
      gpointer *pair = g_new (gpointer, 2);
      pair[0] = step;
      pair[1] = GUINT_TO_POINTER (e);
      accel_patterns_runner_run_async (self->expert_runners->pdata[e], routed->len, (GBytes **) inputs->pdata,
                                       expert_done, pair);
    }
}

/* Runs a batch (once more, after a device fault). */
static void
accel_patterns_moe_router_execute (AccelPatternsServer *server, AccelPatternsBatch *batch)
{
  AccelPatternsMoeRouter *self = ACCEL_PATTERNS_MOE_ROUTER (server);
  Step *step = g_new0 (Step, 1);
  step->self = g_object_ref (self);
  step->batch = batch;
  step->routed = g_new0 (GArray *, self->n_experts);
  step->expert_outputs = g_new0 (GPtrArray *, self->n_experts);
  for (guint e = 0; e < self->n_experts; e++)
    step->routed[e] = g_array_new (FALSE, FALSE, sizeof (guint));
  batch->attempts++;
  self->busy = TRUE;
  accel_patterns_runner_run_async (self->gate_runner, batch->rows, (GBytes **) batch->inputs->pdata, gate_done, step);
}

static void
accel_patterns_moe_router_reset (AccelPatternsServer *server)
{
  AccelPatternsMoeRouter *self = ACCEL_PATTERNS_MOE_ROUTER (server);
  self->busy = FALSE;
  make_runners (self);
}

static void
accel_patterns_moe_router_class_init (AccelPatternsMoeRouterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelPatternsServerClass *server_class = ACCEL_PATTERNS_SERVER_CLASS (klass);

  object_class->finalize = accel_patterns_moe_router_finalize;
  server_class->setup = accel_patterns_moe_router_setup;
  server_class->get_capacity = accel_patterns_moe_router_get_capacity;
  server_class->execute = accel_patterns_moe_router_execute;
  server_class->reset = accel_patterns_moe_router_reset;
  accel_actor_class_set_metadata (ACCEL_ACTOR_CLASS (klass), "moe-router",
                                  "A gate picks each row's top-k experts; their outputs are combined with the gate's weights");

  accel_object_class_install_fields (object_class, moe_router_fields, G_N_ELEMENTS (moe_router_fields));
}

static void
accel_patterns_moe_router_init (AccelPatternsMoeRouter *self)
{
  self->top_k = 2;
  g_mutex_init (&self->stats_lock);
}
