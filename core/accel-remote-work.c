/* accel-remote-work.c: work of an AccelRemoteDevice written into its
 * host's channel.
 *
 * An op travels as its serialised form and a table of the buffers it names
 * (handle, allocation, offset, dtype, shape): no kernel is chosen here,
 * the host does that where the kernel runs. Work comes from two places:
 *
 * - _accel_remote_connection_hand_over(), on the submitting thread (the
 *   device's straight path): a blocking op also takes a reply slot, and
 *   its caller then spins on that slot and completes the work itself when
 *   the host's answer is there, so no thread of this process stands
 *   between the host's answer and the caller;
 * - _accel_remote_connection_execute(), on the device thread (the
 *   mailbox: during restarts, and behind other queued work).
 *
 * Bulk data goes through the transfer arena in chunks: a write copies a
 * chunk into the arena and sends it, and copies the next while the host
 * moves the one before into the device (for CUDA: by DMA, the arena being
 * registered as pinned); a read asks for every chunk the arena has room
 * for, and each is copied out as its answer comes. With cores to spare
 * (8 or more, or $ACCEL_REMOTE_COPY_THREADS), a few copy threads copy
 * chunks in and out side by side, one memcpy stream being slower than the
 * DMA it feeds. A transfer whose host
 * side lies in the shared host memory is sent as one request naming that
 * range: the host moves it in place, and this process copies nothing.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "accel-remote-connection-private.h"

#define MIN_CHUNK (64 * 1024)
#define MAX_CHUNK (2 * 1024 * 1024)
#define MAX_CHUNK_ALONE (8 * 1024 * 1024)

/* With copy threads (many cores), chunks small enough that several are in
 * flight at once (copied here side by side while the host moves those
 * before), up to 2 MiB; without, a quarter of the arena up to 8 MiB, so
 * that fewer round trips (thread wake-ups, on a busy small machine) move
 * the same bytes. */
static GThreadPool *copy_pool (void);

gsize
_accel_remote_chunk_size (gsize arena_size)
{
  gsize chunk = copy_pool () ? CLAMP (arena_size / 8, MIN_CHUNK, MAX_CHUNK)
                             : CLAMP (arena_size / 4, MIN_CHUNK, MAX_CHUNK_ALONE);
  return MAX (MIN (chunk, arena_size / 4) & ~(gsize) 4095, 4096);
}

/* Copy threads. */

typedef struct {
  AccelRemoteConnection *self;  /* a reference */
  Pending *p;
  AccelChannelKind request;
  guint64 alloc;
  guint64 offset;
} CopyTask;

static void copy_task_run (gpointer data, gpointer unused);

static GThreadPool *
copy_pool (void)
{
  static gsize once = 0;
  static GThreadPool *pool;
  if (g_once_init_enter (&once))
    {
      const char *env = g_getenv ("ACCEL_REMOTE_COPY_THREADS");
      guint cores = g_get_num_processors ();
      gint64 n = env ? g_ascii_strtoll (env, NULL, 10) : (cores >= 8 ? MIN (cores / 2 - 1, 8) : 0);
      if (n > 0)
        pool = g_thread_pool_new (copy_task_run, NULL, (gint) MIN (n, 64), FALSE, NULL);
      g_once_init_leave (&once, 1);
    }
  return pool;
}

static void
xfer_hold (AccelRemoteConnection *self, Transfer *xfer, gboolean unsent)
{
  g_mutex_lock (&self->lock);
  xfer->remaining++;
  if (unsent)
    xfer->unsent++;
  g_mutex_unlock (&self->lock);
}

/* Registers and sends a chunk that holds its transfer; on failure (a dead
 * connection) the chunk's hold is given back with the error. */
static void
send_chunk (AccelRemoteConnection *self, Pending *p, AccelChannelKind request, guint64 alloc, guint64 offset)
{
  GError *error = NULL;
  guint64 id;
  Transfer *xfer = p->xfer;
  AccelRemoteRegion *region = p->region;
  /* Read before registering: the answer may free the region at once. */
  GVariant *body = g_variant_ref_sink (g_variant_new ("(tttt)", alloc, offset, (guint64) p->length,
                                                      (guint64) region->offset));

  if (!_accel_remote_connection_register (self, p, &id, &error))
    {
      g_variant_unref (body);
      g_free (p);
      _accel_remote_arena_release (self->arena, region);
      _accel_remote_transfer_release (self, xfer, error);
      return;
    }
  _accel_remote_connection_send (self, request, id, body);
}

static void
copy_task_run (gpointer data, gpointer unused)
{
  CopyTask *t = data;
  AccelRemoteConnection *self = t->self;
  Pending *p = t->p;
  Transfer *xfer = p->xfer;

  if (xfer->kind == ACCEL_WORK_WRITE)
    {
      memcpy (p->region->data, xfer->host + p->host_offset, p->length);
      /* Held by the sender until every chunk is sent: @xfer stays. */
      send_chunk (self, p, t->request, t->alloc, t->offset);
      g_mutex_lock (&self->lock);
      xfer->unsent--;
      g_cond_broadcast (&self->cond);
      g_mutex_unlock (&self->lock);
    }
  else
    {
      memcpy (xfer->host + p->host_offset, p->region->data, p->length);
      _accel_remote_arena_release (self->arena, p->region);
      g_free (p);
      _accel_remote_transfer_release (self, xfer, NULL);
    }
  _accel_remote_connection_unref (self);
  g_free (t);
}

static void
copy_task_push (GThreadPool *pool, AccelRemoteConnection *self, Pending *p, AccelChannelKind request,
                guint64 alloc, guint64 offset)
{
  CopyTask *t = g_new (CopyTask, 1);
  t->self = _accel_remote_connection_ref (self);
  t->p = p;
  t->request = request;
  t->alloc = alloc;
  t->offset = offset;
  g_thread_pool_push (pool, t, NULL);
}

/* On the reader thread: copies an answered READ chunk out of the arena. */
void
_accel_remote_chunk_read (AccelRemoteConnection *self, Pending *p)
{
  GThreadPool *pool = copy_pool ();

  if (pool)
    {
      copy_task_push (pool, self, p, 0, 0, 0);
      return;
    }
  memcpy (p->xfer->host + p->host_offset, p->region->data, p->length);
  _accel_remote_arena_release (self->arena, p->region);
  Transfer *xfer = p->xfer;
  g_free (p);
  _accel_remote_transfer_release (self, xfer, NULL);
}

/* Completes the transfer once its last chunk is answered. Takes @error. */
void
_accel_remote_transfer_release (AccelRemoteConnection *self, Transfer *xfer, GError *error)
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

/* Ops. */

/* A buffer's table entry never changes: it is made once, by whichever
 * thread first sends the buffer, and kept as the buffer's backend data. */
static GVariant *
buffer_entry (AccelBuffer *b)
{
  GVariant *entry = accel_buffer_get_backend_data (b);
  if (G_LIKELY (entry != NULL))
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
  if (!_accel_buffer_offer_backend_data (b, entry, (GDestroyNotify) g_variant_unref))
    {
      g_variant_unref (entry);
      entry = accel_buffer_get_backend_data (b);
    }
  return entry;
}

typedef struct {
  GVariant *stack[16];
  GVariant **entries;
  guint n;
  guint capacity;
} Table;

static void
add_buffer (AccelOp *op, GParamSpec *pspec, AccelBuffer *b, AccelAccess access, gpointer data)
{
  Table *t = data;
  GVariant *entry = buffer_entry (b);

  /* A buffer named by two properties goes in once: same buffer, same entry. */
  for (guint i = 0; i < t->n; i++)
    if (t->entries[i] == entry)
      return;
  if (t->n == t->capacity)
    {
      GVariant **bigger = g_new (GVariant *, t->capacity * 2);
      memcpy (bigger, t->entries, t->n * sizeof (GVariant *));
      if (t->entries != t->stack)
        g_free (t->entries);
      t->entries = bigger;
      t->capacity *= 2;
    }
  t->entries[t->n++] = entry;
}

/* GVariant's serialised form of a container of @body_size bytes with
 * @n_offsets framing offsets: each offset takes the smallest size that
 * can address the whole container (as gvs_calculate_total_size()). */
static gsize
offset_size (gsize body_size, gsize n_offsets)
{
  if (body_size + n_offsets <= G_MAXUINT8)
    return 1;
  if (body_size + 2 * n_offsets <= G_MAXUINT16)
    return 2;
  if (body_size + 4 * n_offsets <= G_MAXUINT32)
    return 4;
  return 8;
}

static void
put_offset (guint8 *at, gsize value, gsize size)
{
  guint64 le = GUINT64_TO_LE ((guint64) value);
  memcpy (at, &le, size);
}

/* Any thread: the OP message's body, `((sa{sv})a(tttuaxax))`, written
 * straight in its serialised form from the op's serialised form and the
 * buffers' kept table entries, rather than as a tree of variants that
 * GLib would then walk and copy (which cost more than serialising the op
 * itself). The layout is GVariant's: the array's entries each aligned to
 * 8 and followed by their end offsets; the tuple's members, the second
 * aligned to 8, followed by the first one's end offset. */
static gboolean
check_bodies (void)
{
  static gsize check = 0;
  if (g_once_init_enter (&check))
    g_once_init_leave (&check, g_getenv ("ACCEL_REMOTE_CHECK_BODIES") ? 2 : 1);
  return check == 2;
}

static GVariant *
op_body (AccelOp *op)
{
  Table t = { .n = 0, .capacity = G_N_ELEMENTS (t.stack) };
  t.entries = t.stack;
  _accel_op_foreach_buffer (op, add_buffer, &t);
  g_autoptr(GVariant) params = accel_op_serialize (op);
  gsize params_size = g_variant_get_size (params);

  gsize entries_end = 0;
  for (guint i = 0; i < t.n; i++)
    entries_end = ((entries_end + 7) & ~(gsize) 7) + g_variant_get_size (t.entries[i]);
  gsize array_offsets = offset_size (entries_end, t.n);
  gsize array_size = entries_end + array_offsets * t.n;
  gsize array_at = (params_size + 7) & ~(gsize) 7;
  gsize tuple_body = array_at + array_size;
  gsize tuple_offset = offset_size (tuple_body, 1);
  gsize size = tuple_body + tuple_offset;

  guint8 *data = g_malloc0 (size);
  memcpy (data, g_variant_get_data (params), params_size);
  guint8 *array = data + array_at;
  gsize at = 0;
  for (guint i = 0; i < t.n; i++)
    {
      at = (at + 7) & ~(gsize) 7;
      gsize n = g_variant_get_size (t.entries[i]);
      memcpy (array + at, g_variant_get_data (t.entries[i]), n);
      at += n;
      put_offset (array + entries_end + i * array_offsets, at, array_offsets);
    }
  put_offset (data + tuple_body, params_size, tuple_offset);
  GVariant *body = g_variant_new_from_data (ACCEL_CHANNEL_OP_BODY_TYPE, data, size, TRUE, g_free, data);

  /* Tests hold it against GLib's own serialisation
   * ($ACCEL_REMOTE_CHECK_BODIES). */
  if (G_UNLIKELY (check_bodies ()))
    {
      GVariant *fields[2] = {
        params,
        g_variant_new_array (G_VARIANT_TYPE ("(tttuaxax)"), t.entries, t.n),
      };
      g_autoptr(GVariant) reference = g_variant_ref_sink (g_variant_new_tuple (fields, 2));
      if (g_variant_get_size (reference) != size || memcmp (g_variant_get_data (reference), data, size) != 0)
        g_error ("accel-remote-work: the body of “%s” differs from GLib's serialisation", accel_op_get_type_name (op));
    }
  if (t.entries != t.stack)
    g_free (t.entries);
  return body;
}

/* The body an op was last sent with is kept on the op: an op submitted
 * again unchanged (its properties have not notified since, and it goes
 * over the same connection) is sent with the same bytes. Not for op types
 * with state outside their properties (serialize_extra). */
static GVariant *
op_body_cached (AccelRemoteConnection *self, AccelOp *op)
{
  if (ACCEL_OP_GET_CLASS (op)->serialize_extra != NULL)
    return op_body (op);
  guint changes = _accel_op_get_changes (op);
  GVariant *body = _accel_op_kept_body_get (op, self->serial, changes);
  if (body != NULL)
    {
      if (G_UNLIKELY (check_bodies ()))
        {
          g_autoptr(GVariant) fresh = g_variant_ref_sink (op_body (op));
          if (!g_variant_equal (fresh, body))
            g_error ("accel-remote-work: the kept body of “%s” is out of date", accel_op_get_type_name (op));
        }
      return body;
    }
  body = g_variant_ref_sink (op_body (op));
  _accel_op_kept_body_set (op, self->serial, changes, body);
  return body;
}

static int
take_slot (AccelRemoteConnection *self)
{
  guint32 free_slots = __atomic_load_n (&self->free_slots, __ATOMIC_ACQUIRE);
  while (free_slots != 0)
    {
      int slot = __builtin_ctz (free_slots);
      if (__atomic_compare_exchange_n (&self->free_slots, &free_slots, free_slots & ~(1u << slot), FALSE,
                                       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return slot;
    }
  return -1;
}

static void
give_slot (AccelRemoteConnection *self, int slot)
{
  if (slot >= 0)
    __atomic_fetch_or (&self->free_slots, 1u << slot, __ATOMIC_RELEASE);
}

/* The waiting caller's poll: the answer is in its slot, or (when it is
 * about to park) marks the slot so that the answer comes through the ring. */
static gboolean
slot_poll (AccelWaiter *w, gboolean parking)
{
  AccelRemoteConnection *self = w->poll_data;
  gboolean answered = parking ? _accel_channel_slot_park (self->channel, w->poll_slot, w->poll_id)
                              : _accel_channel_slot_answered (self->channel, w->poll_slot, w->poll_id);
  if (!answered)
    return FALSE;
  /* Not there: the reader (an answer through the ring) or the
   * connection's death took it, and completes it. */
  Pending *p = _accel_remote_connection_take (self, w->poll_id);
  if (p == NULL)
    return FALSE;
  _accel_remote_connection_complete (self, p, NULL, NULL);
  _accel_remote_connection_done_completing (self, 1);
  return TRUE;
}

/* Sends @work, whose answer completes it. With @may_decline, a dead
 * connection returns FALSE with nothing done; without, it completes the
 * work with its error. Takes @body: a floating reference, or a full one
 * (a kept op body is handed on as one). */
static gboolean
send_work (AccelRemoteConnection *self, AccelWork *work, AccelChannelKind kind, GVariant *body,
           gboolean may_decline)
{
  g_autoptr(GVariant) owned = g_variant_take_ref (body);
  GError *error = NULL;
  Pending *p = g_new0 (Pending, 1);
  guint64 id;

  /* A blocking caller on the straight path waits for its answer itself.
   * Nothing of @p or @work is read once @p is registered: whoever takes
   * the entry may complete and free both at once. */
  int slot = may_decline && work->mode == ACCEL_WORK_MODE_WAIT ? take_slot (self) : -1;
  AccelWaiter *w = slot >= 0 ? work->waiter : NULL;
  p->type = PENDING_WORK;
  p->work = work;
  p->slot = slot;
  if (G_UNLIKELY (_accel_stage_trace_on ()))
    p->trace_ns = _accel_stage_trace_now ();
  if (slot >= 0)
    _accel_channel_slot_arm (self->channel, slot);
  if (!_accel_remote_connection_register (self, p, &id, &error))
    {
      give_slot (self, slot);
      g_free (p);
      if (may_decline)
        {
          g_error_free (error);
          return FALSE;
        }
      accel_device_complete_work (self->device, work, error);
      return TRUE;
    }
  if (w != NULL)
    {
      /* The waiter is the caller's, on this thread: it waits after this. */
      w->poll_data = _accel_remote_connection_ref (self);
      w->poll_destroy = (GDestroyNotify) _accel_remote_connection_unref;
      w->poll_id = id;
      w->poll_slot = slot;
      /* As long as a receiver of the channel spins: a caller that parks
       * sooner sends its answer through the ring and the reader, and a
       * host that had gone idle (its spin shrunk) takes a futex wake-up
       * per request, so neither side would find the other spinning again
       * (65 µs a round trip instead of 2.7 here). */
      w->spin_us = _accel_channel_get_spin_cap (self->channel);
      w->poll = slot_poll;
    }
  /* From here the work belongs to the table: it may already be complete. */
  _accel_remote_connection_send (self, kind, id, g_steal_pointer (&owned));
  return TRUE;
}

/* Transfers. */

static Pending *
chunk_new (Transfer *xfer, AccelRemoteRegion *region, gsize host_offset, gsize length)
{
  Pending *p = g_new0 (Pending, 1);
  p->type = PENDING_CHUNK;
  p->slot = -1;
  p->xfer = xfer;
  p->region = region;
  p->host_offset = host_offset;
  p->length = length;
  return p;
}

/* See send_work() for @may_decline: only the first request can be declined. */
static gboolean
send_transfer (AccelRemoteConnection *self, AccelWork *work, gboolean may_decline)
{
  AccelWorkKind kind = accel_work_get_kind (work);
  AccelChannelKind request = kind == ACCEL_WORK_WRITE ? ACCEL_CHANNEL_WRITE : ACCEL_CHANNEL_READ;
  AccelBuffer *buffer = accel_work_get_buffer (work);
  guint64 alloc = GPOINTER_TO_SIZE (accel_buffer_get_memory (buffer));
  guint64 base = accel_buffer_get_offset (buffer);
  gsize size = 0;
  guint8 *host = accel_work_get_host_data (work, &size);
  size = MIN (size, accel_buffer_get_size (buffer));
  GError *error = NULL;

  if (size == 0)
    {
      accel_device_complete_work (self->device, work, NULL);
      return TRUE;
    }

  Transfer *xfer = g_new0 (Transfer, 1);
  xfer->work = work;
  xfer->kind = kind;
  xfer->host = host;
  xfer->remaining = 1;   /* held while chunks are being sent */

  /* Host memory in the shared region: one request, moved in place. */
  if (_accel_remote_host_memory_owns (self->host_memory, host)
      && _accel_remote_host_memory_owns (self->host_memory, host + size - 1))
    {
      Pending *p = chunk_new (xfer, NULL, 0, size);
      guint64 id;
      xfer_hold (self, xfer, FALSE);
      if (!_accel_remote_connection_register (self, p, &id, &error))
        {
          g_free (p);
          if (may_decline)
            {
              g_free (xfer);
              g_error_free (error);
              return FALSE;
            }
          xfer->remaining--;
          _accel_remote_transfer_release (self, xfer, error);
          return TRUE;
        }
      _accel_remote_connection_send (self, request, id,
                                     g_variant_new ("(tttt)", alloc, base, (guint64) size,
                                                    (guint64) (host - self->shared)));
      _accel_remote_transfer_release (self, xfer, NULL);
      return TRUE;
    }

  GThreadPool *pool = copy_pool ();
  for (gsize off = 0; off < size;)
    {
      gsize len = MIN (self->chunk_size, size - off);
      AccelRemoteRegion *region = _accel_remote_arena_alloc (self->arena, len, &error);
      if (region == NULL)
        {
          if (off == 0 && may_decline)
            {
              g_free (xfer);
              g_error_free (error);
              return FALSE;
            }
          /* Gives the sender's hold back. */
          _accel_remote_transfer_release (self, xfer, error);
          return TRUE;
        }
      Pending *p = chunk_new (xfer, region, off, len);
      /* The first chunk here (a dead connection may still decline the
       * work), big later ones of a write by the copy threads. */
      gboolean by_pool = pool && kind == ACCEL_WORK_WRITE && off > 0;
      xfer_hold (self, xfer, by_pool);
      if (by_pool)
        copy_task_push (pool, self, p, request, alloc, base + off);
      else
        {
          if (kind == ACCEL_WORK_WRITE)
            memcpy (region->data, host + off, len);
          if (off == 0 && may_decline)
            {
              guint64 id;
              GVariant *body = g_variant_ref_sink (g_variant_new ("(tttt)", alloc, base, (guint64) len,
                                                                  (guint64) region->offset));
              if (!_accel_remote_connection_register (self, p, &id, &error))
                {
                  g_variant_unref (body);
                  g_free (p);
                  _accel_remote_arena_release (self->arena, region);
                  g_free (xfer);
                  g_error_free (error);
                  return FALSE;
                }
              _accel_remote_connection_send (self, request, id, body);
            }
          else
            send_chunk (self, p, request, alloc, base + off);
        }
      off += len;
    }
  /* Every chunk is in the ring before the work that follows this one. */
  g_mutex_lock (&self->lock);
  self->waiters++;
  while (xfer->unsent > 0)
    g_cond_wait (&self->cond, &self->lock);
  self->waiters--;
  g_mutex_unlock (&self->lock);
  _accel_remote_transfer_release (self, xfer, NULL);
  return TRUE;
}

static gboolean
send_any (AccelRemoteConnection *self, AccelWork *work, gboolean may_decline)
{
  switch (accel_work_get_kind (work))
    {
    case ACCEL_WORK_OP:
      {
        gint64 t0 = G_UNLIKELY (_accel_stage_trace_on ()) ? _accel_stage_trace_now () : 0;
        GVariant *body = op_body_cached (self, accel_work_get_op (work));
        if (G_UNLIKELY (t0 != 0))
          _accel_stage_trace_add ("app: op body made", _accel_stage_trace_now () - t0);
        return send_work (self, work, ACCEL_CHANNEL_OP, body, may_decline);
      }
    case ACCEL_WORK_WRITE:
    case ACCEL_WORK_READ:
      return send_transfer (self, work, may_decline);
    case ACCEL_WORK_ZERO:
      {
        AccelBuffer *buffer = accel_work_get_buffer (work);
        return send_work (self, work, ACCEL_CHANNEL_ZERO,
                          g_variant_new ("(ttt)", (guint64) GPOINTER_TO_SIZE (accel_buffer_get_memory (buffer)),
                                         (guint64) accel_buffer_get_offset (buffer),
                                         (guint64) accel_buffer_get_size (buffer)),
                          may_decline);
      }
    default:
      accel_device_complete_work (self->device, work,
                                  g_error_new (ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                                               "%s: unknown kind of work %d", self->device_name,
                                               accel_work_get_kind (work)));
      return TRUE;
    }
}

/* On the device thread: the work is always taken (and completed). */
void
_accel_remote_connection_execute (AccelRemoteConnection *self, AccelWork *work)
{
  send_any (self, work, FALSE);
}

/* On a submitting thread. Declines (FALSE, nothing done) work of another
 * generation, a dead connection, and calls from the reader thread: a send
 * there that waited for room in the ring or the arena would wait for the
 * reader itself. */
gboolean
_accel_remote_connection_hand_over (AccelRemoteConnection *self, AccelWork *work)
{
  if (work->generation != self->generation || g_thread_self () == self->reader)
    return FALSE;
  return send_any (self, work, TRUE);
}
