/* accel-host-requests.c: the requests an `accel-device-host` serves. See
 * accel-host-requests.h.
 *
 * In the host, the device's own thread reads the channel (a poller of its
 * dispatcher) and serves each request here:
 *
 * - a request is read, checked and turned into an op (or a transfer of a
 *   byte range) right there, and submitted with a callback through the
 *   core's private path; being on the device thread, it runs at once:
 *   validated, its kernel chosen, executed;
 * - the callback runs on the thread that completes the work (the device
 *   thread for cpu, the completion thread for CUDA) and answers from
 *   there: success with nothing to carry goes to the program's send
 *   function with no body (the host writes it into the request's reply
 *   slot when it names one).
 *
 * Allocations, frees and memory queries are served on the calling thread,
 * in request order. A fuzzer calls this from its own thread: the work
 * then goes through the device's mailbox, and _accel_host_requests_drain()
 * waits for its answers.
 *
 * Nothing read from the channel is trusted: message types, allocation ids,
 * offsets, lengths and shapes are all checked before use.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>

#include "accel-host-requests.h"

struct _AccelHostRequests {
  AccelDevice *device;
  guint generation;             /* of the device when this host started */
  guint8 *arena;
  gsize arena_size;
  AccelHostSendFunc send;
  AccelHostLostFunc lost;
  gpointer user_data;

  GHashTable *allocs;           /* id -> AccelBuffer; handling thread only */
  guint64 next_alloc;
  GHashTable *views;            /* buffer handle -> View; handling thread only */
  GHashTable *ops;              /* GBytes (an op request's body) -> AccelOp; handling thread only */

  gint unanswered;              /* atomic: work submitted, not answered yet */
  GMutex drain_lock;
  GCond drain_cond;
};

static gboolean
context_lost (AccelHostRequests *self, const GError *error)
{
  return g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED)
         || accel_device_get_state (self->device) == ACCEL_DEVICE_STATE_FAILED
         || accel_device_get_generation (self->device) != self->generation;
}

/* Answers @id with success (@body, or nothing) or @error, which it takes. */
static void
finish (AccelHostRequests *self, guint64 id, GVariant *body, GError *error)
{
  if (error == NULL)
    {
      self->send (ACCEL_CHANNEL_REPLY, id, body, self->user_data);
      return;
    }
  if (body)
    g_variant_unref (g_variant_ref_sink (body));
  if (context_lost (self, error))
    self->lost (id, error, self->user_data);
  self->send (ACCEL_CHANNEL_FAILED, id, _accel_channel_error_to_variant (error), self->user_data);
  g_error_free (error);
}

static GError *
malformed (const char *what, GVariant *body)
{
  return g_error_new (ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                      "accel-device-host: malformed %s request (body of type %s)", what,
                      g_variant_get_type_string (body));
}

static AccelBuffer *
lookup_alloc (AccelHostRequests *self, guint64 alloc, GError **error)
{
  AccelBuffer *b = g_hash_table_lookup (self->allocs, &alloc);
  if (b == NULL)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 "accel-device-host: no allocation %" G_GUINT64_FORMAT " on %s", alloc,
                 accel_device_get_name (self->device));
  return b;
}

/* A byte range of an allocation, as a u8 buffer. */
static AccelBuffer *
byte_range (AccelHostRequests *self, guint64 alloc, guint64 offset, guint64 length, GError **error)
{
  AccelBuffer *b = lookup_alloc (self, alloc, error);
  if (b == NULL)
    return NULL;
  if (length > G_MAXINT64)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "accel-device-host: bad length");
      return NULL;
    }
  g_autoptr(AccelShape) shape = accel_shape_new_1d ((gint64) length);
  return _accel_buffer_new_alias (b, offset, ACCEL_DTYPE_U8, shape, error);
}

static guint8 *
arena_range (AccelHostRequests *self, guint64 offset, guint64 length, GError **error)
{
  if (offset > self->arena_size || length > self->arena_size - offset)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "accel-device-host: %" G_GUINT64_FORMAT " bytes at %" G_GUINT64_FORMAT
                   " are outside the %" G_GSIZE_FORMAT "-byte arena", length, offset, self->arena_size);
      return NULL;
    }
  return self->arena + offset;
}

static void
do_alloc (AccelHostRequests *self, guint64 id, GVariant *body)
{
  if (!g_variant_is_of_type (body, G_VARIANT_TYPE_UINT64))
    {
      finish (self, id, NULL, malformed ("alloc", body));
      return;
    }
  guint64 size = g_variant_get_uint64 (body);
  if (size == 0 || size > G_MAXINT64)
    {
      finish (self, id, NULL, g_error_new (ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                                          "accel-device-host: cannot allocate %" G_GUINT64_FORMAT " bytes", size));
      return;
    }
  g_autoptr(AccelShape) shape = accel_shape_new_1d ((gint64) size);
  GError *error = NULL;
  AccelBuffer *b = accel_device_alloc (self->device, ACCEL_DTYPE_U8, shape, &error);
  if (b == NULL)
    {
      finish (self, id, NULL, error);
      return;
    }
  guint64 *key = g_new (guint64, 1);
  *key = ++self->next_alloc;
  g_hash_table_insert (self->allocs, key, b);
  finish (self, id, g_variant_new_uint64 (*key), NULL);
}

/* A work's answer: the request it answers. */
typedef struct {
  AccelHostRequests *self;
  guint64 id;
} Answer;

static gpointer
answer_new (AccelHostRequests *self, guint64 id)
{
  Answer *a = g_new (Answer, 1);
  a->self = self;
  a->id = id;
  g_atomic_int_inc (&self->unanswered);
  return a;
}

/* ACCEL_REMOTE_TRACE: when each recent op's request was read, by id. */
static gint64 trace_read_ns[1024];

/* On the thread that completed the work. */
static void
work_answered (AccelWork *work, GError *error, gpointer data)
{
  Answer *a = data;
  AccelHostRequests *self = a->self;
  guint64 id = a->id;

  finish (self, id, NULL, error);
  g_free (a);
  if (G_UNLIKELY (_accel_stage_trace_on ()))
    _accel_stage_trace_add ("host: request read to answer written",
                            _accel_stage_trace_now () - trace_read_ns[id % G_N_ELEMENTS (trace_read_ns)]);
  /* While others are unanswered, a plain decrement: this thread touches
   * @self no more. The one that may reach zero does so under the lock
   * _accel_host_requests_drain () reads the count with, so a drain that
   * sees no work left returns (and its caller may free @self) only once
   * this thread is done with the lock. */
  gint left = g_atomic_int_get (&self->unanswered);
  while (left > 1)
    if (g_atomic_int_compare_and_exchange_full (&self->unanswered, left, left - 1, &left))
      return;
  g_mutex_lock (&self->drain_lock);
  if (g_atomic_int_dec_and_test (&self->unanswered))
    g_cond_broadcast (&self->drain_cond);
  g_mutex_unlock (&self->drain_lock);
}

/* The device moves the bytes straight from or to the arena (for CUDA: by
 * DMA, the arena being pinned); the application does not touch this range
 * until it has the answer. */
static void
do_transfer (AccelHostRequests *self, guint32 kind, guint64 id, GVariant *body)
{
  guint64 alloc, offset, length, arena_offset;
  GError *error = NULL;

  if (!g_variant_is_of_type (body, G_VARIANT_TYPE ("(tttt)")))
    {
      finish (self, id, NULL, malformed ("transfer", body));
      return;
    }
  g_variant_get (body, "(tttt)", &alloc, &offset, &length, &arena_offset);
  guint8 *data = arena_range (self, arena_offset, length, &error);
  g_autoptr(AccelBuffer) range = data ? byte_range (self, alloc, offset, length, &error) : NULL;
  if (range == NULL)
    {
      finish (self, id, NULL, error);
      return;
    }
  _accel_device_transfer_with_callback (self->device, kind == ACCEL_CHANNEL_WRITE ? ACCEL_WORK_WRITE : ACCEL_WORK_READ,
                                        range, data, length, work_answered, answer_new (self, id));
}

static void
do_zero (AccelHostRequests *self, guint64 id, GVariant *body)
{
  guint64 alloc, offset, length;
  GError *error = NULL;

  if (!g_variant_is_of_type (body, G_VARIANT_TYPE ("(ttt)")))
    {
      finish (self, id, NULL, malformed ("zero", body));
      return;
    }
  g_variant_get (body, "(ttt)", &alloc, &offset, &length);
  g_autoptr(AccelBuffer) range = byte_range (self, alloc, offset, length, &error);
  if (range == NULL)
    {
      finish (self, id, NULL, error);
      return;
    }
  _accel_device_transfer_with_callback (self->device, ACCEL_WORK_ZERO, range, NULL, length, work_answered,
                                        answer_new (self, id));
}

/* Ops: each buffer handle the op names becomes a view of an allocation,
 * as the buffer table describes it. The application sends the same table
 * entry for a buffer every time, so the view made for it is kept and
 * reused while the entry's bytes are the same (the application's handles
 * are never reused for another buffer, but nothing it sends is trusted);
 * a FREE drops the views of that allocation, so that its memory goes. */

#define MAX_VIEWS 4096

typedef struct {
  GBytes *entry;              /* the table entry's serialised bytes */
  guint64 alloc;
  AccelBuffer *view;
} View;

static void
view_free (gpointer data)
{
  View *v = data;
  g_bytes_unref (v->entry);
  g_object_unref (v->view);
  g_free (v);
}

static gboolean
view_of_alloc (gpointer key, gpointer value, gpointer alloc)
{
  return ((View *) value)->alloc == *(guint64 *) alloc;
}

static void
forget_views_of (AccelHostRequests *self, guint64 alloc)
{
  if (g_hash_table_size (self->views) > 0)
    g_hash_table_foreach_remove (self->views, view_of_alloc, &alloc);
}

typedef struct {
  AccelHostRequests *self;
  GVariant *table;
  GPtrArray *made;            /* AccelBuffer, in table order of first use */
  GArray *made_handles;       /* guint64 */
  GError *error;
} Resolve;

static guint64
child_u64 (GVariant *tuple, gsize i)
{
  g_autoptr(GVariant) c = g_variant_get_child_value (tuple, i);
  return g_variant_get_uint64 (c);
}

static AccelBuffer *
make_view (AccelHostRequests *self, GVariant *entry, GError **error)
{
  guint64 handle = child_u64 (entry, 0), alloc = child_u64 (entry, 1), offset = child_u64 (entry, 2);
  g_autoptr(GVariant) dtype_v = g_variant_get_child_value (entry, 3);
  guint32 dtype = g_variant_get_uint32 (dtype_v);
  g_autoptr(GVariant) dims_v = g_variant_get_child_value (entry, 4);
  g_autoptr(GVariant) strides_v = g_variant_get_child_value (entry, 5);

  gsize n_dims, n_strides;
  const gint64 *dims = g_variant_get_fixed_array (dims_v, &n_dims, sizeof (gint64));
  const gint64 *strides = g_variant_get_fixed_array (strides_v, &n_strides, sizeof (gint64));
  gboolean ok = n_dims == n_strides && n_dims <= ACCEL_SHAPE_MAX_RANK
                && accel_dtype_get_size (dtype) != 0;
  for (gsize i = 0; ok && i < n_dims; i++)
    ok = dims[i] >= 0 && strides[i] >= 0;
  if (!ok)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "accel-device-host: buffer %" G_GUINT64_FORMAT " has a bad dtype or shape", handle);
      return NULL;
    }
  AccelBuffer *base = lookup_alloc (self, alloc, error);
  if (base == NULL)
    return NULL;
  g_autoptr(AccelShape) shape = accel_shape_new_strided (dims, strides, n_dims);
  return _accel_buffer_new_alias (base, offset, dtype, shape, error);
}

static AccelBuffer *
resolve_buffer (guint64 handle, gpointer data)
{
  Resolve *r = data;
  AccelHostRequests *self = r->self;

  if (r->error)
    return NULL;
  for (guint i = 0; i < r->made_handles->len; i++)
    if (g_array_index (r->made_handles, guint64, i) == handle)
      return g_object_ref (r->made->pdata[i]);

  gsize n = g_variant_n_children (r->table);
  for (gsize i = 0; i < n; i++)
    {
      g_autoptr(GVariant) entry = g_variant_get_child_value (r->table, i);
      if (child_u64 (entry, 0) != handle)
        continue;

      gsize size = g_variant_get_size (entry);
      gconstpointer data = g_variant_get_data (entry);
      View *cached = g_hash_table_lookup (self->views, &handle);
      AccelBuffer *view;
      if (cached && data && g_bytes_get_size (cached->entry) == size
          && memcmp (g_bytes_get_data (cached->entry, NULL), data, size) == 0)
        view = g_object_ref (cached->view);
      else
        {
          view = make_view (r->self, entry, &r->error);
          if (view == NULL)
            return NULL;
          if (data)
            {
              if (g_hash_table_size (self->views) >= MAX_VIEWS)
                g_hash_table_remove_all (self->views);
              View *v = g_new (View, 1);
              v->entry = g_bytes_new (data, size);
              v->alloc = child_u64 (entry, 1);
              v->view = g_object_ref (view);
              guint64 *key = g_new (guint64, 1);
              *key = handle;
              g_hash_table_replace (self->views, key, v);
            }
        }
      g_ptr_array_add (r->made, view);
      g_array_append_val (r->made_handles, handle);
      return g_object_ref (view);
    }
  g_set_error (&r->error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "accel-device-host: the op names buffer %" G_GUINT64_FORMAT ", which its table lacks", handle);
  return NULL;
}

/* The op a request's body describes. An application sends an op that it
 * submits again unchanged with the same bytes, and those bytes name the
 * same allocations (their ids are never reused): the op made for them
 * before is run again, without reading it anew. At most MAX_OPS are kept;
 * a FREE drops them all, so that no kept op holds freed memory. */
#define MAX_OPS 256

static AccelOp *
op_of_body (AccelHostRequests *self, GVariant *body, GError **error)
{
  g_autoptr(GBytes) key = g_bytes_new_static (g_variant_get_data (body), g_variant_get_size (body));
  AccelOp *kept = g_variant_get_data (body) ? g_hash_table_lookup (self->ops, key) : NULL;
  if (kept != NULL)
    return g_object_ref (kept);

  g_autoptr(GVariant) serialized = g_variant_get_child_value (body, 0);
  Resolve r = { self, g_variant_get_child_value (body, 1), g_ptr_array_new_with_free_func (g_object_unref),
                g_array_new (FALSE, FALSE, sizeof (guint64)), NULL };
  AccelOp *op = accel_op_deserialize (serialized, resolve_buffer, &r, error);
  if (r.error)
    {
      g_clear_object (&op);
      g_clear_error (error);
      g_propagate_error (error, g_steal_pointer (&r.error));
    }
  g_variant_unref (r.table);
  g_ptr_array_unref (r.made);
  g_array_unref (r.made_handles);
  if (op != NULL && g_variant_get_data (body) != NULL)
    {
      if (g_hash_table_size (self->ops) >= MAX_OPS)
        g_hash_table_remove_all (self->ops);
      g_hash_table_insert (self->ops, g_bytes_new (g_variant_get_data (body), g_variant_get_size (body)),
                           g_object_ref (op));
    }
  return op;
}

static void
do_op (AccelHostRequests *self, guint64 id, GVariant *body)
{
  if (!g_variant_is_of_type (body, ACCEL_CHANNEL_OP_BODY_TYPE))
    {
      finish (self, id, NULL, malformed ("op", body));
      return;
    }

  gint64 t0 = G_UNLIKELY (_accel_stage_trace_on ()) ? _accel_stage_trace_now () : 0;
  GError *error = NULL;
  g_autoptr(AccelOp) op = op_of_body (self, body, &error);
  if (op == NULL)
    {
      finish (self, id, NULL, error);
      return;
    }
  if (G_UNLIKELY (t0 != 0))
    {
      gint64 t1 = _accel_stage_trace_now ();
      trace_read_ns[id % G_N_ELEMENTS (trace_read_ns)] = t0;
      _accel_stage_trace_add ("host: op deserialised", t1 - t0);
      _accel_device_submit_with_callback (self->device, op, work_answered, answer_new (self, id));
      _accel_stage_trace_add ("host: submit call", _accel_stage_trace_now () - t1);
      return;
    }
  _accel_device_submit_with_callback (self->device, op, work_answered, answer_new (self, id));
}

void
_accel_host_requests_handle (AccelHostRequests *self, guint32 kind, guint64 id, GVariant *body)
{
  switch (kind)
    {
    case ACCEL_CHANNEL_ALLOC:
      do_alloc (self, id, body);
      break;
    case ACCEL_CHANNEL_FREE:
      if (g_variant_is_of_type (body, G_VARIANT_TYPE_UINT64))
        {
          guint64 alloc = g_variant_get_uint64 (body);
          forget_views_of (self, alloc);
          /* Kept ops may hold views of it. */
          g_hash_table_remove_all (self->ops);
          g_hash_table_remove (self->allocs, &alloc);
        }
      break;
    case ACCEL_CHANNEL_WRITE:
    case ACCEL_CHANNEL_READ:
      do_transfer (self, kind, id, body);
      break;
    case ACCEL_CHANNEL_ZERO:
      do_zero (self, id, body);
      break;
    case ACCEL_CHANNEL_OP:
      do_op (self, id, body);
      break;
    case ACCEL_CHANNEL_MEMORY:
      finish (self, id, g_variant_new ("(tt)", accel_device_get_memory_total (self->device),
                                       accel_device_get_memory_free (self->device)), NULL);
      break;
    default:
      if (id != 0)
        finish (self, id, NULL, g_error_new (ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                                             "accel-device-host: unknown request kind %u", kind));
      break;
    }
}

void
_accel_host_requests_drain (AccelHostRequests *self)
{
  g_mutex_lock (&self->drain_lock);
  while (g_atomic_int_get (&self->unanswered) > 0)
    g_cond_wait (&self->drain_cond, &self->drain_lock);
  g_mutex_unlock (&self->drain_lock);
}

AccelHostRequests *
_accel_host_requests_new (AccelDevice *device,
                          guint8 *arena,
                          gsize arena_size,
                          AccelHostSendFunc send,
                          AccelHostLostFunc lost,
                          gpointer user_data)
{
  AccelHostRequests *self = g_new0 (AccelHostRequests, 1);

  self->device = g_object_ref (device);
  self->generation = accel_device_get_generation (device);
  self->arena = arena;
  self->arena_size = arena_size;
  self->send = send;
  self->lost = lost;
  self->user_data = user_data;
  self->allocs = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_object_unref);
  self->views = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, view_free);
  self->ops = g_hash_table_new_full (g_bytes_hash, g_bytes_equal, (GDestroyNotify) g_bytes_unref, g_object_unref);
  g_mutex_init (&self->drain_lock);
  g_cond_init (&self->drain_cond);
  return self;
}

void
_accel_host_requests_free (AccelHostRequests *self)
{
  if (self == NULL)
    return;
  _accel_host_requests_drain (self);
  g_hash_table_unref (self->ops);
  g_hash_table_unref (self->views);
  g_hash_table_unref (self->allocs);
  g_mutex_clear (&self->drain_lock);
  g_cond_clear (&self->drain_cond);
  g_object_unref (self->device);
  g_free (self);
}
