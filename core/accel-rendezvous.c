/* accel-rendezvous.c: a process's place in a job of several processes,
 * as torchrun's rendezvous gives one.
 *
 * Every process of a job makes one AccelRendezvous, from ACCEL_RANK,
 * ACCEL_WORLD_SIZE, ACCEL_MASTER_ADDR and ACCEL_MASTER_PORT (and the
 * shared ACCEL_RENDEZVOUS_TOKEN when the job has one). Process 0 starts
 * the job's store (AccelRendezvousStore) on the master address; every
 * process connects to it, says HELLO, and is welcomed once all have come.
 * Communicators made over it (accel_communicator_new_distributed()) then
 * span the processes: the store moves their bootstrap bytes (the NCCL
 * unique id) and, for CPU devices, their data.
 *
 * One connection per process carries every request: each has an id, and a
 * reader thread hands each answer to the request that waits for it, and
 * each notice (an incarnation aborted somewhere, a process gone) to the
 * communicators listening. The reader pings the store when it has heard
 * nothing for a quarter of the timeout; a store silent for the whole
 * timeout, or a closed connection, fails every request and is told to the
 * listeners as the loss of every other process.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "accel-communicator-private.h"
#include "accel-rendezvous-private.h"

#define DEFAULT_TIMEOUT_MS 60000
#define CONNECT_RETRY_US (50 * 1000)

typedef struct {
  gboolean done;
  GVariant *result;
  GError *error;
} Request;

typedef struct {
  guint id;
  AccelRendezvousListener func;
  gpointer data;
} Listener;

/**
 * AccelRendezvous:
 *
 * This process's place in a job of several processes: its rank, the
 * world size, and its connection to the job's store (which process 0
 * runs). Make it with accel_rendezvous_new_from_env() in every process,
 * then accel_communicator_new_distributed().
 */
struct _AccelRendezvous {
  GObject parent_instance;

  guint rank;
  guint world_size;
  guint timeout_ms;
  gsize max_message;
  char *job;
  AccelRendezvousStore *store;

  GSocketConnection *connection;
  GSocket *socket;               /* the connection's */
  GMutex write_lock;
  GThread *reader;
  gint stopping;                 /* atomic */

  GMutex lock;
  GCond cond;
  GHashTable *requests;          /* id -> Request */
  guint64 next_request;
  GError *broken;                /* the connection is gone */
  gboolean *lost;                /* per process */
  char **lost_reason;
  guint next_comm;
  guint next_barrier;

  GRecMutex listener_lock;       /* held while listeners run */
  GArray *listeners;             /* Listener */
  guint next_listener;
};

G_DEFINE_FINAL_TYPE (AccelRendezvous, accel_rendezvous, G_TYPE_OBJECT)

static void
notify_listeners (AccelRendezvous *self, AccelRendezvousNotice notice, const char *prefix, guint process,
                  const char *reason)
{
  g_rec_mutex_lock (&self->listener_lock);
  for (guint i = 0; i < self->listeners->len; i++)
    {
      Listener *l = &g_array_index (self->listeners, Listener, i);
      l->func (notice, prefix, process, reason, l->data);
    }
  g_rec_mutex_unlock (&self->listener_lock);
}

static void
break_connection (AccelRendezvous *self, const char *why)
{
  g_mutex_lock (&self->lock);
  gboolean first = self->broken == NULL;
  if (first)
    self->broken = g_error_new (ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED,
                                "the job's rendezvous store is gone: %s", why);
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
  if (first && !g_atomic_int_get (&self->stopping))
    notify_listeners (self, ACCEL_RENDEZVOUS_NOTICE_PROCESS_LOST, "", G_MAXUINT, why);
}

static gpointer
reader_thread (gpointer data)
{
  AccelRendezvous *self = data;
  gint64 ping_us = self->timeout_ms ? MAX ((gint64) self->timeout_ms * 250, 20000) : 10 * G_USEC_PER_SEC;
  gint64 last_heard = g_get_monotonic_time ();

  while (!g_atomic_int_get (&self->stopping))
    {
      AccelWireKind kind;
      guint64 request = 0;
      g_autoptr(GVariant) payload = NULL;
      g_autoptr(GError) error = NULL;

      if (!_accel_wire_read (self->socket, self->max_message + ACCEL_WIRE_OVERHEAD,
                             g_get_monotonic_time () + ping_us, NULL, &kind, &request, &payload, &error))
        {
          if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
            {
              if (self->timeout_ms && g_get_monotonic_time () - last_heard > (gint64) self->timeout_ms * 1000)
                {
                  break_connection (self, "it stayed silent longer than the timeout");
                  break;
                }
              g_mutex_lock (&self->write_lock);
              gboolean ok = _accel_wire_write (self->socket, ACCEL_WIRE_PING, 0, g_variant_new ("()"),
                                               g_get_monotonic_time () + ping_us, NULL);
              g_mutex_unlock (&self->write_lock);
              if (ok)
                continue;
            }
          if (!g_atomic_int_get (&self->stopping))
            break_connection (self, error->message);
          break;
        }
      last_heard = g_get_monotonic_time ();

      if (kind == ACCEL_WIRE_RESULT || kind == ACCEL_WIRE_ERROR)
        {
          if (request == 0 && kind == ACCEL_WIRE_ERROR)
            {
              const char *message;
              g_variant_get (payload, "(u&s)", NULL, &message);
              break_connection (self, message);
              break;
            }
          g_mutex_lock (&self->lock);
          Request *r = g_hash_table_lookup (self->requests, &request);
          if (r && !r->done)
            {
              r->done = TRUE;
              if (kind == ACCEL_WIRE_RESULT)
                r->result = g_variant_ref (payload);
              else
                {
                  guint32 code;
                  const char *message;
                  g_variant_get (payload, "(u&s)", &code, &message);
                  r->error = g_error_new_literal (ACCEL_ERROR, code <= ACCEL_ERROR_NOT_SUPPORTED ? code
                                                                  : ACCEL_ERROR_FAILED, message);
                }
              g_cond_broadcast (&self->cond);
            }
          g_mutex_unlock (&self->lock);
        }
      else if (kind == ACCEL_WIRE_NOTICE)
        {
          guint32 what, process;
          const char *prefix, *reason;
          g_variant_get (payload, "(u&su&s)", &what, &prefix, &process, &reason);
          if (what == ACCEL_WIRE_NOTICE_LOST && process < self->world_size)
            {
              g_mutex_lock (&self->lock);
              self->lost[process] = TRUE;
              g_free (self->lost_reason[process]);
              self->lost_reason[process] = g_strdup (reason);
              g_mutex_unlock (&self->lock);
              notify_listeners (self, ACCEL_RENDEZVOUS_NOTICE_PROCESS_LOST, "", process, reason);
            }
          else if (what == ACCEL_WIRE_NOTICE_ABORTED)
            notify_listeners (self, ACCEL_RENDEZVOUS_NOTICE_ABORTED, prefix, process, reason);
        }
      /* PONG, and anything else the store has no business sending, count as signs of life. */
    }
  return NULL;
}

static void
accel_rendezvous_dispose (GObject *object)
{
  AccelRendezvous *self = ACCEL_RENDEZVOUS (object);

  g_atomic_int_set (&self->stopping, 1);
  if (self->socket)
    g_socket_shutdown (self->socket, TRUE, TRUE, NULL);
  g_clear_pointer (&self->reader, g_thread_join);
  if (self->store)
    accel_rendezvous_store_stop (self->store);
  g_clear_object (&self->store);
  G_OBJECT_CLASS (accel_rendezvous_parent_class)->dispose (object);
}

static void
accel_rendezvous_finalize (GObject *object)
{
  AccelRendezvous *self = ACCEL_RENDEZVOUS (object);

  g_clear_object (&self->connection);
  g_hash_table_unref (self->requests);
  g_clear_error (&self->broken);
  for (guint p = 0; p < self->world_size; p++)
    g_free (self->lost_reason[p]);
  g_free (self->lost_reason);
  g_free (self->lost);
  g_array_unref (self->listeners);
  g_free (self->job);
  g_mutex_clear (&self->lock);
  g_mutex_clear (&self->write_lock);
  g_cond_clear (&self->cond);
  g_rec_mutex_clear (&self->listener_lock);
  G_OBJECT_CLASS (accel_rendezvous_parent_class)->finalize (object);
}

static void
accel_rendezvous_class_init (AccelRendezvousClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->dispose = accel_rendezvous_dispose;
  object_class->finalize = accel_rendezvous_finalize;
}

static void
accel_rendezvous_init (AccelRendezvous *self)
{
  g_mutex_init (&self->lock);
  g_mutex_init (&self->write_lock);
  g_cond_init (&self->cond);
  g_rec_mutex_init (&self->listener_lock);
  self->requests = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  self->listeners = g_array_new (FALSE, FALSE, sizeof (Listener));
  self->next_request = 1;
}

/* Connects to the store, trying again while process 0 starts it. */
static GSocketConnection *
connect_store (const char *address, guint16 port, gint64 deadline, GCancellable *cancellable, GError **error)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  for (;;)
    {
      g_autoptr(GError) local = NULL;
      g_autoptr(GSocketConnection) connection =
        g_socket_client_connect_to_host (client, address, port, cancellable, &local);
      if (connection)
        {
          GSocket *socket = g_socket_connection_get_socket (connection);
          g_socket_set_blocking (socket, FALSE);
          g_socket_set_option (socket, IPPROTO_TCP, TCP_NODELAY, 1, NULL);
          return g_steal_pointer (&connection);
        }
      if (g_cancellable_is_cancelled (cancellable) || (deadline && g_get_monotonic_time () >= deadline)
          || !(g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED)
               || g_error_matches (local, G_IO_ERROR, G_IO_ERROR_TIMED_OUT)))
        {
          g_propagate_prefixed_error (error, g_steal_pointer (&local),
                                      "cannot reach the rendezvous store at %s:%u: ", address, port);
          return NULL;
        }
      g_usleep (CONNECT_RETRY_US);
    }
}

static gboolean
join (AccelRendezvous *self, const char *token, gint64 deadline, GCancellable *cancellable, GError **error)
{
  g_mutex_lock (&self->write_lock);
  gboolean ok = _accel_wire_write (self->socket, ACCEL_WIRE_HELLO, 1,
                                   g_variant_new ("(suu)", token ? token : "", self->rank, self->world_size),
                                   deadline, error);
  g_mutex_unlock (&self->write_lock);
  if (!ok)
    return FALSE;

  for (;;)
    {
      AccelWireKind kind;
      guint64 request;
      g_autoptr(GVariant) payload = NULL;
      GError *local = NULL;
      if (!_accel_wire_read (self->socket, ACCEL_WIRE_DEFAULT_MAX_MESSAGE, deadline, cancellable, &kind, &request,
                             &payload, &local))
        {
          if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
            {
              g_error_free (local);
              g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_TIMED_OUT,
                           "not every process of the job joined within %u ms", self->timeout_ms);
            }
          else
            g_propagate_prefixed_error (error, local, "joining the job: ");
          return FALSE;
        }
      if (kind == ACCEL_WIRE_ERROR)
        {
          guint32 code;
          const char *message;
          g_variant_get (payload, "(u&s)", &code, &message);
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "the store refused to join: %s", message);
          return FALSE;
        }
      if (kind == ACCEL_WIRE_WELCOME)
        {
          const char *job;
          guint32 max_message;
          g_variant_get (payload, "(&su)", &job, &max_message);
          self->job = g_strndup (job, ACCEL_WIRE_MAX_NAME);
          self->max_message = MAX (max_message, ACCEL_WIRE_MIN_MAX_MESSAGE);
          return TRUE;
        }
    }
}

/**
 * accel_rendezvous_new:
 * @master_address: where the job's store listens: process 0 binds it
 *   there (only there), every process connects to it
 * @master_port: its TCP port
 * @rank: this process's rank in the job, below @world_size
 * @world_size: how many processes the job has
 * @token: (nullable): the job's shared secret; when process 0's is set,
 *   every process must give the same
 * @timeout_ms: how long to wait for the job to join, for a silent peer and
 *   for an exchange, in milliseconds (0: no limit)
 * @cancellable: (nullable): cancels the join
 * @error: return location for a #GError
 *
 * Joins a job: process 0 starts its store; every process connects and
 * waits until all @world_size have.
 *
 * Returns: (transfer full): the rendezvous, or %NULL with @error set
 */
AccelRendezvous *
accel_rendezvous_new (const char *master_address,
                      guint16 master_port,
                      guint rank,
                      guint world_size,
                      const char *token,
                      guint timeout_ms,
                      GCancellable *cancellable,
                      GError **error)
{
  g_return_val_if_fail (master_address != NULL, NULL);

  if (world_size == 0 || world_size > 65536 || rank >= world_size)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "rank %u of a world of %u processes: the rank must be below the world size (1 to 65536)",
                   rank, world_size);
      return NULL;
    }
  if (master_port == 0 && rank != 0)
    {
      g_set_error_literal (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                           "the master port must be set for the processes other than 0");
      return NULL;
    }

  g_autoptr(AccelRendezvous) self = g_object_new (ACCEL_TYPE_RENDEZVOUS, NULL);
  self->rank = rank;
  self->world_size = world_size;
  self->timeout_ms = timeout_ms;
  self->lost = g_new0 (gboolean, world_size);
  self->lost_reason = g_new0 (char *, world_size);
  self->max_message = ACCEL_WIRE_DEFAULT_MAX_MESSAGE;

  guint16 port = master_port;
  if (rank == 0)
    {
      self->store = accel_rendezvous_store_new (master_address, master_port, world_size, token, timeout_ms, error);
      if (self->store == NULL)
        return NULL;
      port = accel_rendezvous_store_get_port (self->store);
    }
  gint64 deadline = timeout_ms ? g_get_monotonic_time () + (gint64) timeout_ms * 1000 : 0;
  self->connection = connect_store (master_address, port, deadline, cancellable, error);
  if (self->connection == NULL)
    return NULL;
  self->socket = g_socket_connection_get_socket (self->connection);
  if (!join (self, token, deadline, cancellable, error))
    return NULL;
  self->reader = g_thread_new ("accel-rendezvous", reader_thread, self);
  return g_steal_pointer (&self);
}

static gboolean
env_number (const char *name, guint64 max, gboolean required, guint64 fallback, guint64 *value, GError **error)
{
  if (required && (g_getenv (name) == NULL || *g_getenv (name) == '\0'))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "%s is not set", name);
      return FALSE;
    }
  return _accel_wire_env_uint (name, max, fallback, value, error);
}

/**
 * accel_rendezvous_new_from_env:
 * @cancellable: (nullable): cancels the join
 * @error: return location for a #GError
 *
 * Joins the job the environment describes, as torchrun's variables do:
 * `ACCEL_RANK` (this process), `ACCEL_WORLD_SIZE` (how many),
 * `ACCEL_MASTER_ADDR` and `ACCEL_MASTER_PORT` (where process 0's store
 * listens); optionally `ACCEL_RENDEZVOUS_TOKEN` (the shared secret) and
 * `ACCEL_RENDEZVOUS_TIMEOUT_MS` (default 60000).
 *
 * Returns: (transfer full): the rendezvous, or %NULL with @error naming
 *   the variable that is missing or wrong
 */
AccelRendezvous *
accel_rendezvous_new_from_env (GCancellable *cancellable, GError **error)
{
  guint64 rank, world, port, timeout;
  const char *address = g_getenv ("ACCEL_MASTER_ADDR");

  if (!env_number ("ACCEL_RANK", 65535, TRUE, 0, &rank, error)
      || !env_number ("ACCEL_WORLD_SIZE", 65536, TRUE, 0, &world, error)
      || !env_number ("ACCEL_MASTER_PORT", 65535, TRUE, 0, &port, error)
      || !env_number ("ACCEL_RENDEZVOUS_TIMEOUT_MS", G_MAXUINT, FALSE, DEFAULT_TIMEOUT_MS, &timeout, error))
    return NULL;
  if (address == NULL || *address == '\0')
    {
      g_set_error_literal (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                           "ACCEL_MASTER_ADDR is not set (the address process 0's store listens on)");
      return NULL;
    }
  return accel_rendezvous_new (address, (guint16) port, (guint) rank, (guint) world,
                               g_getenv ("ACCEL_RENDEZVOUS_TOKEN"), (guint) timeout, cancellable, error);
}

/**
 * accel_rendezvous_get_rank:
 * @self: a rendezvous
 *
 * This process's rank in the job.
 *
 * Returns: this process's rank in the job
 */
guint
accel_rendezvous_get_rank (AccelRendezvous *self)
{
  g_return_val_if_fail (ACCEL_IS_RENDEZVOUS (self), 0);
  return self->rank;
}

/**
 * accel_rendezvous_get_world_size:
 * @self: a rendezvous
 *
 * How many processes the job has.
 *
 * Returns: how many processes the job has
 */
guint
accel_rendezvous_get_world_size (AccelRendezvous *self)
{
  g_return_val_if_fail (ACCEL_IS_RENDEZVOUS (self), 0);
  return self->world_size;
}

/**
 * accel_rendezvous_get_timeout_ms:
 * @self: a rendezvous
 *
 * Its timeout in milliseconds (0: none).
 *
 * Returns: its timeout in milliseconds (0: none)
 */
guint
accel_rendezvous_get_timeout_ms (AccelRendezvous *self)
{
  g_return_val_if_fail (ACCEL_IS_RENDEZVOUS (self), 0);
  return self->timeout_ms;
}

/**
 * accel_rendezvous_get_store:
 * @self: a rendezvous
 *
 * The store this process runs (process 0 does), or %NULL.
 *
 * Returns: (transfer none) (nullable): the store this process runs (process
 *   0 does), or %NULL
 */
AccelRendezvousStore *
accel_rendezvous_get_store (AccelRendezvous *self)
{
  g_return_val_if_fail (ACCEL_IS_RENDEZVOUS (self), NULL);
  return self->store;
}

GPtrArray *
_accel_rendezvous_exchange (AccelRendezvous *self,
                            const char *tag,
                            const guint *procs,
                            guint n_procs,
                            GBytes *data,
                            guint timeout_ms,
                            GError **error)
{
  g_autofree guint32 *procs32 = g_new (guint32, n_procs);
  for (guint i = 0; i < n_procs; i++)
    procs32[i] = procs[i];

  g_mutex_lock (&self->lock);
  if (self->broken)
    {
      g_propagate_error (error, g_error_copy (self->broken));
      g_mutex_unlock (&self->lock);
      return NULL;
    }
  guint64 id = self->next_request++;
  Request r = { 0 };
  g_hash_table_insert (self->requests, g_memdup2 (&id, sizeof id), &r);
  g_mutex_unlock (&self->lock);

  GVariant *payload = g_variant_new ("(s@au@ay)", tag,
                                     g_variant_new_fixed_array (G_VARIANT_TYPE_UINT32, procs32, n_procs,
                                                                sizeof (guint32)),
                                     g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, data, TRUE));
  GError *local = NULL;
  g_mutex_lock (&self->write_lock);
  gboolean sent = _accel_wire_write (self->socket, ACCEL_WIRE_EXCHANGE, id, payload,
                                     self->timeout_ms ? g_get_monotonic_time () + (gint64) self->timeout_ms * 1000 : 0,
                                     &local);
  g_mutex_unlock (&self->write_lock);

  /* The store fails an exchange at its own timeout; wait a little longer. */
  guint wait_ms = timeout_ms ? timeout_ms : self->timeout_ms;
  gint64 deadline = wait_ms ? g_get_monotonic_time () + ((gint64) wait_ms + 2000) * 1000 : 0;
  g_mutex_lock (&self->lock);
  while (sent && !r.done && self->broken == NULL)
    if (deadline && !g_cond_wait_until (&self->cond, &self->lock, deadline))
      break;
    else if (deadline == 0)
      g_cond_wait (&self->cond, &self->lock);
  g_hash_table_remove (self->requests, &id);
  GError *broken = self->broken && !r.done ? g_error_copy (self->broken) : NULL;
  g_mutex_unlock (&self->lock);

  if (!sent)
    {
      g_propagate_prefixed_error (error, local, "cannot reach the rendezvous store: ");
      g_clear_error (&broken);
      return NULL;
    }
  if (!r.done)
    {
      if (broken)
        g_propagate_error (error, broken);
      else
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_TIMED_OUT,
                     "exchange “%s”: no answer from the rendezvous store within %u ms", tag, wait_ms);
      return NULL;
    }
  g_clear_error (&broken);
  if (r.error)
    {
      g_propagate_error (error, r.error);
      return NULL;
    }
  g_autoptr(GVariant) result = r.result;
  if (g_variant_n_children (result) != n_procs)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                   "exchange “%s”: the store answered %" G_GSIZE_FORMAT " parts for %u processes", tag,
                   g_variant_n_children (result), n_procs);
      return NULL;
    }
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  for (guint i = 0; i < n_procs; i++)
    {
      g_autoptr(GVariant) child = g_variant_get_child_value (result, i);
      g_ptr_array_add (out, g_variant_get_data_as_bytes (child));
    }
  return out;
}

void
_accel_rendezvous_post_abort (AccelRendezvous *self, const char *prefix, const char *reason)
{
  g_autofree char *short_reason = g_strndup (reason ? reason : "", ACCEL_WIRE_MAX_REASON);
  g_mutex_lock (&self->write_lock);
  (void) _accel_wire_write (self->socket, ACCEL_WIRE_ABORT, 0, g_variant_new ("(ss)", prefix, short_reason),
                            g_get_monotonic_time () + G_USEC_PER_SEC, NULL);
  g_mutex_unlock (&self->write_lock);
}

guint
_accel_rendezvous_next_comm_index (AccelRendezvous *self)
{
  g_mutex_lock (&self->lock);
  guint index = self->next_comm++;
  g_mutex_unlock (&self->lock);
  return index;
}

const char *
_accel_rendezvous_get_job (AccelRendezvous *self)
{
  return self->job;
}

gsize
_accel_rendezvous_get_max_chunk (AccelRendezvous *self, guint n_procs)
{
  gsize room = self->max_message > ACCEL_WIRE_OVERHEAD ? self->max_message - ACCEL_WIRE_OVERHEAD : 0;
  /* Each part of a RESULT also costs a framing offset. */
  gsize each = n_procs ? room / n_procs : room;
  return each > 16 ? each - 16 : 0;
}

guint
_accel_rendezvous_add_listener (AccelRendezvous *self, AccelRendezvousListener func, gpointer user_data)
{
  g_rec_mutex_lock (&self->listener_lock);
  Listener l = { ++self->next_listener, func, user_data };
  g_array_append_val (self->listeners, l);
  g_rec_mutex_unlock (&self->listener_lock);
  return l.id;
}

void
_accel_rendezvous_remove_listener (AccelRendezvous *self, guint id)
{
  g_rec_mutex_lock (&self->listener_lock);
  for (guint i = 0; i < self->listeners->len; i++)
    if (g_array_index (self->listeners, Listener, i).id == id)
      {
        g_array_remove_index (self->listeners, i);
        break;
      }
  g_rec_mutex_unlock (&self->listener_lock);
}

gboolean
_accel_rendezvous_process_lost (AccelRendezvous *self, guint process, char **reason)
{
  g_mutex_lock (&self->lock);
  gboolean lost = process < self->world_size && self->lost[process];
  if (lost && reason)
    *reason = g_strdup (self->lost_reason[process]);
  g_mutex_unlock (&self->lock);
  return lost;
}

/**
 * accel_rendezvous_barrier:
 * @self: a rendezvous
 * @name: (nullable): names the barrier, for errors
 * @error: return location for a #GError
 *
 * Waits until every process of the job has called it (the n-th call of
 * each process meets the n-th of the others).
 *
 * Returns: %TRUE when all came; %FALSE with @error set when a process left
 *   or the timeout passed
 */
gboolean
accel_rendezvous_barrier (AccelRendezvous *self, const char *name, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_RENDEZVOUS (self), FALSE);

  g_mutex_lock (&self->lock);
  guint n = self->next_barrier++;
  g_mutex_unlock (&self->lock);
  g_autofree guint *procs = g_new (guint, self->world_size);
  for (guint p = 0; p < self->world_size; p++)
    procs[p] = p;
  g_autofree char *tag = g_strdup_printf ("%s/barrier/%u", self->job, n);
  g_autoptr(GBytes) empty = g_bytes_new_static ("", 0);
  g_autoptr(GPtrArray) all = _accel_rendezvous_exchange (self, tag, procs, self->world_size, empty,
                                                        self->timeout_ms, error);
  if (all == NULL)
    g_prefix_error (error, "barrier “%s”: ", name ? name : "");
  return all != NULL;
}
