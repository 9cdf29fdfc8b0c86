/* accel-nccl-comm.c: this process's NCCL ranks.
 *
 * A rank is one CUDA device's member of one communicator incarnation (its
 * `comm-key`): made by the first part that runs on that device, from the
 * incarnation's bootstrap bytes, with a non-blocking ncclCommInitRankConfig
 * whose progress is polled so that nothing waits without end: the poll
 * gives up at the part's timeout, when this process has aborted the
 * incarnation, and when the rank is aborted meanwhile.
 *
 * Aborts (ncclCommAbort) come from three places: a `collective-abort` op
 * (the communicator ends an incarnation on every rank), a failed NCCL call,
 * and the watchdog: a thread that looks at every rank with collectives
 * running on its GPU every 100 ms, and aborts it when NCCL reports an
 * asynchronous error (a peer gone) or the oldest collective has run longer
 * than the timeout. An aborted NCCL kernel returns as if it had succeeded,
 * so every collective's completion is judged (accel_nccl_rank_check()):
 * one that completes after its rank was aborted fails.
 *
 * ncclCommAbort runs on one reaper thread, never on the thread that
 * decided the abort: where several ranks of one communicator live in this
 * process (isolation none, a device a GPU), NCCL's abort of every rank but
 * the last returns at once, and the last one synchronises and frees all of
 * them. Made on a device's thread, that wait can need another device's
 * thread, itself waiting in its own abort or on work behind it: the hang
 * two GPUs in one process showed. The rank is ended (its handle taken
 * from it, its state ABORTED) before the handle is queued, so nothing of
 * Accel's uses a handle the reaper frees. NCCL sets the communicator's
 * abort flags as the reaper's call begins, which is what stops its kernels.
 *
 * Threads: a rank is used by its device's thread (get, lock, finish), the
 * device's completion thread (check) and the watchdog. Its lock guards the
 * communicator handle: NCCL calls on it are made with the lock held, and an
 * abort takes it, so no call runs on a freed handle. The table lock is taken
 * before a rank's lock, never after.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "accel-nccl-comm.h"

#define WATCH_US (100 * 1000)

typedef enum {
  RANK_INIT,
  RANK_READY,
  RANK_ABORTED,
} RankState;

struct _AccelNcclRank {
  char *key;                 /* comm-key#ordinal */
  char *comm_key;
  int ordinal;
  int rank;
  guint timeout_ms;

  GMutex lock;
  ncclComm_t comm;           /* NULL once aborted */
  gint state;                /* RankState; atomic reads, written under the lock */
  GError *error;             /* why it was aborted */
  GQueue inflight;           /* launch times (µs) of the collectives on the GPU */
};

G_LOCK_DEFINE_STATIC (table);
static GHashTable *table;    /* key -> AccelNcclRank (a reference) */
static GThread *watchdog;
static GAsyncQueue *reap_queue;   /* ncclComm_t handles the reaper aborts */

gboolean
accel_nccl_check (ncclResult_t status, const char *what, GError **error)
{
  if (status == ncclSuccess)
    return TRUE;
  return accel_cuda_check_library ((int) status, "NCCL", ncclGetErrorString (status), FALSE, what, error);
}

AccelNcclRank *
accel_nccl_rank_ref (AccelNcclRank *rank)
{
  return g_atomic_rc_box_acquire (rank);
}

static void
rank_clear (gpointer data)
{
  AccelNcclRank *rank = data;
  g_clear_error (&rank->error);
  g_queue_clear (&rank->inflight);
  g_mutex_clear (&rank->lock);
  g_free (rank->key);
  g_free (rank->comm_key);
}

void
accel_nccl_rank_unref (AccelNcclRank *rank)
{
  if (rank != NULL)
    g_atomic_rc_box_release_full (rank, rank_clear);
}

/* With the rank's lock held: ends it for good. */
static void
abort_locked (AccelNcclRank *rank, GError *why)
{
  if (g_atomic_int_get (&rank->state) == RANK_ABORTED)
    {
      g_error_free (why);
      return;
    }
  g_debug ("nccl: aborting %s: %s", rank->key, why->message);
  rank->error = why;
  g_atomic_int_set (&rank->state, RANK_ABORTED);
  if (rank->comm)
    g_async_queue_push (reap_queue, g_steal_pointer (&rank->comm));

  G_LOCK (table);
  if (table && g_hash_table_lookup (table, rank->key) == rank)
    g_hash_table_remove (table, rank->key);
  G_UNLOCK (table);
}

/* Aborts the handles abort_locked() takes from their ranks, in turn. */
static gpointer
reaper_thread (gpointer data)
{
  for (;;)
    {
      ncclComm_t comm = g_async_queue_pop (reap_queue);
      ncclResult_t status = ncclCommAbort (comm);
      if (status != ncclSuccess)
        g_debug ("nccl: ncclCommAbort: %s", ncclGetErrorString (status));
    }
  return NULL;
}

static gpointer
watchdog_thread (gpointer data)
{
  for (;;)
    {
      g_usleep (WATCH_US);
      g_autoptr(GPtrArray) ranks = g_ptr_array_new_with_free_func ((GDestroyNotify) accel_nccl_rank_unref);
      G_LOCK (table);
      if (table)
        {
          GHashTableIter iter;
          gpointer value;
          g_hash_table_iter_init (&iter, table);
          while (g_hash_table_iter_next (&iter, NULL, &value))
            g_ptr_array_add (ranks, accel_nccl_rank_ref (value));
        }
      G_UNLOCK (table);

      gint64 now = g_get_monotonic_time ();
      for (guint i = 0; i < ranks->len; i++)
        {
          AccelNcclRank *rank = ranks->pdata[i];
          g_mutex_lock (&rank->lock);
          if (g_atomic_int_get (&rank->state) == RANK_READY && !g_queue_is_empty (&rank->inflight))
            {
              gint64 oldest = (gint64) GPOINTER_TO_SIZE (g_queue_peek_head (&rank->inflight));
              ncclResult_t async = ncclSuccess;
              (void) ncclCommGetAsyncError (rank->comm, &async);
              if (async != ncclSuccess && async != ncclInProgress)
                abort_locked (rank, g_error_new (ACCEL_ERROR, ACCEL_ERROR_LIBRARY,
                                                 "NCCL rank %d on device %d: asynchronous error: %s (%s)",
                                                 rank->rank, rank->ordinal, ncclGetErrorString (async),
                                                 ncclGetLastError (NULL)));
              else if (rank->timeout_ms && now - oldest > (gint64) rank->timeout_ms * 1000)
                abort_locked (rank, g_error_new (ACCEL_ERROR, ACCEL_ERROR_TIMED_OUT,
                                                 "NCCL rank %d on device %d: a collective ran longer than %u ms "
                                                 "(a peer that never came?)", rank->rank, rank->ordinal,
                                                 rank->timeout_ms));
            }
          g_mutex_unlock (&rank->lock);
        }
    }
  return NULL;
}

static gboolean
parse_id (const char *hex, ncclUniqueId *id)
{
  if (hex == NULL || strlen (hex) != 2 * sizeof id->internal)
    return FALSE;
  for (gsize i = 0; i < sizeof id->internal; i++)
    {
      int hi = g_ascii_xdigit_value (hex[2 * i]), lo = g_ascii_xdigit_value (hex[2 * i + 1]);
      if (hi < 0 || lo < 0)
        return FALSE;
      id->internal[i] = (char) (hi << 4 | lo);
    }
  return TRUE;
}

/* Why to stop waiting for NCCL now, or NULL. */
static GError *
should_stop (AccelNcclRank *rank, AccelCollective *part, gint64 deadline)
{
  GError *error = NULL;
  if (g_atomic_int_get (&rank->state) == RANK_ABORTED)
    {
      g_mutex_lock (&rank->lock);
      error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_FAILED, "NCCL rank %d on device %d was aborted: %s", rank->rank,
                           rank->ordinal, rank->error ? rank->error->message : "no reason given");
      g_mutex_unlock (&rank->lock);
      return error;
    }
  if (!accel_collective_check_aborted (part, &error))
    return error;
  if (deadline && g_get_monotonic_time () > deadline)
    return g_error_new (ACCEL_ERROR, ACCEL_ERROR_TIMED_OUT,
                        "NCCL rank %d on device %d: still in progress after %u ms (a peer that never came?)",
                        rank->rank, rank->ordinal, rank->timeout_ms);
  return NULL;
}

/* Polls the communicator until it is no longer in progress. With the lock
 * held on entry and on return; released while sleeping. */
static gboolean
wait_ready_locked (AccelNcclRank *rank, AccelCollective *part, const char *what, GError **error)
{
  gint64 deadline = rank->timeout_ms ? g_get_monotonic_time () + (gint64) rank->timeout_ms * 1000 : 0;
  gulong pause = 20;

  for (;;)
    {
      ncclResult_t state = ncclInProgress;
      if (rank->comm == NULL || ncclCommGetAsyncError (rank->comm, &state) != ncclSuccess)
        state = ncclInternalError;
      if (state == ncclSuccess)
        return TRUE;
      if (state != ncclInProgress)
        {
          GError *local = NULL;
          accel_nccl_check (state, what, &local);
          g_prefix_error (&local, "NCCL rank %d on device %d: ", rank->rank, rank->ordinal);
          g_propagate_error (error, g_error_copy (local));
          abort_locked (rank, local);
          return FALSE;
        }
      g_mutex_unlock (&rank->lock);
      GError *stop = should_stop (rank, part, deadline);
      if (stop == NULL)
        {
          g_usleep (pause);
          pause = MIN (pause * 2, 2000);
        }
      g_mutex_lock (&rank->lock);
      if (stop)
        {
          g_propagate_error (error, g_error_copy (stop));
          abort_locked (rank, stop);
          return FALSE;
        }
    }
}

AccelNcclRank *
accel_nccl_rank_get (AccelCollective *part, int ordinal, GError **error)
{
  g_autofree char *key = g_strdup_printf ("%s#%d", part->comm_key, ordinal);

  G_LOCK (table);
  if (table == NULL)
    {
      table = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) accel_nccl_rank_unref);
      watchdog = g_thread_new ("accel-nccl-watchdog", watchdog_thread, NULL);
      reap_queue = g_async_queue_new ();
      g_thread_unref (g_thread_new ("accel-nccl-reaper", reaper_thread, NULL));
    }
  AccelNcclRank *rank = g_hash_table_lookup (table, key);
  if (rank)
    {
      accel_nccl_rank_ref (rank);
      G_UNLOCK (table);
      if (g_atomic_int_get (&rank->state) != RANK_READY)
        {
          g_autoptr(GError) why = should_stop (rank, part, 0);
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED, "%s", why ? why->message : "NCCL rank not ready");
          accel_nccl_rank_unref (rank);
          return NULL;
        }
      return rank;
    }
  rank = g_atomic_rc_box_new0 (AccelNcclRank);
  accel_nccl_rank_ref (rank);   /* the table's and the caller's */
  rank->key = g_steal_pointer (&key);
  rank->comm_key = g_strdup (part->comm_key);
  rank->ordinal = ordinal;
  rank->rank = part->rank;
  rank->timeout_ms = part->timeout_ms;
  rank->state = RANK_INIT;
  g_mutex_init (&rank->lock);
  g_queue_init (&rank->inflight);
  g_hash_table_insert (table, rank->key, rank);
  G_UNLOCK (table);

  ncclUniqueId id;
  if (!parse_id (part->comm_id, &id))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s on rank %d: property “comm-id” does not hold NCCL's %" G_GSIZE_FORMAT " bootstrap bytes",
                   accel_op_get_type_name (ACCEL_OP (part)), part->rank, sizeof id.internal);
      g_mutex_lock (&rank->lock);
      abort_locked (rank, g_error_copy (*error));
      g_mutex_unlock (&rank->lock);
      accel_nccl_rank_unref (rank);
      return NULL;
    }

  g_mutex_lock (&rank->lock);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t status = ncclCommInitRankConfig (&rank->comm, part->n_ranks, id, part->rank, &config);
  gboolean ok = TRUE;
  if (status != ncclSuccess && status != ncclInProgress)
    {
      GError *local = NULL;
      accel_nccl_check (status, "ncclCommInitRankConfig", &local);
      g_propagate_error (error, g_error_copy (local));
      abort_locked (rank, local);
      ok = FALSE;
    }
  else
    ok = wait_ready_locked (rank, part, "ncclCommInitRankConfig", error);
  if (ok)
    g_atomic_int_set (&rank->state, RANK_READY);
  g_mutex_unlock (&rank->lock);
  if (!ok)
    {
      accel_nccl_rank_unref (rank);
      return NULL;
    }
  return rank;
}

ncclComm_t
accel_nccl_rank_lock (AccelNcclRank *rank, GError **error)
{
  g_mutex_lock (&rank->lock);
  if (g_atomic_int_get (&rank->state) == RANK_READY && rank->comm)
    return rank->comm;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED, "NCCL rank %d on device %d was aborted: %s", rank->rank,
               rank->ordinal, rank->error ? rank->error->message : "no reason given");
  g_mutex_unlock (&rank->lock);
  return NULL;
}

gboolean
accel_nccl_rank_finish (AccelNcclRank *rank, ncclResult_t status, const char *what, AccelCollective *part,
                        GError **error)
{
  gboolean ok;
  if (status == ncclSuccess)
    ok = TRUE;
  else if (status == ncclInProgress)
    /* Not yet on the stream: the device records the op's event as soon
     * as the kernel returns, so wait until NCCL has enqueued it. */
    ok = wait_ready_locked (rank, part, what, error);
  else
    {
      GError *local = NULL;
      accel_nccl_check (status, what, &local);
      g_prefix_error (&local, "NCCL rank %d on device %d: ", rank->rank, rank->ordinal);
      /* NCCL's own words, where it warned (some refusals say nothing). */
      const char *last = ncclGetLastError (rank->comm);
      if (last && *last)
        {
          char *message = g_strdup_printf ("%s: %s", local->message, last);
          g_free (local->message);
          local->message = message;
        }
      g_propagate_error (error, g_error_copy (local));
      abort_locked (rank, local);
      ok = FALSE;
    }
  g_mutex_unlock (&rank->lock);
  return ok;
}

void
accel_nccl_rank_launched (AccelNcclRank *rank)
{
  g_mutex_lock (&rank->lock);
  g_queue_push_tail (&rank->inflight, GSIZE_TO_POINTER ((gsize) g_get_monotonic_time ()));
  g_mutex_unlock (&rank->lock);
}

gboolean
accel_nccl_rank_check (const gint32 *codes, guint n_codes, gpointer data, GError **error)
{
  AccelNcclRank *rank = data;
  g_mutex_lock (&rank->lock);
  g_queue_pop_head (&rank->inflight);
  gboolean ok = g_atomic_int_get (&rank->state) != RANK_ABORTED;
  if (!ok)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                 "NCCL rank %d on device %d was aborted while the collective ran: %s", rank->rank, rank->ordinal,
                 rank->error ? rank->error->message : "no reason given");
  g_mutex_unlock (&rank->lock);
  return ok;
}

void
accel_nccl_abort (const char *comm_key, int ordinal, const char *reason)
{
  g_autofree char *key = g_strdup_printf ("%s#%d", comm_key, ordinal);
  AccelNcclRank *rank = NULL;

  G_LOCK (table);
  if (table)
    rank = g_hash_table_lookup (table, key);
  if (rank)
    accel_nccl_rank_ref (rank);
  G_UNLOCK (table);
  if (rank == NULL)
    return;
  g_mutex_lock (&rank->lock);
  abort_locked (rank, g_error_new (ACCEL_ERROR, ACCEL_ERROR_FAILED, "%s", reason ? reason : "collective-abort"));
  g_mutex_unlock (&rank->lock);
  accel_nccl_rank_unref (rank);
}
