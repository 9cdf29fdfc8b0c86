/* accel-remote-connection.c: the application's side of one
 * `accel-device-host` process.
 *
 * Requests that expect an answer get an id and a Pending entry in a table;
 * the entry leaves the table exactly once, under the lock: taken by the
 * reader thread when the answer comes, or stolen with all the others when
 * the connection dies (host exit, reported lost context, missed deadline,
 * unreadable channel, or close). Whoever takes an entry completes it, so
 * every AccelWork completes exactly once.
 *
 * Bulk data goes through the channel's arena in chunks. The arena is a ring
 * allocated in request order and released as answers come, in any order: a
 * region frees its space once every region before it is free too. A sender
 * that finds the arena full waits for answers, which the reader delivers
 * without needing the sender's thread.
 *
 * Behind the chunk ring, the shared memory may hold a region of host
 * memory handed to the application (accel_remote_device_alloc_host_memory())
 * with a first-fit allocator. A transfer whose host side lies there is
 * sent as one request naming that range: the host reads or writes it in
 * place (for CUDA: DMA, the whole shared memory being pinned), and this
 * process copies nothing.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <glib-unix.h>

#include "accel-remote-private.h"
#include "accel-channel.h"

#define RING_SIZE (1 << 20)
#define ARENA_ALIGN 256
#define CLOSE_GRACE_US (200 * 1000)
#define EXIT_GRACE_US (5 * G_USEC_PER_SEC)

typedef enum {
  PENDING_WORK,
  PENDING_CHUNK,
  PENDING_SYNC,
} PendingType;

/* A WRITE or READ split into chunks. */
typedef struct {
  AccelWork *work;
  AccelWorkKind kind;
  guint8 *host;
  guint remaining;              /* chunks unanswered, +1 while still sending; under lock */
  GError *error;                /* the first failure */
} Transfer;

typedef struct {
  gboolean done;
  GVariant *reply;
  GError *error;
} SyncCall;

typedef struct {
  guint64 start;
  guint64 end;
  gboolean done;
} Region;

typedef struct {
  guint64 start;                /* offset in the host memory region */
  guint64 size;
} HostBlock;

typedef struct {
  PendingType type;
  AccelWork *work;
  Transfer *xfer;
  Region *region;               /* NULL: the transfer is in place in host memory */
  gsize host_offset;
  gsize length;
  SyncCall *sync;
} Pending;

struct _AccelRemoteConnection {
  gint ref_count;
  AccelDevice *device;          /* unowned: used only to complete work, which holds it */
  GWeakRef device_ref;          /* to tell the device of a death while idle */
  guint generation;             /* the device's, while this host serves it */
  char *device_name;            /* for messages: the device may be gone before the threads */
  char *hosted_device;
  AccelChannel *channel;
  guint8 *arena;
  gsize arena_size;             /* the chunk ring's part of the shared memory */
  guint8 *host_memory;          /* the application's part, after it */
  gsize host_memory_size;
  gsize chunk_size;
  GSubprocess *process;
  GPid pid;
  int sock;
  int stop_pipe[2];
  GVariant *info;
  guint deadline_ms;            /* atomic */
  gint host_gone;               /* atomic: the host's end of the socket closed */

  GMutex send_lock;             /* serialises senders of requests */

  GMutex lock;                  /* guards what follows */
  GCond cond;                   /* signalled only when someone waits */
  guint waiters;
  GHashTable *pending;          /* id -> Pending */
  guint64 next_id;
  gboolean dead;
  gboolean closing;             /* the device itself closes this connection */
  GError *death;
  gint64 busy_since;            /* when the table last became non-empty */
  guint completing;             /* entries taken and not yet completed */
  guint64 arena_head;
  guint64 arena_tail;
  GQueue regions;
  GList *host_free;             /* HostBlock, by start: free ranges of host memory */
  GHashTable *host_used;        /* start -> size */

  GPtrArray *table;             /* scratch for buffer tables; device thread only */
  GThread *reader;
  GThread *watcher;
};

static void mark_dead (AccelRemoteConnection *self, const GError *reason, gboolean kill);

/* Under the lock. A completion does not pay for a wake-up nobody waits for. */
static void
wake_waiters (AccelRemoteConnection *self)
{
  if (self->waiters > 0)
    g_cond_broadcast (&self->cond);
}

static void
wait_locked (AccelRemoteConnection *self)
{
  self->waiters++;
  g_cond_wait (&self->cond, &self->lock);
  self->waiters--;
}

AccelRemoteConnection *
_accel_remote_connection_ref (AccelRemoteConnection *self)
{
  g_atomic_int_inc (&self->ref_count);
  return self;
}

static void
join_or_detach (GThread *thread)
{
  if (thread == NULL)
    return;
  if (thread == g_thread_self ())
    g_thread_unref (thread);
  else
    g_thread_join (thread);
}

void
_accel_remote_connection_unref (AccelRemoteConnection *self)
{
  if (self == NULL || !g_atomic_int_dec_and_test (&self->ref_count))
    return;

  if (self->process)
    {
      /* GLib reaps it when it has gone: its child watch keeps it. */
      g_subprocess_force_exit (self->process);
      g_object_unref (self->process);
    }
  /* Both threads have dropped their references: they are at their end. */
  join_or_detach (self->reader);
  join_or_detach (self->watcher);
  if (self->sock >= 0)
    close (self->sock);
  if (self->stop_pipe[0] >= 0)
    close (self->stop_pipe[0]);
  if (self->stop_pipe[1] >= 0)
    close (self->stop_pipe[1]);
  _accel_channel_free (self->channel);
  g_clear_pointer (&self->info, g_variant_unref);
  g_weak_ref_clear (&self->device_ref);
  g_clear_error (&self->death);
  g_hash_table_unref (self->pending);
  g_ptr_array_unref (self->table);
  g_queue_clear_full (&self->regions, g_free);
  g_list_free_full (self->host_free, g_free);
  g_hash_table_unref (self->host_used);
  g_mutex_clear (&self->send_lock);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  g_free (self->hosted_device);
  g_free (self->device_name);
  g_free (self);
}

GVariant *
_accel_remote_connection_get_info (AccelRemoteConnection *self)
{
  return self->info;
}

/* 0 once the host is known to be gone (or about to be killed). */
GPid
_accel_remote_connection_get_pid (AccelRemoteConnection *self)
{
  g_mutex_lock (&self->lock);
  GPid pid = self->dead ? 0 : self->pid;
  g_mutex_unlock (&self->lock);
  return pid;
}

void
_accel_remote_connection_set_deadline_ms (AccelRemoteConnection *self, guint deadline_ms)
{
  g_atomic_int_set (&self->deadline_ms, deadline_ms);
  /* The reader may be asleep for the old deadline. */
  _accel_channel_wake (self->channel);
}

static GError *
poisoned (AccelRemoteConnection *self, const char *what)
{
  return g_error_new (ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED, "%s: %s", self->device_name, what);
}

/* Why the process ended, once it has. */
static char *
describe_end (AccelRemoteConnection *self)
{
  g_subprocess_force_exit (self->process);
  g_subprocess_wait (self->process, NULL, NULL);
  if (g_subprocess_get_if_signaled (self->process))
    {
      int sig = g_subprocess_get_term_sig (self->process);
      return g_strdup_printf ("was killed by signal %d (%s)", sig, g_strsignal (sig));
    }
  if (g_subprocess_get_if_exited (self->process))
    return g_strdup_printf ("exited with status %d", g_subprocess_get_exit_status (self->process));
  return g_strdup ("ended");
}

/* Arena. */

static Region *
arena_alloc (AccelRemoteConnection *self, gsize length, GError **error)
{
  guint64 len = (length + ARENA_ALIGN - 1) & ~(guint64) (ARENA_ALIGN - 1);
  guint64 pad;

  g_mutex_lock (&self->lock);
  for (;;)
    {
      if (self->dead)
        {
          g_set_error_literal (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED, self->death->message);
          g_mutex_unlock (&self->lock);
          return NULL;
        }
      guint64 pos = self->arena_head % self->arena_size;
      /* A region never wraps: skip to the start of the next lap. */
      pad = pos + len > self->arena_size ? self->arena_size - pos : 0;
      if (self->arena_head + pad + len - self->arena_tail <= self->arena_size)
        break;
      wait_locked (self);
    }
  Region *r = g_new (Region, 1);
  r->start = self->arena_head + pad;
  r->end = r->start + len;
  r->done = FALSE;
  g_queue_push_tail (&self->regions, r);
  self->arena_head = r->end;
  g_mutex_unlock (&self->lock);
  return r;
}

static void
arena_release (AccelRemoteConnection *self, Region *region)
{
  g_mutex_lock (&self->lock);
  region->done = TRUE;
  Region *head;
  while ((head = g_queue_peek_head (&self->regions)) != NULL && head->done)
    {
      self->arena_tail = head->end;
      g_free (g_queue_pop_head (&self->regions));
    }
  wake_waiters (self);
  g_mutex_unlock (&self->lock);
}

static guint8 *
region_data (AccelRemoteConnection *self, Region *region)
{
  return self->arena + region->start % self->arena_size;
}

/* Pending entries. */

static gboolean
register_pending (AccelRemoteConnection *self, Pending *p, guint64 *id, GError **error)
{
  g_mutex_lock (&self->lock);
  if (self->dead)
    {
      g_set_error_literal (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED, self->death->message);
      g_mutex_unlock (&self->lock);
      return FALSE;
    }
  *id = ++self->next_id;
  if (g_hash_table_size (self->pending) == 0)
    self->busy_since = g_get_monotonic_time ();
  g_hash_table_insert (self->pending, GSIZE_TO_POINTER (*id), p);
  if (p->xfer)
    p->xfer->remaining++;
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static void
transfer_release (AccelRemoteConnection *self, Transfer *xfer, GError *error)
{
  g_mutex_lock (&self->lock);
  if (error && xfer->error == NULL)
    xfer->error = g_steal_pointer (&error);
  gboolean done = --xfer->remaining == 0;
  g_mutex_unlock (&self->lock);
  g_clear_error (&error);
  if (done)
    {
      accel_device_complete_work (self->device, xfer->work, xfer->error);
      g_free (xfer);
    }
}

/* Completes an entry taken out of the table. Takes @error. */
static void
complete_pending (AccelRemoteConnection *self, Pending *p, GVariant *reply, GError *error)
{
  switch (p->type)
    {
    case PENDING_WORK:
      accel_device_complete_work (self->device, p->work, error);
      break;
    case PENDING_CHUNK:
      if (p->region)
        {
          if (error == NULL && p->xfer->kind == ACCEL_WORK_READ)
            memcpy (p->xfer->host + p->host_offset, region_data (self, p->region), p->length);
          arena_release (self, p->region);
        }
      transfer_release (self, p->xfer, error);
      break;
    case PENDING_SYNC:
      g_mutex_lock (&self->lock);
      p->sync->reply = reply ? g_variant_ref (reply) : NULL;
      p->sync->error = error;
      p->sync->done = TRUE;
      wake_waiters (self);
      g_mutex_unlock (&self->lock);
      break;
    }
  g_free (p);
}

static void
done_completing (AccelRemoteConnection *self, guint n)
{
  g_mutex_lock (&self->lock);
  self->completing -= n;
  wake_waiters (self);
  g_mutex_unlock (&self->lock);
}

/* Fails everything in flight, once; with @kill the process is killed too. */
static void
mark_dead (AccelRemoteConnection *self, const GError *reason, gboolean kill)
{
  g_mutex_lock (&self->lock);
  if (self->dead)
    {
      g_mutex_unlock (&self->lock);
      if (kill)
        g_subprocess_force_exit (self->process);
      return;
    }
  self->dead = TRUE;
  self->death = g_error_copy (reason);
  gboolean report = !self->closing;
  GList *stolen = g_hash_table_get_values (self->pending);
  g_hash_table_steal_all (self->pending);
  guint n = g_list_length (stolen);
  self->completing += n;
  wake_waiters (self);
  g_mutex_unlock (&self->lock);

  g_debug ("%s: host of %s is gone: %s", self->device_name, self->hosted_device, reason->message);
  _accel_channel_interrupt (self->channel);
  if (kill)
    g_subprocess_force_exit (self->process);
  for (GList *l = stolen; l; l = l->next)
    complete_pending (self, l->data, NULL, g_error_copy (reason));
  g_list_free (stolen);
  done_completing (self, n);

  /* The device learns of the death even if nothing was in flight (with
   * work in flight, the work's CONTEXT_POISONED asks for the same restart,
   * once). Not when the device closes us itself, and not once it is being
   * finalised (the weak reference is then empty). */
  if (report)
    {
      AccelDevice *device = g_weak_ref_get (&self->device_ref);
      if (device)
        {
          _accel_device_report_context_lost_at (device, self->generation, reason);
          g_object_unref (device);
        }
    }
}

/* Takes @body: a floating reference or a full one (its callers hand on
 * what they sank). */
static void
send_request (AccelRemoteConnection *self, AccelChannelKind kind, guint64 id, GVariant *body)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) owned = body ? g_variant_take_ref (body) : NULL;
  guint deadline = g_atomic_int_get (&self->deadline_ms);

  g_mutex_lock (&self->send_lock);
  gboolean ok = _accel_channel_send (self->channel, kind, id, owned,
                                     deadline ? (gint64) deadline * 1000 : -1, &error);
  g_mutex_unlock (&self->send_lock);
  if (!ok)
    {
      g_autofree char *what = g_strdup_printf ("cannot reach its device host (%s)", error->message);
      g_autoptr(GError) reason = poisoned (self, what);
      mark_dead (self, reason, TRUE);
    }
}

/* Sends a request and waits for its answer; on any thread. */
static GVariant *
call_sync (AccelRemoteConnection *self, AccelChannelKind kind, GVariant *body, GError **error)
{
  g_autoptr(GVariant) owned = g_variant_ref_sink (body);
  SyncCall sync = { FALSE, NULL, NULL };
  Pending *p = g_new0 (Pending, 1);
  guint64 id;

  p->type = PENDING_SYNC;
  p->sync = &sync;
  if (!register_pending (self, p, &id, error))
    {
      g_free (p);
      return NULL;
    }
  send_request (self, kind, id, g_steal_pointer (&owned));
  g_mutex_lock (&self->lock);
  while (!sync.done)
    wait_locked (self);
  g_mutex_unlock (&self->lock);
  if (sync.error)
    {
      g_clear_pointer (&sync.reply, g_variant_unref);
      g_propagate_error (error, sync.error);
      return NULL;
    }
  return sync.reply;
}

/* The reader thread. */

static void
handle_message (AccelRemoteConnection *self, GVariant *msg)
{
  guint32 kind;
  guint64 id;
  g_autoptr(GVariant) body = NULL;

  _accel_channel_parse (msg, &kind, &id, &body);
  switch (kind)
    {
    case ACCEL_CHANNEL_REPLY:
    case ACCEL_CHANNEL_FAILED:
      {
        g_mutex_lock (&self->lock);
        Pending *p = NULL;
        if (g_hash_table_steal_extended (self->pending, GSIZE_TO_POINTER (id), NULL, (gpointer *) &p))
          self->completing++;
        g_mutex_unlock (&self->lock);
        if (p == NULL)
          return;   /* answered after its connection failed it: dropped */
        GError *error = kind == ACCEL_CHANNEL_FAILED ? _accel_channel_error_from_variant (body) : NULL;
        complete_pending (self, p, body, error);
        done_completing (self, 1);
      }
      break;
    case ACCEL_CHANNEL_POISONED:
      {
        g_autoptr(GError) host_error = _accel_channel_error_from_variant (body);
        g_autofree char *what = g_strdup_printf ("the context of %s in its device host was lost (%s)",
                                                 self->hosted_device, host_error->message);
        g_autoptr(GError) reason = poisoned (self, what);
        mark_dead (self, reason, FALSE);
      }
      break;
    default:
      g_debug ("%s: ignoring a message of kind %u from the device host", self->device_name, kind);
      break;
    }
}

static gpointer
reader_thread (gpointer data)
{
  AccelRemoteConnection *self = data;
  gint64 last_answer = g_get_monotonic_time ();

  for (;;)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GVariant) msg = _accel_channel_receive (self->channel, &error);
      if (error)
        {
          g_autofree char *what = g_strdup_printf ("its device host is not to be trusted any longer (%s)",
                                                   error->message);
          g_autoptr(GError) reason = poisoned (self, what);
          mark_dead (self, reason, TRUE);
          break;
        }
      if (msg)
        {
          last_answer = g_get_monotonic_time ();
          handle_message (self, msg);
          continue;
        }

      g_mutex_lock (&self->lock);
      gboolean dead = self->dead;
      guint n = g_hash_table_size (self->pending);
      gint64 busy_since = self->busy_since;
      g_mutex_unlock (&self->lock);
      if (dead)
        break;
      if (g_atomic_int_get (&self->host_gone))
        {
          /* Everything it wrote before it went has been read. */
          g_autofree char *how = describe_end (self);
          g_autofree char *what = g_strdup_printf ("its device host (pid %d) %s", (int) self->pid, how);
          g_autoptr(GError) reason = poisoned (self, what);
          mark_dead (self, reason, FALSE);
          break;
        }

      /* A host that has work and answers nothing within the deadline is
       * taken for hung. While idle, look again every deadline: a send does
       * not wake this thread, to keep the send path free of system calls. */
      gint64 deadline = (gint64) g_atomic_int_get (&self->deadline_ms) * 1000;
      gint64 timeout = deadline > 0 ? deadline : -1;
      if (n > 0 && deadline > 0)
        {
          gint64 since = MAX (busy_since, last_answer);
          gint64 left = since + deadline - g_get_monotonic_time ();
          if (left <= 0)
            {
              g_autofree char *what = g_strdup_printf ("its device host (pid %d) answered nothing for %u ms "
                                                       "and was killed", (int) self->pid,
                                                       (guint) (deadline / 1000));
              g_autoptr(GError) reason = poisoned (self, what);
              mark_dead (self, reason, TRUE);
              break;
            }
          timeout = left;
        }
      _accel_channel_wait (self->channel, timeout);
    }
  _accel_remote_connection_unref (self);
  return NULL;
}

/* The watcher thread: the host's end of the socket closes when it dies. */
static gpointer
watcher_thread (gpointer data)
{
  AccelRemoteConnection *self = data;
  struct pollfd fds[2] = {
    { self->sock, POLLIN, 0 },
    { self->stop_pipe[0], POLLIN, 0 },
  };

  for (;;)
    {
      int r = poll (fds, 2, -1);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0 || fds[1].revents)
        break;
      if (fds[0].revents)
        {
          char buf[64];
          ssize_t got = read (self->sock, buf, sizeof buf);
          if (got > 0 || (got < 0 && (errno == EINTR || errno == EAGAIN)))
            continue;
          g_atomic_int_set (&self->host_gone, 1);
          _accel_channel_interrupt (self->channel);
          g_mutex_lock (&self->lock);
          wake_waiters (self);
          g_mutex_unlock (&self->lock);
          break;
        }
    }
  _accel_remote_connection_unref (self);
  return NULL;
}

/* Start-up. */

static void
child_setup (gpointer data)
{
  /* The host dies with the thread that made it (the device thread, which
   * lives as long as the device). Between fork and exec: a system call only. */
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

static gboolean
handshake (AccelRemoteConnection *self, guint timeout_ms, GError **error)
{
  gint64 end = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  gboolean hung_up = FALSE;

  for (;;)
    {
      g_autoptr(GError) local = NULL;
      g_autoptr(GVariant) msg = _accel_channel_receive (self->channel, &local);
      if (local)
        {
          g_propagate_prefixed_error (error, g_steal_pointer (&local),
                                      "The device host of %s failed to start: ", self->hosted_device);
          return FALSE;
        }
      if (msg)
        {
          guint32 kind;
          guint64 id;
          g_autoptr(GVariant) body = NULL;
          GError *host_error = NULL;
          _accel_channel_parse (msg, &kind, &id, &body);
          if (_accel_remote_read_hello (kind, body, &self->info, &host_error))
            return TRUE;
          g_propagate_prefixed_error (error, host_error, "The device host of %s could not start: ",
                                      self->hosted_device);
          return FALSE;
        }
      if (hung_up)
        {
          g_autofree char *how = describe_end (self);
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                       "The device host of %s (pid %d) %s while starting", self->hosted_device,
                       (int) self->pid, how);
          return FALSE;
        }

      struct pollfd pfd = { self->sock, POLLIN, 0 };
      if (poll (&pfd, 1, 0) > 0)
        {
          hung_up = TRUE;   /* read the ring once more: its last words may be there */
          continue;
        }
      gint64 now = g_get_monotonic_time ();
      if (now >= end)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_TIMED_OUT,
                       "The device host of %s (pid %d) did not start within %u ms",
                       self->hosted_device, (int) self->pid, timeout_ms);
          return FALSE;
        }
      _accel_channel_wait (self->channel, MIN (end - now, 20000));
    }
}

static gboolean
apply_env (GSubprocessLauncher *launcher, const char * const *env, GError **error)
{
  for (guint i = 0; env && env[i]; i++)
    {
      const char *eq = strchr (env[i], '=');
      if (eq == NULL || eq == env[i])
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "Host environment entry “%s” is not KEY=VALUE", env[i]);
          return FALSE;
        }
      g_autofree char *key = g_strndup (env[i], eq - env[i]);
      g_subprocess_launcher_setenv (launcher, key, eq + 1, TRUE);
    }
  return TRUE;
}

AccelRemoteConnection *
_accel_remote_connection_open (AccelDevice *device, const AccelRemoteConfig *config, GError **error)
{
  AccelRemoteConnection *self = g_new0 (AccelRemoteConnection, 1);
  self->ref_count = 1;
  self->device = device;
  g_weak_ref_init (&self->device_ref, device);
  self->generation = config->generation;
  self->device_name = g_strdup (accel_device_get_name (device));
  self->hosted_device = g_strdup (config->hosted_device);
  self->deadline_ms = config->deadline_ms;
  self->sock = -1;
  self->stop_pipe[0] = self->stop_pipe[1] = -1;
  self->pending = g_hash_table_new (NULL, NULL);
  self->host_used = g_hash_table_new (NULL, NULL);
  self->table = g_ptr_array_new ();
  g_mutex_init (&self->send_lock);
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  g_queue_init (&self->regions);
  g_autoptr(AccelRemoteConnection) owned = self;

  /* Both parts whole pages: the host memory is then page-aligned, and the
   * chunk ring a multiple of ARENA_ALIGN. */
  gsize ring_part = (MAX (config->arena_size, 4096) + 4095) & ~(gsize) 4095;
  gsize host_part = (config->host_memory_size + 4095) & ~(gsize) 4095;
  gsize total;
  self->channel = _accel_channel_new (RING_SIZE, ring_part + host_part, error);
  if (self->channel == NULL)
    return NULL;
  self->arena = _accel_channel_get_arena (self->channel, &total);
  /* The channel caps its size: what is left after the ring is host memory. */
  self->arena_size = MIN (ring_part, total);
  self->host_memory = self->arena + self->arena_size;
  self->host_memory_size = total - self->arena_size;
  if (self->host_memory_size > 0)
    {
      HostBlock *all = g_new (HostBlock, 1);
      all->start = 0;
      all->size = self->host_memory_size;
      self->host_free = g_list_append (NULL, all);
    }
  self->chunk_size = MAX (self->arena_size / 4, 4096) & ~(gsize) (ARENA_ALIGN - 1);

  int sv[2];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    {
      int e = errno;
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED, "socketpair: %s", g_strerror (e));
      return NULL;
    }
  self->sock = sv[0];
  if (!g_unix_open_pipe (self->stop_pipe, FD_CLOEXEC, error))
    {
      close (sv[1]);
      return NULL;
    }

  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  int shm = fcntl (_accel_channel_get_fd (self->channel), F_DUPFD_CLOEXEC, 10);
  g_subprocess_launcher_take_fd (launcher, sv[1], ACCEL_CHANNEL_FD_SOCKET);
  if (shm >= 0)
    g_subprocess_launcher_take_fd (launcher, shm, ACCEL_CHANNEL_FD_SHM);
  if (shm < 0 || !apply_env (launcher, config->env, error))
    {
      if (shm < 0)
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED, "Cannot pass the channel to the device host");
      return NULL;
    }
  g_subprocess_launcher_set_child_setup (launcher, child_setup, NULL, NULL);

  g_autofree char *parent = g_strdup_printf ("%d", (int) getpid ());
  const char *argv[] = { config->host_path, "--device", config->hosted_device,
                         "--parent-pid", parent, NULL };
  g_autoptr(GError) spawn_error = NULL;
  self->process = g_subprocess_launcher_spawnv (launcher, argv, &spawn_error);
  g_clear_object (&launcher);   /* closes the child's ends here */
  if (self->process == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "Cannot start the device host “%s” for %s: %s", config->host_path,
                   config->hosted_device, spawn_error->message);
      return NULL;
    }
  self->pid = (GPid) g_ascii_strtoll (g_subprocess_get_identifier (self->process), NULL, 10);

  if (!handshake (self, config->start_timeout_ms, error))
    return NULL;

  self->reader = g_thread_new ("accel-remote-read", reader_thread, _accel_remote_connection_ref (self));
  self->watcher = g_thread_new ("accel-remote-watch", watcher_thread, _accel_remote_connection_ref (self));
  return g_steal_pointer (&owned);
}

void
_accel_remote_connection_close (AccelRemoteConnection *self, const GError *reason)
{
  g_mutex_lock (&self->lock);
  self->closing = TRUE;
  g_mutex_unlock (&self->lock);
  mark_dead (self, reason, TRUE);

  /* Answers the reader had already taken are completed before the context
   * is gone. Bounded: the reader might be waiting for a lock our caller
   * holds (a buffer released while its work completes). */
  g_mutex_lock (&self->lock);
  gint64 end = g_get_monotonic_time () + CLOSE_GRACE_US;
  self->waiters++;
  while (self->completing > 0)
    if (!g_cond_wait_until (&self->cond, &self->lock, end))
      break;

  /* The old host lets go of the device before a new one is started; its
   * files close as it exits. Bounded too: a process stuck in a driver call
   * dies only when the call returns. */
  end = g_get_monotonic_time () + EXIT_GRACE_US;
  while (!g_atomic_int_get (&self->host_gone))
    if (!g_cond_wait_until (&self->cond, &self->lock, end))
      {
        g_warning ("%s: its device host (pid %d) has not exited %d s after SIGKILL; going on",
                   self->device_name, (int) self->pid, (int) (EXIT_GRACE_US / G_USEC_PER_SEC));
        break;
      }
  self->waiters--;
  g_mutex_unlock (&self->lock);

  if (self->stop_pipe[1] >= 0)
    (void) !write (self->stop_pipe[1], "x", 1);
}

/* Memory. */

gpointer
_accel_remote_connection_alloc (AccelRemoteConnection *self, gsize size, GError **error)
{
  g_autoptr(GVariant) reply = call_sync (self, ACCEL_CHANNEL_ALLOC, g_variant_new_uint64 (size), error);
  if (reply == NULL)
    return NULL;
  guint64 id;
  if (!_accel_remote_read_alloc (reply, accel_device_get_name (self->device), &id, error))
    return NULL;
  return GSIZE_TO_POINTER ((gsize) id);
}

void
_accel_remote_connection_free (AccelRemoteConnection *self, gpointer memory)
{
  g_mutex_lock (&self->lock);
  gboolean dead = self->dead;
  g_mutex_unlock (&self->lock);
  if (!dead)
    send_request (self, ACCEL_CHANNEL_FREE, 0, g_variant_new_uint64 (GPOINTER_TO_SIZE (memory)));
}

gboolean
_accel_remote_connection_query_memory (AccelRemoteConnection *self,
                                       guint64 *total,
                                       guint64 *free_bytes,
                                       GError **error)
{
  g_autoptr(GVariant) reply = call_sync (self, ACCEL_CHANNEL_MEMORY, g_variant_new_tuple (NULL, 0), error);
  if (reply == NULL)
    return FALSE;
  return _accel_remote_read_memory (reply, total, free_bytes, error);
}

void
_accel_remote_connection_hang (AccelRemoteConnection *self)
{
  send_request (self, ACCEL_CHANNEL_HANG, 0, NULL);
}

/* Host memory. Blocks are whole pages, so that what the host pins or maps
 * of one never shares a page with another. */

#define HOST_BLOCK_ALIGN 4096

gpointer
_accel_remote_connection_alloc_host_memory (AccelRemoteConnection *self, gsize size, GError **error)
{
  guint64 len = ((guint64) MAX (size, 1) + HOST_BLOCK_ALIGN - 1) & ~(guint64) (HOST_BLOCK_ALIGN - 1);

  g_mutex_lock (&self->lock);
  for (GList *l = self->host_free; l; l = l->next)
    {
      HostBlock *b = l->data;
      if (b->size < len)
        continue;
      guint64 start = b->start;
      b->start += len;
      b->size -= len;
      if (b->size == 0)
        {
          g_free (b);
          self->host_free = g_list_delete_link (self->host_free, l);
        }
      g_hash_table_insert (self->host_used, GSIZE_TO_POINTER ((gsize) start), GSIZE_TO_POINTER ((gsize) len));
      g_mutex_unlock (&self->lock);
      return self->host_memory + start;
    }
  g_mutex_unlock (&self->lock);
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY,
               "%s: no %" G_GSIZE_FORMAT " bytes of host memory left in the %" G_GSIZE_FORMAT
               " bytes shared with its device host (property “host-memory-size”)",
               self->device_name, size, self->host_memory_size);
  return NULL;
}

void
_accel_remote_connection_free_host_memory (AccelRemoteConnection *self, gpointer memory)
{
  guint8 *p = memory;
  gsize len;

  g_return_if_fail (p >= self->host_memory && p < self->host_memory + self->host_memory_size);
  guint64 start = p - self->host_memory;

  g_mutex_lock (&self->lock);
  gpointer value;
  if (!g_hash_table_steal_extended (self->host_used, GSIZE_TO_POINTER ((gsize) start), NULL, &value))
    {
      g_mutex_unlock (&self->lock);
      g_critical ("%s: %p is not host memory of its device host", self->device_name, memory);
      return;
    }
  len = GPOINTER_TO_SIZE (value);

  /* Back into the sorted free list, merged with its neighbours. */
  GList *after = self->host_free;
  while (after && ((HostBlock *) after->data)->start < start)
    after = after->next;
  GList *before = after ? after->prev : g_list_last (self->host_free);
  HostBlock *prev = before ? before->data : NULL;
  HostBlock *next = after ? after->data : NULL;
  if (prev && prev->start + prev->size == start)
    {
      prev->size += len;
      if (next && prev->start + prev->size == next->start)
        {
          prev->size += next->size;
          g_free (next);
          self->host_free = g_list_delete_link (self->host_free, after);
        }
    }
  else if (next && start + len == next->start)
    {
      next->start = start;
      next->size += len;
    }
  else
    {
      HostBlock *b = g_new (HostBlock, 1);
      b->start = start;
      b->size = len;
      self->host_free = g_list_insert_before (self->host_free, after, b);
    }
  g_mutex_unlock (&self->lock);
}

gboolean
_accel_remote_connection_owns_host_memory (AccelRemoteConnection *self, gconstpointer memory)
{
  const guint8 *p = memory;
  return self->host_memory_size > 0 && p >= self->host_memory && p < self->host_memory + self->host_memory_size;
}

/* Work. */

static void
submit_work (AccelRemoteConnection *self, AccelWork *work, AccelChannelKind kind, GVariant *body)
{
  g_autoptr(GVariant) owned = g_variant_ref_sink (body);
  g_autoptr(GError) error = NULL;
  Pending *p = g_new0 (Pending, 1);
  guint64 id;

  p->type = PENDING_WORK;
  p->work = work;
  if (!register_pending (self, p, &id, &error))
    {
      g_free (p);
      accel_device_complete_work (self->device, work, g_steal_pointer (&error));
      return;
    }
  /* From here the work belongs to the table: it may already be complete. */
  send_request (self, kind, id, g_steal_pointer (&owned));
}

/* The buffer table entry of a buffer never changes: it is made once, on
 * the device thread, and kept as the buffer's backend data. */
static GVariant *
buffer_entry (AccelBuffer *b)
{
  GVariant *entry = accel_buffer_get_backend_data (b);
  if (entry)
    return entry;

  guint rank;
  const AccelShape *shape = accel_buffer_get_shape (b);
  const gint64 *dims = accel_shape_get_dims (shape, &rank);
  const gint64 *strides = accel_shape_get_strides (shape, &rank);
  entry = g_variant_ref_sink (g_variant_new ("(tttu@ax@ax)",
                                             accel_buffer_get_handle (b),
                                             (guint64) GPOINTER_TO_SIZE (accel_buffer_get_memory (b)),
                                             (guint64) accel_buffer_get_offset (b),
                                             (guint32) accel_buffer_get_dtype (b),
                                             g_variant_new_fixed_array (G_VARIANT_TYPE_INT64, dims, rank,
                                                                        sizeof (gint64)),
                                             g_variant_new_fixed_array (G_VARIANT_TYPE_INT64, strides, rank,
                                                                        sizeof (gint64))));
  accel_buffer_set_backend_data (b, entry, (GDestroyNotify) g_variant_unref);
  return entry;
}

static void
add_buffer (AccelOp *op, GParamSpec *pspec, AccelBuffer *b, AccelAccess access, gpointer data)
{
  GPtrArray *entries = data;
  GVariant *entry = buffer_entry (b);

  /* A buffer named by two properties goes in once: same buffer, same entry. */
  if (!g_ptr_array_find (entries, entry, NULL))
    g_ptr_array_add (entries, entry);
}

/* On the device thread: the scratch array is reused from op to op. */
static GVariant *
buffer_table (AccelRemoteConnection *self, AccelOp *op)
{
  g_ptr_array_set_size (self->table, 0);
  _accel_op_foreach_buffer (op, add_buffer, self->table);
  return g_variant_new_array (G_VARIANT_TYPE ("(tttuaxax)"), (GVariant **) self->table->pdata,
                              self->table->len);
}

static void
execute_op (AccelRemoteConnection *self, AccelWork *work)
{
  AccelOp *op = accel_work_get_op (work);
  g_autoptr(GVariant) serialized = accel_op_serialize (op);
  GVariant *fields[2] = { serialized, buffer_table (self, op) };
  GVariant *body = g_variant_new_tuple (fields, 2);
  submit_work (self, work, ACCEL_CHANNEL_OP, body);
}

static void
execute_transfer (AccelRemoteConnection *self, AccelWork *work)
{
  AccelWorkKind kind = accel_work_get_kind (work);
  AccelBuffer *buffer = accel_work_get_buffer (work);
  guint64 alloc = GPOINTER_TO_SIZE (accel_buffer_get_memory (buffer));
  guint64 base = accel_buffer_get_offset (buffer);
  gsize size = 0;
  guint8 *host = accel_work_get_host_data (work, &size);
  size = MIN (size, accel_buffer_get_size (buffer));

  if (size == 0)
    {
      accel_device_complete_work (self->device, work, NULL);
      return;
    }

  Transfer *xfer = g_new0 (Transfer, 1);
  xfer->work = work;
  xfer->kind = kind;
  xfer->host = host;
  xfer->remaining = 1;   /* held while chunks are being sent */

  /* Host memory in the shared region: one request, moved in place. */
  if (host >= self->host_memory && host < self->host_memory + self->host_memory_size
      && size <= (gsize) (self->host_memory + self->host_memory_size - host))
    {
      GError *error = NULL;
      Pending *p = g_new0 (Pending, 1);
      guint64 id;
      p->type = PENDING_CHUNK;
      p->xfer = xfer;
      p->length = size;
      if (!register_pending (self, p, &id, &error))
        {
          g_free (p);
          transfer_release (self, xfer, error);
          return;
        }
      send_request (self, kind == ACCEL_WORK_WRITE ? ACCEL_CHANNEL_WRITE : ACCEL_CHANNEL_READ, id,
                    g_variant_new ("(tttt)", alloc, base, (guint64) size, (guint64) (host - self->arena)));
      transfer_release (self, xfer, NULL);
      return;
    }

  for (gsize off = 0; off < size;)
    {
      gsize len = MIN (self->chunk_size, size - off);
      GError *error = NULL;
      Region *region = arena_alloc (self, len, &error);
      if (region == NULL)
        {
          transfer_release (self, xfer, error);
          xfer = NULL;
          break;
        }
      if (kind == ACCEL_WORK_WRITE)
        memcpy (region_data (self, region), host + off, len);

      Pending *p = g_new0 (Pending, 1);
      guint64 id;
      /* Read before the entry is in the table: from there the connection's
       * death may complete it (and free the region) on another thread. */
      guint64 arena_offset = region->start % self->arena_size;
      p->type = PENDING_CHUNK;
      p->xfer = xfer;
      p->region = region;
      p->host_offset = off;
      p->length = len;
      if (!register_pending (self, p, &id, &error))
        {
          g_free (p);
          arena_release (self, region);
          transfer_release (self, xfer, error);
          xfer = NULL;
          break;
        }
      send_request (self, kind == ACCEL_WORK_WRITE ? ACCEL_CHANNEL_WRITE : ACCEL_CHANNEL_READ, id,
                    g_variant_new ("(tttt)", alloc, base + off, (guint64) len, arena_offset));
      off += len;
    }
  /* Each early exit above gave the sender's hold back already. */
  if (xfer)
    transfer_release (self, xfer, NULL);
}

void
_accel_remote_connection_execute (AccelRemoteConnection *self, AccelWork *work)
{
  switch (accel_work_get_kind (work))
    {
    case ACCEL_WORK_OP:
      execute_op (self, work);
      break;
    case ACCEL_WORK_WRITE:
    case ACCEL_WORK_READ:
      execute_transfer (self, work);
      break;
    case ACCEL_WORK_ZERO:
      {
        AccelBuffer *buffer = accel_work_get_buffer (work);
        submit_work (self, work, ACCEL_CHANNEL_ZERO,
                     g_variant_new ("(ttt)", (guint64) GPOINTER_TO_SIZE (accel_buffer_get_memory (buffer)),
                                    (guint64) accel_buffer_get_offset (buffer),
                                    (guint64) accel_buffer_get_size (buffer)));
      }
      break;
    default:
      accel_device_complete_work (self->device, work,
                                  g_error_new (ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                                               "%s: unknown kind of work %d",
                                               accel_device_get_name (self->device),
                                               accel_work_get_kind (work)));
    }
}
