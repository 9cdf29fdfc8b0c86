/* accel-remote-connection.c: the application's side of one
 * `accel-device-host` process: starting it, the reader thread that takes
 * its answers, the watcher that notices its death, and the table of
 * requests awaiting an answer (see accel-remote-connection-private.h for
 * how each leaves it exactly once). How work is written into the channel
 * is in accel-remote-work.c; the shared memory's allocators in
 * accel-remote-arena.c.
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

#include "accel-remote-connection-private.h"

#define RING_SIZE (1 << 20)
#define CLOSE_GRACE_US (200 * 1000)
#define EXIT_GRACE_US (5 * G_USEC_PER_SEC)

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
  _accel_remote_arena_free (self->arena);
  _accel_remote_host_memory_free (self->host_memory);
  _accel_channel_free (self->channel);
  g_clear_pointer (&self->info, g_variant_unref);
  g_weak_ref_clear (&self->device_ref);
  g_clear_error (&self->death);
  g_hash_table_unref (self->pending);
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

/* Pending entries. */

/* Enters @p in the table under a new id (naming @p's reply slot, if any).
 * From here the entry may be completed at any time by whoever takes it. */
gboolean
_accel_remote_connection_register (AccelRemoteConnection *self, Pending *p, guint64 *id, GError **error)
{
  g_mutex_lock (&self->lock);
  if (self->dead)
    {
      g_set_error_literal (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED, self->death->message);
      g_mutex_unlock (&self->lock);
      return FALSE;
    }
  guint64 seq = ++self->next_id;
  *id = p->slot >= 0 ? ACCEL_CHANNEL_ID_WITH_SLOT (seq, p->slot) : seq;
  if (g_hash_table_size (self->pending) == 0)
    self->busy_since = g_get_monotonic_time ();
  g_hash_table_insert (self->pending, GSIZE_TO_POINTER (*id), p);
  g_mutex_unlock (&self->lock);
  return TRUE;
}

/* Takes the entry of @id out of the table, if it is still there: the
 * caller then completes it and calls done_completing(). */
Pending *
_accel_remote_connection_take (AccelRemoteConnection *self, guint64 id)
{
  Pending *p = NULL;

  g_mutex_lock (&self->lock);
  if (g_hash_table_steal_extended (self->pending, GSIZE_TO_POINTER (id), NULL, (gpointer *) &p))
    self->completing++;
  g_mutex_unlock (&self->lock);
  if (p)
    __atomic_store_n (&self->last_answer, g_get_monotonic_time (), __ATOMIC_RELAXED);
  return p;
}

/* Completes an entry taken out of the table. Takes @error. */
void
_accel_remote_connection_complete (AccelRemoteConnection *self, Pending *p, GVariant *reply, GError *error)
{
  /* The slot is free again once its request is answered. */
  if (p->slot >= 0)
    __atomic_fetch_or (&self->free_slots, 1u << p->slot, __ATOMIC_RELEASE);
  switch (p->type)
    {
    case PENDING_WORK:
      if (G_UNLIKELY (p->trace_ns != 0))
        _accel_stage_trace_add ("app: work registered to completed", _accel_stage_trace_now () - p->trace_ns);
      accel_device_complete_work (self->device, p->work, error);
      break;
    case PENDING_CHUNK:
      if (p->region && error == NULL && p->xfer->kind == ACCEL_WORK_READ)
        {
          _accel_remote_chunk_read (self, p);
          return;
        }
      if (p->region)
        _accel_remote_arena_release (self->arena, p->region);
      _accel_remote_transfer_release (self, p->xfer, error);
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

void
_accel_remote_connection_done_completing (AccelRemoteConnection *self, guint n)
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
  _accel_remote_arena_close (self->arena, reason);
  if (kill)
    g_subprocess_force_exit (self->process);
  for (GList *l = stolen; l; l = l->next)
    _accel_remote_connection_complete (self, l->data, NULL, g_error_copy (reason));
  g_list_free (stolen);
  _accel_remote_connection_done_completing (self, n);

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

/* Takes @body: a floating reference, or a full one. */
void
_accel_remote_connection_send (AccelRemoteConnection *self, AccelChannelKind kind, guint64 id, GVariant *body)
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
  p->slot = -1;
  p->sync = &sync;
  if (!_accel_remote_connection_register (self, p, &id, error))
    {
      g_free (p);
      return NULL;
    }
  _accel_remote_connection_send (self, kind, id, g_steal_pointer (&owned));
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
        Pending *p = _accel_remote_connection_take (self, id);
        if (p == NULL)
          return;   /* answered after its connection failed it: dropped */
        GError *error = kind == ACCEL_CHANNEL_FAILED ? _accel_channel_error_from_variant (body) : NULL;
        _accel_remote_connection_complete (self, p, body, error);
        _accel_remote_connection_done_completing (self, 1);
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
          gint64 since = MAX (busy_since, __atomic_load_n (&self->last_answer, __ATOMIC_RELAXED));
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
  static guint64 serials;
  AccelRemoteConnection *self = g_new0 (AccelRemoteConnection, 1);
  self->serial = __atomic_add_fetch (&serials, 1, __ATOMIC_RELAXED);
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
  self->free_slots = (guint32) ((G_GUINT64_CONSTANT (1) << ACCEL_CHANNEL_N_SLOTS) - 1);
  g_mutex_init (&self->send_lock);
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  g_autoptr(AccelRemoteConnection) owned = self;

  /* Both parts whole pages: the host memory is then page-aligned, and the
   * chunk ring a multiple of ARENA_ALIGN. */
  gsize ring_part = (MAX (config->arena_size, 4096) + 4095) & ~(gsize) 4095;
  gsize host_part = (config->host_memory_size + 4095) & ~(gsize) 4095;
  gsize total;
  self->channel = _accel_channel_new (RING_SIZE, ring_part + host_part, error);
  if (self->channel == NULL)
    return NULL;
  self->shared = _accel_channel_get_arena (self->channel, &total);
  /* The channel caps its size: what is left after the ring is host memory. */
  gsize arena_size = MIN (ring_part, total);
  self->arena = _accel_remote_arena_new (self->shared, arena_size);
  self->host_memory = _accel_remote_host_memory_new (self->shared + arena_size, total - arena_size);
  self->chunk_size = _accel_remote_chunk_size (arena_size);

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
    _accel_remote_connection_send (self, ACCEL_CHANNEL_FREE, 0, g_variant_new_uint64 (GPOINTER_TO_SIZE (memory)));
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
  _accel_remote_connection_send (self, ACCEL_CHANNEL_HANG, 0, NULL);
}

/* Host memory: stays mapped as long as the connection lives, also after
 * the host is gone. */

gpointer
_accel_remote_connection_alloc_host_memory (AccelRemoteConnection *self, gsize size, GError **error)
{
  gpointer memory = _accel_remote_host_memory_alloc (self->host_memory, size);
  if (memory == NULL)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY,
                 "%s: no %" G_GSIZE_FORMAT " bytes of host memory left in the %" G_GSIZE_FORMAT
                 " bytes shared with its device host (property “host-memory-size”)",
                 self->device_name, size, _accel_remote_host_memory_get_size (self->host_memory));
  return memory;
}

void
_accel_remote_connection_free_host_memory (AccelRemoteConnection *self, gpointer memory)
{
  if (!_accel_remote_host_memory_release (self->host_memory, memory))
    g_critical ("%s: %p is not host memory of its device host", self->device_name, memory);
}

gboolean
_accel_remote_connection_owns_host_memory (AccelRemoteConnection *self, gconstpointer memory)
{
  return _accel_remote_host_memory_owns (self->host_memory, memory);
}
