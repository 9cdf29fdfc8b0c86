/* accel-communicator-group.c: one incarnation of a communicator in this
 * process, and the meeting point of the parts of its collectives on host
 * memory.
 *
 * A collective's parts run on their ranks' device threads. On a backend
 * whose memory is this process's (the CPU backend), each part hands its
 * input to accel_collective_gather(): the parts of this process meet in a
 * slot named by the collective's tag; the last to arrive moves the bytes
 * of this process's ranks to the other processes through the rendezvous
 * (in chunks, so no message outgrows what the store buffers) and theirs
 * here. Every part then reads every rank's input where it lies, computes
 * its own output into scratch memory, and releases the slot; the release
 * waits until every part of this process has read, so that no input
 * changes while a peer still reads it.
 *
 * A part never waits without end: it gives up when the group is aborted
 * (a rank's device lost its context, a part failed, the communicator went
 * away) and after the communicator's timeout. A part that gives up before
 * the slot was complete spoils the slot for every other part, so that no
 * part reads an input whose owner has left.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "accel-communicator-private.h"

typedef struct {
  gint ref;
  char *tag;
  guint expected;           /* parts of this process */
  guint arrived;
  guint released;
  gboolean ready;           /* every input is known */
  gboolean exchanging;      /* the last part is moving bytes among processes */
  GError *error;            /* the slot is spoilt */
  gconstpointer *data;      /* per rank */
  gsize *size;
  GPtrArray *received;      /* GBytes of other processes */
} Slot;

struct _AccelCommGroup {
  gint ref;
  char *key;
  GMutex lock;
  GCond cond;
  gboolean registered;
  GError *abort_reason;
  GHashTable *slots;        /* tag -> Slot */
  guint n_ranks;
  guint n_local;
  int *local_index;
  guint *rank_process;      /* NULL: one process */
  guint my_process;
  guint n_processes;
  AccelRendezvous *rendezvous;
  guint timeout_ms;
};

struct _AccelCollectiveData {
  AccelCommGroup *group;
  Slot *slot;
};

G_LOCK_DEFINE_STATIC (groups);
static GHashTable *groups;  /* key -> AccelCommGroup (a reference) */

static void
slot_unref (Slot *slot)
{
  if (!g_atomic_int_dec_and_test (&slot->ref))
    return;
  g_clear_error (&slot->error);
  g_free (slot->tag);
  g_free (slot->data);
  g_free (slot->size);
  g_clear_pointer (&slot->received, g_ptr_array_unref);
  g_free (slot);
}

AccelCommGroup *
_accel_comm_group_new (const AccelCommGroupConfig *config)
{
  AccelCommGroup *self = g_new0 (AccelCommGroup, 1);

  self->ref = 2;   /* the caller's and the table's */
  self->key = g_strdup (config->key);
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);
  self->slots = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) slot_unref);
  self->n_ranks = config->n_ranks;
  self->local_index = g_memdup2 (config->local_index, sizeof (int) * config->n_ranks);
  for (guint r = 0; r < config->n_ranks; r++)
    if (config->local_index[r] >= 0)
      self->n_local++;
  if (config->rank_process)
    self->rank_process = g_memdup2 (config->rank_process, sizeof (guint) * config->n_ranks);
  self->my_process = config->my_process;
  self->n_processes = MAX (config->n_processes, 1);
  self->rendezvous = config->rendezvous ? g_object_ref (config->rendezvous) : NULL;
  self->timeout_ms = config->timeout_ms;
  self->registered = TRUE;

  G_LOCK (groups);
  if (groups == NULL)
    groups = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) _accel_comm_group_unref);
  AccelCommGroup *old = g_hash_table_lookup (groups, self->key);
  if (old)
    old->registered = FALSE;
  g_hash_table_replace (groups, self->key, self);
  G_UNLOCK (groups);
  return self;
}

AccelCommGroup *
_accel_comm_group_ref (AccelCommGroup *self)
{
  g_atomic_int_inc (&self->ref);
  return self;
}

void
_accel_comm_group_unref (AccelCommGroup *self)
{
  if (self == NULL || !g_atomic_int_dec_and_test (&self->ref))
    return;
  g_hash_table_unref (self->slots);
  g_clear_error (&self->abort_reason);
  g_clear_object (&self->rendezvous);
  g_free (self->local_index);
  g_free (self->rank_process);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  g_free (self->key);
  g_free (self);
}

/* Takes the group out of the process table; parts that still hold it go on. */
void
_accel_comm_group_retire (AccelCommGroup *self)
{
  AccelCommGroup *drop = NULL;

  G_LOCK (groups);
  if (self->registered && groups && g_hash_table_lookup (groups, self->key) == self)
    {
      g_hash_table_steal (groups, self->key);
      drop = self;
    }
  self->registered = FALSE;
  G_UNLOCK (groups);
  _accel_comm_group_unref (drop);
}

const char *
_accel_comm_group_get_key (AccelCommGroup *self)
{
  return self->key;
}

static AccelCommGroup *
lookup (const char *key)
{
  AccelCommGroup *group = NULL;

  if (key == NULL)
    return NULL;
  G_LOCK (groups);
  if (groups)
    group = g_hash_table_lookup (groups, key);
  if (group)
    _accel_comm_group_ref (group);
  G_UNLOCK (groups);
  return group;
}

gboolean
_accel_comm_group_abort (AccelCommGroup *self, const GError *reason)
{
  gboolean first = FALSE;

  g_mutex_lock (&self->lock);
  if (self->abort_reason == NULL)
    {
      self->abort_reason = reason ? g_error_copy (reason)
                                  : g_error_new_literal (ACCEL_ERROR, ACCEL_ERROR_FAILED,
                                                         "the communicator was aborted");
      first = TRUE;
    }
  g_cond_broadcast (&self->cond);
  g_mutex_unlock (&self->lock);
  return first;
}

GError *
_accel_comm_group_dup_abort_reason (AccelCommGroup *self)
{
  g_mutex_lock (&self->lock);
  GError *error = self->abort_reason ? g_error_copy (self->abort_reason) : NULL;
  g_mutex_unlock (&self->lock);
  return error;
}

/* A part's error once its incarnation is aborted. Never CONTEXT_POISONED:
 * that code would make the part's own, healthy device rebuild its context.
 * The communicator reports the abort's reason for the collective. */
static GError *
aborted_error_locked (AccelCommGroup *self, const char *op, int rank)
{
  return g_error_new (ACCEL_ERROR, ACCEL_ERROR_FAILED,
                      "%s on rank %d: the communicator incarnation “%s” was aborted: %s",
                      op, rank, self->key, self->abort_reason->message);
}

static AccelCommGroup *
lookup_or_error (AccelCollective *op, GError **error)
{
  AccelCommGroup *group = lookup (op->comm_key);
  if (group == NULL)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                 "%s on rank %d: communicator incarnation “%s” is unknown in this process; collectives "
                 "on host memory run on devices of the communicator's own process",
                 accel_op_get_type_name (ACCEL_OP (op)), op->rank, op->comm_key ? op->comm_key : "(none)");
  return group;
}

/* Exchanges among processes. */

typedef struct {
  guint64 total;
  GByteArray *bytes;
} Incoming;

/* An all-gather of @mine among @procs through the rendezvous, in rounds
 * of at most the store's chunk: each round's payload starts with the
 * sender's total length, so every process knows when all are done. */
static GPtrArray *
exchange_chunked (AccelCommGroup *self, const char *tag, const guint *procs, guint n_procs, GBytes *mine,
                  GError **error)
{
  gsize chunk = _accel_rendezvous_get_max_chunk (self->rendezvous, n_procs);
  gsize my_size = 0;
  const guint8 *my_data = g_bytes_get_data (mine, &my_size);
  g_autofree Incoming *in = g_new0 (Incoming, n_procs);
  GPtrArray *out = NULL;
  gsize sent = 0;
  gboolean more = TRUE;

  if (chunk <= 8)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "the rendezvous's messages are too small to move collective data among %u processes", n_procs);
      return NULL;
    }
  chunk -= 8;
  for (guint i = 0; i < n_procs; i++)
    in[i].bytes = g_byte_array_new ();

  for (guint round = 0; more; round++)
    {
      gsize n = MIN (chunk, my_size - sent);
      g_autoptr(GByteArray) payload = g_byte_array_sized_new (n + 8);
      guint64 total_be = GUINT64_TO_BE ((guint64) my_size);
      g_byte_array_append (payload, (const guint8 *) &total_be, 8);
      g_byte_array_append (payload, my_data + sent, n);
      sent += n;
      g_autoptr(GBytes) send = g_byte_array_free_to_bytes (g_steal_pointer (&payload));
      g_autofree char *round_tag = g_strdup_printf ("%s/%u", tag, round);
      g_autoptr(GPtrArray) got = _accel_rendezvous_exchange (self->rendezvous, round_tag, procs, n_procs, send,
                                                             self->timeout_ms, error);
      if (got == NULL)
        goto fail;
      more = FALSE;
      for (guint i = 0; i < n_procs; i++)
        {
          gsize len = 0;
          const guint8 *p = g_bytes_get_data (got->pdata[i], &len);
          guint64 total_be_in;
          if (len < 8)
            goto malformed;
          memcpy (&total_be_in, p, 8);
          guint64 total = GUINT64_FROM_BE (total_be_in);
          if (round == 0)
            in[i].total = total;
          else if (total != in[i].total)
            goto malformed;
          if (in[i].bytes->len + (len - 8) > in[i].total)
            goto malformed;
          g_byte_array_append (in[i].bytes, p + 8, len - 8);
          if (in[i].bytes->len < in[i].total)
            {
              if (len - 8 < MIN (chunk, in[i].total))
                goto malformed;   /* a short chunk before the end: it would never finish */
              more = TRUE;
            }
        }
      if (sent < my_size)
        more = TRUE;
    }

  out = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  for (guint i = 0; i < n_procs; i++)
    g_ptr_array_add (out, g_byte_array_free_to_bytes (g_steal_pointer (&in[i].bytes)));
  return out;

malformed:
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
               "collective “%s”: a process sent a malformed or inconsistent chunk", tag);
fail:
  for (guint i = 0; i < n_procs; i++)
    if (in[i].bytes)
      g_byte_array_unref (in[i].bytes);
  return NULL;
}

/* This process's inputs, each with its length, in rank order. Under the
 * lock: a part that gives up takes its input away. */
static GBytes *
local_blob_locked (AccelCommGroup *self, Slot *slot)
{
  GByteArray *blob = g_byte_array_new ();
  for (guint r = 0; r < self->n_ranks; r++)
    if (self->local_index[r] >= 0)
      {
        guint64 len_be = GUINT64_TO_BE ((guint64) slot->size[r]);
        g_byte_array_append (blob, (const guint8 *) &len_be, 8);
        if (slot->size[r])
          g_byte_array_append (blob, slot->data[r], slot->size[r]);
      }
  return g_byte_array_free_to_bytes (blob);
}

/* The last local part of a collective moves this process's inputs (@mine)
 * out and the other processes' in. Called without the lock; the slot's
 * remote entries are written only by this part, and read once it is ready. */
static gboolean
exchange_with_processes (AccelCommGroup *self, const char *tag, Slot *slot, GBytes *mine, GError **error)
{
  g_autofree guint *procs = g_new (guint, self->n_processes);
  for (guint p = 0; p < self->n_processes; p++)
    procs[p] = p;
  g_autofree char *full_tag = g_strdup_printf ("%s/%s", self->key, tag);
  g_autoptr(GPtrArray) blobs = exchange_chunked (self, full_tag, procs, self->n_processes, mine, error);
  if (blobs == NULL)
    return FALSE;

  /* Each process's blob: its ranks' inputs in rank order, each with its length. */
  g_autofree gsize *offset = g_new0 (gsize, self->n_processes);
  slot->received = g_ptr_array_ref (blobs);
  for (guint r = 0; r < self->n_ranks; r++)
    {
      guint p = self->rank_process[r];
      if (p == self->my_process || p >= self->n_processes)
        continue;
      gsize len = 0;
      const guint8 *base = g_bytes_get_data (blobs->pdata[p], &len);
      guint64 size_be;
      if (offset[p] + 8 > len)
        goto malformed;
      memcpy (&size_be, base + offset[p], 8);
      guint64 size = GUINT64_FROM_BE (size_be);
      offset[p] += 8;
      if (size > len - offset[p])
        goto malformed;
      slot->data[r] = base + offset[p];
      slot->size[r] = size;
      offset[p] += size;
    }
  for (guint p = 0; p < self->n_processes; p++)
    {
      gsize len = 0;
      g_bytes_get_data (blobs->pdata[p], &len);
      if (p != self->my_process && offset[p] != len)
        goto malformed;
    }
  return TRUE;

malformed:
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
               "collective “%s”: a process's inputs do not match the ranks it owns", full_tag);
  return FALSE;
}

static gboolean
wait_until_ready (AccelCommGroup *self, Slot *slot, AccelCollective *op, GError **error)
{
  gint64 deadline = self->timeout_ms ? g_get_monotonic_time () + (gint64) self->timeout_ms * 1000 : 0;

  while (!slot->ready && slot->error == NULL && self->abort_reason == NULL)
    {
      if (deadline == 0 || slot->exchanging)
        g_cond_wait (&self->cond, &self->lock);
      else if (!g_cond_wait_until (&self->cond, &self->lock, deadline) && g_get_monotonic_time () >= deadline)
        {
          if (slot->ready)
            break;
          slot->error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_TIMED_OUT,
                                     "%s on rank %d: %u of the %u parts of this process arrived within %u ms",
                                     accel_op_get_type_name (ACCEL_OP (op)), op->rank, slot->arrived,
                                     slot->expected, self->timeout_ms);
          g_cond_broadcast (&self->cond);
          break;
        }
    }
  if (slot->ready)
    return TRUE;
  /* Leaving before the slot was complete spoils it: nobody may read this
   * part's input once it has returned. */
  slot->data[op->rank] = NULL;
  if (slot->error == NULL)
    {
      slot->error = aborted_error_locked (self, accel_op_get_type_name (ACCEL_OP (op)), op->rank);
      g_cond_broadcast (&self->cond);
    }
  g_propagate_error (error, g_error_copy (slot->error));
  return FALSE;
}

static AccelCollectiveData *
gather_in (AccelCommGroup *self, AccelCollective *op, guint expected, gboolean across_processes,
           gconstpointer data, gsize size, GError **error)
{
  const char *name = accel_op_get_type_name (ACCEL_OP (op));
  const char *tag = op->tag ? op->tag : "";

  if (op->rank < 0 || (guint) op->rank >= self->n_ranks || self->local_index[op->rank] < 0
      || op->n_ranks != (int) self->n_ranks)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: rank %d of %d is not a rank of this process in incarnation “%s”",
                   name, op->rank, op->n_ranks, self->key);
      return NULL;
    }

  g_mutex_lock (&self->lock);
  if (self->abort_reason)
    {
      g_propagate_error (error, aborted_error_locked (self, name, op->rank));
      g_mutex_unlock (&self->lock);
      return NULL;
    }
  Slot *slot = g_hash_table_lookup (self->slots, tag);
  if (slot == NULL)
    {
      slot = g_new0 (Slot, 1);
      slot->ref = 1;
      slot->tag = g_strdup (tag);
      slot->expected = expected;
      slot->data = g_new0 (gconstpointer, self->n_ranks);
      slot->size = g_new0 (gsize, self->n_ranks);
      g_hash_table_insert (self->slots, g_strdup (tag), slot);
    }
  if (slot->error || slot->ready || slot->expected != expected || slot->arrived >= slot->expected)
    {
      if (slot->error)
        g_propagate_error (error, g_error_copy (slot->error));
      else
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED,
                     "%s on rank %d: collective “%s” already has all its parts", name, op->rank, tag);
      g_mutex_unlock (&self->lock);
      return NULL;
    }
  g_atomic_int_inc (&slot->ref);
  slot->data[op->rank] = data;
  slot->size[op->rank] = size;
  slot->arrived++;

  gboolean ok = TRUE;
  if (slot->arrived == slot->expected)
    {
      GError *local = NULL;
      if (across_processes && self->n_processes > 1)
        {
          g_autoptr(GBytes) mine = local_blob_locked (self, slot);
          slot->exchanging = TRUE;
          g_mutex_unlock (&self->lock);
          gboolean moved = exchange_with_processes (self, tag, slot, mine, &local);
          g_mutex_lock (&self->lock);
          slot->exchanging = FALSE;
          if (!moved && slot->error == NULL)
            slot->error = local, local = NULL;
          g_clear_error (&local);
        }
      if (slot->error == NULL)
        slot->ready = TRUE;
      g_cond_broadcast (&self->cond);
      if (!slot->ready)
        {
          g_propagate_error (error, g_error_copy (slot->error));
          ok = FALSE;
        }
    }
  else
    ok = wait_until_ready (self, slot, op, error);

  if (!ok)
    {
      g_mutex_unlock (&self->lock);
      slot_unref (slot);
      return NULL;
    }
  g_mutex_unlock (&self->lock);

  AccelCollectiveData *result = g_new (AccelCollectiveData, 1);
  result->group = _accel_comm_group_ref (self);
  result->slot = slot;
  return result;
}

/**
 * accel_collective_gather: (skip)
 * @self: this rank's part, as a kernel runs it
 * @data: (nullable): this rank's input, in this process's memory
 * @size: its size in bytes
 * @error: return location for a #GError
 *
 * For kernels of backends whose memory is this process's (the CPU
 * backend): waits until every rank of the communicator has handed in its
 * input for this collective, and returns where each one is. Inputs of the
 * ranks of other processes arrive through the rendezvous. @data must stay
 * unchanged until accel_collective_data_release(); read the others'
 * inputs only until then too, and write this rank's output after it (an
 * output may be another part's input: compute into scratch memory first).
 *
 * Fails, without waiting longer, when the incarnation is aborted or the
 * communicator's timeout passes; never with %ACCEL_ERROR_CONTEXT_POISONED.
 *
 * Returns: (transfer full) (nullable): every rank's input, or %NULL with
 *   @error set
 */
AccelCollectiveData *
accel_collective_gather (AccelCollective *self, gconstpointer data, gsize size, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_COLLECTIVE (self), NULL);

  AccelCommGroup *group = lookup_or_error (self, error);
  if (group == NULL)
    return NULL;
  guint expected = ACCEL_IS_SEND_RECV (self) ? ACCEL_SEND_RECV (self)->parts : group->n_local;
  AccelCollectiveData *result = gather_in (group, self, expected, !ACCEL_IS_SEND_RECV (self), data, size, error);
  _accel_comm_group_unref (group);
  return result;
}

/**
 * accel_collective_data_get: (skip)
 * @data: what accel_collective_gather() returned
 * @rank: a rank
 * @size: (out) (optional): the size of its input in bytes
 *
 * Where @rank's input is, or %NULL if it gave none.
 *
 * Returns: (nullable): where @rank's input is, or %NULL if it gave none
 */
gconstpointer
accel_collective_data_get (AccelCollectiveData *data, int rank, gsize *size)
{
  g_return_val_if_fail (data != NULL, NULL);
  if (rank < 0 || (guint) rank >= data->group->n_ranks)
    {
      if (size)
        *size = 0;
      return NULL;
    }
  if (size)
    *size = data->slot->size[rank];
  return data->slot->data[rank];
}

/**
 * accel_collective_data_release: (skip)
 * @data: (transfer full): what accel_collective_gather() returned
 *
 * Says that this part has read every input it needs, and waits until every
 * other part of this process has too. Afterwards the part may write its
 * output and return.
 */
void
accel_collective_data_release (AccelCollectiveData *data)
{
  g_return_if_fail (data != NULL);
  AccelCommGroup *self = data->group;
  Slot *slot = data->slot;

  /* No timeout here: every part that saw the slot ready is only reading
   * memory, and will come. */
  g_mutex_lock (&self->lock);
  slot->released++;
  g_cond_broadcast (&self->cond);
  while (slot->released < slot->expected)
    g_cond_wait (&self->cond, &self->lock);
  /* Tags are used once: the first one past the barrier takes the slot out
   * of the table (the parts keep their references). */
  if (g_hash_table_lookup (self->slots, slot->tag) == slot)
    g_hash_table_remove (self->slots, slot->tag);
  g_mutex_unlock (&self->lock);

  slot_unref (slot);
  _accel_comm_group_unref (self);
  g_free (data);
}

/**
 * accel_collective_exchange: (skip)
 * @self: this rank's `send-recv` part, as a kernel runs it
 * @send: (nullable): the bytes to send to the part's send peer
 * @send_size: how many
 * @recv: (nullable): where the bytes from the part's receive peer go
 * @recv_size: how many are expected
 * @error: return location for a #GError
 *
 * For kernels of backends whose memory is this process's: moves this
 * part's send to its peer and its receive from its peer, through this
 * process's memory or, with a rank of another process, through the
 * rendezvous. Fails as accel_collective_gather() does, and with
 * %ACCEL_ERROR_SHAPE_MISMATCH when the peer sends another size.
 *
 * Returns: %TRUE when both directions are done
 */
gboolean
accel_collective_exchange (AccelCollective *self,
                           gconstpointer send,
                           gsize send_size,
                           gpointer recv,
                           gsize recv_size,
                           GError **error)
{
  g_return_val_if_fail (ACCEL_IS_SEND_RECV (self), FALSE);
  AccelSendRecv *sr = ACCEL_SEND_RECV (self);

  g_autoptr(AccelCommGroup) group = lookup_or_error (self, error);
  if (group == NULL)
    return FALSE;

  gboolean send_remote = sr->send_peer >= 0 && (guint) sr->send_peer < group->n_ranks
                         && group->local_index[sr->send_peer] < 0;
  gboolean recv_remote = sr->recv_peer >= 0 && (guint) sr->recv_peer < group->n_ranks
                         && group->local_index[sr->recv_peer] < 0;
  int peer = -1;
  gconstpointer got = NULL;
  gsize got_size = 0;
  g_autoptr(GPtrArray) blobs = NULL;
  AccelCollectiveData *data = NULL;

  if (send_remote || recv_remote)
    {
      if ((sr->send_peer >= 0 && sr->recv_peer >= 0) || group->rank_process == NULL || group->rendezvous == NULL)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                       "send-recv on rank %d: a part that moves data to or from another process "
                       "may only send or only receive", self->rank);
          return FALSE;
        }
      peer = send_remote ? sr->send_peer : sr->recv_peer;
      guint procs[2] = { group->my_process, group->rank_process[peer] };
      if (procs[0] > procs[1])
        procs[0] = procs[1], procs[1] = group->my_process;
      g_autoptr(GBytes) mine = g_bytes_new_static (send_remote ? send : NULL, send_remote ? send_size : 0);
      g_autofree char *tag = g_strdup_printf ("%s/%s", group->key, sr->remote_tag ? sr->remote_tag : "");
      blobs = exchange_chunked (group, tag, procs, 2, mine, error);
      if (blobs == NULL)
        return FALSE;
      GBytes *theirs = blobs->pdata[procs[0] == group->my_process ? 1 : 0];
      got = g_bytes_get_data (theirs, &got_size);
      if (send_remote)
        return TRUE;
    }
  else
    {
      data = gather_in (group, self, sr->parts, FALSE, send, send_size, error);
      if (data == NULL)
        return FALSE;
      if (sr->recv_peer < 0)
        {
          accel_collective_data_release (data);
          return TRUE;
        }
      peer = sr->recv_peer;
      got = accel_collective_data_get (data, peer, &got_size);
      if (got == NULL && got_size == 0 && recv_size != 0)
        {
          accel_collective_data_release (data);
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "send-recv on rank %d: rank %d sent nothing in this submission", self->rank, peer);
          return FALSE;
        }
    }

  gboolean ok = got_size == recv_size;
  if (ok && recv_size)
    memcpy (recv, got, recv_size);
  else if (!ok)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                 "send-recv on rank %d: rank %d sent %" G_GSIZE_FORMAT " bytes, this rank expects %" G_GSIZE_FORMAT,
                 self->rank, peer, got_size, recv_size);
  if (data)
    accel_collective_data_release (data);
  return ok;
}

/**
 * accel_collective_check_aborted: (skip)
 * @self: a part, as a kernel runs it
 * @error: return location for a #GError
 *
 * For kernels: whether the part's incarnation has been aborted in this
 * process (an abort in another process reaches its ranks by other ways:
 * `collective-abort` ops, the rendezvous).
 *
 * Returns: %FALSE with @error set if it was aborted
 */
gboolean
accel_collective_check_aborted (AccelCollective *self, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_COLLECTIVE (self), FALSE);

  g_autoptr(AccelCommGroup) group = lookup (self->comm_key);
  if (group == NULL)
    return TRUE;
  g_mutex_lock (&group->lock);
  gboolean ok = group->abort_reason == NULL;
  if (!ok)
    g_propagate_error (error, aborted_error_locked (group, accel_op_get_type_name (ACCEL_OP (self)), self->rank));
  g_mutex_unlock (&group->lock);
  return ok;
}

/**
 * accel_collective_abort_key: (skip)
 * @comm_key: a communicator incarnation
 * @reason: (nullable): why
 *
 * For kernels of `collective-abort`: aborts the incarnation @comm_key in
 * this process, if this process knows it. Parts waiting in it fail.
 */
void
accel_collective_abort_key (const char *comm_key, const GError *reason)
{
  g_autoptr(AccelCommGroup) group = lookup (comm_key);
  if (group)
    _accel_comm_group_abort (group, reason);
}
