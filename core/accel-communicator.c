/* accel-communicator.c: a communicator over devices: their incarnations,
 * and the watch that ends one when a rank's device loses its context.
 *
 * The communicator is the stable object; what runs collectives is its
 * current incarnation: a key naming it in every process (the `comm-key`
 * of every part), the backend's bootstrap bytes (an NCCL unique id, made
 * once on the first rank's device by a `collective-bootstrap` op and
 * handed to every rank), and the in-process group through which parts on
 * host memory meet. An incarnation ends when a rank's device changes
 * generation or fails (`notify::generation`, `notify::device-state`, on
 * the device's thread), when a part of a collective fails, or when a user
 * aborts it: waiting parts fail at once, queued parts are cancelled, and
 * every rank's device runs a `collective-abort` (NCCL: ncclCommAbort, so
 * that running kernels return). The next submission makes a new
 * incarnation, with new bootstrap bytes. In a job of several processes,
 * an abort is sent to the rendezvous too, which tells the others.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "accel-communicator-private.h"

/**
 * AccelCommunicator:
 *
 * A set of devices, one rank each, that run collectives together: an
 * `all-reduce`, `all-gather`, `reduce-scatter`, `broadcast`,
 * `root-reduce`, `all-to-all`, or `send`/`recv` pairs is submitted as one
 * op per rank with accel_communicator_submit_async(), and completes once,
 * when every rank's part has completed, with a result or an error.
 *
 * ```python
 * devs = [system.get_device(f"cpu:{i}") for i in range(4)]
 * comm = Accel.Communicator.new(devs)
 * comm.submit([Accel.AllReduce.new(b, b, Accel.Reduction.SUM) for b in bufs], None)
 * ```
 *
 * Every part is an ordinary op on its rank's device: it runs on a lane,
 * after the last writers of its buffers. CPU devices meet in this
 * process's memory; CUDA devices run NCCL (the `nccl` plugin), one rank per
 * GPU in the process that owns it. When a rank's device loses its context,
 * the collectives in flight fail with %ACCEL_ERROR_CONTEXT_POISONED and
 * the next one runs on a rebuilt communicator (#AccelCommunicator:epoch
 * goes up). With an #AccelRendezvous, the communicator spans several
 * processes (accel_communicator_new_distributed()).
 *
 * Thread-safe. Do not submit from a device's own thread.
 */
G_DEFINE_FINAL_TYPE (AccelCommunicator, accel_communicator, G_TYPE_OBJECT)

/* The pspecs notified by hand. */
enum {
  PROP_EPOCH,
  PROP_TIMEOUT_MS,
  PROP_LANE,
  N_NOTIFIED
};

static GParamSpec *properties[N_NOTIFIED];

#define DEFAULT_TIMEOUT_MS 60000

#define RW (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY)

static const AccelPropertyField communicator_fields[] = {
  /**
   * AccelCommunicator:n-ranks:
   *
   * How many ranks the communicator has, in every process of its job.
   */
  ACCEL_FIELD_UINT (AccelCommunicator, n_ranks, "n-ranks", "Ranks in all processes", 0, G_MAXUINT, 0,
                    ACCEL_FIELD_READABLE),
  /**
   * AccelCommunicator:first-rank:
   *
   * The rank of this process's first device (0 in a single process).
   */
  ACCEL_FIELD_UINT (AccelCommunicator, first_rank, "first-rank", "Rank of the first local device",
                    0, G_MAXUINT, 0, ACCEL_FIELD_READABLE),
  /**
   * AccelCommunicator:n-local-ranks:
   *
   * How many of the ranks are devices of this process.
   */
  ACCEL_ACCESSOR_UINT (AccelCommunicator, accel_communicator_get_n_local_ranks, NULL, "n-local-ranks",
                       "Ranks of this process", 0, G_MAXUINT, 0, ACCEL_FIELD_READABLE),
  /**
   * AccelCommunicator:epoch:
   *
   * Counts the incarnations: goes up each time the communicator is rebuilt
   * after a rank's device lost its context or a collective failed.
   * Notified from the thread that submits the collective that rebuilds it.
   */
  ACCEL_ACCESSOR_UINT (AccelCommunicator, accel_communicator_get_epoch, NULL, "epoch", "Incarnation count",
                       0, G_MAXUINT, 0, ACCEL_FIELD_READABLE | G_PARAM_EXPLICIT_NOTIFY),
  /**
   * AccelCommunicator:timeout-ms:
   *
   * How long a rank waits for the others before its part fails with
   * %ACCEL_ERROR_TIMED_OUT and the incarnation is aborted, in milliseconds
   * (0: no limit). Applies to incarnations made after it is set.
   */
  ACCEL_ACCESSOR_UINT (AccelCommunicator, accel_communicator_get_timeout_ms, accel_communicator_set_timeout_ms,
                       "timeout-ms", "Wait for the other ranks at most this long, ms", 0, G_MAXUINT,
                       DEFAULT_TIMEOUT_MS, RW),
  /**
   * AccelCommunicator:lane:
   *
   * The lane every part runs on (-1: the device picks). One lane keeps a
   * rank's collectives in submission order, as NCCL wants.
   */
  ACCEL_ACCESSOR_INT (AccelCommunicator, accel_communicator_get_lane, accel_communicator_set_lane, "lane",
                      "Lane of the parts, -1 for any", -1, ACCEL_LANE_MAX, 0, RW),
  /**
   * AccelCommunicator:rendezvous:
   *
   * The rendezvous of a communicator that spans processes, or %NULL.
   */
  ACCEL_FIELD_OBJECT (AccelCommunicator, rendezvous, "rendezvous", "Rendezvous of the job",
                      accel_rendezvous_get_type, ACCEL_FIELD_READABLE),
};

AccelDispatcher *
_accel_communicator_dispatcher (void)
{
  static AccelDispatcher *dispatcher;
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      /* For the life of the process, as the dispatchers of devices are. */
      dispatcher = accel_dispatcher_new ("accel-collectives");
      g_once_init_leave (&once, 1);
    }
  return dispatcher;
}

/* Incarnations. */

AccelCommInc *
_accel_comm_inc_ref (AccelCommInc *inc)
{
  g_atomic_int_inc (&inc->ref);
  return inc;
}

void
_accel_comm_inc_unref (AccelCommInc *inc)
{
  if (inc == NULL || !g_atomic_int_dec_and_test (&inc->ref))
    return;
  _accel_comm_group_unref (inc->group);
  g_clear_object (&inc->cancellable);
  g_free (inc->key);
  g_free (inc->comm_id);
  g_free (inc->generations);
  g_clear_pointer (&inc->pair_counters, g_hash_table_unref);
  g_free (inc);
}

gboolean
_accel_communicator_is_local_rank (AccelCommunicator *self, int rank)
{
  return rank >= (int) self->first_rank && rank < (int) (self->first_rank + self->devices->len);
}

static void
abort_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr(GError) error = NULL;
  if (!accel_device_submit_finish (ACCEL_DEVICE (source), result, &error))
    g_debug ("collective-abort on %s: %s", accel_device_get_name (ACCEL_DEVICE (source)), error->message);
}

typedef struct {
  GPtrArray *devices;
  char *key;
  char *reason;
} AbortRanks;

/* On the collectives' thread, so that the answers come back there. */
static void
abort_ranks_cb (gpointer data)
{
  AbortRanks *a = data;
  for (guint i = 0; i < a->devices->len; i++)
    {
      AccelDevice *device = a->devices->pdata[i];
      if (accel_device_get_state (device) == ACCEL_DEVICE_STATE_FAILED)
        continue;
      g_autoptr(AccelOp) op = g_object_new (ACCEL_TYPE_COLLECTIVE_ABORT, "comm-key", a->key,
                                            "reason", a->reason, NULL);
      accel_device_submit_async (device, op, NULL, abort_done, NULL);
    }
  g_ptr_array_unref (a->devices);
  g_free (a->key);
  g_free (a->reason);
  g_free (a);
}

static void
abort_ranks (AccelCommunicator *self, const char *key, const char *reason)
{
  AbortRanks *a = g_new0 (AbortRanks, 1);
  a->devices = g_ptr_array_ref (self->devices);
  a->key = g_strdup (key);
  a->reason = g_strdup (reason);
  accel_dispatcher_post (_accel_communicator_dispatcher (), abort_ranks_cb, a);
}

static void
abort_incarnation (AccelCommunicator *self, AccelCommInc *inc, const GError *reason, gboolean tell_others)
{
  if (inc == NULL || !_accel_comm_group_abort (inc->group, reason))
    return;
  g_debug ("communicator %s: incarnation %s aborted: %s", self->uid, inc->key, reason->message);
  g_cancellable_cancel (inc->cancellable);
  abort_ranks (self, inc->key, reason->message);
  if (self->rendezvous && tell_others)
    {
      g_autofree char *prefix = g_strconcat (inc->key, "/", NULL);
      _accel_rendezvous_post_abort (self->rendezvous, prefix, reason->message);
    }
}

void
_accel_communicator_abort_incarnation (AccelCommunicator *self, AccelCommInc *inc, const GError *reason)
{
  abort_incarnation (self, inc, reason, TRUE);
}

static AccelCommInc *
dup_current (AccelCommunicator *self)
{
  g_mutex_lock (&self->state_lock);
  AccelCommInc *inc = self->inc ? _accel_comm_inc_ref (self->inc) : NULL;
  g_mutex_unlock (&self->state_lock);
  return inc;
}

static void
abort_current (AccelCommunicator *self, const GError *reason)
{
  g_autoptr(AccelCommInc) inc = dup_current (self);
  _accel_communicator_abort_incarnation (self, inc, reason);
}

/* The watch on each local device. */

/* Each of the two handlers holds a reference (a handler may still run on
 * the device's thread while the communicator disconnects it). */
typedef struct {
  gint ref;
  GWeakRef comm;
  AccelDevice *device;
  int rank;
  guint generation;          /* atomic */
  gulong generation_id;
  gulong state_id;
} Watch;

static void
watch_unref (gpointer data, GClosure *closure)
{
  Watch *w = data;
  if (!g_atomic_int_dec_and_test (&w->ref))
    return;
  g_weak_ref_clear (&w->comm);
  g_object_unref (w->device);
  g_free (w);
}

static void
watch_free (gpointer data)
{
  Watch *w = data;
  g_signal_handler_disconnect (w->device, w->generation_id);
  g_signal_handler_disconnect (w->device, w->state_id);
  watch_unref (w, NULL);
}

/* On the device's thread: do nothing that waits. */
static void
device_changed (GObject *object, GParamSpec *pspec, gpointer data)
{
  Watch *w = data;
  g_autoptr(AccelCommunicator) self = g_weak_ref_get (&w->comm);
  if (self == NULL)
    return;

  AccelDevice *device = ACCEL_DEVICE (object);
  g_autoptr(GError) reason = NULL;
  if (accel_device_get_state (device) == ACCEL_DEVICE_STATE_FAILED)
    {
      const GError *failure = accel_device_get_failure (device);
      reason = g_error_new (ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED,
                            "rank %d's device “%s” has failed: %s", w->rank, accel_device_get_name (device),
                            failure ? failure->message : "no reason given");
    }
  else
    {
      guint gen = accel_device_get_generation (device);
      guint old = (guint) g_atomic_int_get (&w->generation);
      if (gen != old && g_atomic_int_compare_and_exchange (&w->generation, (gint) old, (gint) gen))
        reason = g_error_new (ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED,
                              "rank %d's device “%s” lost its context (generation %u, now %u); the "
                              "communicator is rebuilt for the next collective",
                              w->rank, accel_device_get_name (device), old, gen);
    }
  if (reason)
    abort_current (self, reason);
}

/* Incarnations are made on demand. */

static char *
hex_of (const guint8 *bytes, gsize n)
{
  char *s = g_malloc (2 * n + 1);
  for (gsize i = 0; i < n; i++)
    g_snprintf (s + 2 * i, 3, "%02x", bytes[i]);
  s[2 * n] = '\0';
  return s;
}

/* Whether the backend wants bootstrap bytes: it has a kernel for them. */
static gboolean
wants_bootstrap (AccelCommunicator *self)
{
  g_autoptr(AccelOp) op = g_object_new (ACCEL_TYPE_COLLECTIVE_BOOTSTRAP, NULL);
  g_autoptr(GError) error = NULL;
  if (accel_registry_find_kernel (self->registry, op, self->devices->pdata[0], &error))
    return TRUE;
  return !g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL);
}

/* Makes the bootstrap bytes on the first local device (which holds the
 * communicator's rank 0 in its process). */
static char *
make_bootstrap (AccelCommunicator *self, GError **error)
{
  AccelDevice *device = self->devices->pdata[0];
  g_autoptr(AccelShape) shape = accel_shape_new_1d (ACCEL_COLLECTIVE_ID_SIZE);
  g_autoptr(AccelBuffer) id = accel_device_alloc (device, ACCEL_DTYPE_U8, shape, error);
  if (id == NULL)
    return NULL;
  g_autoptr(AccelOp) op = g_object_new (ACCEL_TYPE_COLLECTIVE_BOOTSTRAP, "id", id, NULL);
  guint8 bytes[ACCEL_COLLECTIVE_ID_SIZE];
  if (!accel_device_submit (device, op, NULL, error) || !accel_buffer_read (id, bytes, sizeof bytes, error))
    {
      g_prefix_error (error, "cannot make the communicator's bootstrap bytes on “%s”: ",
                      accel_device_get_name (device));
      return NULL;
    }
  return hex_of (bytes, sizeof bytes);
}

/* In a job: every process learns the bootstrap bytes of the process that
 * owns rank 0; the exchange is also where the processes meet before a new
 * incarnation runs anything. */
static gboolean
share_bootstrap (AccelCommunicator *self, const char *key, char **comm_id, GError **error)
{
  g_autofree guint *procs = g_new (guint, self->n_processes);
  for (guint p = 0; p < self->n_processes; p++)
    procs[p] = p;
  const char *mine = *comm_id ? *comm_id : "";
  g_autoptr(GBytes) data = g_bytes_new (mine, strlen (mine));
  g_autofree char *tag = g_strdup_printf ("%s/boot", key);
  g_autoptr(GPtrArray) all = _accel_rendezvous_exchange (self->rendezvous, tag, procs, self->n_processes, data,
                                                        g_atomic_int_get (&self->timeout_ms), error);
  if (all == NULL)
    return FALSE;
  gsize len = 0;
  const char *first = g_bytes_get_data (all->pdata[self->rank_process[0]], &len);
  g_clear_pointer (comm_id, g_free);
  if (len != 0 && len != 2 * ACCEL_COLLECTIVE_ID_SIZE)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                   "the process of rank 0 sent %" G_GSIZE_FORMAT " bootstrap bytes", len);
      return FALSE;
    }
  for (gsize i = 0; i < len; i++)
    if (!g_ascii_isxdigit (first[i]))
      {
        g_set_error_literal (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                             "the process of rank 0 sent malformed bootstrap bytes");
        return FALSE;
      }
  *comm_id = len ? g_strndup (first, len) : NULL;
  return TRUE;
}

static gboolean
devices_usable (AccelCommunicator *self, GError **error)
{
  for (guint i = 0; i < self->devices->len; i++)
    {
      AccelDevice *device = self->devices->pdata[i];
      if (accel_device_get_state (device) == ACCEL_DEVICE_STATE_FAILED)
        {
          const GError *failure = accel_device_get_failure (device);
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED,
                       "rank %u's device “%s” is gone (%s); this communicator cannot run collectives, "
                       "make a new one over working devices",
                       self->first_rank + i, accel_device_get_name (device),
                       failure ? failure->message : "it has failed");
          return FALSE;
        }
    }
  return TRUE;
}

static AccelCommInc *
build_incarnation (AccelCommunicator *self, guint epoch, GError **error)
{
  if (!devices_usable (self, error))
    return NULL;

  g_autoptr(AccelCommInc) inc = g_new0 (AccelCommInc, 1);
  inc->ref = 1;
  inc->epoch = epoch;
  inc->key = g_strdup_printf ("%s/e%u", self->uid, epoch);
  inc->generations = g_new (guint, self->devices->len);
  for (guint i = 0; i < self->devices->len; i++)
    inc->generations[i] = accel_device_get_generation (self->devices->pdata[i]);
  inc->host_exchange = !wants_bootstrap (self);
  if (!inc->host_exchange && self->first_rank == 0)
    {
      inc->comm_id = make_bootstrap (self, error);
      if (inc->comm_id == NULL)
        return NULL;
    }
  if (self->rendezvous && !share_bootstrap (self, inc->key, &inc->comm_id, error))
    {
      g_prefix_error (error, "communicator %s, epoch %u: ", self->uid, epoch);
      return NULL;
    }
  if (!inc->host_exchange && inc->comm_id == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                   "communicator %s, epoch %u: the process of rank 0 made no bootstrap bytes "
                   "(do all processes run the same backend and plugins?)", self->uid, epoch);
      return NULL;
    }

  g_autofree int *local_index = g_new (int, self->n_ranks);
  for (guint r = 0; r < self->n_ranks; r++)
    local_index[r] = _accel_communicator_is_local_rank (self, r) ? (int) (r - self->first_rank) : -1;
  AccelCommGroupConfig config = {
    .key = inc->key,
    .n_ranks = self->n_ranks,
    .local_index = local_index,
    .rank_process = self->rank_process,
    .my_process = self->my_process,
    .n_processes = self->n_processes,
    .rendezvous = self->rendezvous,
    .timeout_ms = g_atomic_int_get (&self->timeout_ms),
  };
  inc->group = _accel_comm_group_new (&config);
  inc->cancellable = g_cancellable_new ();
  inc->pair_counters = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return g_steal_pointer (&inc);
}

static void
retire (AccelCommunicator *self, AccelCommInc *inc, const char *why)
{
  if (inc == NULL)
    return;
  /* Not told to the other processes: they may still be finishing the
   * last collectives, which this process has already done its part of. */
  g_autoptr(GError) reason = g_error_new_literal (ACCEL_ERROR, ACCEL_ERROR_FAILED, why);
  abort_incarnation (self, inc, reason, FALSE);
  _accel_comm_group_retire (inc->group);
}

AccelCommInc *
_accel_communicator_ensure_incarnation (AccelCommunicator *self, GError **error)
{
  AccelCommInc *inc = dup_current (self);

  if (inc)
    {
      g_autoptr(GError) reason = _accel_comm_group_dup_abort_reason (inc->group);
      for (guint i = 0; reason == NULL && i < self->devices->len; i++)
        if (accel_device_get_generation (self->devices->pdata[i]) != inc->generations[i])
          reason = g_error_new (ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED,
                                "rank %u's device “%s” lost its context", self->first_rank + i,
                                accel_device_get_name (self->devices->pdata[i]));
      if (reason == NULL)
        return inc;
      _accel_communicator_abort_incarnation (self, inc, reason);
      retire (self, inc, "a new incarnation replaced it");
    }

  guint epoch = inc ? inc->epoch + 1 : 0;
  _accel_comm_inc_unref (inc);
  AccelCommInc *fresh = build_incarnation (self, epoch, error);
  if (fresh == NULL)
    return NULL;   /* the next submission tries this epoch again */
  g_mutex_lock (&self->state_lock);
  AccelCommInc *old = self->inc;
  self->inc = _accel_comm_inc_ref (fresh);
  g_mutex_unlock (&self->state_lock);
  _accel_comm_inc_unref (old);
  g_atomic_int_set (&self->epoch, epoch);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_EPOCH]);
  return fresh;
}

/* Notices from the rendezvous, on its reader thread. */
static void
rendezvous_notice (AccelRendezvousNotice notice, const char *prefix, guint process, const char *message,
                   gpointer data)
{
  AccelCommunicator *self = data;
  g_autoptr(AccelCommInc) inc = dup_current (self);
  if (inc == NULL)
    return;

  g_autoptr(GError) reason = NULL;
  if (notice == ACCEL_RENDEZVOUS_NOTICE_ABORTED)
    {
      g_autofree char *mine = g_strconcat (inc->key, "/", NULL);
      if (g_strcmp0 (prefix, mine) == 0)
        reason = g_error_new (ACCEL_ERROR, strstr (message, "lost its context") ? ACCEL_ERROR_CONTEXT_POISONED
                                                                               : ACCEL_ERROR_FAILED,
                              "another process aborted the communicator: %s", message);
    }
  else if (process == G_MAXUINT)
    reason = g_error_new (ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED, "%s", message);
  else
    {
      for (guint r = 0; reason == NULL && r < self->n_ranks; r++)
        if (self->rank_process[r] == process)
          reason = g_error_new (ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED,
                                "process %u (rank %u) left the job: %s", process, r, message);
    }
  if (reason)
    _accel_communicator_abort_incarnation (self, inc, reason);
}

/* GObject */

static void
accel_communicator_dispose (GObject *object)
{
  AccelCommunicator *self = ACCEL_COMMUNICATOR (object);

  g_clear_pointer (&self->watches, g_ptr_array_unref);
  if (self->rendezvous && self->listener)
    {
      _accel_rendezvous_remove_listener (self->rendezvous, self->listener);
      self->listener = 0;
    }
  g_mutex_lock (&self->state_lock);
  AccelCommInc *inc = g_steal_pointer (&self->inc);
  g_mutex_unlock (&self->state_lock);
  if (inc && self->devices)
    retire (self, inc, "the communicator was released");
  _accel_comm_inc_unref (inc);
  G_OBJECT_CLASS (accel_communicator_parent_class)->dispose (object);
}

static void
accel_communicator_finalize (GObject *object)
{
  AccelCommunicator *self = ACCEL_COMMUNICATOR (object);

  g_clear_pointer (&self->devices, g_ptr_array_unref);
  accel_object_finalize_fields (object, ACCEL_TYPE_COMMUNICATOR);
  g_clear_object (&self->registry);
  g_free (self->rank_process);
  g_free (self->uid);
  g_mutex_clear (&self->build_lock);
  g_mutex_clear (&self->state_lock);
  G_OBJECT_CLASS (accel_communicator_parent_class)->finalize (object);
}

static void
accel_communicator_class_init (AccelCommunicatorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = accel_communicator_dispose;
  object_class->finalize = accel_communicator_finalize;

  accel_object_class_install_fields (object_class, communicator_fields, G_N_ELEMENTS (communicator_fields));
  properties[PROP_EPOCH] = g_object_class_find_property (object_class, "epoch");
  properties[PROP_TIMEOUT_MS] = g_object_class_find_property (object_class, "timeout-ms");
  properties[PROP_LANE] = g_object_class_find_property (object_class, "lane");
}

static void
accel_communicator_init (AccelCommunicator *self)
{
  g_mutex_init (&self->build_lock);
  g_mutex_init (&self->state_lock);
  self->timeout_ms = DEFAULT_TIMEOUT_MS;
  self->n_processes = 1;
  self->lane = 0;
}

/* Construction. */

static gboolean
take_devices (AccelCommunicator *self, AccelDevice **devices, guint n_devices, GError **error)
{
  if (n_devices == 0)
    {
      g_set_error_literal (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                           "a communicator needs at least one device");
      return FALSE;
    }
  const char *backend = accel_device_get_backend_name (devices[0]);
  for (guint i = 0; i < n_devices; i++)
    {
      for (guint j = 0; j < i; j++)
        if (devices[j] == devices[i])
          {
            g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                         "device “%s” is given twice (as local ranks %u and %u); each rank needs a device of its own",
                         accel_device_get_name (devices[i]), j, i);
            return FALSE;
          }
      if (g_strcmp0 (accel_device_get_backend_name (devices[i]), backend) != 0)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                       "devices “%s” (%s) and “%s” (%s) are of different backends; a communicator's ranks "
                       "share one backend", accel_device_get_name (devices[0]), backend,
                       accel_device_get_name (devices[i]), accel_device_get_backend_name (devices[i]));
          return FALSE;
        }
    }
  AccelSystem *system = accel_device_get_system (devices[0]);
  if (system == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_DEVICE,
                   "device “%s” belongs to no system", accel_device_get_name (devices[0]));
      return FALSE;
    }
  self->registry = g_object_ref (accel_system_get_registry (system));
  self->devices = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < n_devices; i++)
    g_ptr_array_add (self->devices, g_object_ref (devices[i]));
  return devices_usable (self, error);
}

static AccelCommunicator *
over_devices (AccelDevice **devices, guint n_devices, GError **error)
{
  g_return_val_if_fail (devices != NULL || n_devices == 0, NULL);
  for (guint i = 0; i < n_devices; i++)
    g_return_val_if_fail (ACCEL_IS_DEVICE (devices[i]), NULL);

  AccelCommunicator *self = g_object_new (ACCEL_TYPE_COMMUNICATOR, NULL);
  if (!take_devices (self, devices, n_devices, error))
    g_clear_object (&self);
  return self;
}

static void
watch_devices (AccelCommunicator *self)
{
  self->watches = g_ptr_array_new_with_free_func (watch_free);
  for (guint i = 0; i < self->devices->len; i++)
    {
      Watch *w = g_new0 (Watch, 1);
      w->ref = 3;   /* the array's and the two handlers' */
      g_weak_ref_init (&w->comm, self);
      w->device = g_object_ref (self->devices->pdata[i]);
      w->rank = (int) (self->first_rank + i);
      w->generation = accel_device_get_generation (w->device);
      w->generation_id = g_signal_connect_data (w->device, "notify::generation", G_CALLBACK (device_changed), w,
                                                watch_unref, 0);
      w->state_id = g_signal_connect_data (w->device, "notify::device-state", G_CALLBACK (device_changed), w,
                                           watch_unref, 0);
      g_ptr_array_add (self->watches, w);
    }
}

/**
 * accel_communicator_new:
 * @devices: (array length=n_devices): the devices, rank 0 first; each at
 *   most once, all of one backend
 * @n_devices: how many
 * @error: return location for a #GError
 *
 * Makes a communicator whose ranks are @devices, in this process. Nothing
 * is set up on the devices until the first collective.
 *
 * Returns: (transfer full): the communicator, or %NULL with
 *   %ACCEL_ERROR_INVALID_ARGUMENT, %ACCEL_ERROR_NOT_SUPPORTED or
 *   %ACCEL_ERROR_DEVICE_FAILED
 */
AccelCommunicator *
accel_communicator_new (AccelDevice **devices, guint n_devices, GError **error)
{
  g_autoptr(AccelCommunicator) self = over_devices (devices, n_devices, error);
  if (self == NULL)
    return NULL;
  self->n_ranks = n_devices;
  self->first_rank = 0;
  guint32 a = g_random_int (), b = g_random_int ();
  self->uid = g_strdup_printf ("comm-%08x%08x", a, b);
  watch_devices (self);
  return g_steal_pointer (&self);
}

/**
 * accel_communicator_new_distributed:
 * @rendezvous: the job's rendezvous
 * @devices: (array length=n_devices): this process's devices, in rank order
 * @n_devices: how many (at least one)
 * @error: return location for a #GError
 *
 * Makes a communicator that spans every process of @rendezvous's job. Every
 * process calls this, in the same order as its other communicators; the
 * ranks are the processes' devices in the order of their process ranks
 * (process 0's devices first). Blocks until every process has called it,
 * or the rendezvous's timeout passes.
 *
 * Returns: (transfer full): the communicator, or %NULL with @error set
 */
AccelCommunicator *
accel_communicator_new_distributed (AccelRendezvous *rendezvous,
                                    AccelDevice **devices,
                                    guint n_devices,
                                    GError **error)
{
  g_return_val_if_fail (ACCEL_IS_RENDEZVOUS (rendezvous), NULL);
  g_autoptr(AccelCommunicator) self = over_devices (devices, n_devices, error);
  if (self == NULL)
    return NULL;
  self->rendezvous = g_object_ref (rendezvous);
  self->n_processes = accel_rendezvous_get_world_size (rendezvous);
  self->my_process = accel_rendezvous_get_rank (rendezvous);
  guint index = _accel_rendezvous_next_comm_index (rendezvous);
  self->uid = g_strdup_printf ("%s/c%u", _accel_rendezvous_get_job (rendezvous), index);

  /* Every process says how many ranks it brings, and of which backend. */
  g_autofree guint *procs = g_new (guint, self->n_processes);
  for (guint p = 0; p < self->n_processes; p++)
    procs[p] = p;
  g_autofree char *mine = g_strdup_printf ("%u %s", n_devices, accel_device_get_backend_name (devices[0]));
  g_autoptr(GBytes) data = g_bytes_new (mine, strlen (mine));
  g_autofree char *tag = g_strdup_printf ("%s/create", self->uid);
  g_autoptr(GPtrArray) all = _accel_rendezvous_exchange (rendezvous, tag, procs, self->n_processes, data,
                                                        accel_rendezvous_get_timeout_ms (rendezvous), error);
  if (all == NULL)
    {
      g_prefix_error (error, "communicator %s: ", self->uid);
      return NULL;
    }
  g_autofree guint *counts = g_new0 (guint, self->n_processes);
  guint64 total = 0;
  for (guint p = 0; p < self->n_processes; p++)
    {
      gsize len = 0;
      const char *text = g_bytes_get_data (all->pdata[p], &len);
      g_autofree char *s = g_strndup (text, len);
      char *end = NULL;
      guint64 n = g_ascii_strtoull (s, &end, 10);
      if (end == s || *end != ' ' || n == 0 || n > (1 << 16) || strcmp (end + 1, accel_device_get_backend_name (devices[0])) != 0)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "communicator %s: process %u brings “%s”; every process must bring at least one "
                       "device of backend %s", self->uid, p, s, accel_device_get_backend_name (devices[0]));
          return NULL;
        }
      counts[p] = (guint) n;
      if (p < self->my_process)
        self->first_rank += (guint) n;
      total += n;
    }
  self->n_ranks = (guint) total;
  self->rank_process = g_new (guint, self->n_ranks);
  for (guint p = 0, r = 0; p < self->n_processes; p++)
    for (guint k = 0; k < counts[p]; k++)
      self->rank_process[r++] = p;
  self->listener = _accel_rendezvous_add_listener (rendezvous, rendezvous_notice, self);
  watch_devices (self);
  return g_steal_pointer (&self);
}

/* Accessors. */

/**
 * accel_communicator_get_n_ranks:
 * @self: a communicator
 *
 * The number of ranks, in every process.
 *
 * Returns: the number of ranks, in every process
 */
guint
accel_communicator_get_n_ranks (AccelCommunicator *self)
{
  g_return_val_if_fail (ACCEL_IS_COMMUNICATOR (self), 0);
  return self->n_ranks;
}

/**
 * accel_communicator_get_first_rank:
 * @self: a communicator
 *
 * The rank of this process's first device.
 *
 * Returns: the rank of this process's first device
 */
guint
accel_communicator_get_first_rank (AccelCommunicator *self)
{
  g_return_val_if_fail (ACCEL_IS_COMMUNICATOR (self), 0);
  return self->first_rank;
}

/**
 * accel_communicator_get_n_local_ranks:
 * @self: a communicator
 *
 * How many ranks are devices of this process.
 *
 * Returns: how many ranks are devices of this process
 */
guint
accel_communicator_get_n_local_ranks (AccelCommunicator *self)
{
  g_return_val_if_fail (ACCEL_IS_COMMUNICATOR (self), 0);
  return self->devices ? self->devices->len : 0;
}

/**
 * accel_communicator_get_device:
 * @self: a communicator
 * @local_index: 0 to accel_communicator_get_n_local_ranks() less one
 *
 * The device of rank first-rank + @local_index.
 *
 * Returns: (transfer none): the device of rank first-rank + @local_index
 */
AccelDevice *
accel_communicator_get_device (AccelCommunicator *self, guint local_index)
{
  g_return_val_if_fail (ACCEL_IS_COMMUNICATOR (self), NULL);
  g_return_val_if_fail (local_index < self->devices->len, NULL);
  return self->devices->pdata[local_index];
}

/**
 * accel_communicator_get_epoch:
 * @self: a communicator
 *
 * How many times it was rebuilt.
 *
 * Returns: how many times it was rebuilt
 */
guint
accel_communicator_get_epoch (AccelCommunicator *self)
{
  g_return_val_if_fail (ACCEL_IS_COMMUNICATOR (self), 0);
  return g_atomic_int_get (&self->epoch);
}

/**
 * accel_communicator_get_timeout_ms:
 * @self: a communicator
 *
 * The #AccelCommunicator:timeout-ms.
 *
 * Returns: the #AccelCommunicator:timeout-ms
 */
guint
accel_communicator_get_timeout_ms (AccelCommunicator *self)
{
  g_return_val_if_fail (ACCEL_IS_COMMUNICATOR (self), 0);
  return g_atomic_int_get (&self->timeout_ms);
}

/**
 * accel_communicator_set_timeout_ms:
 * @self: a communicator
 * @timeout_ms: milliseconds, or 0 for no limit
 *
 * Sets the #AccelCommunicator:timeout-ms.
 */
void
accel_communicator_set_timeout_ms (AccelCommunicator *self, guint timeout_ms)
{
  g_return_if_fail (ACCEL_IS_COMMUNICATOR (self));
  if ((guint) g_atomic_int_get (&self->timeout_ms) == timeout_ms)
    return;
  g_atomic_int_set (&self->timeout_ms, timeout_ms);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TIMEOUT_MS]);
}

/**
 * accel_communicator_get_lane:
 * @self: a communicator
 *
 * The #AccelCommunicator:lane.
 *
 * Returns: the #AccelCommunicator:lane
 */
int
accel_communicator_get_lane (AccelCommunicator *self)
{
  g_return_val_if_fail (ACCEL_IS_COMMUNICATOR (self), -1);
  return g_atomic_int_get (&self->lane);
}

/**
 * accel_communicator_set_lane:
 * @self: a communicator
 * @lane: a lane, or -1 to let each device pick
 *
 * Sets the #AccelCommunicator:lane.
 */
void
accel_communicator_set_lane (AccelCommunicator *self, int lane)
{
  g_return_if_fail (ACCEL_IS_COMMUNICATOR (self));
  g_return_if_fail (lane >= -1 && lane <= ACCEL_LANE_MAX);
  if (g_atomic_int_get (&self->lane) == lane)
    return;
  g_atomic_int_set (&self->lane, lane);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LANE]);
}

/**
 * accel_communicator_get_rendezvous:
 * @self: a communicator
 *
 * The rendezvous of its job, or %NULL.
 *
 * Returns: (transfer none) (nullable): the rendezvous of its job, or %NULL
 */
AccelRendezvous *
accel_communicator_get_rendezvous (AccelCommunicator *self)
{
  g_return_val_if_fail (ACCEL_IS_COMMUNICATOR (self), NULL);
  return self->rendezvous;
}

/**
 * accel_communicator_abort:
 * @self: a communicator
 * @reason: (nullable): why, for the errors of the collectives in flight
 *
 * Ends the current incarnation: the collectives in flight fail (their
 * error names @reason), and the next collective runs on a rebuilt
 * communicator. In a job of several processes, the others abort too.
 */
void
accel_communicator_abort (AccelCommunicator *self, const char *reason)
{
  g_return_if_fail (ACCEL_IS_COMMUNICATOR (self));
  g_autoptr(GError) error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_CANCELLED, "the communicator was aborted: %s",
                                         reason ? reason : "no reason given");
  abort_current (self, error);
}
