/* accel-patterns-linear.c: the `linear` model: a stack of `matmul` layers,
 * each `y = act (x W + b)`.
 *
 * Weights come as bytes (one row-major `[k, n]` block per layer, in the
 * model's dtype), as buffers (used in place on their device, copied to
 * others) or, for benchmarks and examples, from a seed: then each
 * layer is drawn uniform in ±1/√k on the device itself and its bias in
 * ±0.1, so that nothing crosses the bus. Each device the model is
 * prepared on keeps its own copy; a run submits every layer at once (the
 * device orders them through their buffers) and completes with the last.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-patterns-linear.h"
#include "accel-patterns-enums.h"
#include "accel-patterns-runner.h"

#include <math.h>

struct _AccelPatternsLinear {
  GObject parent_instance;

  AccelDType dtype;
  GVariant *layer_sizes;        /* at */
  GVariant *weights;            /* aay, or NULL */
  GVariant *biases;             /* aay, or NULL */
  GListModel *weight_buffers;   /* AccelBuffer per layer, or NULL */
  GListModel *bias_buffers;
  guint64 seed;
  AccelPatternsActivation activation;
  AccelPatternsActivation output_activation;
  char *input_name;
  char *output_name;

  gboolean initialised;
  guint n_layers;
  gint64 *sizes;                /* n_layers + 1 */

  GMutex lock;
  GHashTable *per_device;       /* AccelDevice (ref) -> GPtrArray: W0, b0, W1, b1, … */
};

static void accel_patterns_linear_initable_init (GInitableIface *iface);
static void accel_patterns_linear_model_init (AccelModelInterface *iface);

/**
 * AccelPatternsLinear:
 *
 * The `linear` model type: `layer-sizes` `[k0, k1, …, kL]` make L layers,
 * layer i mapping `k_i` features to `k_{i+1}`, each a `matmul` with a bias
 * epilogue and `activation` (the last one `output-activation`). Input
 * `input-name` `[n, k0]`, output `output-name` `[n, kL]`, both of `dtype`
 * (f32, f16 or bf16).
 */
G_DEFINE_FINAL_TYPE_WITH_CODE (AccelPatternsLinear, accel_patterns_linear, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, accel_patterns_linear_initable_init)
                               G_IMPLEMENT_INTERFACE (ACCEL_TYPE_MODEL, accel_patterns_linear_model_init))

static const AccelPropertyField linear_fields[] = {
  ACCEL_FIELD_ENUM (AccelPatternsLinear, dtype, "dtype", "Element type of weights, input and output (f32, f16, bf16)",
                    accel_dtype_get_type, ACCEL_DTYPE_F32, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_VARIANT (AccelPatternsLinear, layer_sizes, "layer-sizes",
                       "Features in, then after each layer: [k0, k1, …] (at)", "at", ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_VARIANT (AccelPatternsLinear, weights, "weights",
                       "One row-major [k_i, k_i+1] block per layer, in dtype (aay)", "aay", ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_VARIANT (AccelPatternsLinear, biases, "biases",
                       "One [k_i+1] vector per layer, in dtype (aay); zeros if absent", "aay", ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_OBJECT (AccelPatternsLinear, weight_buffers, "weight-buffers",
                      "Instead of weights: one [k_i, k_i+1] AccelBuffer per layer (a GListModel), "
                      "used in place on its device and copied to others",
                      g_list_model_get_type, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_OBJECT (AccelPatternsLinear, bias_buffers, "bias-buffers",
                      "Instead of biases: one [k_i+1] AccelBuffer per layer (a GListModel)",
                      g_list_model_get_type, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_UINT64 (AccelPatternsLinear, seed, "seed", "Without weights: draw them on the device from this seed",
                      0, G_MAXUINT64, 0, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_ENUM (AccelPatternsLinear, activation, "activation", "After the bias of every layer but the last",
                    accel_patterns_activation_get_type, ACCEL_PATTERNS_ACTIVATION_RELU, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_ENUM (AccelPatternsLinear, output_activation, "output-activation", "After the bias of the last layer",
                    accel_patterns_activation_get_type, ACCEL_PATTERNS_ACTIVATION_NONE, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_STRING (AccelPatternsLinear, input_name, "input-name", "Name of the input", "x", ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_STRING (AccelPatternsLinear, output_name, "output-name", "Name of the output", "y",
                      ACCEL_FIELD_CONSTRUCT),
};

static void
accel_patterns_linear_finalize (GObject *object)
{
  AccelPatternsLinear *self = ACCEL_PATTERNS_LINEAR (object);

  accel_object_finalize_fields (object, ACCEL_PATTERNS_TYPE_LINEAR);
  g_free (self->sizes);
  g_hash_table_unref (self->per_device);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (accel_patterns_linear_parent_class)->finalize (object);
}

static void
accel_patterns_linear_class_init (AccelPatternsLinearClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = accel_patterns_linear_finalize;
  accel_object_class_install_fields (object_class, linear_fields, G_N_ELEMENTS (linear_fields));
}

static void
accel_patterns_linear_init (AccelPatternsLinear *self)
{
  g_mutex_init (&self->lock);
  self->per_device = g_hash_table_new_full (NULL, NULL, g_object_unref, (GDestroyNotify) g_ptr_array_unref);
  self->dtype = ACCEL_DTYPE_F32;
  self->activation = ACCEL_PATTERNS_ACTIVATION_RELU;
  self->output_activation = ACCEL_PATTERNS_ACTIVATION_NONE;
  self->input_name = g_strdup ("x");
  self->output_name = g_strdup ("y");
}

/* Checks one aay property: one block per layer of the expected size. */
static gboolean
check_blocks (AccelPatternsLinear *self, GVariant *blocks, const char *property, gboolean matrix, GError **error)
{
  gsize esize = accel_dtype_get_size (self->dtype);
  if (g_variant_n_children (blocks) != self->n_layers)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "linear: “%s” has %" G_GSIZE_FORMAT " blocks; “layer-sizes” makes %u layers",
                   property, g_variant_n_children (blocks), self->n_layers);
      return FALSE;
    }
  for (guint i = 0; i < self->n_layers; i++)
    {
      g_autoptr(GVariant) block = g_variant_get_child_value (blocks, i);
      gsize want = (gsize) (matrix ? self->sizes[i] : 1) * (gsize) self->sizes[i + 1] * esize;
      if (g_variant_get_size (block) != want)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "linear: block %u of “%s” has %" G_GSIZE_FORMAT " bytes; %s of %s takes %" G_GSIZE_FORMAT,
                       i, property, g_variant_get_size (block), matrix ? "a [k, n] matrix" : "an [n] vector",
                       accel_dtype_get_name (self->dtype), want);
          return FALSE;
        }
    }
  return TRUE;
}

/* Checks one list of buffers: one per layer, of the dtype and shape. */
static gboolean
check_buffers (AccelPatternsLinear *self, GListModel *buffers, const char *property, gboolean matrix, GError **error)
{
  if (g_list_model_get_n_items (buffers) != self->n_layers)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "linear: “%s” has %u buffers; “layer-sizes” makes %u layers",
                   property, g_list_model_get_n_items (buffers), self->n_layers);
      return FALSE;
    }
  for (guint i = 0; i < self->n_layers; i++)
    {
      g_autoptr(GObject) item = g_list_model_get_item (buffers, i);
      gint64 want[2] = { self->sizes[i], self->sizes[i + 1] };
      g_autoptr(AccelShape) shape = matrix ? accel_shape_new (want, 2) : accel_shape_new (want + 1, 1);
      if (!ACCEL_IS_BUFFER (item) || accel_buffer_get_dtype (ACCEL_BUFFER (item)) != self->dtype
          || !accel_shape_equal (accel_buffer_get_shape (ACCEL_BUFFER (item)), shape))
        {
          g_autofree char *s = accel_shape_to_string (shape);
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "linear: item %u of “%s” must be a contiguous %s buffer of %s", i, property,
                       accel_dtype_get_name (self->dtype), s);
          return FALSE;
        }
    }
  return TRUE;
}

static gboolean
accel_patterns_linear_initable_init_impl (GInitable *initable, GCancellable *cancellable, GError **error)
{
  AccelPatternsLinear *self = ACCEL_PATTERNS_LINEAR (initable);

  if (self->initialised)
    return TRUE;
  if (self->dtype != ACCEL_DTYPE_F32 && self->dtype != ACCEL_DTYPE_F16 && self->dtype != ACCEL_DTYPE_BF16)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "linear: “dtype” is %s; f32, f16 or bf16 are served", accel_dtype_get_name (self->dtype));
      return FALSE;
    }
  gsize n_sizes = self->layer_sizes ? g_variant_n_children (self->layer_sizes) : 0;
  if (n_sizes < 2)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "linear: “layer-sizes” needs at least two sizes (features in, then out)");
      return FALSE;
    }
  const guint64 *sizes = g_variant_get_fixed_array (self->layer_sizes, &n_sizes, sizeof (guint64));
  for (gsize i = 0; i < n_sizes; i++)
    if (sizes[i] < 1 || sizes[i] > G_MAXINT32)
      {
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "linear: size %" G_GSIZE_FORMAT " of “layer-sizes” is %" G_GUINT64_FORMAT "; it must be 1 .. %d",
                     i, sizes[i], G_MAXINT32);
        return FALSE;
      }
  if (self->input_name == NULL || *self->input_name == '\0' || self->output_name == NULL
      || *self->output_name == '\0')
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "linear: “input-name” and “output-name” must not be empty");
      return FALSE;
    }
  self->n_layers = n_sizes - 1;
  self->sizes = g_new (gint64, n_sizes);
  for (gsize i = 0; i < n_sizes; i++)
    self->sizes[i] = (gint64) sizes[i];

  if (self->weights == NULL && self->weight_buffers == NULL && self->seed == 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "linear: give “weights” or “weight-buffers”, or a “seed” to draw them from");
      return FALSE;
    }
  if ((self->weights && self->weight_buffers) || (self->biases && self->bias_buffers))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "linear: give “%s” as bytes or as buffers, not both",
                   self->weights && self->weight_buffers ? "weights" : "biases");
      return FALSE;
    }
  if ((self->weights && !check_blocks (self, self->weights, "weights", TRUE, error))
      || (self->biases && !check_blocks (self, self->biases, "biases", FALSE, error))
      || (self->weight_buffers && !check_buffers (self, self->weight_buffers, "weight-buffers", TRUE, error))
      || (self->bias_buffers && !check_buffers (self, self->bias_buffers, "bias-buffers", FALSE, error)))
    return FALSE;
  self->initialised = TRUE;
  return TRUE;
}

static void
accel_patterns_linear_initable_init (GInitableIface *iface)
{
  iface->init = accel_patterns_linear_initable_init_impl;
}

/* A model made with g_object_new() and never initialised still says what
 * is wrong, when first used. */
static gboolean
ensure_initialised (AccelPatternsLinear *self, GError **error)
{
  return self->initialised || g_initable_init (G_INITABLE (self), NULL, error);
}

/* The one input (@output FALSE) or the one output, at @index 0. */
static AccelTensorSpec *
spec_at (AccelPatternsLinear *self, guint index, gboolean output)
{
  g_autoptr(GError) error = NULL;
  if (index > 0)
    return NULL;
  if (!ensure_initialised (self, &error))
    {
      g_critical ("%s", error->message);
      return NULL;
    }
  return output ? accel_tensor_spec_new (self->output_name, self->dtype, &self->sizes[self->n_layers], 1)
                : accel_tensor_spec_new (self->input_name, self->dtype, &self->sizes[0], 1);
}

static AccelTensorSpec *
accel_patterns_linear_get_input (AccelModel *model, guint index)
{
  return spec_at (ACCEL_PATTERNS_LINEAR (model), index, FALSE);
}

static AccelTensorSpec *
accel_patterns_linear_get_output (AccelModel *model, guint index)
{
  return spec_at (ACCEL_PATTERNS_LINEAR (model), index, TRUE);
}

static gboolean
fill_block (AccelPatternsLinear *self, AccelDevice *device, AccelBuffer *buffer, GVariant *blocks, guint index,
            double bound, guint64 seed, GError **error)
{
  if (blocks)
    {
      g_autoptr(GVariant) block = g_variant_get_child_value (blocks, index);
      return accel_buffer_write (buffer, g_variant_get_data (block), g_variant_get_size (block), error);
    }
  if (bound == 0)
    return accel_buffer_zero (buffer, error);
  g_autoptr(AccelOp) fill = accel_rng_fill_new (buffer, ACCEL_RNG_UNIFORM, seed);
  g_object_set (fill, "low", -bound, "high", bound, NULL);
  return accel_device_submit (device, fill, NULL, error);
}

/* One weight or bias of layer @index on @device: a given buffer in place
 * (if it is there, of the device's generation) or copied, or a new buffer
 * filled from bytes, drawn from a seed, or zero. */
static AccelBuffer *
layer_buffer (AccelPatternsLinear *self, AccelDevice *device, const AccelShape *shape, GListModel *buffers,
              GVariant *blocks, guint index, double bound, guint64 seed, GError **error)
{
  g_autoptr(AccelBuffer) given = buffers ? g_list_model_get_item (buffers, index) : NULL;
  if (given && accel_buffer_get_device (given) == device && !accel_buffer_is_stale (given))
    return g_steal_pointer (&given);
  g_autoptr(AccelBuffer) buffer = accel_device_alloc (device, self->dtype, shape, error);
  if (buffer == NULL)
    return NULL;
  if (given)
    {
      g_autoptr(GBytes) bytes = accel_buffer_download (given, error);
      if (bytes == NULL || !accel_buffer_upload (buffer, bytes, error))
        return NULL;
    }
  else if (!fill_block (self, device, buffer, blocks, index, bound, seed, error))
    return NULL;
  return g_steal_pointer (&buffer);
}

static gboolean
accel_patterns_linear_prepare (AccelModel *model, AccelDevice *device, GError **error)
{
  AccelPatternsLinear *self = ACCEL_PATTERNS_LINEAR (model);
  if (!ensure_initialised (self, error))
    return FALSE;

  g_autoptr(GPtrArray) layers = g_ptr_array_new_with_free_func (g_object_unref);
  gboolean given = self->weights || self->weight_buffers;
  for (guint i = 0; i < self->n_layers; i++)
    {
      gint64 k = self->sizes[i], n = self->sizes[i + 1];
      g_autoptr(AccelShape) ws = accel_shape_new_2d (k, n);
      g_autoptr(AccelShape) bs = accel_shape_new_1d (n);
      guint64 seed = self->seed + 2 * (guint64) i;
      AccelBuffer *w = layer_buffer (self, device, ws, self->weight_buffers, self->weights, i,
                                     1.0 / sqrt ((double) k), seed, error);
      if (w == NULL)
        return FALSE;
      g_ptr_array_add (layers, w);
      AccelBuffer *b = layer_buffer (self, device, bs, self->bias_buffers, self->biases, i,
                                     given ? 0.0 : 0.1, seed + 1, error);
      if (b == NULL)
        return FALSE;
      g_ptr_array_add (layers, b);
    }
  g_mutex_lock (&self->lock);
  g_hash_table_replace (self->per_device, g_object_ref (device), g_steal_pointer (&layers));
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static AccelMatmulEpilogue
epilogue_of (AccelPatternsActivation activation)
{
  switch (activation)
    {
    case ACCEL_PATTERNS_ACTIVATION_RELU: return ACCEL_MATMUL_EPILOGUE_BIAS_RELU;
    case ACCEL_PATTERNS_ACTIVATION_GELU: return ACCEL_MATMUL_EPILOGUE_BIAS_GELU;
    default: return ACCEL_MATMUL_EPILOGUE_BIAS;
    }
}

typedef struct {
  guint remaining;
  GError *error;
} Run;

static void
layer_done (GObject *source, GAsyncResult *result, gpointer data)
{
  GTask *task = data;
  Run *run = g_task_get_task_data (task);
  GError *error = NULL;

  if (!accel_device_submit_finish (ACCEL_DEVICE (source), result, &error))
    accel_patterns_keep_first_error (&run->error, error);
  if (--run->remaining == 0)
    {
      if (run->error)
        g_task_return_error (task, g_steal_pointer (&run->error));
      else
        g_task_return_boolean (task, TRUE);
    }
  g_object_unref (task);
}

static void
free_run (gpointer data)
{
  Run *run = data;
  g_clear_error (&run->error);
  g_free (run);
}

static void
accel_patterns_linear_run_batch (AccelModel *model,
                                 AccelDevice *device,
                                 GPtrArray *inputs,
                                 GPtrArray *outputs,
                                 GTask *task)
{
  AccelPatternsLinear *self = ACCEL_PATTERNS_LINEAR (model);
  GCancellable *cancellable = g_task_get_cancellable (task);
  GError *error = NULL;

  g_mutex_lock (&self->lock);
  GPtrArray *layers = g_hash_table_lookup (self->per_device, device);
  if (layers)
    g_ptr_array_ref (layers);
  g_mutex_unlock (&self->lock);
  if (layers == NULL)
    {
      g_task_return_new_error (task, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                               "linear: not prepared on %s", accel_device_get_name (device));
      return;
    }

  /* Every layer is submitted now: each reads what the one before wrote,
   * and the device orders them through those buffers. */
  AccelBuffer *x = inputs->pdata[0];
  gint64 rows = accel_shape_get_dim (accel_buffer_get_shape (x), 0);
  Run *run = g_new0 (Run, 1);
  g_task_set_task_data (task, run, free_run);
  g_autoptr(GPtrArray) ops = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(AccelBuffer) a = g_object_ref (x);
  for (guint i = 0; i < self->n_layers && error == NULL; i++)
    {
      gboolean last = i + 1 == self->n_layers;
      g_autoptr(AccelShape) cs = accel_shape_new_2d (rows, self->sizes[i + 1]);
      g_autoptr(AccelBuffer) c = last ? g_object_ref (outputs->pdata[0])
                                      : accel_device_alloc (device, self->dtype, cs, &error);
      if (c == NULL)
        break;
      AccelOp *op = accel_matmul_new (a, layers->pdata[2 * i], c,
                                      epilogue_of (last ? self->output_activation : self->activation));
      g_object_set (op, "bias", layers->pdata[2 * i + 1], NULL);
      g_ptr_array_add (ops, op);
      g_set_object (&a, c);
    }
  g_ptr_array_unref (layers);
  if (error)
    {
      g_task_return_error (task, error);
      return;
    }
  run->remaining = ops->len;
  for (guint i = 0; i < ops->len; i++)
    accel_device_submit_async (device, ops->pdata[i], cancellable, layer_done, g_object_ref (task));
}

static void
accel_patterns_linear_model_init (AccelModelInterface *iface)
{
  iface->get_input = accel_patterns_linear_get_input;
  iface->get_output = accel_patterns_linear_get_output;
  iface->prepare = accel_patterns_linear_prepare;
  iface->run_batch = accel_patterns_linear_run_batch;
}
