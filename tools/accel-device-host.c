/* accel-device-host: serves one device of this machine to the application
 * that started it (an AccelRemoteDevice), over the shared-memory channel of
 * core/accel-channel.h at fds 3 (memory) and 4 (socket).
 *
 * It makes an AccelSystem with the normal registry (plugins from
 * ACCEL_PLUGIN_PATH), takes the device named by --device, tells it where
 * the shared arena is (ACCEL_REMOTE_DEVICE_HOST_MEMORY_MESSAGE), describes
 * it in a HELLO message, and then serves requests on the device's own
 * thread, which reads the channel between the messages of its mailbox (a
 * poller of its dispatcher):
 *
 * - a request is read, checked and turned into an op (or a transfer of a
 *   byte range) right there, and submitted with a callback through the
 *   core's private path; being on the device thread, it runs at once:
 *   validated, its kernel chosen, executed;
 * - the callback runs on the thread that completes the work (the device
 *   thread for cpu, the completion thread for CUDA) and writes the answer
 *   from there: success into the request's reply slot when it names one
 *   (the application's caller spins on it), else through the reply ring.
 *
 * So the path of an op is: the application's thread writes it into the
 * ring; the device thread reads and launches it; the completing thread
 * answers. Allocations, frees and memory queries are served on the device
 * thread too, in request order. See docs/device-host.md.
 *
 * A lost context (an answer of CONTEXT_POISONED, the device FAILED, or its
 * generation moved) cannot be rebuilt here: the host answers that request
 * with CONTEXT_POISONED, sends a POISONED notice for everything else in
 * flight, and exits. It also exits when the application goes (the parent
 * death signal, and end of file on the socket).
 *
 * Nothing read from the channel is trusted: message types, allocation ids,
 * offsets, lengths and shapes are all checked before use.
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
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "accel-device-private.h"
#include "accel-channel.h"

typedef struct {
  AccelChannel *channel;
  AccelSystem *system;
  AccelDevice *device;
  guint generation;           /* of the device when this host started */
  guint8 *arena;
  gsize arena_size;
  GHashTable *allocs;         /* id -> AccelBuffer; device thread only */
  guint64 next_alloc;
  GHashTable *views;          /* buffer handle -> View; device thread only */
  GHashTable *ops;            /* GBytes (an op request's body) -> AccelOp; device thread only */

  GMutex reply_lock;          /* serialises the threads that answer */
  gboolean dying;             /* under reply_lock */
  gint hung;                  /* atomic: tests asked us to stop answering */
} Host;

/* A request's id travels as the callback data of its work. */
G_STATIC_ASSERT (sizeof (gpointer) >= sizeof (guint64));

static Host host;

static void
send_locked (AccelChannelKind kind, guint64 id, GVariant *body)
{
  g_autoptr(GError) error = NULL;
  if (!_accel_channel_send (host.channel, kind, id, body, -1, &error))
    {
      g_printerr ("accel-device-host: cannot answer: %s\n", error->message);
      _exit (3);
    }
}

static void
reply (AccelChannelKind kind, guint64 id, GVariant *body)
{
  g_autoptr(GVariant) owned = body ? g_variant_ref_sink (body) : NULL;
  g_mutex_lock (&host.reply_lock);
  if (!host.dying && !g_atomic_int_get (&host.hung))
    send_locked (kind, id, owned);
  g_mutex_unlock (&host.reply_lock);
}

static gboolean
context_lost (const GError *error)
{
  return g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED)
         || accel_device_get_state (host.device) == ACCEL_DEVICE_STATE_FAILED
         || accel_device_get_generation (host.device) != host.generation;
}

/* Answers @id (if any) and everything else in flight with CONTEXT_POISONED,
 * then exits: a lost context is not rebuilt inside this process. */
G_GNUC_NORETURN static void
die (guint64 id, const GError *error)
{
  g_autoptr(GError) why = NULL;
  const GError *failure = accel_device_get_failure (host.device);

  if (g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED))
    why = g_error_copy (error);
  else if (failure)
    why = g_error_new (ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED, "%s", failure->message);
  else
    why = g_error_new (ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED,
                       "%s rebuilt its context (generation %u, now %u): %s",
                       accel_device_get_name (host.device), host.generation,
                       accel_device_get_generation (host.device), error->message);

  g_mutex_lock (&host.reply_lock);
  if (!host.dying && !g_atomic_int_get (&host.hung))
    {
      host.dying = TRUE;
      if (id != 0)
        send_locked (ACCEL_CHANNEL_FAILED, id, _accel_channel_error_to_variant (why));
      send_locked (ACCEL_CHANNEL_POISONED, 0, _accel_channel_error_to_variant (why));
    }
  g_mutex_unlock (&host.reply_lock);
  _exit (0);
}

/* Success without a body: into the request's reply slot if it names one;
 * through the ring too if its caller parked (or it names none). */
static void
answer_done (guint64 id)
{
  guint slot = ACCEL_CHANNEL_ID_SLOT (id);

  if (g_atomic_int_get (&host.hung))
    return;
  if (slot != 0 && !_accel_channel_slot_answer (host.channel, slot - 1, id))
    return;
  reply (ACCEL_CHANNEL_REPLY, id, NULL);
}

/* Answers @id with success (@body, or nothing) or @error, which it takes. */
static void
finish (guint64 id, GVariant *body, GError *error)
{
  if (error == NULL)
    {
      if (body)
        reply (ACCEL_CHANNEL_REPLY, id, body);
      else
        answer_done (id);
      return;
    }
  if (body)
    g_variant_unref (g_variant_ref_sink (body));
  if (context_lost (error))
    die (id, error);
  reply (ACCEL_CHANNEL_FAILED, id, _accel_channel_error_to_variant (error));
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
lookup_alloc (guint64 alloc, GError **error)
{
  AccelBuffer *b = g_hash_table_lookup (host.allocs, &alloc);
  if (b == NULL)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 "accel-device-host: no allocation %" G_GUINT64_FORMAT " on %s", alloc,
                 accel_device_get_name (host.device));
  return b;
}

/* A byte range of an allocation, as a u8 buffer. */
static AccelBuffer *
byte_range (guint64 alloc, guint64 offset, guint64 length, GError **error)
{
  AccelBuffer *b = lookup_alloc (alloc, error);
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
arena_range (guint64 offset, guint64 length, GError **error)
{
  if (offset > host.arena_size || length > host.arena_size - offset)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "accel-device-host: %" G_GUINT64_FORMAT " bytes at %" G_GUINT64_FORMAT
                   " are outside the %" G_GSIZE_FORMAT "-byte arena", length, offset, host.arena_size);
      return NULL;
    }
  return host.arena + offset;
}

static void
do_alloc (guint64 id, GVariant *body)
{
  if (!g_variant_is_of_type (body, G_VARIANT_TYPE_UINT64))
    {
      finish (id, NULL, malformed ("alloc", body));
      return;
    }
  guint64 size = g_variant_get_uint64 (body);
  if (size == 0 || size > G_MAXINT64)
    {
      finish (id, NULL, g_error_new (ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                                          "accel-device-host: cannot allocate %" G_GUINT64_FORMAT " bytes", size));
      return;
    }
  g_autoptr(AccelShape) shape = accel_shape_new_1d ((gint64) size);
  GError *error = NULL;
  AccelBuffer *b = accel_device_alloc (host.device, ACCEL_DTYPE_U8, shape, &error);
  if (b == NULL)
    {
      finish (id, NULL, error);
      return;
    }
  guint64 *key = g_new (guint64, 1);
  *key = ++host.next_alloc;
  g_hash_table_insert (host.allocs, key, b);
  finish (id, g_variant_new_uint64 (*key), NULL);
}

/* ACCEL_REMOTE_TRACE: when each recent op's request was read, by id. */
static gint64 trace_read_ns[1024];

/* On the thread that completed the work. */
static void
work_answered (AccelWork *work, GError *error, gpointer data)
{
  guint64 id = GPOINTER_TO_SIZE (data);
  finish (id, NULL, error);
  if (G_UNLIKELY (_accel_stage_trace_on ()))
    _accel_stage_trace_add ("host: request read to answer written",
                            _accel_stage_trace_now () - trace_read_ns[id % G_N_ELEMENTS (trace_read_ns)]);
}

/* The device moves the bytes straight from or to the arena (for CUDA: by
 * DMA, the arena being pinned); the application does not touch this range
 * until it has the answer. */
static void
do_transfer (guint32 kind, guint64 id, GVariant *body)
{
  guint64 alloc, offset, length, arena_offset;
  GError *error = NULL;

  if (!g_variant_is_of_type (body, G_VARIANT_TYPE ("(tttt)")))
    {
      finish (id, NULL, malformed ("transfer", body));
      return;
    }
  g_variant_get (body, "(tttt)", &alloc, &offset, &length, &arena_offset);
  guint8 *data = arena_range (arena_offset, length, &error);
  g_autoptr(AccelBuffer) range = data ? byte_range (alloc, offset, length, &error) : NULL;
  if (range == NULL)
    {
      finish (id, NULL, error);
      return;
    }
  _accel_device_transfer_with_callback (host.device, kind == ACCEL_CHANNEL_WRITE ? ACCEL_WORK_WRITE : ACCEL_WORK_READ,
                                        range, data, length, work_answered, GSIZE_TO_POINTER (id));
}

static void
do_zero (guint64 id, GVariant *body)
{
  guint64 alloc, offset, length;
  GError *error = NULL;

  if (!g_variant_is_of_type (body, G_VARIANT_TYPE ("(ttt)")))
    {
      finish (id, NULL, malformed ("zero", body));
      return;
    }
  g_variant_get (body, "(ttt)", &alloc, &offset, &length);
  g_autoptr(AccelBuffer) range = byte_range (alloc, offset, length, &error);
  if (range == NULL)
    {
      finish (id, NULL, error);
      return;
    }
  _accel_device_transfer_with_callback (host.device, ACCEL_WORK_ZERO, range, NULL, length, work_answered,
                                        GSIZE_TO_POINTER (id));
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
forget_views_of (guint64 alloc)
{
  if (g_hash_table_size (host.views) > 0)
    g_hash_table_foreach_remove (host.views, view_of_alloc, &alloc);
}

typedef struct {
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
make_view (GVariant *entry, GError **error)
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
  AccelBuffer *base = lookup_alloc (alloc, error);
  if (base == NULL)
    return NULL;
  g_autoptr(AccelShape) shape = accel_shape_new_strided (dims, strides, n_dims);
  return _accel_buffer_new_alias (base, offset, dtype, shape, error);
}

static AccelBuffer *
resolve_buffer (guint64 handle, gpointer data)
{
  Resolve *r = data;

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
      View *cached = g_hash_table_lookup (host.views, &handle);
      AccelBuffer *view;
      if (cached && data && g_bytes_get_size (cached->entry) == size
          && memcmp (g_bytes_get_data (cached->entry, NULL), data, size) == 0)
        view = g_object_ref (cached->view);
      else
        {
          view = make_view (entry, &r->error);
          if (view == NULL)
            return NULL;
          if (data)
            {
              if (g_hash_table_size (host.views) >= MAX_VIEWS)
                g_hash_table_remove_all (host.views);
              View *v = g_new (View, 1);
              v->entry = g_bytes_new (data, size);
              v->alloc = child_u64 (entry, 1);
              v->view = g_object_ref (view);
              guint64 *key = g_new (guint64, 1);
              *key = handle;
              g_hash_table_replace (host.views, key, v);
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
op_of_body (GVariant *body, GError **error)
{
  g_autoptr(GBytes) key = g_bytes_new_static (g_variant_get_data (body), g_variant_get_size (body));
  AccelOp *kept = g_variant_get_data (body) ? g_hash_table_lookup (host.ops, key) : NULL;
  if (kept != NULL)
    return g_object_ref (kept);

  g_autoptr(GVariant) serialized = g_variant_get_child_value (body, 0);
  Resolve r = { g_variant_get_child_value (body, 1), g_ptr_array_new_with_free_func (g_object_unref),
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
      if (g_hash_table_size (host.ops) >= MAX_OPS)
        g_hash_table_remove_all (host.ops);
      g_hash_table_insert (host.ops, g_bytes_new (g_variant_get_data (body), g_variant_get_size (body)),
                           g_object_ref (op));
    }
  return op;
}

static void
do_op (guint64 id, GVariant *body)
{
  if (!g_variant_is_of_type (body, ACCEL_CHANNEL_OP_BODY_TYPE))
    {
      finish (id, NULL, malformed ("op", body));
      return;
    }

  gint64 t0 = G_UNLIKELY (_accel_stage_trace_on ()) ? _accel_stage_trace_now () : 0;
  GError *error = NULL;
  g_autoptr(AccelOp) op = op_of_body (body, &error);
  if (op == NULL)
    {
      finish (id, NULL, error);
      return;
    }
  if (G_UNLIKELY (t0 != 0))
    {
      gint64 t1 = _accel_stage_trace_now ();
      trace_read_ns[id % G_N_ELEMENTS (trace_read_ns)] = t0;
      _accel_stage_trace_add ("host: op deserialised", t1 - t0);
      _accel_device_submit_with_callback (host.device, op, work_answered, GSIZE_TO_POINTER (id));
      _accel_stage_trace_add ("host: submit call", _accel_stage_trace_now () - t1);
      return;
    }
  _accel_device_submit_with_callback (host.device, op, work_answered, GSIZE_TO_POINTER (id));
}

static void
handle_request (GVariant *msg)
{
  guint32 kind;
  guint64 id;
  g_autoptr(GVariant) body = NULL;

  _accel_channel_parse (msg, &kind, &id, &body);
  switch (kind)
    {
    case ACCEL_CHANNEL_ALLOC:
      do_alloc (id, body);
      break;
    case ACCEL_CHANNEL_FREE:
      if (g_variant_is_of_type (body, G_VARIANT_TYPE_UINT64))
        {
          guint64 alloc = g_variant_get_uint64 (body);
          forget_views_of (alloc);
          /* Kept ops may hold views of it. */
          g_hash_table_remove_all (host.ops);
          g_hash_table_remove (host.allocs, &alloc);
        }
      break;
    case ACCEL_CHANNEL_WRITE:
    case ACCEL_CHANNEL_READ:
      do_transfer (kind, id, body);
      break;
    case ACCEL_CHANNEL_ZERO:
      do_zero (id, body);
      break;
    case ACCEL_CHANNEL_OP:
      do_op (id, body);
      break;
    case ACCEL_CHANNEL_MEMORY:
      finish (id, g_variant_new ("(tt)", accel_device_get_memory_total (host.device),
                                 accel_device_get_memory_free (host.device)), NULL);
      break;
    case ACCEL_CHANNEL_HANG:
      g_atomic_int_set (&host.hung, 1);
      for (;;)
        pause ();
    default:
      if (id != 0)
        finish (id, NULL, g_error_new (ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                                       "accel-device-host: unknown request kind %u", kind));
      break;
    }
}

/* The channel, polled by the device thread (see accel-private.h). */

static gboolean
poll_channel (gpointer data)
{
  gboolean did = FALSE;

  /* A bounded batch: the mailbox gets its turn in between. */
  for (guint i = 0; i < 64; i++)
    {
      g_autoptr(GError) read_error = NULL;
      g_autoptr(GVariant) msg = _accel_channel_receive (host.channel, &read_error);
      if (read_error)
        {
          g_printerr ("accel-device-host: %s\n", read_error->message);
          _exit (4);
        }
      if (msg == NULL)
        break;
      handle_request (msg);
      did = TRUE;
    }
  return did;
}

static void
park_on_channel (gpointer data, gint64 timeout_us)
{
  _accel_channel_wait (host.channel, timeout_us);
}

static void
wake_channel (gpointer data)
{
  _accel_channel_wake (host.channel);
}

static const AccelDispatcherPoller channel_poller = {
  poll_channel,
  park_on_channel,
  wake_channel,
};

/* The application's end of the socket closes when it goes. */
G_GNUC_NORETURN static void
watch_parent (void)
{
  struct pollfd pfd = { ACCEL_CHANNEL_FD_SOCKET, POLLIN, 0 };
  for (;;)
    {
      if (poll (&pfd, 1, -1) < 0 && errno == EINTR)
        continue;
      char buf[16];
      ssize_t got = read (ACCEL_CHANNEL_FD_SOCKET, buf, sizeof buf);
      if (got > 0 || (got < 0 && (errno == EINTR || errno == EAGAIN)))
        continue;
      _exit (0);
    }
}

static void
add_value (GVariantBuilder *builder, GHashTable *seen, const char *name, GVariant *value)
{
  if (value == NULL || g_hash_table_contains (seen, name))
    {
      if (value)
        g_variant_unref (g_variant_ref_sink (value));
      return;
    }
  g_hash_table_add (seen, g_strdup (name));
  g_variant_builder_add (builder, "{sv}", name, value);
}

static GVariant *
property_variant (GObject *object, GParamSpec *pspec)
{
  GType t = pspec->value_type;
  GVariant *v = NULL;
  GValue value = G_VALUE_INIT;

  if (!(pspec->flags & G_PARAM_READABLE))
    return NULL;
  if (!G_TYPE_IS_ENUM (t) && !G_TYPE_IS_FLAGS (t) && !G_TYPE_IS_FUNDAMENTAL (t))
    return NULL;
  g_value_init (&value, t);
  g_object_get_property (object, pspec->name, &value);
  if (G_TYPE_IS_ENUM (t))
    v = g_variant_new_int32 (g_value_get_enum (&value));
  else if (G_TYPE_IS_FLAGS (t))
    v = g_variant_new_uint32 (g_value_get_flags (&value));
  else
    switch (t)
      {
      case G_TYPE_BOOLEAN: v = g_variant_new_boolean (g_value_get_boolean (&value)); break;
      case G_TYPE_INT: v = g_variant_new_int32 (g_value_get_int (&value)); break;
      case G_TYPE_UINT: v = g_variant_new_uint32 (g_value_get_uint (&value)); break;
      case G_TYPE_INT64: v = g_variant_new_int64 (g_value_get_int64 (&value)); break;
      case G_TYPE_UINT64: v = g_variant_new_uint64 (g_value_get_uint64 (&value)); break;
      case G_TYPE_LONG: v = g_variant_new_int64 (g_value_get_long (&value)); break;
      case G_TYPE_ULONG: v = g_variant_new_uint64 (g_value_get_ulong (&value)); break;
      case G_TYPE_FLOAT: v = g_variant_new_double (g_value_get_float (&value)); break;
      case G_TYPE_DOUBLE: v = g_variant_new_double (g_value_get_double (&value)); break;
      case G_TYPE_STRING:
        if (g_value_get_string (&value))
          v = g_variant_new_string (g_value_get_string (&value));
        break;
      default: break;
      }
  g_value_unset (&value);
  return v;
}

static GVariant *
describe_device (AccelDevice *device)
{
  GVariantBuilder builder;
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  g_variant_builder_init (&builder, G_VARIANT_TYPE_VARDICT);
  add_value (&builder, seen, "name", g_variant_new_string (accel_device_get_name (device)));
  add_value (&builder, seen, "backend", g_variant_new_string (accel_device_get_backend_name (device)));
  add_value (&builder, seen, "memory-total", g_variant_new_uint64 (accel_device_get_memory_total (device)));
  add_value (&builder, seen, "memory-free", g_variant_new_uint64 (accel_device_get_memory_free (device)));
  add_value (&builder, seen, "lanes", g_variant_new_uint32 (accel_device_get_lanes (device)));
  add_value (&builder, seen, "generation", g_variant_new_uint32 (accel_device_get_generation (device)));
  add_value (&builder, seen, "pid", g_variant_new_int32 (getpid ()));

  guint n;
  g_autofree GParamSpec **pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (device), &n);
  for (guint i = 0; i < n; i++)
    add_value (&builder, seen, pspecs[i]->name, property_variant (G_OBJECT (device), pspecs[i]));
  return g_variant_builder_end (&builder);
}

G_GNUC_NORETURN static void
fail_start (GError *error)
{
  g_mutex_lock (&host.reply_lock);
  send_locked (ACCEL_CHANNEL_HELLO, 0, _accel_channel_error_to_variant (error));
  g_mutex_unlock (&host.reply_lock);
  _exit (1);
}

int
main (int argc, char **argv)
{
  g_autofree char *device_name = NULL;
  int parent_pid = 0;
  g_autoptr(GError) error = NULL;
  GOptionEntry entries[] = {
    { "device", 0, 0, G_OPTION_ARG_STRING, &device_name, "The device to serve", "NAME" },
    { "parent-pid", 0, 0, G_OPTION_ARG_INT, &parent_pid, "The application's process id", "PID" },
    { NULL }
  };

  /* Go with the application, even if it is killed. */
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  if (parent_pid > 0 && getppid () != parent_pid)
    return 1;
  signal (SIGPIPE, SIG_IGN);

  g_autoptr(GOptionContext) options = g_option_context_new ("— serve one Accel device to the process that started this one");
  g_option_context_add_main_entries (options, entries, NULL);
  if (!g_option_context_parse (options, &argc, &argv, &error) || device_name == NULL)
    {
      g_printerr ("accel-device-host: %s\n", error ? error->message : "--device is required");
      return 2;
    }
  if (parent_pid > 0 && getppid () != parent_pid)
    return 1;
  if (fcntl (ACCEL_CHANNEL_FD_SOCKET, F_SETFD, FD_CLOEXEC) != 0)
    {
      g_printerr ("accel-device-host: no channel socket at fd %d; this program is started by libaccel\n",
                  ACCEL_CHANNEL_FD_SOCKET);
      return 2;
    }
  fcntl (ACCEL_CHANNEL_FD_SHM, F_SETFD, FD_CLOEXEC);
  host.channel = _accel_channel_attach (ACCEL_CHANNEL_FD_SHM, &error);
  if (host.channel == NULL)
    {
      g_printerr ("accel-device-host: %s\n", error->message);
      return 2;
    }
  host.arena = _accel_channel_get_arena (host.channel, &host.arena_size);
  g_mutex_init (&host.reply_lock);

  host.system = accel_system_new (&error);
  if (host.system == NULL)
    fail_start (error);
  host.device = accel_system_get_device (host.system, device_name, &error);
  if (host.device == NULL)
    fail_start (error);
  if (ACCEL_IS_REMOTE_DEVICE (host.device))
    {
      g_set_error (&error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "%s is itself served by a host process here; its backend must run it in-process "
                   "in accel-device-host (for CUDA: ACCEL_CUDA_ISOLATION=none)", device_name);
      fail_start (error);
    }
  host.generation = accel_device_get_generation (host.device);
  host.allocs = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_object_unref);
  host.views = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, view_free);
  host.ops = g_hash_table_new_full (g_bytes_hash, g_bytes_equal, (GDestroyNotify) g_bytes_unref, g_object_unref);

  /* Open the device's context now: a device that cannot start says so in
   * the answer to the handshake (the application's device then fails with
   * the reason, not after restarts), and the first request is not slowed
   * by it. */
  g_autoptr(AccelShape) probe_shape = accel_shape_new_1d (1);
  g_autoptr(AccelBuffer) probe = accel_device_alloc (host.device, ACCEL_DTYPE_U8, probe_shape, &error);
  if (probe == NULL)
    fail_start (error);
  g_clear_object (&probe);

  /* Let the device pin the arena (CUDA: cudaHostRegister); others ignore it. */
  g_autoptr(GError) pin_error = NULL;
  g_autoptr(GVariant) pinned = accel_actor_ask (ACCEL_ACTOR (host.device),
                                                g_variant_new ("(stt)", ACCEL_REMOTE_DEVICE_HOST_MEMORY_MESSAGE,
                                                               (guint64) (guintptr) host.arena,
                                                               (guint64) host.arena_size),
                                                NULL, &pin_error);
  if (pin_error)
    g_debug ("%s did not take the shared arena: %s", device_name, pin_error->message);

  reply (ACCEL_CHANNEL_HELLO, 0, describe_device (host.device));

  /* From here on the device thread serves the channel; this one waits for
   * the application to go. */
  _accel_dispatcher_set_poller (accel_actor_get_dispatcher (ACCEL_ACTOR (host.device)), &channel_poller, NULL);
  watch_parent ();
}
