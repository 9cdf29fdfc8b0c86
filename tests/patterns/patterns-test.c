/* patterns-test.c: see patterns-test.h.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "patterns-test.h"
#include "accel-test-values.h"

#include <math.h>
#include <string.h>
#include <accel-half.h>

AccelSystem *
pt_system (void)
{
  return accel_test_shared_system ();
}

AccelDevice *
pt_cpu (void)
{
  return accel_test_shared_cpu ();
}

/* Spawns an actor of @type in pt_system() with properties given as
 * name/value pairs of the property's type, enums by nick; NULL ends them. */
AccelActor *
pt_spawn (const char *type, const char *first, ...)
{
  g_autoptr(GError) error = NULL;
  GType gtype = accel_registry_lookup_actor_type (accel_system_get_registry (pt_system ()), type, &error);
  g_assert_no_error (error);
  GObjectClass *klass = g_type_class_ref (gtype);
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autoptr(GArray) values = g_array_new (FALSE, TRUE, sizeof (GValue));
  g_array_set_clear_func (values, (GDestroyNotify) g_value_unset);
  va_list args;
  va_start (args, first);
  for (const char *name = first; name; name = va_arg (args, const char *))
    {
      GParamSpec *pspec = g_object_class_find_property (klass, name);
      g_assert_nonnull (pspec);
      GValue v = G_VALUE_INIT;
      g_value_init (&v, pspec->value_type);
      if (G_TYPE_IS_OBJECT (pspec->value_type) || G_TYPE_IS_INTERFACE (pspec->value_type))
        g_value_set_object (&v, va_arg (args, gpointer));
      else if (pspec->value_type == G_TYPE_UINT)
        g_value_set_uint (&v, va_arg (args, guint));
      else if (pspec->value_type == G_TYPE_UINT64)
        g_value_set_uint64 (&v, va_arg (args, guint64));
      else if (pspec->value_type == G_TYPE_BOOLEAN)
        g_value_set_boolean (&v, va_arg (args, gboolean));
      else if (pspec->value_type == G_TYPE_DOUBLE)
        g_value_set_double (&v, va_arg (args, double));
      else if (pspec->value_type == G_TYPE_STRING)
        g_value_set_string (&v, va_arg (args, const char *));
      else if (pspec->value_type == G_TYPE_STRV)
        g_value_set_boxed (&v, va_arg (args, char **));
      else if (pspec->value_type == G_TYPE_VARIANT)
        g_value_set_variant (&v, va_arg (args, GVariant *));
      else if (G_TYPE_IS_ENUM (pspec->value_type))
        {
          GEnumValue *e = g_enum_get_value_by_nick (G_PARAM_SPEC_ENUM (pspec)->enum_class, va_arg (args, const char *));
          g_assert_nonnull (e);
          g_value_set_enum (&v, e->value);
        }
      else
        g_assert_not_reached ();
      g_ptr_array_add (names, (gpointer) name);
      g_array_append_val (values, v);
    }
  va_end (args);
  g_type_class_unref (klass);
  AccelActor *actor = accel_system_spawn_with_properties (pt_system (), type, names->len, (const char **) names->pdata,
                                                          (const GValue *) values->data, &error);
  g_assert_no_error (error);
  /* Spawned into the system's tree. */
  g_assert_true (accel_actor_get_parent (actor) == accel_system_get_root_actor (pt_system ()));
  return actor;
}

int
pt_run (void)
{
  int status = g_test_run ();
  accel_test_shared_teardown ();
  return status;
}

double
pt_round (AccelDType dtype, double v)
{
  return accel_test_round_to (dtype, v);
}

double
pt_eps (AccelDType dtype)
{
  return accel_test_eps (dtype);
}

double *
pt_random (AccelDType dtype, gsize n, double lo, double hi)
{
  return accel_test_random_values (dtype, n, lo, hi);
}

GBytes *
pt_bytes (AccelDType dtype, const double *values, gsize n)
{
  gsize esize = accel_dtype_get_size (dtype);
  guint8 *data = g_malloc (MAX (n * esize, 1));
  for (gsize i = 0; i < n; i++)
    switch (dtype)
      {
      case ACCEL_DTYPE_F16: ((guint16 *) data)[i] = accel_f16_from_f64 (values[i]); break;
      case ACCEL_DTYPE_BF16: ((guint16 *) data)[i] = accel_bf16_from_f64 (values[i]); break;
      case ACCEL_DTYPE_F32: ((float *) data)[i] = (float) values[i]; break;
      default: ((double *) data)[i] = values[i]; break;
      }
  return g_bytes_new_take (data, n * esize);
}

static double *
widen (AccelDType dtype, gconstpointer data, gsize n)
{
  double *v = g_new (double, MAX (n, 1));
  for (gsize i = 0; i < n; i++)
    switch (dtype)
      {
      case ACCEL_DTYPE_F16: v[i] = accel_f16_to_f32 (((const guint16 *) data)[i]); break;
      case ACCEL_DTYPE_BF16: v[i] = accel_bf16_to_f32 (((const guint16 *) data)[i]); break;
      case ACCEL_DTYPE_F32: v[i] = ((const float *) data)[i]; break;
      default: v[i] = ((const double *) data)[i]; break;
      }
  return v;
}

static GVariant *
blocks_variant (AccelDType dtype, double **blocks, const gsize *sizes, guint n)
{
  GVariantBuilder builder;
  g_variant_builder_init (&builder, G_VARIANT_TYPE ("aay"));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GBytes) bytes = pt_bytes (dtype, blocks[i], sizes[i]);
      g_variant_builder_add_value (&builder, g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, bytes, TRUE));
    }
  return g_variant_builder_end (&builder);
}

static int
activation_index (const char *name)
{
  return g_str_equal (name, "relu") ? 1 : g_str_equal (name, "gelu") ? 2 : 0;
}

PtLinear *
pt_linear_new (AccelDType dtype, const gint64 *sizes, guint n_sizes, const char *activation,
               const char *output_activation)
{
  PtLinear *l = g_new0 (PtLinear, 1);
  l->dtype = dtype;
  l->n_layers = n_sizes - 1;
  l->sizes = g_memdup2 (sizes, n_sizes * sizeof (gint64));
  l->weights = g_new0 (double *, l->n_layers);
  l->biases = g_new0 (double *, l->n_layers);
  l->activation = activation_index (activation);
  l->output_activation = activation_index (output_activation);
  g_autofree gsize *wsizes = g_new (gsize, l->n_layers);
  g_autofree gsize *bsizes = g_new (gsize, l->n_layers);
  for (guint i = 0; i < l->n_layers; i++)
    {
      double bound = 1.0 / sqrt ((double) sizes[i]);
      wsizes[i] = sizes[i] * sizes[i + 1];
      bsizes[i] = sizes[i + 1];
      l->weights[i] = pt_random (dtype, wsizes[i], -bound, bound);
      l->biases[i] = pt_random (dtype, bsizes[i], -0.5, 0.5);
    }
  guint64 *u = g_new (guint64, n_sizes);
  for (guint i = 0; i < n_sizes; i++)
    u[i] = sizes[i];
  const char *names[] = { "dtype", "layer-sizes", "weights", "biases", "activation", "output-activation" };
  GValue values[6] = { G_VALUE_INIT, };
  g_value_init (&values[0], ACCEL_TYPE_DTYPE);
  g_value_set_enum (&values[0], dtype);
  g_value_init (&values[1], G_TYPE_VARIANT);
  g_value_set_variant (&values[1], g_variant_new_fixed_array (G_VARIANT_TYPE_UINT64, u, n_sizes, sizeof (guint64)));
  g_value_init (&values[2], G_TYPE_VARIANT);
  g_value_set_variant (&values[2], blocks_variant (dtype, l->weights, wsizes, l->n_layers));
  g_value_init (&values[3], G_TYPE_VARIANT);
  g_value_set_variant (&values[3], blocks_variant (dtype, l->biases, bsizes, l->n_layers));
  /* Enum values by nick, as bindings give them. */
  g_value_init (&values[4], G_TYPE_STRING);
  g_value_set_string (&values[4], activation);
  g_value_init (&values[5], G_TYPE_STRING);
  g_value_set_string (&values[5], output_activation);
  g_autoptr(GError) error = NULL;
  l->model = accel_system_new_model_with_properties (pt_system (), "linear", 6, names, values, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < 6; i++)
    g_value_unset (&values[i]);
  g_free (u);
  return l;
}

void
pt_linear_free (PtLinear *l)
{
  for (guint i = 0; i < l->n_layers; i++)
    {
      g_free (l->weights[i]);
      g_free (l->biases[i]);
    }
  g_free (l->weights);
  g_free (l->biases);
  g_free (l->sizes);
  g_object_unref (l->model);
  g_free (l);
}

static double
activate (int activation, double v)
{
  if (activation == 1)
    return v > 0 ? v : 0;
  if (activation == 2)
    return 0.5 * v * (1.0 + tanh (0.7978845608028654 * (v + 0.044715 * v * v * v)));
  return v;
}

/* In binary64, rounding to the model's dtype between layers as it stores.
 * With @scale, also each output's size of terms, |bias| + sum |a w| of the
 * last layer: what its rounding errors are proportional to (an output that
 * cancels to near zero has an error of the size of its terms, not of its
 * own). */
double *
pt_linear_reference_scaled (PtLinear *l, const double *x, guint rows, double **scale)
{
  double *a = g_memdup2 (x, rows * l->sizes[0] * sizeof (double));
  for (guint layer = 0; layer < l->n_layers; layer++)
    {
      gint64 k = l->sizes[layer], n = l->sizes[layer + 1];
      gboolean last = layer + 1 == l->n_layers;
      double *c = g_new (double, rows * n);
      if (last && scale)
        *scale = g_new (double, rows * n);
      for (guint r = 0; r < rows; r++)
        for (gint64 j = 0; j < n; j++)
          {
            double acc = l->biases[layer][j], size = fabs (acc);
            for (gint64 i = 0; i < k; i++)
              {
                double term = a[r * k + i] * l->weights[layer][i * n + j];
                acc += term;
                size += fabs (term);
              }
            double v = activate (last ? l->output_activation : l->activation, acc);
            c[r * n + j] = last ? v : pt_round (l->dtype, v);
            if (last && scale)
              (*scale)[r * n + j] = size;
          }
      g_free (a);
      a = c;
    }
  return a;
}

double *
pt_linear_reference (PtLinear *l, const double *x, guint rows)
{
  return pt_linear_reference_scaled (l, x, rows, NULL);
}

/* Checks @y, the model's output for @rows rows of @x, against the
 * reference: within @atol + @rtol times each output's size of terms. */
void
pt_linear_check (PtLinear *l, const char *what, const double *x, guint rows, const double *y, double rtol, double atol)
{
  double *scale;
  g_autofree double *want = pt_linear_reference_scaled (l, x, rows, &scale);
  gsize n = rows * l->sizes[l->n_layers];
  for (gsize i = 0; i < n; i++)
    if (!(fabs (y[i] - want[i]) <= atol + rtol * scale[i]))
      g_error ("%s: element %" G_GSIZE_FORMAT " is %.9g, the reference %.9g, its terms' size %.9g (rtol %g, atol %g)",
               what, i, y[i], want[i], scale[i], rtol, atol);
  g_free (scale);
}

GVariantDict *
pt_request (const char *input, AccelDType dtype, const double *x, guint rows, gint64 d)
{
  GVariantDict *dict = g_variant_dict_new (NULL);
  g_autoptr(GBytes) bytes = pt_bytes (dtype, x, rows * d);
  gint64 dims[2] = { rows, d };
  g_variant_dict_insert_value (dict, input,
                               g_variant_new ("(s@ax@ay)", accel_dtype_get_name (dtype),
                                              g_variant_new_fixed_array (G_VARIANT_TYPE_INT64, dims, 2, sizeof (gint64)),
                                              g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, bytes, TRUE)));
  return dict;
}

GVariant *
pt_request_end (GVariantDict *dict)
{
  GVariant *v = g_variant_dict_end (dict);
  g_variant_dict_unref (dict);
  return v;
}

double *
pt_reply_output (GVariant *reply, const char *name, AccelDType dtype, guint *rows, gint64 *d)
{
  g_autoptr(GVariant) tensor = g_variant_lookup_value (reply, name, G_VARIANT_TYPE ("(saxay)"));
  g_assert_nonnull (tensor);
  const char *dtype_name;
  g_autoptr(GVariant) shape = NULL, data = NULL;
  g_variant_get (tensor, "(&s@ax@ay)", &dtype_name, &shape, &data);
  g_assert_cmpstr (dtype_name, ==, accel_dtype_get_name (dtype));
  gsize rank;
  const gint64 *dims = g_variant_get_fixed_array (shape, &rank, sizeof (gint64));
  g_assert_cmpuint (rank, >=, 1);
  gint64 item = 1;
  for (gsize i = 1; i < rank; i++)
    item *= dims[i];
  g_assert_cmpuint (g_variant_get_size (data), ==, dims[0] * item * accel_dtype_get_size (dtype));
  if (rows)
    *rows = dims[0];
  if (d)
    *d = item;
  return widen (dtype, g_variant_get_data (data), dims[0] * item);
}

guint32
pt_reply_u32 (GVariant *reply, const char *key)
{
  guint32 v = 0;
  g_assert_true (g_variant_lookup (reply, key, "u", &v));
  return v;
}

/* ---- asks ---------------------------------------------------------------- */

PtAsks *
pt_asks_new (guint n)
{
  PtAsks *asks = g_new0 (PtAsks, 1);
  asks->n = n;
  asks->answers = g_new0 (PtAnswer, n);
  for (guint i = 0; i < n; i++)
    asks->answers[i].order = -1;
  return asks;
}

void
pt_asks_free (PtAsks *asks)
{
  for (guint i = 0; i < asks->n; i++)
    {
      g_clear_pointer (&asks->answers[i].reply, g_variant_unref);
      g_clear_error (&asks->answers[i].error);
    }
  g_free (asks->answers);
  g_free (asks);
}

typedef struct {
  PtAsks *asks;
  guint index;
} AskData;

static void
asked (GObject *source, GAsyncResult *result, gpointer data)
{
  AskData *ask = data;
  PtAnswer *answer = &ask->asks->answers[ask->index];
  g_assert_cmpint (answer->order, ==, -1);   /* answered once */
  answer->reply = accel_actor_ask_finish (ACCEL_ACTOR (source), result, &answer->error);
  answer->order = ask->asks->done++;
  g_free (ask);
}

void
pt_ask (PtAsks *asks, AccelActor *actor, guint index, GVariant *message)
{
  AskData *ask = g_new (AskData, 1);
  ask->asks = asks;
  ask->index = index;
  accel_actor_ask_async (actor, message, NULL, asked, ask);
}

void
pt_asks_wait (PtAsks *asks, guint count)
{
  while (asks->done < count)
    g_main_context_iteration (NULL, TRUE);
}

/* ---- gate ---------------------------------------------------------------- */

struct _PtGate {
  GMutex lock;
  GCond cond;
  gboolean held;
  gboolean open;
  gboolean left;
};

static void
gate_wait (gpointer data)
{
  PtGate *gate = data;
  g_mutex_lock (&gate->lock);
  gate->held = TRUE;
  g_cond_broadcast (&gate->cond);
  while (!gate->open)
    g_cond_wait (&gate->cond, &gate->lock);
  gate->left = TRUE;
  g_cond_broadcast (&gate->cond);
  g_mutex_unlock (&gate->lock);
}

PtGate *
pt_gate_hold (AccelActor *actor)
{
  PtGate *gate = g_new0 (PtGate, 1);
  g_mutex_init (&gate->lock);
  g_cond_init (&gate->cond);
  accel_dispatcher_post (accel_actor_get_dispatcher (actor), gate_wait, gate);
  g_mutex_lock (&gate->lock);
  while (!gate->held)
    g_cond_wait (&gate->cond, &gate->lock);
  g_mutex_unlock (&gate->lock);
  return gate;
}

void
pt_gate_release (PtGate *gate)
{
  g_mutex_lock (&gate->lock);
  gate->open = TRUE;
  g_cond_broadcast (&gate->cond);
  while (!gate->left)
    g_cond_wait (&gate->cond, &gate->lock);
  g_mutex_unlock (&gate->lock);
  g_mutex_clear (&gate->lock);
  g_cond_clear (&gate->cond);
  g_free (gate);
}

void
pt_wait_for_stat (AccelActor *actor, const char *name, guint64 value)
{
  gint64 end = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  for (;;)
    {
      guint64 v = 0;
      g_object_get (actor, name, &v, NULL);
      if (v >= value)
        return;
      g_assert_cmpint (g_get_monotonic_time (), <, end);
      g_main_context_iteration (NULL, FALSE);
      g_usleep (500);
    }
}

/* Checks a row of a moe-router reply: its @k experts @chosen and its output
 * @y ([@h]) against the gate's @scores ([n_experts]) and the experts'
 * outputs, row at @offset of each of @outs: the k best scores, best first,
 * and their softmax-weighted sum. Returns FALSE, checking nothing, where
 * the k-th and the next score are within rounding of each other (either
 * may be picked). */
static gboolean
moe_check_row (const double *scores, double **outs, gsize offset, guint n_experts, guint k, gint64 h,
                  const guint32 *chosen, const double *y)
{
  guint order[16];
  g_assert_cmpuint (n_experts, <=, G_N_ELEMENTS (order));
  for (guint e = 0; e < n_experts; e++)
    order[e] = e;
  for (guint a = 0; a < n_experts; a++)
    for (guint b = a + 1; b < n_experts; b++)
      if (scores[order[b]] > scores[order[a]])
        {
          guint t = order[a];
          order[a] = order[b];
          order[b] = t;
        }
  if (k < n_experts && fabs (scores[order[k - 1]] - scores[order[k]]) < 1e-4)
    return FALSE;
  double total = 0;
  for (guint j = 0; j < k; j++)
    {
      g_assert_cmpuint (chosen[j], ==, order[j]);
      total += exp (scores[order[j]] - scores[order[0]]);
    }
  for (gint64 c = 0; c < h; c++)
    {
      double want = 0;
      for (guint j = 0; j < k; j++)
        want += exp (scores[order[j]] - scores[order[0]]) / total * outs[order[j]][offset + c];
      g_assert_cmpfloat_with_epsilon (y[c], want, 1e-4 * (1 + fabs (want)));
    }
  return TRUE;
}

/* Checks a moe-router's @reply to @rows rows: its output "y" ([rows, h])
 * and "experts" ([rows, k]) against the gate's @scores ([rows,
 * n_experts]) and each expert's outputs @outs[e] ([rows, h]) on those
 * rows, as moe_check_row() does. Returns the rows checked. */
guint
pt_moe_check_reply (GVariant *reply, guint rows, const double *scores, double **outs, guint n_experts, guint k,
                    gint64 h)
{
  g_autofree double *y = pt_reply_output (reply, "y", ACCEL_DTYPE_F32, NULL, NULL);
  g_autoptr(GVariant) chosen_v = g_variant_lookup_value (reply, "experts", G_VARIANT_TYPE ("au"));
  gsize n_chosen;
  const guint32 *chosen = g_variant_get_fixed_array (chosen_v, &n_chosen, sizeof (guint32));
  g_assert_cmpuint (n_chosen, ==, rows * k);
  guint checked = 0;
  for (guint r = 0; r < rows; r++)
    checked += moe_check_row (scores + r * n_experts, outs, r * h, n_experts, k, h, chosen + r * k, y + r * h);
  return checked;
}

/* ---- TestAffine ---------------------------------------------------------- */

/* What a TestAffine of @scale and @shift makes of the element @x. */
double
pt_affine_value (double scale, double shift, double x)
{
  return (float) (scale * (float) x + shift);
}

/* Checks a cascade's @reply to the @rows rows of @x ([rows, d]), its models
 * TestAffines of @scale and @shift (small, large): a row whose x[0] is
 * below @threshold is the large model's answer, the others the small
 * one's, and the reply's "stage" says which. Returns the rows escalated. */
guint
pt_cascade_check_reply (GVariant *reply, const double *x, guint rows, gint64 d, double threshold,
                        const double *scale, const double *shift)
{
  guint got_rows, escalated = 0;
  g_autofree double *y = pt_reply_output (reply, "y", ACCEL_DTYPE_F32, &got_rows, NULL);
  g_assert_cmpuint (got_rows, ==, rows);
  g_autoptr(GVariant) stage_v = g_variant_lookup_value (reply, "stage", G_VARIANT_TYPE ("au"));
  gsize n_stage;
  const guint32 *stage = g_variant_get_fixed_array (stage_v, &n_stage, sizeof (guint32));
  g_assert_cmpuint (n_stage, ==, rows);
  for (guint r = 0; r < rows; r++)
    {
      const double *row = x + r * d;
      guint large = !((double) (float) row[0] >= threshold);
      g_assert_cmpuint (stage[r], ==, large);
      for (gint64 j = 0; j < d; j++)
        g_assert_cmpfloat_with_epsilon (y[r * d + j], pt_affine_value (scale[large], shift[large], row[j]), 1e-6);
      escalated += large;
    }
  return escalated;
}

struct _PtAffine {
  GObject parent_instance;
  gint64 d;
  double scale;
  double shift;
  gboolean confidence;
  gboolean fail;
  double fail_on;
  GMutex lock;
  guint fault_skip;             /* runs to let pass before the faults */
  guint faults;                 /* device faults still to raise */
  gboolean hold;
  GPtrArray *held;              /* GTask */
  guint runs;
  guint prepares;
};

static void pt_affine_model_init (AccelModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (PtAffine, pt_affine, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (ACCEL_TYPE_MODEL, pt_affine_model_init))

static void
pt_affine_finalize (GObject *object)
{
  PtAffine *self = PT_AFFINE (object);
  g_ptr_array_unref (self->held);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (pt_affine_parent_class)->finalize (object);
}

static void
pt_affine_class_init (PtAffineClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = pt_affine_finalize;
}

static void
pt_affine_init (PtAffine *self)
{
  g_mutex_init (&self->lock);
  self->held = g_ptr_array_new_with_free_func (g_object_unref);
}

static AccelTensorSpec *
pt_affine_get_input (AccelModel *model, guint index)
{
  PtAffine *self = PT_AFFINE (model);
  return index == 0 ? accel_tensor_spec_new ("x", ACCEL_DTYPE_F32, &self->d, 1) : NULL;
}

static AccelTensorSpec *
pt_affine_get_output (AccelModel *model, guint index)
{
  PtAffine *self = PT_AFFINE (model);
  if (index == 0)
    return accel_tensor_spec_new ("y", ACCEL_DTYPE_F32, &self->d, 1);
  if (index == 1 && self->confidence)
    return accel_tensor_spec_new ("confidence", ACCEL_DTYPE_F32, NULL, 0);
  return NULL;
}

static gboolean
pt_affine_prepare (AccelModel *model, AccelDevice *device, GError **error)
{
  PtAffine *self = PT_AFFINE (model);
  g_mutex_lock (&self->lock);
  self->prepares++;
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static void
pt_affine_run_batch (AccelModel *model, AccelDevice *device, GPtrArray *inputs, GPtrArray *outputs, GTask *task)
{
  PtAffine *self = PT_AFFINE (model);
  GError *error = NULL;
  AccelBuffer *x = inputs->pdata[0];
  gint64 rows = accel_shape_get_dim (accel_buffer_get_shape (x), 0);
  g_autofree float *v = g_new (float, rows * self->d);
  g_autofree float *y = g_new (float, rows * self->d);
  g_autofree float *c = g_new (float, rows);
  g_mutex_lock (&self->lock);
  gboolean fault = self->fault_skip == 0 && self->faults > 0;
  if (fault)
    self->faults--;
  else if (self->faults > 0)
    self->fault_skip--;
  g_mutex_unlock (&self->lock);
  if (fault)
    g_set_error (&error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED, "TestAffine: an injected device fault");
  gboolean ok = !fault && accel_buffer_read (x, (guint8 *) v, rows * self->d * sizeof (float), &error);
  for (gint64 r = 0; ok && r < rows; r++)
    {
      if (self->fail && v[r * self->d] == (float) self->fail_on)
        {
          g_set_error (&error, ACCEL_ERROR, ACCEL_ERROR_FAILED, "TestAffine: asked to fail by row %" G_GINT64_FORMAT, r);
          ok = FALSE;
        }
      c[r] = v[r * self->d];
      for (gint64 i = 0; i < self->d; i++)
        y[r * self->d + i] = (float) (self->scale * v[r * self->d + i] + self->shift);
    }
  ok = ok && accel_buffer_write (outputs->pdata[0], (guint8 *) y, rows * self->d * sizeof (float), &error);
  if (ok && self->confidence)
    ok = accel_buffer_write (outputs->pdata[1], (guint8 *) c, rows * sizeof (float), &error);

  g_mutex_lock (&self->lock);
  self->runs++;
  if (self->hold && ok)
    {
      g_ptr_array_add (self->held, g_object_ref (task));
      g_mutex_unlock (&self->lock);
      return;
    }
  g_mutex_unlock (&self->lock);
  if (ok)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
pt_affine_model_init (AccelModelInterface *iface)
{
  iface->get_input = pt_affine_get_input;
  iface->get_output = pt_affine_get_output;
  iface->prepare = pt_affine_prepare;
  iface->run_batch = pt_affine_run_batch;
}

PtAffine *
pt_affine_new (gint64 d, double scale, double shift, gboolean confidence)
{
  PtAffine *self = g_object_new (PT_TYPE_AFFINE, NULL);
  self->d = d;
  self->scale = scale;
  self->shift = shift;
  self->confidence = confidence;
  return self;
}

void
pt_affine_set_fail_on (PtAffine *self, double value)
{
  self->fail = TRUE;
  self->fail_on = value;
}

/* After @skip more runs, the next @count runs fail with
 * ACCEL_ERROR_DEVICE_FAILED, as on a device that lost its context. */
void
pt_affine_inject_device_faults (PtAffine *self, guint skip, guint count)
{
  g_mutex_lock (&self->lock);
  self->fault_skip = skip;
  self->faults = count;
  g_mutex_unlock (&self->lock);
}

/* The device faults injected and not raised yet. */
guint
pt_affine_get_faults_pending (PtAffine *self)
{
  g_mutex_lock (&self->lock);
  guint n = self->faults;
  g_mutex_unlock (&self->lock);
  return n;
}

/* Holding parks each run's completion; letting go completes what is
 * parked (from this thread: GTask delivers it on the actor's). */
void
pt_affine_hold (PtAffine *self, gboolean hold)
{
  g_mutex_lock (&self->lock);
  self->hold = hold;
  g_autoptr(GPtrArray) held = hold ? NULL : g_steal_pointer (&self->held);
  if (!hold)
    self->held = g_ptr_array_new_with_free_func (g_object_unref);
  g_mutex_unlock (&self->lock);
  for (guint i = 0; held && i < held->len; i++)
    g_task_return_boolean (held->pdata[i], TRUE);
}

guint
pt_affine_get_runs (PtAffine *self)
{
  g_mutex_lock (&self->lock);
  guint n = self->runs;
  g_mutex_unlock (&self->lock);
  return n;
}

guint
pt_affine_get_prepares (PtAffine *self)
{
  g_mutex_lock (&self->lock);
  guint n = self->prepares;
  g_mutex_unlock (&self->lock);
  return n;
}
