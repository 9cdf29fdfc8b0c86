/* accel-device-host: serves one device of this machine to the application
 * that started it (an AccelRemoteDevice), over the shared-memory channel of
 * core/accel-channel.h at fds 3 (memory) and 4 (socket).
 *
 * It makes an AccelSystem with the normal registry (plugins from
 * ACCEL_PLUGIN_PATH), takes the device named by --device, tells it where
 * the shared arena is (ACCEL_REMOTE_DEVICE_HOST_MEMORY_MESSAGE), describes
 * it in a HELLO message, and then serves requests on the device's own
 * thread, which reads the channel between the messages of its mailbox (a
 * poller of its dispatcher), as accel-host-requests.c says (the fuzzer of
 * the host, fuzz/fuzz-host-requests.c, drives the same code): each request
 * is checked, turned into an op or a transfer and submitted with a
 * callback that answers from the thread that completes it: success into
 * the request's reply slot when it names one (the application's caller
 * spins on it), else through the reply ring.
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

#include "accel-host-requests.h"

typedef struct {
  AccelChannel *channel;
  AccelSystem *system;
  AccelDevice *device;
  guint generation;           /* of the device when this host started */
  guint8 *arena;
  gsize arena_size;
  AccelHostRequests *requests;  /* device thread only */

  GMutex reply_lock;          /* serialises the threads that answer */
  gboolean dying;             /* under reply_lock */
  gint hung;                  /* atomic: tests asked us to stop answering */
} Host;

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

/* Answers @id (if any) and everything else in flight with CONTEXT_POISONED,
 * then exits: a lost context is not rebuilt inside this process. */
G_GNUC_NORETURN static void
die (guint64 id, const GError *error, gpointer data)
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

/* A success without a body goes into the request's reply slot if it
 * names one, and through the ring too if its caller parked (or it names
 * none). */
static void
send_answer (AccelChannelKind kind, guint64 id, GVariant *body, gpointer data)
{
  guint slot = ACCEL_CHANNEL_ID_SLOT (id);

  if (body == NULL && kind == ACCEL_CHANNEL_REPLY)
    {
      if (g_atomic_int_get (&host.hung))
        return;
      if (slot != 0 && !_accel_channel_slot_answer (host.channel, slot - 1, id))
        return;
    }
  reply (kind, id, body);
}

static void
handle_request (GVariant *msg)
{
  guint32 kind;
  guint64 id;
  g_autoptr(GVariant) body = NULL;

  _accel_channel_parse (msg, &kind, &id, &body);
  if (kind == ACCEL_CHANNEL_HANG)
    {
      g_atomic_int_set (&host.hung, 1);
      for (;;)
        pause ();
    }
  _accel_host_requests_handle (host.requests, kind, id, body);
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
  /* The application records what its remote devices run; this process
   * appending to the same journal would record it twice. */
  g_unsetenv ("ACCEL_JOURNAL");

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
  host.requests = _accel_host_requests_new (host.device, host.arena, host.arena_size, send_answer, die, NULL);

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
  GVariant *pinned = accel_actor_ask (ACCEL_ACTOR (host.device),
                                      g_variant_new ("(stt)", ACCEL_REMOTE_DEVICE_HOST_MEMORY_MESSAGE,
                                                     (guint64) (guintptr) host.arena, (guint64) host.arena_size),
                                      NULL, &pin_error);
  g_clear_pointer (&pinned, g_variant_unref);
  if (pin_error)
    g_debug ("%s did not take the shared arena: %s", device_name, pin_error->message);

  reply (ACCEL_CHANNEL_HELLO, 0, describe_device (host.device));

  /* From here on the device thread serves the channel; this one waits for
   * the application to go. */
  _accel_dispatcher_set_poller (accel_actor_get_dispatcher (ACCEL_ACTOR (host.device)), &channel_poller, NULL);
  watch_parent ();
}
