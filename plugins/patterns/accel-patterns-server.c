/* accel-patterns-server.c: the base of the serving actors: requests in,
 * batches out, replies back.
 *
 * A request (accel-patterns-request.c) is checked in `receive` and
 * refused there if it is malformed or the queue is full; otherwise its
 * reply is deferred and it waits in the queue (accel-patterns-queue.c).
 * Batches are formed as Triton's dynamic batcher forms them: at once when
 * the queue holds `max-batch-size` rows or can fill a preferred size;
 * else when the oldest request has waited `max-queue-delay-us`, with
 * whatever is there. A subclass runs the batch (`execute`) and hands the
 * outputs back; the replies are cut from them, in arrival order if
 * `preserve-ordering` asks so.
 *
 * A failure that is the requests' own (bad input, out of memory) goes to
 * them; one of the model or the actor itself also goes to the supervisor
 * (accel_actor_fail()), which by default restarts the actor: the asks it
 * deferred then fail with a message saying so. A batch that runs longer
 * than `run-timeout-ms` is such a failure, so a model that never
 * completes cannot hang its callers.
 *
 * Everything here runs on the actor's own dispatcher thread.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-patterns-server.h"
#include "accel-patterns-queue.h"
#include "accel-patterns-enums.h"

#include <string.h>

#define N_DELAY_SAMPLES 4096

typedef struct {
  guint64 ticket;
  GVariant *reply;
  GError *error;
} Answer;

typedef struct {
  /* properties */
  guint max_batch_size;
  GVariant *preferred_sizes;     /* au, or NULL */
  guint64 max_queue_delay_us;
  guint priority_levels;
  guint default_priority;
  guint max_queue_size;
  guint64 default_timeout_us;
  AccelPatternsTimeoutAction timeout_action;
  gboolean preserve_ordering;
  guint run_timeout_ms;

  AccelDispatcher *own_dispatcher;
  gboolean initialised;
  GPtrArray *input_specs;
  GPtrArray *output_specs;
  guint n_tenants;
  char **tenant_names;
  double *tenant_weights;
  guint *preferred;              /* sorted, largest first */
  guint n_preferred;

  /* dispatcher thread */
  AccelPatternsQueue *queue;
  GSource *timer;
  GPtrArray *in_flight;          /* AccelPatternsBatch */
  guint64 epoch;
  guint64 next_seq;
  guint64 next_release;
  GHashTable *held;              /* seq -> Answer, with preserve-ordering */
  gboolean scheduling;           /* in accel_patterns_server_schedule() */
  gboolean schedule_again;

  /* statistics, guarded by stats_lock */
  GMutex stats_lock;
  guint64 batches_run;
  guint64 batches_started;
  guint64 completed;
  guint64 failed;
  guint64 rejected;
  guint64 timed_out;
  guint queue_length;
  guint64 *histogram;            /* max_batch_size + 1 */
  double *delays;                /* ring of queue delays, µs */
  guint n_delays;
  guint next_delay;
} AccelPatternsServerPrivate;

static void accel_patterns_server_initable_init (GInitableIface *iface);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (AccelPatternsServer, accel_patterns_server, ACCEL_TYPE_ACTOR,
                                  G_ADD_PRIVATE (AccelPatternsServer)
                                  G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, accel_patterns_server_initable_init))

static const AccelPropertyField server_fields[] = {
  ACCEL_FIELD_UINT (AccelPatternsServerPrivate, max_batch_size, "max-batch-size", "Most rows in one batch",
                    1, 1 << 20, 32, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_VARIANT (AccelPatternsServerPrivate, preferred_sizes, "preferred-batch-sizes",
                       "Batch sizes (au) to send at once, without waiting for max-queue-delay-us", "au",
                       ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_UINT64 (AccelPatternsServerPrivate, max_queue_delay_us, "max-queue-delay-us",
                      "Longest wait of the oldest request for a fuller batch, in µs", 0, G_MAXINT64, 0,
                      ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_UINT (AccelPatternsServerPrivate, priority_levels, "priority-levels",
                    "Priority levels; 1 is the highest", 1, 1024, 1, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_UINT (AccelPatternsServerPrivate, default_priority, "default-priority",
                    "Level of a request that names none; 0: the lowest", 0, 1024, 0, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_UINT (AccelPatternsServerPrivate, max_queue_size, "max-queue-size",
                    "Most requests queued; more are refused with ACCEL_ERROR_BUSY (0: no limit)",
                    0, G_MAXUINT, 0, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_UINT64 (AccelPatternsServerPrivate, default_timeout_us, "default-timeout-us",
                      "Longest wait in the queue of a request that names none, in µs (0: none)",
                      0, G_MAXINT64, 0, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_ENUM (AccelPatternsServerPrivate, timeout_action, "timeout-action",
                    "What happens to a request whose timeout passed in the queue",
                    accel_patterns_timeout_action_get_type, ACCEL_PATTERNS_TIMEOUT_ACTION_REJECT,
                    ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_BOOLEAN (AccelPatternsServerPrivate, preserve_ordering, "preserve-ordering",
                       "Reply in the order the requests came", FALSE, ACCEL_FIELD_CONSTRUCT),
  ACCEL_FIELD_UINT (AccelPatternsServerPrivate, run_timeout_ms, "run-timeout-ms",
                    "Longest run of one batch before the actor counts as failed, in ms (0: none)",
                    0, G_MAXUINT, 60000, ACCEL_FIELD_CONSTRUCT),
};

/* The statistics that are plain counters, read under the stats lock. */
static const AccelPropertyField stat_fields[] = {
  ACCEL_FIELD_UINT64 (AccelPatternsServerPrivate, batches_run, "batches-run", "Batches run", 0, G_MAXUINT64, 0,
                      ACCEL_FIELD_READABLE),
  ACCEL_FIELD_UINT64 (AccelPatternsServerPrivate, batches_started, "batches-started",
                      "Batches started (the number of the last, which replies carry as batch)", 0, G_MAXUINT64, 0,
                      ACCEL_FIELD_READABLE),
  ACCEL_FIELD_UINT64 (AccelPatternsServerPrivate, completed, "requests-completed", "Requests answered with outputs",
                      0, G_MAXUINT64, 0, ACCEL_FIELD_READABLE),
  ACCEL_FIELD_UINT64 (AccelPatternsServerPrivate, failed, "requests-failed", "Requests queued and then failed",
                      0, G_MAXUINT64, 0, ACCEL_FIELD_READABLE),
  ACCEL_FIELD_UINT64 (AccelPatternsServerPrivate, rejected, "requests-rejected",
                      "Requests refused: malformed, or the queue full", 0, G_MAXUINT64, 0, ACCEL_FIELD_READABLE),
  ACCEL_FIELD_UINT64 (AccelPatternsServerPrivate, timed_out, "requests-timed-out",
                      "Requests whose timeout passed in the queue", 0, G_MAXUINT64, 0, ACCEL_FIELD_READABLE),
  ACCEL_FIELD_UINT (AccelPatternsServerPrivate, queue_length, "queue-length", "Requests queued now",
                    0, G_MAXUINT, 0, ACCEL_FIELD_READABLE),
};

#define PRIV(self) ((AccelPatternsServerPrivate *) accel_patterns_server_get_instance_private (self))

static void
free_answer (gpointer data)
{
  Answer *answer = data;
  g_clear_pointer (&answer->reply, g_variant_unref);
  g_clear_error (&answer->error);
  g_free (answer);
}

static void
free_batch (AccelPatternsBatch *batch)
{
  if (batch->watchdog)
    {
      g_source_destroy (batch->watchdog);
      g_source_unref (batch->watchdog);
    }
  g_ptr_array_unref (batch->requests);
  g_clear_pointer (&batch->inputs, g_ptr_array_unref);
  g_clear_pointer (&batch->tags, g_array_unref);
  g_free (batch);
}

/* ---- construction -------------------------------------------------------- */

/* Each serving actor gets a dispatcher thread of its own unless one is
 * given, so that a blocking prepare or a slow model stalls only it. */
static GObject *
accel_patterns_server_constructor (GType type, guint n_params, GObjectConstructParam *params)
{
  AccelDispatcher *own = NULL;
  for (guint i = 0; i < n_params; i++)
    if (g_str_equal (params[i].pspec->name, "dispatcher") && g_value_get_object (params[i].value) == NULL)
      {
        AccelActorClass *klass = g_type_class_peek (type);
        const char *name = klass ? accel_actor_class_get_type_name (klass) : NULL;
        own = accel_dispatcher_new (name ? name : g_type_name (type));
        g_value_set_object (params[i].value, own);
      }
  GObject *object = G_OBJECT_CLASS (accel_patterns_server_parent_class)->constructor (type, n_params, params);
  PRIV (ACCEL_PATTERNS_SERVER (object))->own_dispatcher = own;
  return object;
}

static void
clear_queue (AccelPatternsServer *self)
{
  AccelPatternsServerPrivate *priv = PRIV (self);
  if (priv->queue)
    {
      g_autoptr(GPtrArray) left = accel_patterns_queue_drain (priv->queue);
      g_ptr_array_set_free_func (left, (GDestroyNotify) accel_patterns_request_free);
    }
  for (guint i = 0; i < priv->in_flight->len; i++)
    {
      AccelPatternsBatch *batch = priv->in_flight->pdata[i];
      batch->over = TRUE;   /* freed when its run returns */
      if (batch->watchdog)
        {
          g_source_destroy (batch->watchdog);
          g_clear_pointer (&batch->watchdog, g_source_unref);
        }
    }
  g_ptr_array_set_size (priv->in_flight, 0);
  g_hash_table_remove_all (priv->held);
  priv->next_release = priv->next_seq;
  priv->epoch++;
}

static void
accel_patterns_server_dispose (GObject *object)
{
  AccelPatternsServer *self = ACCEL_PATTERNS_SERVER (object);
  AccelPatternsServerPrivate *priv = PRIV (self);

  if (priv->timer)
    {
      g_source_destroy (priv->timer);
      g_clear_pointer (&priv->timer, g_source_unref);
    }
  G_OBJECT_CLASS (accel_patterns_server_parent_class)->dispose (object);
}

static void
accel_patterns_server_finalize (GObject *object)
{
  AccelPatternsServer *self = ACCEL_PATTERNS_SERVER (object);
  AccelPatternsServerPrivate *priv = PRIV (self);

  clear_queue (self);
  g_clear_pointer (&priv->queue, accel_patterns_queue_free);
  g_ptr_array_unref (priv->in_flight);
  g_hash_table_unref (priv->held);
  accel_object_finalize_fields (object, ACCEL_PATTERNS_TYPE_SERVER);
  g_clear_pointer (&priv->input_specs, g_ptr_array_unref);
  g_clear_pointer (&priv->output_specs, g_ptr_array_unref);
  g_strfreev (priv->tenant_names);
  g_free (priv->tenant_weights);
  g_free (priv->preferred);
  g_free (priv->histogram);
  g_free (priv->delays);
  g_mutex_clear (&priv->stats_lock);
  if (priv->own_dispatcher)
    {
      accel_dispatcher_stop (priv->own_dispatcher);
      g_clear_object (&priv->own_dispatcher);
    }
  G_OBJECT_CLASS (accel_patterns_server_parent_class)->finalize (object);
}

static double
delay_quantile (AccelPatternsServerPrivate *priv, double q)
{
  if (priv->n_delays == 0)
    return 0;
  g_autofree double *copy = g_memdup2 (priv->delays, priv->n_delays * sizeof (double));
  /* A selection would do; a sort of 4096 values on a property read is cheap. */
  for (guint i = 1; i < priv->n_delays; i++)
    for (guint j = i; j > 0 && copy[j - 1] > copy[j]; j--)
      {
        double t = copy[j];
        copy[j] = copy[j - 1];
        copy[j - 1] = t;
      }
  guint index = (guint) (q * (priv->n_delays - 1) + 0.5);
  return copy[MIN (index, priv->n_delays - 1)];
}

/* The statistics computed on read, also under the stats lock. */

static GVariant *
get_batch_size_histogram (AccelPatternsServer *self)
{
  AccelPatternsServerPrivate *priv = PRIV (self);
  g_mutex_lock (&priv->stats_lock);
  GVariant *histogram = g_variant_new_fixed_array (G_VARIANT_TYPE_UINT64, priv->histogram,
                                                   priv->histogram ? priv->max_batch_size + 1 : 0, sizeof (guint64));
  g_mutex_unlock (&priv->stats_lock);
  return histogram;
}

static double
locked_delay_quantile (AccelPatternsServer *self, double q)
{
  AccelPatternsServerPrivate *priv = PRIV (self);
  g_mutex_lock (&priv->stats_lock);
  double delay = delay_quantile (priv, q);
  g_mutex_unlock (&priv->stats_lock);
  return delay;
}

static double
get_queue_delay_p50_us (AccelPatternsServer *self)
{
  return locked_delay_quantile (self, 0.5);
}

static double
get_queue_delay_p99_us (AccelPatternsServer *self)
{
  return locked_delay_quantile (self, 0.99);
}

static const AccelPropertyField computed_stat_fields[] = {
  ACCEL_ACCESSOR_VARIANT (AccelPatternsServer, get_batch_size_histogram, "batch-size-histogram",
                          "Batches run by rows (at, index = rows)", "at", ACCEL_FIELD_READABLE),
  ACCEL_ACCESSOR_DOUBLE (AccelPatternsServer, get_queue_delay_p50_us, "queue-delay-p50-us",
                         "Median wait in the queue of the last 4096 requests, µs", 0, G_MAXDOUBLE, 0,
                         ACCEL_FIELD_READABLE),
  ACCEL_ACCESSOR_DOUBLE (AccelPatternsServer, get_queue_delay_p99_us, "queue-delay-p99-us",
                         "99th percentile of that wait, µs", 0, G_MAXDOUBLE, 0, ACCEL_FIELD_READABLE),
};

static GVariant *accel_patterns_server_receive (AccelActor *actor, GVariant *message, GError **error);
static gboolean accel_patterns_server_restart (AccelActor *actor, const GError *reason, GError **error);
static void accel_patterns_server_stopped (AccelActor *actor);

static void
accel_patterns_server_class_init (AccelPatternsServerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelActorClass *actor_class = ACCEL_ACTOR_CLASS (klass);

  object_class->constructor = accel_patterns_server_constructor;
  object_class->dispose = accel_patterns_server_dispose;
  object_class->finalize = accel_patterns_server_finalize;
  actor_class->receive = accel_patterns_server_receive;
  actor_class->restart = accel_patterns_server_restart;
  actor_class->stopped = accel_patterns_server_stopped;

  accel_object_class_install_private_fields (object_class, server_fields, G_N_ELEMENTS (server_fields));
  accel_object_class_install_private_locked_fields (object_class, stat_fields, G_N_ELEMENTS (stat_fields),
                                                    G_STRUCT_OFFSET (AccelPatternsServerPrivate, stats_lock));
  accel_object_class_install_fields (object_class, computed_stat_fields, G_N_ELEMENTS (computed_stat_fields));
}

static void
accel_patterns_server_init (AccelPatternsServer *self)
{
  AccelPatternsServerPrivate *priv = PRIV (self);
  g_mutex_init (&priv->stats_lock);
  priv->max_batch_size = 32;
  priv->priority_levels = 1;
  priv->run_timeout_ms = 60000;
  priv->in_flight = g_ptr_array_new ();
  priv->held = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, free_answer);
  priv->delays = g_new0 (double, N_DELAY_SAMPLES);
}

/* ---- set-up ---------------------------------------------------------------- */

static gboolean
timer_dispatch (GSource *source, GSourceFunc callback, gpointer data)
{
  g_source_set_ready_time (source, -1);
  return callback (data);
}

static GSourceFuncs timer_funcs = { NULL, NULL, timer_dispatch, NULL, NULL, NULL };

static gboolean
timer_fired (gpointer data)
{
  accel_patterns_server_schedule (data);
  return G_SOURCE_CONTINUE;
}

static int
compare_sizes_down (gconstpointer a, gconstpointer b)
{
  guint x = *(const guint *) a, y = *(const guint *) b;
  return x < y ? 1 : x > y ? -1 : 0;
}

static gboolean
accel_patterns_server_initable_init_impl (GInitable *initable, GCancellable *cancellable, GError **error)
{
  AccelPatternsServer *self = ACCEL_PATTERNS_SERVER (initable);
  AccelPatternsServerPrivate *priv = PRIV (self);
  const char *name = accel_actor_get_name (ACCEL_ACTOR (self));

  if (priv->initialised)
    return TRUE;
  if (priv->default_priority > priv->priority_levels)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “default-priority” is %u; “priority-levels” is %u", name,
                   priv->default_priority, priv->priority_levels);
      return FALSE;
    }
  if (priv->default_priority == 0)
    priv->default_priority = priv->priority_levels;
  gsize n = 0;
  const guint32 *sizes = priv->preferred_sizes ? g_variant_get_fixed_array (priv->preferred_sizes, &n, sizeof (guint32)) : NULL;
  priv->preferred = g_new (guint, MAX (n, 1));
  for (gsize i = 0; i < n; i++)
    {
      if (sizes[i] < 1 || sizes[i] > priv->max_batch_size)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "%s: “preferred-batch-sizes” holds %u; each must be 1 .. max-batch-size (%u)",
                       name, sizes[i], priv->max_batch_size);
          return FALSE;
        }
      priv->preferred[i] = sizes[i];
    }
  priv->n_preferred = n;
  qsort (priv->preferred, n, sizeof (guint), compare_sizes_down);

  AccelPatternsServerClass *klass = ACCEL_PATTERNS_SERVER_GET_CLASS (self);
  if (klass->setup && !klass->setup (self, error))
    return FALSE;
  if (priv->input_specs == NULL || priv->output_specs == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED, "%s: its type set no inputs and outputs", name);
      return FALSE;
    }
  priv->queue = accel_patterns_queue_new (priv->priority_levels, priv->n_tenants, priv->tenant_weights);
  priv->histogram = g_new0 (guint64, priv->max_batch_size + 1);

  priv->timer = g_source_new (&timer_funcs, sizeof (GSource));
  g_source_set_callback (priv->timer, timer_fired, self, NULL);
  g_source_set_name (priv->timer, "accel-patterns-server timer");
  g_source_attach (priv->timer, accel_dispatcher_get_context (accel_actor_get_dispatcher (ACCEL_ACTOR (self))));
  priv->initialised = TRUE;
  return TRUE;
}

static void
accel_patterns_server_initable_init (GInitableIface *iface)
{
  iface->init = accel_patterns_server_initable_init_impl;
}

/* Called by a subclass's setup: what requests carry and replies hold. */
void
accel_patterns_server_set_io (AccelPatternsServer *self, GPtrArray *input_specs, GPtrArray *output_specs)
{
  AccelPatternsServerPrivate *priv = PRIV (self);
  g_clear_pointer (&priv->input_specs, g_ptr_array_unref);
  g_clear_pointer (&priv->output_specs, g_ptr_array_unref);
  priv->input_specs = g_ptr_array_ref (input_specs);
  priv->output_specs = g_ptr_array_ref (output_specs);
}

/* Called by a subclass's setup: the tenants requests must name. */
void
accel_patterns_server_set_tenants (AccelPatternsServer *self, guint n_tenants, char **names, const double *weights)
{
  AccelPatternsServerPrivate *priv = PRIV (self);
  priv->n_tenants = n_tenants;
  g_strfreev (priv->tenant_names);
  priv->tenant_names = g_strdupv (names);
  g_free (priv->tenant_weights);
  priv->tenant_weights = g_memdup2 (weights, n_tenants * sizeof (double));
}

guint
accel_patterns_server_get_max_batch_size (AccelPatternsServer *self)
{
  return PRIV (self)->max_batch_size;
}

/* A device by name, in the system whose tree the actor is in (or the
 * default system). */
AccelDevice *
accel_patterns_server_find_device (AccelPatternsServer *self, const char *name, GError **error)
{
  g_autoptr(AccelSystem) system = accel_actor_get_system (ACCEL_ACTOR (self));
  if (system == NULL && accel_system_get_default ())
    system = g_object_ref (accel_system_get_default ());
  if (system == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_DEVICE,
                   "%s is in no system's tree and there is no default system to find “%s” in",
                   accel_actor_get_name (ACCEL_ACTOR (self)), name);
      return NULL;
    }
  return accel_system_get_device (system, name, error);
}

typedef struct {
  GSourceFunc func;
  gpointer data;
} Call;

static void
call_on_thread (gpointer data)
{
  Call *call = data;
  call->func (call->data);
  g_free (call);
}

/* Runs @func (@data) on the actor's dispatcher thread, after what is
 * queued there. */
void
accel_patterns_server_run_on_thread (AccelPatternsServer *self, GSourceFunc func, gpointer data)
{
  Call *call = g_new (Call, 1);
  call->func = func;
  call->data = data;
  accel_dispatcher_post (accel_actor_get_dispatcher (ACCEL_ACTOR (self)), call_on_thread, call);
}

/* ---- replies ------------------------------------------------------------- */

/* Takes @reply (a full reference) and @error. */
static void
send_answer (AccelPatternsServer *self, guint64 ticket, GVariant *reply, GError *error)
{
  if (error)
    {
      accel_actor_reply_error (ACCEL_ACTOR (self), ticket, error);
      g_error_free (error);
    }
  else
    accel_actor_reply (ACCEL_ACTOR (self), ticket, reply);
  g_clear_pointer (&reply, g_variant_unref);
}

/* Answers an accepted request (takes @reply and @error), in arrival order
 * when preserve-ordering asks so. */
static void
answer (AccelPatternsServer *self, AccelPatternsRequest *request, GVariant *reply, GError *error)
{
  AccelPatternsServerPrivate *priv = PRIV (self);

  g_mutex_lock (&priv->stats_lock);
  if (error)
    priv->failed++;
  else
    priv->completed++;
  g_mutex_unlock (&priv->stats_lock);

  if (reply)
    g_variant_ref_sink (reply);
  if (!priv->preserve_ordering)
    {
      send_answer (self, request->ticket, reply, error);
      return;
    }
  Answer *held = g_new0 (Answer, 1);
  held->ticket = request->ticket;
  held->reply = reply;
  held->error = error;
  guint64 *seq = g_new (guint64, 1);
  *seq = request->seq;
  g_hash_table_insert (priv->held, seq, held);
  for (;;)
    {
      gpointer key, value;
      if (!g_hash_table_steal_extended (priv->held, &priv->next_release, &key, &value))
        break;
      Answer *next = value;
      send_answer (self, next->ticket, g_steal_pointer (&next->reply), g_steal_pointer (&next->error));
      free_answer (next);
      g_free (key);
      priv->next_release++;
    }
}

/* Whether two lists of tensor specs are the same, one by one. */
gboolean
accel_patterns_specs_equal (GPtrArray *a, GPtrArray *b)
{
  if (a->len != b->len)
    return FALSE;
  for (guint i = 0; i < a->len; i++)
    if (!accel_tensor_spec_equal (a->pdata[i], b->pdata[i]))
      return FALSE;
  return TRUE;
}

AccelPatternsFailure
accel_patterns_failure_of (const GError *error)
{
  if (error->domain != ACCEL_ERROR)
    return ACCEL_PATTERNS_FAILURE_CRASH;
  switch ((AccelError) error->code)
    {
    case ACCEL_ERROR_CONTEXT_POISONED:
    case ACCEL_ERROR_STALE_BUFFER:
    case ACCEL_ERROR_DEVICE_FAILED:
    case ACCEL_ERROR_NO_DEVICE:
      return ACCEL_PATTERNS_FAILURE_DEVICE;
    case ACCEL_ERROR_INVALID_ARGUMENT:
    case ACCEL_ERROR_SHAPE_MISMATCH:
    case ACCEL_ERROR_DTYPE_UNSUPPORTED:
    case ACCEL_ERROR_OUT_OF_MEMORY:
    case ACCEL_ERROR_WRONG_DEVICE:
    case ACCEL_ERROR_NO_KERNEL:
    case ACCEL_ERROR_CANCELLED:
    case ACCEL_ERROR_NOT_SUPPORTED:
    case ACCEL_ERROR_BUSY:
      return ACCEL_PATTERNS_FAILURE_REQUEST;
    default:
      return ACCEL_PATTERNS_FAILURE_CRASH;
    }
}

/* Answers the requests of @batch, which is then no longer in flight; its
 * memory stays for the run that may still return. */
static void
conclude (AccelPatternsServer *self, AccelPatternsBatch *batch, GPtrArray *outputs, const GError *error)
{
  AccelPatternsServerPrivate *priv = PRIV (self);

  batch->over = TRUE;
  if (batch->watchdog)
    {
      g_source_destroy (batch->watchdog);
      g_clear_pointer (&batch->watchdog, g_source_unref);
    }
  g_ptr_array_remove_fast (priv->in_flight, batch);
  /* Counted before the replies go, so a caller that has its reply sees it. */
  g_mutex_lock (&priv->stats_lock);
  priv->batches_run++;
  priv->histogram[MIN (batch->rows, priv->max_batch_size)]++;
  g_mutex_unlock (&priv->stats_lock);

  AccelPatternsReplyInfo info = {
    batch->serial, batch->model_version, batch->rows, 0,
    batch->tags_key, batch->tags ? (const guint32 *) batch->tags->data : NULL, batch->tags_per_row,
  };
  guint row = 0;
  for (guint i = 0; i < batch->requests->len; i++)
    {
      AccelPatternsRequest *request = batch->requests->pdata[i];
      info.queue_us = batch->start_us - request->arrival_us;
      if (error)
        answer (self, request, NULL, g_error_copy (error));
      else
        answer (self, request, accel_patterns_reply_new (request, priv->output_specs, outputs, row, &info), NULL);
      row += request->rows;
    }
}

/* Whether @batch still counts: formed since the last restart and not
 * abandoned. A subclass's completion checks it before touching its own
 * state. */
gboolean
accel_patterns_server_batch_is_current (AccelPatternsServer *self, AccelPatternsBatch *batch)
{
  return !batch->over && batch->epoch == PRIV (self)->epoch;
}

/* Whether a subclass runs @batch, failed with @error (or not, where
 * %NULL), once more: it still counts, the device failed rather than the
 * request, and this was its first run. */
gboolean
accel_patterns_server_batch_may_retry (AccelPatternsServer *self, AccelPatternsBatch *batch, const GError *error)
{
  return error && accel_patterns_server_batch_is_current (self, batch)
         && accel_patterns_failure_of (error) == ACCEL_PATTERNS_FAILURE_DEVICE && batch->attempts < 2;
}

/* Hands a batch's outputs (one GBytes per output spec, every row) or its
 * failure back: the replies go out, the batch is freed, and the next
 * batches may start. A failure of the crash kind also goes to the
 * supervisor. */
void
accel_patterns_server_finish_batch (AccelPatternsServer *self,
                                    AccelPatternsBatch *batch,
                                    GPtrArray *outputs,
                                    const GError *error)
{
  if (batch->over)
    {
      /* Abandoned by the watchdog or a restart: its callers heard already. */
      free_batch (batch);
      return;
    }
  conclude (self, batch, outputs, error);
  gboolean crashed = error && accel_patterns_failure_of (error) == ACCEL_PATTERNS_FAILURE_CRASH;
  free_batch (batch);
  if (crashed)
    accel_actor_fail (ACCEL_ACTOR (self), error);
  accel_patterns_server_schedule (self);
}

/* Ends @batch as accel_patterns_server_finish_batch() does, or, where it
 * may run once more (accel_patterns_server_batch_may_retry()), runs it
 * again through the class's `execute`: for a subclass whose every run of a
 * batch starts the same way. */
void
accel_patterns_server_finish_or_retry (AccelPatternsServer *self,
                                       AccelPatternsBatch *batch,
                                       GPtrArray *outputs,
                                       const GError *error)
{
  if (accel_patterns_server_batch_may_retry (self, batch, error))
    ACCEL_PATTERNS_SERVER_GET_CLASS (self)->execute (self, batch);
  else
    accel_patterns_server_finish_batch (self, batch, outputs, error);
}

/* ---- batches ------------------------------------------------------------- */

static gboolean
watchdog_fired (gpointer data)
{
  AccelPatternsBatch *batch = data;
  AccelPatternsServer *self = batch->server;
  g_autoptr(GError) error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_TIMED_OUT,
                                         "%s: a batch of %u rows ran longer than run-timeout-ms (%u ms)",
                                         accel_actor_get_name (ACCEL_ACTOR (self)), batch->rows,
                                         PRIV (self)->run_timeout_ms);
  g_clear_pointer (&batch->watchdog, g_source_unref);
  conclude (self, batch, NULL, error);
  accel_actor_fail (ACCEL_ACTOR (self), error);
  return G_SOURCE_REMOVE;
}

/* Copies the rows of @requests' input @index into one block. */
static GBytes *
gather (GPtrArray *requests, guint index, gsize item_size, guint rows)
{
  if (requests->len == 1)
    return g_bytes_ref (((AccelPatternsRequest *) requests->pdata[0])->inputs->pdata[index]);
  guint8 *data = g_malloc (MAX ((gsize) rows * item_size, 1));
  gsize offset = 0;
  for (guint i = 0; i < requests->len; i++)
    {
      GBytes *bytes = ((AccelPatternsRequest *) requests->pdata[i])->inputs->pdata[index];
      memcpy (data + offset, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
      offset += g_bytes_get_size (bytes);
    }
  return g_bytes_new_take (data, offset);
}

/* Takes up to @target rows from the queue (the first request always fits
 * under max-batch-size) and starts them. */
static gboolean
start_batch (AccelPatternsServer *self, guint target, gint64 now)
{
  AccelPatternsServerPrivate *priv = PRIV (self);
  AccelPatternsBatch *batch = g_new0 (AccelPatternsBatch, 1);
  batch->server = self;
  batch->epoch = priv->epoch;
  batch->requests = g_ptr_array_new_with_free_func ((GDestroyNotify) accel_patterns_request_free);
  batch->model_version = 1;

  AccelPatternsRequest *request;
  while ((request = accel_patterns_queue_take (priv->queue,
                                               batch->rows == 0 ? priv->max_batch_size : target - MIN (target, batch->rows))))
    {
      g_ptr_array_add (batch->requests, request);
      batch->rows += request->rows;
      if (batch->rows >= target)
        break;
    }
  if (batch->rows == 0)
    {
      free_batch (batch);
      return FALSE;
    }
  batch->start_us = now;
  batch->inputs = g_ptr_array_new_full (priv->input_specs->len, (GDestroyNotify) g_bytes_unref);
  for (guint i = 0; i < priv->input_specs->len; i++)
    g_ptr_array_add (batch->inputs, gather (batch->requests, i,
                                            accel_tensor_spec_get_item_size (priv->input_specs->pdata[i]),
                                            batch->rows));

  g_mutex_lock (&priv->stats_lock);
  batch->serial = ++priv->batches_started;
  for (guint i = 0; i < batch->requests->len; i++)
    {
      priv->delays[priv->next_delay] = (double) (now - ((AccelPatternsRequest *) batch->requests->pdata[i])->arrival_us);
      priv->next_delay = (priv->next_delay + 1) % N_DELAY_SAMPLES;
      priv->n_delays = MIN (priv->n_delays + 1, N_DELAY_SAMPLES);
    }
  priv->queue_length = accel_patterns_queue_get_n_requests (priv->queue);
  g_mutex_unlock (&priv->stats_lock);

  if (priv->run_timeout_ms)
    {
      batch->watchdog = g_timeout_source_new (priv->run_timeout_ms);
      g_source_set_callback (batch->watchdog, watchdog_fired, batch, NULL);
      g_source_attach (batch->watchdog, accel_dispatcher_get_context (accel_actor_get_dispatcher (ACCEL_ACTOR (self))));
    }
  g_ptr_array_add (priv->in_flight, batch);
  ACCEL_PATTERNS_SERVER_GET_CLASS (self)->execute (self, batch);
  return TRUE;
}

/* Fails or sets aside the queued requests whose timeout passed. */
static void
expire (AccelPatternsServer *self, gint64 now)
{
  AccelPatternsServerPrivate *priv = PRIV (self);
  AccelPatternsRequest *request;

  while ((request = accel_patterns_queue_pop_expired (priv->queue, now)))
    {
      g_mutex_lock (&priv->stats_lock);
      priv->timed_out++;
      g_mutex_unlock (&priv->stats_lock);
      if (priv->timeout_action == ACCEL_PATTERNS_TIMEOUT_ACTION_DELAY)
        {
          accel_patterns_queue_push_delayed (priv->queue, request);
          continue;
        }
      answer (self, request,
              NULL, g_error_new (ACCEL_ERROR, ACCEL_ERROR_TIMED_OUT,
                                 "%s: the request waited %" G_GINT64_FORMAT " µs in the queue, past its timeout",
                                 accel_actor_get_name (ACCEL_ACTOR (self)), now - request->arrival_us));
      accel_patterns_request_free (request);
    }
}

/* Starts what batches the queue and the capacity allow, and sets the timer
 * for the next thing to happen. On the dispatcher thread. */
void
accel_patterns_server_schedule (AccelPatternsServer *self)
{
  AccelPatternsServerPrivate *priv = PRIV (self);
  AccelPatternsServerClass *klass = ACCEL_PATTERNS_SERVER_GET_CLASS (self);

  if (!priv->initialised || accel_actor_get_state (ACCEL_ACTOR (self)) == ACCEL_ACTOR_STATE_STOPPED)
    return;
  /* A batch that fails at once (its subclass found no device for it) ends
   * in here again: the outer call goes round once more instead. */
  if (priv->scheduling)
    {
      priv->schedule_again = TRUE;
      return;
    }
  priv->scheduling = TRUE;
  gint64 wake;
  do
    {
      priv->schedule_again = FALSE;
      gint64 now = g_get_monotonic_time ();
      wake = G_MAXINT64;
      expire (self, now);
      while (accel_patterns_queue_get_n_requests (priv->queue) > 0 && klass->get_capacity (self) > 0)
        {
          guint64 queued = accel_patterns_queue_get_n_rows (priv->queue);
          guint target = 0;
          if (queued >= priv->max_batch_size)
            target = priv->max_batch_size;
          for (guint i = 0; i < priv->n_preferred && target == 0; i++)
            if (priv->preferred[i] <= queued)
              target = priv->preferred[i];
          if (target == 0)
            {
              gint64 due = accel_patterns_queue_get_oldest_arrival (priv->queue) + (gint64) priv->max_queue_delay_us;
              if (due > now)
                {
                  wake = due;
                  break;
                }
              target = (guint) queued;
            }
          if (!start_batch (self, target, now))
            break;
        }
    }
  while (priv->schedule_again);
  priv->scheduling = FALSE;
  wake = MIN (wake, accel_patterns_queue_get_next_deadline (priv->queue));
  g_mutex_lock (&priv->stats_lock);
  priv->queue_length = accel_patterns_queue_get_n_requests (priv->queue);
  g_mutex_unlock (&priv->stats_lock);
  g_source_set_ready_time (priv->timer, wake == G_MAXINT64 ? -1 : wake);
}

/* ---- the actor ----------------------------------------------------------- */

static GVariant *
accel_patterns_server_receive (AccelActor *actor, GVariant *message, GError **error)
{
  AccelPatternsServer *self = ACCEL_PATTERNS_SERVER (actor);
  AccelPatternsServerPrivate *priv = PRIV (self);
  const char *name = accel_actor_get_name (actor);

  if (!priv->initialised && !g_initable_init (G_INITABLE (self), NULL, error))
    return NULL;

  g_autoptr(AccelPatternsRequest) request = accel_patterns_request_parse (message, priv->input_specs,
                                                                          priv->max_batch_size, error);
  if (request && request->priority > priv->priority_levels)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 "“priority” is %u; %s has levels 1 (the highest) .. %u", request->priority, name,
                 priv->priority_levels);
  else if (request && priv->n_tenants > 0)
    {
      guint t = 0;
      while (t < priv->n_tenants && g_strcmp0 (priv->tenant_names[t], request->tenant) != 0)
        t++;
      if (t == priv->n_tenants)
        {
          g_autofree char *known = g_strjoinv (", ", priv->tenant_names);
          if (request->tenant)
            g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                         "“tenant” “%s” is unknown to %s (tenants: %s)", request->tenant, name, known);
          else
            g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                         "“tenant” is missing; %s shares by tenant (tenants: %s)", name, known);
        }
      request->tenant_index = t;
    }
  if (request && *error == NULL && priv->max_queue_size
      && accel_patterns_queue_get_n_requests (priv->queue) >= priv->max_queue_size)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_BUSY,
                 "The queue of %s is full (max-queue-size %u): send the request again later",
                 name, priv->max_queue_size);
  if (request == NULL || *error != NULL)
    {
      g_mutex_lock (&priv->stats_lock);
      priv->rejected++;
      g_mutex_unlock (&priv->stats_lock);
      return NULL;
    }

  request->ticket = accel_actor_defer_reply (actor);
  request->seq = priv->next_seq++;
  request->arrival_us = g_get_monotonic_time ();
  if (request->priority == 0)
    request->priority = priv->default_priority;
  gint64 timeout = request->timeout_us >= 0 ? request->timeout_us : (gint64) priv->default_timeout_us;
  request->deadline_us = timeout > 0 ? request->arrival_us + timeout : 0;
  accel_patterns_queue_push (priv->queue, g_steal_pointer (&request));
  accel_patterns_server_schedule (self);
  return NULL;
}

static gboolean
accel_patterns_server_restart (AccelActor *actor, const GError *reason, GError **error)
{
  AccelPatternsServer *self = ACCEL_PATTERNS_SERVER (actor);
  AccelPatternsServerClass *klass = ACCEL_PATTERNS_SERVER_GET_CLASS (self);

  /* The core has failed the asks deferred so far; forget them. */
  clear_queue (self);
  if (klass->reset)
    klass->reset (self);
  return TRUE;
}

static gboolean
stopped_on_thread (gpointer data)
{
  AccelPatternsServer *self = data;
  clear_queue (self);
  g_object_unref (self);
  return G_SOURCE_REMOVE;
}

static void
accel_patterns_server_stopped (AccelActor *actor)
{
  AccelPatternsServer *self = ACCEL_PATTERNS_SERVER (actor);
  accel_patterns_server_run_on_thread (self, stopped_on_thread, g_object_ref (self));
}
