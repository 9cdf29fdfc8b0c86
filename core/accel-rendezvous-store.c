/* accel-rendezvous-store.c: the small TCP store of a job's rendezvous.
 *
 * Process 0 of a job runs it (AccelRendezvous does, from ACCEL_MASTER_ADDR
 * and ACCEL_MASTER_PORT); every process, process 0 too, connects to it.
 * It joins the processes (each says HELLO with the job's token, its rank
 * and the world size; all are welcomed once all have come), and then moves
 * bytes among them: an EXCHANGE is an all-gather among a set of processes,
 * answered once each of them has given its part; an ABORT ends every
 * exchange of an incarnation and is told to every process; a process that
 * goes away (its connection closes, or it stays silent longer than the
 * timeout) ends every exchange it was part of, and is told to the others.
 *
 * It is a network listener, so it trusts nothing it reads: it binds only
 * the address it is given; it takes at most twice the world size of
 * connections at a time and, once the world is complete, no new process;
 * it wants the token when one is set (compared in constant time); it
 * refuses a message over the size limit before reading it, and one that is
 * malformed, with an ERROR and a closed connection; it keeps at most
 * MAX_PENDING unanswered exchanges per connection, so what it holds for a
 * connection is bounded; and an exchange not complete within the timeout
 * fails for every process in it.
 *
 * Threads: one accepts, one per connection reads (and answers what it
 * reads), one reaps exchanges past their deadline. Writes to a connection
 * are serialised by its own lock; the store's lock is never held while a
 * socket is written.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "accel-rendezvous-private.h"

#define MAX_PENDING 16
#define MAX_ABORTED 1024
#define POLL_US (100 * 1000)
/* How long stop waits for the messages already queued to be written. */
#define STOP_FLUSH_US (5 * G_USEC_PER_SEC)

typedef struct _Conn Conn;

struct _Conn {
  gint ref;
  AccelRendezvousStore *store;   /* outlives its connections: stop joins them */
  GSocket *socket;
  gint finished;                 /* atomic: its reader has returned */
  GMutex write_lock;
  int process;                   /* -1 until its HELLO was taken; under the store lock */
  guint pending;                 /* under the store lock */
  guint64 hello_request;
  gint closed;                   /* atomic */
};

typedef struct {
  char *tag;
  guint *procs;
  guint n_procs;
  GBytes **parts;                /* per entry of procs */
  Conn **conns;
  guint64 *requests;
  guint n_given;
  gint64 deadline;
} Exchange;

/* A message to send once the lock is released. */
typedef struct {
  Conn *conn;                    /* a reference */
  AccelWireKind kind;
  guint64 request;
  GVariant *payload;             /* floating or owned */
  gboolean close_after;
} Outgoing;

typedef struct {
  GThread *thread;
  Conn *conn;
} Worker;

/**
 * AccelRendezvousStore:
 *
 * The TCP store of a job of several processes: it joins them and moves the
 * bytes of their collectives' bootstrap and, for CPU devices, their data.
 * Process 0 of a job runs one (see #AccelRendezvous); tests and tools may
 * run one on its own.
 */
struct _AccelRendezvousStore {
  GObject parent_instance;

  GSocket *listener;
  guint16 port;
  guint world_size;
  char *token;
  guint timeout_ms;
  gsize max_message;
  char *job;

  GThread *accept_thread;
  GThread *reaper_thread;
  GPtrArray *workers;            /* Worker; the accept thread's, then stop's */
  gint stopping;                 /* atomic */
  GCancellable *wake;            /* cancelled by stop: the accept thread returns at once */

  GMutex lock;
  GCond cond;
  GPtrArray *conns;              /* every live connection (references) */
  Conn **joined;                 /* per process, or NULL */
  gboolean *lost;                /* per process */
  char **lost_reason;
  guint n_joined;
  guint n_refused;
  gboolean welcomed;
  GHashTable *exchanges;         /* tag -> Exchange */
  guint n_unsent;                /* messages queued (under the lock) and not yet flushed */
  GQueue aborted;                /* of (prefix, reason) pairs as char ** */
};

G_DEFINE_FINAL_TYPE (AccelRendezvousStore, accel_rendezvous_store, G_TYPE_OBJECT)

static Conn *
conn_ref (Conn *conn)
{
  g_atomic_int_inc (&conn->ref);
  return conn;
}

static void
conn_unref (Conn *conn)
{
  if (!g_atomic_int_dec_and_test (&conn->ref))
    return;
  g_clear_object (&conn->socket);
  g_mutex_clear (&conn->write_lock);
  g_free (conn);
}

static void
conn_close (Conn *conn)
{
  if (g_atomic_int_compare_and_exchange (&conn->closed, 0, 1))
    g_socket_shutdown (conn->socket, TRUE, TRUE, NULL);
}

static void
exchange_free (Exchange *x)
{
  for (guint i = 0; i < x->n_procs; i++)
    {
      g_clear_pointer (&x->parts[i], g_bytes_unref);
      if (x->conns[i])
        conn_unref (x->conns[i]);
    }
  g_free (x->parts);
  g_free (x->conns);
  g_free (x->requests);
  g_free (x->procs);
  g_free (x->tag);
  g_free (x);
}

static void
queue_out (GPtrArray *out, Conn *conn, AccelWireKind kind, guint64 request, GVariant *payload, gboolean close_after)
{
  Outgoing *o = g_new0 (Outgoing, 1);
  o->conn = conn_ref (conn);
  o->kind = kind;
  o->request = request;
  o->payload = g_variant_ref_sink (payload);
  o->close_after = close_after;
  conn->store->n_unsent++;
  g_ptr_array_add (out, o);
}

static GVariant *
error_payload (AccelError code, const char *message)
{
  return g_variant_new ("(us)", (guint32) code, message);
}

/* Sends what was queued under the lock; a connection that cannot take it
 * is closed (its reader then reports it gone). Stop waits for it. */
static void
flush_out (AccelRendezvousStore *self, GPtrArray *out)
{
  guint n = out->len;
  for (guint i = 0; i < out->len; i++)
    {
      Outgoing *o = out->pdata[i];
      if (!g_atomic_int_get (&o->conn->closed))
        {
          g_autoptr(GError) error = NULL;
          g_mutex_lock (&o->conn->write_lock);
          gint64 deadline = self->timeout_ms ? g_get_monotonic_time () + (gint64) self->timeout_ms * 1000 : 0;
          gboolean ok = _accel_wire_write (o->conn->socket, o->kind, o->request, o->payload, deadline, &error);
          g_mutex_unlock (&o->conn->write_lock);
          if (!ok || o->close_after)
            conn_close (o->conn);
        }
      g_variant_unref (o->payload);
      conn_unref (o->conn);
      g_free (o);
    }
  g_ptr_array_set_size (out, 0);
  if (n == 0)
    return;
  g_mutex_lock (&self->lock);
  self->n_unsent -= n;
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
}

/* Fails @x for every process that gave its part. Under the lock. */
static void
fail_exchange_locked (AccelRendezvousStore *self, Exchange *x, AccelError code, const char *message, GPtrArray *out)
{
  for (guint i = 0; i < x->n_procs; i++)
    if (x->conns[i])
      {
        queue_out (out, x->conns[i], ACCEL_WIRE_ERROR, x->requests[i], error_payload (code, message), FALSE);
        x->conns[i]->pending--;
      }
}

static gboolean
tag_has_prefix_locked (AccelRendezvousStore *self, const char *tag, const char **reason)
{
  for (GList *l = self->aborted.head; l; l = l->next)
    {
      char **pair = l->data;
      if (g_str_has_prefix (tag, pair[0]))
        {
          *reason = pair[1];
          return TRUE;
        }
    }
  return FALSE;
}

/* A process is gone: every exchange it is in fails, the others are told. */
static void
lose_process_locked (AccelRendezvousStore *self, guint process, const char *why, GPtrArray *out)
{
  if (self->lost[process])
    return;
  self->lost[process] = TRUE;
  self->lost_reason[process] = g_strdup (why);
  self->joined[process] = NULL;
  g_autofree char *message = g_strdup_printf ("process %u left the job: %s", process, why);

  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, self->exchanges);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Exchange *x = value;
      for (guint i = 0; i < x->n_procs; i++)
        if (x->procs[i] == process)
          {
            fail_exchange_locked (self, x, ACCEL_ERROR_DEVICE_FAILED, message, out);
            g_hash_table_iter_remove (&iter);
            break;
          }
    }
  for (guint p = 0; p < self->world_size; p++)
    if (self->joined[p])
      queue_out (out, self->joined[p], ACCEL_WIRE_NOTICE, 0,
                 g_variant_new ("(usus)", (guint32) ACCEL_WIRE_NOTICE_LOST, "", (guint32) process, why), FALSE);
}

static void
handle_hello (AccelRendezvousStore *self, Conn *conn, guint64 request, GVariant *payload, GPtrArray *out)
{
  const char *token;
  guint32 rank, world;
  g_variant_get (payload, "(&suu)", &token, &rank, &world);

  const char *refusal = NULL;
  g_autofree char *text = NULL;
  if (self->token && !_accel_wire_token_equal (token, self->token))
    refusal = "the job's token (ACCEL_RENDEZVOUS_TOKEN) does not match";
  else if (world != self->world_size)
    refusal = text = g_strdup_printf ("this job has %u processes, not %u", self->world_size, world);
  else if (rank >= self->world_size)
    refusal = text = g_strdup_printf ("rank %u is not below the world size %u", rank, self->world_size);
  else if (self->lost[rank])
    refusal = text = g_strdup_printf ("process %u has already left the job (%s); restart the job", rank,
                                      self->lost_reason[rank]);
  else if (self->joined[rank] || self->welcomed)
    refusal = text = g_strdup_printf ("process %u has already joined", rank);

  if (refusal)
    {
      self->n_refused++;
      queue_out (out, conn, ACCEL_WIRE_ERROR, request, error_payload (ACCEL_ERROR_INVALID_ARGUMENT, refusal), TRUE);
      return;
    }
  conn->process = (int) rank;
  conn->hello_request = request;
  self->joined[rank] = conn;
  self->n_joined++;
  g_cond_broadcast (&self->cond);
  if (self->n_joined < self->world_size)
    return;
  self->welcomed = TRUE;
  for (guint p = 0; p < self->world_size; p++)
    queue_out (out, self->joined[p], ACCEL_WIRE_WELCOME, self->joined[p]->hello_request,
               g_variant_new ("(su)", self->job, (guint32) self->max_message), FALSE);
}

static gboolean
procs_valid (AccelRendezvousStore *self, const guint32 *procs, gsize n, guint me)
{
  gboolean has_me = FALSE;
  if (n == 0 || n > self->world_size)
    return FALSE;
  for (gsize i = 0; i < n; i++)
    {
      if (procs[i] >= self->world_size || (i > 0 && procs[i] <= procs[i - 1]))
        return FALSE;
      has_me |= procs[i] == me;
    }
  return has_me;
}

static void
handle_exchange (AccelRendezvousStore *self, Conn *conn, guint64 request, GVariant *payload, GPtrArray *out)
{
  const char *tag;
  g_autoptr(GVariant) procs_v = NULL, data_v = NULL;
  g_variant_get (payload, "(&s@au@ay)", &tag, &procs_v, &data_v);
  gsize n = 0;
  const guint32 *procs = g_variant_get_fixed_array (procs_v, &n, sizeof (guint32));
  const char *reason = NULL;
  g_autofree char *text = NULL;

  if (strlen (tag) > ACCEL_WIRE_MAX_NAME || !procs_valid (self, procs, n, (guint) conn->process))
    {
      queue_out (out, conn, ACCEL_WIRE_ERROR, request,
                 error_payload (ACCEL_ERROR_INVALID_ARGUMENT, "malformed exchange (tag or processes)"), TRUE);
      return;
    }
  if (conn->pending >= MAX_PENDING)
    {
      queue_out (out, conn, ACCEL_WIRE_ERROR, request,
                 error_payload (ACCEL_ERROR_INVALID_ARGUMENT, "too many exchanges in flight on one connection"), TRUE);
      return;
    }
  if (tag_has_prefix_locked (self, tag, &reason))
    {
      text = g_strdup_printf ("the incarnation of “%s” was aborted: %s", tag, reason);
      queue_out (out, conn, ACCEL_WIRE_ERROR, request, error_payload (ACCEL_ERROR_FAILED, text), FALSE);
      return;
    }
  for (gsize i = 0; i < n; i++)
    if (self->lost[procs[i]])
      {
        text = g_strdup_printf ("process %u left the job: %s", procs[i], self->lost_reason[procs[i]]);
        queue_out (out, conn, ACCEL_WIRE_ERROR, request, error_payload (ACCEL_ERROR_DEVICE_FAILED, text), FALSE);
        return;
      }

  Exchange *x = g_hash_table_lookup (self->exchanges, tag);
  if (x == NULL)
    {
      x = g_new0 (Exchange, 1);
      x->tag = g_strdup (tag);
      x->n_procs = (guint) n;
      x->procs = g_new (guint, n);
      for (gsize i = 0; i < n; i++)
        x->procs[i] = procs[i];
      x->parts = g_new0 (GBytes *, n);
      x->conns = g_new0 (Conn *, n);
      x->requests = g_new0 (guint64, n);
      x->deadline = self->timeout_ms ? g_get_monotonic_time () + (gint64) self->timeout_ms * 1000 : 0;
      g_hash_table_insert (self->exchanges, x->tag, x);
    }
  gboolean same = x->n_procs == n;
  for (gsize i = 0; same && i < n; i++)
    same = x->procs[i] == procs[i];
  guint slot = 0;
  while (slot < x->n_procs && x->procs[slot] != (guint) conn->process)
    slot++;
  if (!same || slot == x->n_procs || x->conns[slot])
    {
      text = g_strdup_printf ("exchange “%s”: this process %s", tag,
                              !same ? "names other processes than the others do" : "already gave its part");
      queue_out (out, conn, ACCEL_WIRE_ERROR, request, error_payload (ACCEL_ERROR_INVALID_ARGUMENT, text), FALSE);
      return;
    }
  x->parts[slot] = g_variant_get_data_as_bytes (data_v);
  x->conns[slot] = conn_ref (conn);
  x->requests[slot] = request;
  x->n_given++;
  conn->pending++;
  if (x->n_given < x->n_procs)
    return;

  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("aay"));
  for (guint i = 0; i < x->n_procs; i++)
    g_variant_builder_add_value (&b, g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING, x->parts[i], TRUE));
  GVariant *result = g_variant_ref_sink (g_variant_builder_end (&b));
  for (guint i = 0; i < x->n_procs; i++)
    {
      queue_out (out, x->conns[i], ACCEL_WIRE_RESULT, x->requests[i], result, FALSE);
      x->conns[i]->pending--;
    }
  g_variant_unref (result);
  g_hash_table_remove (self->exchanges, x->tag);
}

static void
handle_abort (AccelRendezvousStore *self, Conn *conn, GVariant *payload, GPtrArray *out)
{
  const char *prefix, *reason;
  g_variant_get (payload, "(&s&s)", &prefix, &reason);
  if (strlen (prefix) == 0 || strlen (prefix) > ACCEL_WIRE_MAX_NAME)
    {
      queue_out (out, conn, ACCEL_WIRE_ERROR, 0,
                 error_payload (ACCEL_ERROR_INVALID_ARGUMENT, "malformed abort (prefix)"), TRUE);
      return;
    }
  const char *known = NULL;
  if (tag_has_prefix_locked (self, prefix, &known))
    return;
  char **pair = g_new0 (char *, 3);
  pair[0] = g_strdup (prefix);
  pair[1] = g_strndup (reason, ACCEL_WIRE_MAX_REASON);
  g_queue_push_tail (&self->aborted, pair);
  if (self->aborted.length > MAX_ABORTED)
    g_strfreev (g_queue_pop_head (&self->aborted));

  g_autofree char *message = g_strdup_printf ("process %d aborted “%s”: %s", conn->process, prefix, pair[1]);
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, self->exchanges);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (g_str_has_prefix (((Exchange *) value)->tag, prefix))
      {
        fail_exchange_locked (self, value, ACCEL_ERROR_FAILED, message, out);
        g_hash_table_iter_remove (&iter);
      }
  for (guint p = 0; p < self->world_size; p++)
    if (self->joined[p])
      queue_out (out, self->joined[p], ACCEL_WIRE_NOTICE, 0,
                 g_variant_new ("(usus)", (guint32) ACCEL_WIRE_NOTICE_ABORTED, prefix, (guint32) conn->process,
                                pair[1]), FALSE);
}

/* One connection's reader. */
static gpointer
conn_thread (gpointer data)
{
  Conn *conn = data;
  AccelRendezvousStore *self = conn->store;
  g_autoptr(GPtrArray) out = g_ptr_array_new ();
  g_autofree char *why = NULL;

  while (!g_atomic_int_get (&self->stopping) && !g_atomic_int_get (&conn->closed))
    {
      AccelWireKind kind;
      guint64 request = 0;
      g_autoptr(GVariant) payload = NULL;
      g_autoptr(GError) error = NULL;
      gint64 deadline = g_get_monotonic_time () + (gint64) self->timeout_ms * 1000;

      if (!_accel_wire_read (conn->socket, self->max_message, self->timeout_ms ? deadline : 0, NULL, &kind,
                             &request, &payload, &error))
        {
          gboolean protocol = error->domain == G_IO_ERROR
                              && (error->code == G_IO_ERROR_INVALID_DATA
                                  || error->code == G_IO_ERROR_MESSAGE_TOO_LARGE);
          why = g_strdup (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT)
                            ? "it stayed silent longer than the timeout" : error->message);
          if (protocol)
            {
              g_mutex_lock (&conn->write_lock);
              (void) _accel_wire_write (conn->socket, ACCEL_WIRE_ERROR, 0,
                                        error_payload (ACCEL_ERROR_INVALID_ARGUMENT, error->message),
                                        g_get_monotonic_time () + G_USEC_PER_SEC, NULL);
              g_mutex_unlock (&conn->write_lock);
            }
          break;
        }

      g_mutex_lock (&self->lock);
      if (conn->process < 0 && kind != ACCEL_WIRE_HELLO)
        queue_out (out, conn, ACCEL_WIRE_ERROR, request,
                   error_payload (ACCEL_ERROR_INVALID_ARGUMENT, "the first message must be a HELLO"), TRUE);
      else if (kind == ACCEL_WIRE_HELLO && conn->process >= 0)
        queue_out (out, conn, ACCEL_WIRE_ERROR, request,
                   error_payload (ACCEL_ERROR_INVALID_ARGUMENT, "a second HELLO"), TRUE);
      else if (kind == ACCEL_WIRE_HELLO)
        handle_hello (self, conn, request, payload, out);
      else if (kind == ACCEL_WIRE_PING)
        queue_out (out, conn, ACCEL_WIRE_PONG, request, g_variant_new ("()"), FALSE);
      else if (!self->welcomed)
        queue_out (out, conn, ACCEL_WIRE_ERROR, request,
                   error_payload (ACCEL_ERROR_INVALID_ARGUMENT, "the job has not joined yet"), TRUE);
      else if (kind == ACCEL_WIRE_EXCHANGE)
        handle_exchange (self, conn, request, payload, out);
      else if (kind == ACCEL_WIRE_ABORT)
        handle_abort (self, conn, payload, out);
      else
        queue_out (out, conn, ACCEL_WIRE_ERROR, request,
                   error_payload (ACCEL_ERROR_INVALID_ARGUMENT, "a message only the store sends"), TRUE);
      g_mutex_unlock (&self->lock);
      flush_out (self, out);
    }

  conn_close (conn);
  g_mutex_lock (&self->lock);
  if (conn->process >= 0 && self->joined[conn->process] == conn)
    {
      if (self->welcomed)
        lose_process_locked (self, (guint) conn->process, why ? why : "its connection closed", out);
      else
        {
          /* Before the job is complete a process may come again. */
          self->joined[conn->process] = NULL;
          self->n_joined--;
        }
    }
  if (g_ptr_array_remove (self->conns, conn))
    conn_unref (conn);
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
  flush_out (self, out);
  g_atomic_int_set (&conn->finished, 1);
  conn_unref (conn);
  return NULL;
}

static void
join_workers (AccelRendezvousStore *self, gboolean all)
{
  for (guint i = 0; i < self->workers->len;)
    {
      Worker *w = self->workers->pdata[i];
      if (!all && !g_atomic_int_get (&w->conn->finished))
        {
          i++;
          continue;
        }
      g_thread_join (w->thread);
      conn_unref (w->conn);
      g_free (w);
      g_ptr_array_remove_index_fast (self->workers, i);
    }
}

static gpointer
accept_thread (gpointer data)
{
  AccelRendezvousStore *self = data;

  while (!g_atomic_int_get (&self->stopping))
    {
      join_workers (self, FALSE);
      if (!g_socket_condition_timed_wait (self->listener, G_IO_IN, POLL_US, self->wake, NULL))
        continue;
      g_autoptr(GSocket) socket = g_socket_accept (self->listener, NULL, NULL);
      if (socket == NULL)
        continue;
      g_socket_set_blocking (socket, FALSE);
      g_socket_set_option (socket, IPPROTO_TCP, TCP_NODELAY, 1, NULL);

      g_mutex_lock (&self->lock);
      gboolean full = self->conns->len >= 2 * self->world_size + 2 || self->welcomed;
      if (full)
        self->n_refused++;
      g_mutex_unlock (&self->lock);
      if (full)
        {
          (void) _accel_wire_write (socket, ACCEL_WIRE_ERROR, 0,
                                    error_payload (ACCEL_ERROR_INVALID_ARGUMENT,
                                                   "the store takes no more connections"),
                                    g_get_monotonic_time () + POLL_US, NULL);
          g_socket_close (socket, NULL);
          continue;
        }

      Conn *conn = g_new0 (Conn, 1);
      conn->ref = 3;   /* the list's, the thread's and the worker's */
      conn->store = self;
      conn->socket = g_steal_pointer (&socket);
      conn->process = -1;
      g_mutex_init (&conn->write_lock);
      g_mutex_lock (&self->lock);
      g_ptr_array_add (self->conns, conn);
      g_mutex_unlock (&self->lock);
      Worker *w = g_new0 (Worker, 1);
      w->conn = conn;
      w->thread = g_thread_new ("accel-store-conn", conn_thread, conn);
      g_ptr_array_add (self->workers, w);
    }
  return NULL;
}

/* Fails exchanges past their deadline. */
static gpointer
reaper_thread (gpointer data)
{
  AccelRendezvousStore *self = data;
  g_autoptr(GPtrArray) out = g_ptr_array_new ();

  g_mutex_lock (&self->lock);
  while (!g_atomic_int_get (&self->stopping))
    {
      g_cond_wait_until (&self->cond, &self->lock, g_get_monotonic_time () + POLL_US);
      gint64 now = g_get_monotonic_time ();
      GHashTableIter iter;
      gpointer value;
      g_hash_table_iter_init (&iter, self->exchanges);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        {
          Exchange *x = value;
          if (x->deadline == 0 || now < x->deadline)
            continue;
          g_autoptr(GString) missing = g_string_new (NULL);
          for (guint i = 0; i < x->n_procs; i++)
            if (x->conns[i] == NULL)
              g_string_append_printf (missing, "%s%u", missing->len ? ", " : "", x->procs[i]);
          g_autofree char *message = g_strdup_printf ("exchange “%s”: process(es) %s gave nothing within %u ms",
                                                      x->tag, missing->str, self->timeout_ms);
          fail_exchange_locked (self, x, ACCEL_ERROR_TIMED_OUT, message, out);
          g_hash_table_iter_remove (&iter);
        }
      if (out->len)
        {
          g_mutex_unlock (&self->lock);
          flush_out (self, out);
          g_mutex_lock (&self->lock);
        }
    }
  g_mutex_unlock (&self->lock);
  return NULL;
}

static void
accel_rendezvous_store_finalize (GObject *object)
{
  AccelRendezvousStore *self = ACCEL_RENDEZVOUS_STORE (object);

  accel_rendezvous_store_stop (self);
  g_clear_object (&self->listener);
  g_clear_object (&self->wake);
  g_ptr_array_unref (self->conns);
  g_ptr_array_unref (self->workers);
  g_hash_table_unref (self->exchanges);
  g_queue_clear_full (&self->aborted, (GDestroyNotify) g_strfreev);
  for (guint p = 0; p < self->world_size; p++)
    g_free (self->lost_reason[p]);
  g_free (self->lost_reason);
  g_free (self->lost);
  g_free (self->joined);
  g_free (self->token);
  g_free (self->job);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  G_OBJECT_CLASS (accel_rendezvous_store_parent_class)->finalize (object);
}

static void
accel_rendezvous_store_class_init (AccelRendezvousStoreClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = accel_rendezvous_store_finalize;
}

static void
accel_rendezvous_store_init (AccelRendezvousStore *self)
{
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  self->conns = g_ptr_array_new ();
  self->workers = g_ptr_array_new ();
  self->exchanges = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) exchange_free);
  g_queue_init (&self->aborted);
  self->wake = g_cancellable_new ();
}

static GInetAddress *
resolve (const char *address, GError **error)
{
  GInetAddress *inet = g_inet_address_new_from_string (address);
  if (inet)
    return inet;
  g_autoptr(GResolver) resolver = g_resolver_get_default ();
  GList *list = g_resolver_lookup_by_name (resolver, address, NULL, error);
  if (list == NULL)
    {
      g_prefix_error (error, "cannot resolve “%s”: ", address);
      return NULL;
    }
  inet = g_object_ref (list->data);
  g_resolver_free_addresses (list);
  return inet;
}

/**
 * accel_rendezvous_store_new:
 * @address: the address to listen on, and no other (`127.0.0.1`, a host's
 *   own address or name; never a wildcard unless given one)
 * @port: the TCP port, or 0 for one the system picks
 *   (accel_rendezvous_store_get_port() tells it)
 * @world_size: how many processes the job has (1 to 65536)
 * @token: (nullable): the job's shared secret; when set, a process must
 *   say it to join
 * @timeout_ms: how long a connection may stay silent and an exchange stay
 *   incomplete, in milliseconds (0: no limit)
 * @error: return location for a #GError
 *
 * Starts a store listening on @address:@port. Its largest message is
 * `ACCEL_RENDEZVOUS_MAX_MESSAGE` bytes (default 8 MiB).
 *
 * Returns: (transfer full): the store, or %NULL with @error set
 */
AccelRendezvousStore *
accel_rendezvous_store_new (const char *address,
                            guint16 port,
                            guint world_size,
                            const char *token,
                            guint timeout_ms,
                            GError **error)
{
  g_return_val_if_fail (address != NULL, NULL);

  if (world_size == 0 || world_size > 65536)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "a job has 1 to 65536 processes, not %u", world_size);
      return NULL;
    }
  guint64 max_message;
  if (!_accel_wire_env_uint ("ACCEL_RENDEZVOUS_MAX_MESSAGE", G_MAXINT32, ACCEL_WIRE_DEFAULT_MAX_MESSAGE,
                             &max_message, error))
    return NULL;
  g_autoptr(GInetAddress) inet = resolve (address, error);
  if (inet == NULL)
    return NULL;
  g_autoptr(GSocketAddress) where = g_inet_socket_address_new (inet, port);
  g_autoptr(GSocket) listener = g_socket_new (g_inet_address_get_family (inet), G_SOCKET_TYPE_STREAM,
                                              G_SOCKET_PROTOCOL_TCP, error);
  if (listener == NULL || !g_socket_bind (listener, where, TRUE, error) || !g_socket_listen (listener, error))
    {
      g_prefix_error (error, "the rendezvous store cannot listen on %s:%u: ", address, port);
      return NULL;
    }
  g_socket_set_blocking (listener, FALSE);
  g_autoptr(GSocketAddress) bound = g_socket_get_local_address (listener, error);
  if (bound == NULL)
    return NULL;

  AccelRendezvousStore *self = g_object_new (ACCEL_TYPE_RENDEZVOUS_STORE, NULL);
  self->listener = g_steal_pointer (&listener);
  self->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  self->world_size = world_size;
  self->token = token && *token ? g_strndup (token, ACCEL_WIRE_MAX_NAME) : NULL;
  self->timeout_ms = timeout_ms;
  self->max_message = MAX ((gsize) max_message, ACCEL_WIRE_MIN_MAX_MESSAGE);
  self->joined = g_new0 (Conn *, world_size);
  self->lost = g_new0 (gboolean, world_size);
  self->lost_reason = g_new0 (char *, world_size);
  guint32 a = g_random_int (), b = g_random_int ();
  self->job = g_strdup_printf ("job-%08x%08x", a, b);
  self->accept_thread = g_thread_new ("accel-store-accept", accept_thread, self);
  self->reaper_thread = g_thread_new ("accel-store-reaper", reaper_thread, self);
  return self;
}

/**
 * accel_rendezvous_store_get_port:
 * @self: a store
 *
 * The TCP port it listens on.
 *
 * Returns: the TCP port it listens on
 */
guint16
accel_rendezvous_store_get_port (AccelRendezvousStore *self)
{
  g_return_val_if_fail (ACCEL_IS_RENDEZVOUS_STORE (self), 0);
  return self->port;
}

/**
 * accel_rendezvous_store_get_world_size:
 * @self: a store
 *
 * How many processes the job has.
 *
 * Returns: how many processes the job has
 */
guint
accel_rendezvous_store_get_world_size (AccelRendezvousStore *self)
{
  g_return_val_if_fail (ACCEL_IS_RENDEZVOUS_STORE (self), 0);
  return self->world_size;
}

/**
 * accel_rendezvous_store_get_n_joined:
 * @self: a store
 *
 * How many processes have joined (and not left).
 *
 * Returns: how many processes have joined (and not left)
 */
guint
accel_rendezvous_store_get_n_joined (AccelRendezvousStore *self)
{
  g_return_val_if_fail (ACCEL_IS_RENDEZVOUS_STORE (self), 0);
  g_mutex_lock (&self->lock);
  guint n = 0;
  for (guint p = 0; p < self->world_size; p++)
    n += self->joined[p] != NULL;
  g_mutex_unlock (&self->lock);
  return n;
}

/**
 * accel_rendezvous_store_get_n_refused:
 * @self: a store
 *
 * How many connections and joins it has refused.
 *
 * Returns: how many connections and joins it has refused
 */
guint
accel_rendezvous_store_get_n_refused (AccelRendezvousStore *self)
{
  g_return_val_if_fail (ACCEL_IS_RENDEZVOUS_STORE (self), 0);
  g_mutex_lock (&self->lock);
  guint n = self->n_refused;
  g_mutex_unlock (&self->lock);
  return n;
}

/**
 * accel_rendezvous_store_stop:
 * @self: a store
 *
 * Stops listening and closes every connection; the processes of the job
 * see the store gone. Answers the store had already given (the result of
 * the job's last barrier, say) are written first, waiting up to 5 seconds
 * for them. Idempotent; also done when the store is released.
 */
void
accel_rendezvous_store_stop (AccelRendezvousStore *self)
{
  g_return_if_fail (ACCEL_IS_RENDEZVOUS_STORE (self));

  if (g_atomic_int_get (&self->stopping))
    return;
  /* What was answered before the stop reaches its process before the
   * connections close: the last barrier of a job completes when the last
   * process gives its part, and process 0 may see its own answer and stop
   * the store while another process's answer is still being written. Waited
   * for before `stopping` is set, since each reader closes its connection
   * once it sees that. */
  g_mutex_lock (&self->lock);
  gint64 flush_deadline = g_get_monotonic_time () + STOP_FLUSH_US;
  while (self->n_unsent > 0)
    if (!g_cond_wait_until (&self->cond, &self->lock, flush_deadline))
      break;
  g_mutex_unlock (&self->lock);

  if (!g_atomic_int_compare_and_exchange (&self->stopping, 0, 1))
    return;
  g_cancellable_cancel (self->wake);
  g_clear_pointer (&self->accept_thread, g_thread_join);
  g_mutex_lock (&self->lock);
  g_cond_broadcast (&self->cond);
  for (guint i = 0; i < self->conns->len; i++)
    conn_close (self->conns->pdata[i]);
  g_mutex_unlock (&self->lock);
  join_workers (self, TRUE);
  g_clear_pointer (&self->reaper_thread, g_thread_join);
  g_hash_table_remove_all (self->exchanges);
  if (self->listener)
    g_socket_close (self->listener, NULL);
}
