/* accel-remote-device.c: a device whose context lives in a child process.
 *
 * The application-side AccelRemoteDevice is the stable actor: it validates
 * ops (the core does), serialises each one with its buffer table onto a
 * shared-memory channel, from the submitting thread when the device's own
 * thread is idle (accel-device-submit.c), and completes the caller's work
 * when the child answers. It chooses no kernel: the host does. Its context is an `accel-device-host` process serving the hosted
 * device (`cpu:0`, `cuda:0`, …) with the normal registry and plugins.
 * Buffer memory is a host-side allocation id standing in for a pointer.
 *
 * When the host dies, reports a lost context, or answers nothing within
 * the deadline, every work in flight completes with
 * %ACCEL_ERROR_CONTEXT_POISONED; the device then judges the failure with
 * its supervision strategy and, unless the budget is spent, starts a new
 * host (generation + 1) before it serves what queued meanwhile.
 *
 * "In flight" is what was already handed to the host, as work launched on
 * a GPU would be: it fails with the host. Work still in the device's
 * mailbox is served by the new host, and refused with
 * %ACCEL_ERROR_STALE_BUFFER if it names buffers of the old generation. A
 * host that dies while idle is noticed by the connection's watcher, which
 * reports the lost context (accel_device_report_context_lost(), for the
 * generation that host served): the device starts a new host at once,
 * without waiting for work to fail.
 *
 * The device keeps each buffer's entry of the op buffer table as the
 * buffer's backend data (accel_buffer_set_backend_data()): subclasses must
 * leave it alone. The actor message `("debug-hang",)` makes the current
 * host stop answering; it exists for tests of the deadline.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-config.h"
#include "accel-device-private.h"
#include "accel-remote-private.h"

#define DEFAULT_DEADLINE_MS 30000
#define DEFAULT_ARENA_SIZE (32 * 1024 * 1024)
#define START_TIMEOUT_MS 60000
#define DEBUG_HANG_MESSAGE "debug-hang"

typedef struct {
  char *hosted_device;
  char **host_env;
  guint deadline_ms;            /* atomic */
  guint64 arena_size;
  guint64 host_memory_size;

  GMutex lock;                  /* guards conn, info and host_memory */
  AccelRemoteConnection *conn;  /* swapped on the device thread, under the context lock */
  GVariant *info;
  GHashTable *host_memory;      /* address -> the AccelRemoteConnection it is in (a reference) */
} AccelRemoteDevicePrivate;

/**
 * AccelRemoteDevice:
 *
 * A device whose context lives in an `accel-device-host` child process:
 * ops are validated here and run there, so that a fault that poisons the
 * context (a sticky CUDA error) costs a new process, not the application.
 * The generation goes up with each new host; buffers of an older one are
 * stale. Buffers are memory of the host process: they move in and out by
 * transfers (in place through accel_remote_device_alloc_host_memory()),
 * and cannot be lent through DLPack (see accel_buffer_to_dlpack()).
 */
G_DEFINE_TYPE_WITH_PRIVATE (AccelRemoteDevice, accel_remote_device, ACCEL_TYPE_DEVICE)

static const AccelPropertyField remote_device_fields[] = {
  /**
   * AccelRemoteDevice:hosted-device:
   *
   * The name of the device the host process serves (`cpu:0`, `cuda:1`).
   */
  ACCEL_FIELD_STRING (AccelRemoteDevicePrivate, hosted_device, "hosted-device",
                      "Name of the device in the host process", NULL, ACCEL_FIELD_CONSTRUCT),
  /**
   * AccelRemoteDevice:host-env:
   *
   * `KEY=VALUE` entries added to the host's environment, which otherwise
   * is this process's (`ACCEL_PLUGIN_PATH`, `ACCEL_REGISTRY`, …).
   */
  ACCEL_FIELD_BOXED (AccelRemoteDevicePrivate, host_env, "host-env", "Extra environment of the host process",
                     g_strv_get_type, ACCEL_FIELD_CONSTRUCT),
  /**
   * AccelRemoteDevice:deadline-ms:
   *
   * How long a host with work in flight may go without answering before
   * it is taken for hung, killed and replaced (its work failing with
   * %ACCEL_ERROR_CONTEXT_POISONED); 0 for no limit. One op must not run
   * longer than this. A hang is noticed within twice the deadline.
   */
  ACCEL_ACCESSOR_UINT (AccelRemoteDevice, accel_remote_device_get_deadline_ms, accel_remote_device_set_deadline_ms,
                       "deadline-ms", "Longest silence of a busy host, in ms (0: none)", 0, G_MAXUINT,
                       DEFAULT_DEADLINE_MS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY),
  /**
   * AccelRemoteDevice:arena-size:
   *
   * Bytes of shared memory for uploads and downloads (larger transfers go
   * in chunks); 0 for `ACCEL_REMOTE_ARENA_SIZE` or 32 MiB.
   */
  ACCEL_FIELD_UINT64 (AccelRemoteDevicePrivate, arena_size, "arena-size", "Shared memory for transfers, in bytes",
                      0, G_MAXUINT64, 0, ACCEL_FIELD_CONSTRUCT),
  /**
   * AccelRemoteDevice:host-memory-size:
   *
   * Bytes of shared memory, beside the #AccelRemoteDevice:arena-size,
   * that accel_remote_device_alloc_host_memory() hands out; 0 for
   * `ACCEL_REMOTE_HOST_MEMORY_SIZE` or none. A CUDA host pins it with the
   * arena, so it costs page-locked memory once the host runs.
   */
  ACCEL_FIELD_UINT64 (AccelRemoteDevicePrivate, host_memory_size, "host-memory-size",
                      "Shared host memory for the application, in bytes", 0, G_MAXUINT64, 0, ACCEL_FIELD_CONSTRUCT),
  /**
   * AccelRemoteDevice:info:
   *
   * What the current host said of the device it serves (see
   * accel_remote_device_get_info()); notified on the device thread after
   * each new host has started.
   */
  ACCEL_ACCESSOR_VARIANT (AccelRemoteDevice, accel_remote_device_get_info, "info", "Description of the hosted device",
                          "a{sv}", (ACCEL_FIELD_READABLE | G_PARAM_EXPLICIT_NOTIFY)),
  /**
   * AccelRemoteDevice:host-pid:
   *
   * The process id of the current host, 0 when none runs.
   */
  ACCEL_ACCESSOR_INT (AccelRemoteDevice, accel_remote_device_get_host_pid, NULL, "host-pid", "Process id of the host",
                      0, G_MAXINT, 0, (ACCEL_FIELD_READABLE | G_PARAM_EXPLICIT_NOTIFY)),
};

/* The pspecs notified by hand. */
enum {
  PROP_DEADLINE_MS,
  PROP_INFO,
  PROP_HOST_PID,
  N_NOTIFIED
};

static GParamSpec *properties[N_NOTIFIED];

/**
 * accel_remote_device_get_host_path:
 *
 * Where the `accel-device-host` program is: `$ACCEL_DEVICE_HOST` if set,
 * else the installed one in the library's libexec directory.
 *
 * Returns: the path of the host program
 */
const char *
accel_remote_device_get_host_path (void)
{
  const char *env = g_getenv ("ACCEL_DEVICE_HOST");
  if (env && *env)
    return env;
  return ACCEL_LIBEXECDIR "/accel-device-host";
}

static AccelRemoteConnection *
ref_connection (AccelRemoteDevice *self)
{
  AccelRemoteDevicePrivate *priv = accel_remote_device_get_instance_private (self);
  g_mutex_lock (&priv->lock);
  AccelRemoteConnection *conn = priv->conn ? _accel_remote_connection_ref (priv->conn) : NULL;
  g_mutex_unlock (&priv->lock);
  return conn;
}

typedef struct {
  AccelRemoteDevice *self;
  GVariant *info;
} Started;

/* On the device thread, once the context lock is released: subclasses and
 * notify handlers may use the device. */
static void
host_started_cb (gpointer data)
{
  Started *started = data;
  AccelRemoteDeviceClass *klass = ACCEL_REMOTE_DEVICE_GET_CLASS (started->self);

  if (klass->host_started)
    klass->host_started (started->self, started->info);
  g_object_notify_by_pspec (G_OBJECT (started->self), properties[PROP_INFO]);
  g_object_notify_by_pspec (G_OBJECT (started->self), properties[PROP_HOST_PID]);
  g_variant_unref (started->info);
  g_object_unref (started->self);
  g_free (started);
}

/* On the device thread, with the context lock held for writing. */
static gboolean
accel_remote_device_open_context (AccelDevice *device, GError **error)
{
  AccelRemoteDevice *self = ACCEL_REMOTE_DEVICE (device);
  AccelRemoteDevicePrivate *priv = accel_remote_device_get_instance_private (self);
  AccelRemoteConfig config = {
    .host_path = accel_remote_device_get_host_path (),
    .hosted_device = priv->hosted_device,
    .env = (const char * const *) priv->host_env,
    .arena_size = priv->arena_size,
    .host_memory_size = priv->host_memory_size,
    .deadline_ms = g_atomic_int_get (&priv->deadline_ms),
    .start_timeout_ms = MAX (START_TIMEOUT_MS, g_atomic_int_get (&priv->deadline_ms)),
    .generation = accel_device_get_generation (device),
  };

  AccelRemoteConnection *conn = _accel_remote_connection_open (device, &config, error);
  if (conn == NULL)
    return FALSE;
  GVariant *info = _accel_remote_connection_get_info (conn);
  g_mutex_lock (&priv->lock);
  priv->conn = conn;
  g_clear_pointer (&priv->info, g_variant_unref);
  priv->info = g_variant_ref (info);
  g_mutex_unlock (&priv->lock);

  Started *started = g_new (Started, 1);
  started->self = g_object_ref (self);
  started->info = g_variant_ref (info);
  accel_dispatcher_post (accel_actor_get_dispatcher (ACCEL_ACTOR (self)), host_started_cb, started);
  return TRUE;
}

/* On the device thread, with the context lock held for writing. Every work
 * still in flight completes before this returns. */
static void
accel_remote_device_close_context (AccelDevice *device)
{
  AccelRemoteDevice *self = ACCEL_REMOTE_DEVICE (device);
  AccelRemoteDevicePrivate *priv = accel_remote_device_get_instance_private (self);

  g_mutex_lock (&priv->lock);
  AccelRemoteConnection *conn = g_steal_pointer (&priv->conn);
  g_mutex_unlock (&priv->lock);
  if (conn == NULL)
    return;

  g_autoptr(GError) reason = NULL;
  if (accel_device_get_state (device) == ACCEL_DEVICE_STATE_FAILED)
    reason = g_error_copy (accel_device_get_failure (device));
  else
    reason = g_error_new (ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED,
                          "%s: its device host was replaced", accel_device_get_name (device));
  _accel_remote_connection_close (conn, reason);
  _accel_remote_connection_unref (conn);
}

static gpointer
accel_remote_device_mem_alloc (AccelDevice *device, gsize size, GError **error)
{
  AccelRemoteDevicePrivate *priv = accel_remote_device_get_instance_private (ACCEL_REMOTE_DEVICE (device));

  /* The core holds the context lock for reading: the connection stays. */
  if (priv->conn == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED,
                   "%s: no device host to allocate in", accel_device_get_name (device));
      return NULL;
    }
  return _accel_remote_connection_alloc (priv->conn, size, error);
}

static void
accel_remote_device_mem_free (AccelDevice *device, gpointer memory, gsize size)
{
  AccelRemoteDevicePrivate *priv = accel_remote_device_get_instance_private (ACCEL_REMOTE_DEVICE (device));

  if (priv->conn && memory)
    _accel_remote_connection_free (priv->conn, memory);
}

static void
accel_remote_device_execute (AccelDevice *device, AccelWork *work)
{
  /* Held across the call: a work completed with CONTEXT_POISONED on this
   * thread restarts the device at once, which drops the connection. */
  g_autoptr(AccelRemoteConnection) conn = ref_connection (ACCEL_REMOTE_DEVICE (device));

  if (conn == NULL)
    {
      accel_device_complete_work (device, work,
                                  g_error_new (ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED,
                                               "%s: it has no device host", accel_device_get_name (device)));
      return;
    }
  _accel_remote_connection_execute (conn, work);
}

/* The straight path: from the submitting thread into the host's channel. */
static gboolean
accel_remote_device_hand_over (AccelDevice *device, AccelWork *work)
{
  g_autoptr(AccelRemoteConnection) conn = ref_connection (ACCEL_REMOTE_DEVICE (device));
  return conn != NULL && _accel_remote_connection_hand_over (conn, work);
}

static void
accel_remote_device_query_memory (AccelDevice *device, guint64 *total, guint64 *free_bytes)
{
  AccelRemoteDevice *self = ACCEL_REMOTE_DEVICE (device);
  AccelRemoteDevicePrivate *priv = accel_remote_device_get_instance_private (self);
  g_autoptr(AccelRemoteConnection) conn = ref_connection (self);

  *total = *free_bytes = 0;
  if (conn && _accel_remote_connection_query_memory (conn, total, free_bytes, NULL))
    return;
  /* No host now: what the last one said. */
  g_mutex_lock (&priv->lock);
  if (priv->info)
    {
      g_variant_lookup (priv->info, "memory-total", "t", total);
      g_variant_lookup (priv->info, "memory-free", "t", free_bytes);
    }
  g_mutex_unlock (&priv->lock);
}

/* Test hook: `("debug-hang",)` makes the current host stop answering, so
 * that the deadline path can be exercised. */
static GVariant *
accel_remote_device_receive (AccelActor *actor, GVariant *message, GError **error)
{
  AccelRemoteDevice *self = ACCEL_REMOTE_DEVICE (actor);
  const char *name = NULL;

  if (message && g_variant_is_of_type (message, G_VARIANT_TYPE ("(s)")))
    g_variant_get (message, "(&s)", &name);
  if (g_strcmp0 (name, DEBUG_HANG_MESSAGE) == 0)
    {
      g_autoptr(AccelRemoteConnection) conn = ref_connection (self);
      if (conn)
        _accel_remote_connection_hang (conn);
      return NULL;
    }
  AccelActorClass *parent = ACCEL_ACTOR_CLASS (accel_remote_device_parent_class);
  return parent->receive ? parent->receive (actor, message, error) : NULL;
}

static void
accel_remote_device_finalize (GObject *object)
{
  AccelRemoteDevicePrivate *priv = accel_remote_device_get_instance_private (ACCEL_REMOTE_DEVICE (object));

  /* The parent's dispose closed the context; a connection is left only if
   * it never ran. */
  g_clear_pointer (&priv->conn, _accel_remote_connection_unref);
  g_clear_pointer (&priv->info, g_variant_unref);
  /* Host memory not given back is freed with its connection. */
  g_hash_table_unref (priv->host_memory);
  accel_object_finalize_fields (object, ACCEL_TYPE_REMOTE_DEVICE);
  g_mutex_clear (&priv->lock);
  G_OBJECT_CLASS (accel_remote_device_parent_class)->finalize (object);
}

static void
accel_remote_device_constructed (GObject *object)
{
  AccelRemoteDevicePrivate *priv = accel_remote_device_get_instance_private (ACCEL_REMOTE_DEVICE (object));

  if (priv->arena_size == 0)
    {
      const char *env = g_getenv ("ACCEL_REMOTE_ARENA_SIZE");
      guint64 v = env ? g_ascii_strtoull (env, NULL, 10) : 0;
      priv->arena_size = v ? v : DEFAULT_ARENA_SIZE;
    }
  if (priv->host_memory_size == 0)
    {
      const char *env = g_getenv ("ACCEL_REMOTE_HOST_MEMORY_SIZE");
      priv->host_memory_size = env ? g_ascii_strtoull (env, NULL, 10) : 0;
    }
  G_OBJECT_CLASS (accel_remote_device_parent_class)->constructed (object);
}

static void
accel_remote_device_class_init (AccelRemoteDeviceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelActorClass *actor_class = ACCEL_ACTOR_CLASS (klass);
  AccelDeviceClass *device_class = ACCEL_DEVICE_CLASS (klass);

  object_class->constructed = accel_remote_device_constructed;
  object_class->finalize = accel_remote_device_finalize;
  actor_class->receive = accel_remote_device_receive;
  device_class->open_context = accel_remote_device_open_context;
  device_class->close_context = accel_remote_device_close_context;
  device_class->mem_alloc = accel_remote_device_mem_alloc;
  device_class->mem_free = accel_remote_device_mem_free;
  device_class->execute = accel_remote_device_execute;
  device_class->query_memory = accel_remote_device_query_memory;

  accel_object_class_install_private_fields (object_class, remote_device_fields, G_N_ELEMENTS (remote_device_fields));
  properties[PROP_DEADLINE_MS] = g_object_class_find_property (object_class, "deadline-ms");
  properties[PROP_INFO] = g_object_class_find_property (object_class, "info");
  properties[PROP_HOST_PID] = g_object_class_find_property (object_class, "host-pid");
}

static void
accel_remote_device_init (AccelRemoteDevice *self)
{
  AccelRemoteDevicePrivate *priv = accel_remote_device_get_instance_private (self);
  g_mutex_init (&priv->lock);
  priv->deadline_ms = DEFAULT_DEADLINE_MS;
  priv->host_memory = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) _accel_remote_connection_unref);
  _accel_device_set_hand_over (ACCEL_DEVICE (self), accel_remote_device_hand_over);
}

/**
 * accel_remote_device_new:
 * @backend: the backend the device belongs to: its kernels are the ones
 *   chosen for the ops (and the host runs its own of the same backend)
 * @name: the device's name in this process (`cuda:0`)
 * @hosted_device: the name of the device in the host process (`cuda:0`, `cpu:0`)
 * @env: (array zero-terminated=1) (nullable): extra `KEY=VALUE` entries for
 *   the host's environment (`ACCEL_CUDA_ISOLATION=none`)
 * @error: return location for a #GError
 *
 * Makes a device served by an `accel-device-host` child process (see
 * accel_remote_device_get_host_path()). The child starts when the device is
 * first used, and again after each fault, hang or death.
 *
 * Returns: (transfer full): the device, or %NULL with
 *   %ACCEL_ERROR_NOT_SUPPORTED if there is no host program
 */
AccelDevice *
accel_remote_device_new (AccelBackend *backend,
                         const char *name,
                         const char *hosted_device,
                         const char * const *env,
                         GError **error)
{
  g_return_val_if_fail (ACCEL_IS_BACKEND (backend), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (hosted_device != NULL, NULL);

  const char *path = accel_remote_device_get_host_path ();
  if (!g_file_test (path, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "The device host program “%s” is not there (set ACCEL_DEVICE_HOST)", path);
      return NULL;
    }
  return g_object_new (ACCEL_TYPE_REMOTE_DEVICE,
                       "name", name,
                       "backend", backend,
                       "hosted-device", hosted_device,
                       "host-env", env,
                       NULL);
}

/**
 * accel_remote_device_get_hosted_device:
 * @self: a remote device
 *
 * Gets the name of the device in the host process.
 *
 * Returns: the name of the device in the host process
 */
const char *
accel_remote_device_get_hosted_device (AccelRemoteDevice *self)
{
  g_return_val_if_fail (ACCEL_IS_REMOTE_DEVICE (self), NULL);
  AccelRemoteDevicePrivate *priv = accel_remote_device_get_instance_private (self);
  return priv->hosted_device;
}

/**
 * accel_remote_device_get_info:
 * @self: a remote device
 *
 * What the last host to start said of the device it serves: `name`,
 * `backend` (strings), `memory-total`, `memory-free` (uint64), `lanes`,
 * `generation` (uint32), and each readable property of the hosted device
 * whose value is a boolean, number, string or enum (enums as int32), under
 * the property's name.
 *
 * Returns: (transfer full) (nullable): an `a{sv}`, or %NULL before the
 *   first host has started
 */
GVariant *
accel_remote_device_get_info (AccelRemoteDevice *self)
{
  g_return_val_if_fail (ACCEL_IS_REMOTE_DEVICE (self), NULL);
  AccelRemoteDevicePrivate *priv = accel_remote_device_get_instance_private (self);
  g_mutex_lock (&priv->lock);
  GVariant *info = priv->info ? g_variant_ref (priv->info) : NULL;
  g_mutex_unlock (&priv->lock);
  return info;
}

/**
 * accel_remote_device_get_host_pid:
 * @self: a remote device
 *
 * Gets the process id of the current host, or 0 when none runs.
 *
 * Returns: the process id of the current host, or 0 when none runs
 */
GPid
accel_remote_device_get_host_pid (AccelRemoteDevice *self)
{
  g_return_val_if_fail (ACCEL_IS_REMOTE_DEVICE (self), 0);
  g_autoptr(AccelRemoteConnection) conn = ref_connection (self);
  return conn ? _accel_remote_connection_get_pid (conn) : 0;
}

/**
 * accel_remote_device_get_deadline_ms:
 * @self: a remote device
 *
 * Gets the #AccelRemoteDevice:deadline-ms.
 *
 * Returns: the #AccelRemoteDevice:deadline-ms
 */
guint
accel_remote_device_get_deadline_ms (AccelRemoteDevice *self)
{
  g_return_val_if_fail (ACCEL_IS_REMOTE_DEVICE (self), 0);
  AccelRemoteDevicePrivate *priv = accel_remote_device_get_instance_private (self);
  return g_atomic_int_get (&priv->deadline_ms);
}

/**
 * accel_remote_device_set_deadline_ms:
 * @self: a remote device
 * @deadline_ms: the new deadline, 0 for none
 *
 * Sets #AccelRemoteDevice:deadline-ms; applies to the running host too.
 */
void
accel_remote_device_set_deadline_ms (AccelRemoteDevice *self, guint deadline_ms)
{
  g_return_if_fail (ACCEL_IS_REMOTE_DEVICE (self));
  AccelRemoteDevicePrivate *priv = accel_remote_device_get_instance_private (self);

  if ((guint) g_atomic_int_get (&priv->deadline_ms) == deadline_ms)
    return;
  g_atomic_int_set (&priv->deadline_ms, deadline_ms);
  g_autoptr(AccelRemoteConnection) conn = ref_connection (self);
  if (conn)
    _accel_remote_connection_set_deadline_ms (conn, deadline_ms);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DEADLINE_MS]);
}

/**
 * accel_remote_device_alloc_host_memory: (skip)
 * @self: a remote device
 * @size: bytes
 * @error: return location for a #GError
 *
 * Host memory that the current `accel-device-host` shares with this
 * process (see #AccelRemoteDevice:host-memory-size). A write of a buffer
 * from it (accel_buffer_write(), or accel_buffer_upload() of a #GBytes
 * over it) or a read into it (accel_buffer_read()) is moved by the host in
 * place: this process copies nothing, and a CUDA host transfers it by DMA
 * from or to the pinned memory. Memory outside it goes through the
 * transfer arena in chunks, copied once on each side.
 *
 * The memory is page-aligned, uninitialised and stays valid until
 * accel_remote_device_free_host_memory(), also after the host is replaced;
 * transfers from memory of a former host are then copied like any other.
 * Starts the host if it is not running.
 *
 * Returns: (transfer full) (nullable): the memory, or %NULL with
 *   %ACCEL_ERROR_OUT_OF_MEMORY when too little is left, or the error that
 *   kept the host from starting
 */
gpointer
accel_remote_device_alloc_host_memory (AccelRemoteDevice *self, gsize size, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_REMOTE_DEVICE (self), NULL);
  AccelRemoteDevicePrivate *priv = accel_remote_device_get_instance_private (self);

  if (priv->host_memory_size == 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY,
                   "%s has no host memory to hand out (its “host-memory-size” is 0)",
                   accel_device_get_name (ACCEL_DEVICE (self)));
      return NULL;
    }
  g_autoptr(AccelRemoteConnection) conn = ref_connection (self);
  if (conn == NULL)
    {
      /* Not started yet: the context opens on first use, such as this. */
      g_autoptr(AccelShape) one = accel_shape_new_1d (1);
      g_autoptr(AccelBuffer) probe = accel_device_alloc (ACCEL_DEVICE (self), ACCEL_DTYPE_U8, one, error);
      if (probe == NULL)
        return NULL;
      conn = ref_connection (self);
      if (conn == NULL)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED,
                       "%s: no device host runs", accel_device_get_name (ACCEL_DEVICE (self)));
          return NULL;
        }
    }
  gpointer memory = _accel_remote_connection_alloc_host_memory (conn, size, error);
  if (memory == NULL)
    return NULL;
  g_mutex_lock (&priv->lock);
  g_hash_table_insert (priv->host_memory, memory, g_steal_pointer (&conn));
  g_mutex_unlock (&priv->lock);
  return memory;
}

/**
 * accel_remote_device_free_host_memory: (skip)
 * @self: a remote device
 * @memory: (transfer full) (nullable): what
 *   accel_remote_device_alloc_host_memory() returned
 *
 * Gives host memory back. No transfer from or to it may be in flight.
 */
void
accel_remote_device_free_host_memory (AccelRemoteDevice *self, gpointer memory)
{
  g_return_if_fail (ACCEL_IS_REMOTE_DEVICE (self));
  AccelRemoteDevicePrivate *priv = accel_remote_device_get_instance_private (self);
  AccelRemoteConnection *conn = NULL;

  if (memory == NULL)
    return;
  g_mutex_lock (&priv->lock);
  gboolean found = g_hash_table_steal_extended (priv->host_memory, memory, NULL, (gpointer *) &conn);
  g_mutex_unlock (&priv->lock);
  if (!found)
    {
      g_critical ("%s: %p is not host memory of this device", accel_device_get_name (ACCEL_DEVICE (self)), memory);
      return;
    }
  _accel_remote_connection_free_host_memory (conn, memory);
  _accel_remote_connection_unref (conn);
}
