/* accel-system.c: the entry point. Owns the registry, the backends and the
 * devices.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"

struct _AccelSystem {
  GObject parent_instance;

  AccelRegistry *registry;
  GMutex lock;
  GHashTable *backends;      /* name -> AccelBackend */
  GPtrArray *devices;        /* AccelDevice, best first; NULL until listed */
  gboolean shut_down;
  gint cpu_devices;          /* atomic; 0: ACCEL_CPU_DEVICES, else 1 */
};

enum {
  PROP_0,
  PROP_CPU_DEVICES,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/**
 * AccelSystem:
 *
 * The entry point: owns the plugin registry, the backends and their
 * devices. Make one with accel_system_new(), then ask it for a device by
 * name (`cpu:0`, `cuda:0`, or `default` for the best one present):
 *
 * ```python
 * system = Accel.System.new()
 * dev = system.get_device("default")
 * ```
 *
 * Thread-safe. A device keeps what it needs alive: the application may
 * let the system go and go on using a device it holds
 * (`Accel.System.new ().get_device ("cpu:0")` is a working device); each
 * device closes when its last reference goes. accel_system_shutdown()
 * closes every device of the system at once.
 */
G_DEFINE_FINAL_TYPE (AccelSystem, accel_system, G_TYPE_OBJECT)

G_LOCK_DEFINE_STATIC (default_system);
static AccelSystem *default_system;

static void
accel_system_dispose (GObject *object)
{
  AccelSystem *self = ACCEL_SYSTEM (object);

  /* No shutdown here: a device the application still holds keeps working
   * (its backend holds the registry); the others end as their last
   * reference, the system's, goes in finalize. */
  G_LOCK (default_system);
  if (default_system == self)
    default_system = NULL;
  G_UNLOCK (default_system);
  G_OBJECT_CLASS (accel_system_parent_class)->dispose (object);
}

static void
accel_system_finalize (GObject *object)
{
  AccelSystem *self = ACCEL_SYSTEM (object);

  g_clear_pointer (&self->devices, g_ptr_array_unref);
  g_clear_pointer (&self->backends, g_hash_table_unref);
  g_clear_object (&self->registry);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (accel_system_parent_class)->finalize (object);
}

static void
accel_system_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_CPU_DEVICES:
      g_value_set_uint (value, accel_system_get_cpu_devices (ACCEL_SYSTEM (object)));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_system_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_CPU_DEVICES:
      accel_system_set_cpu_devices (ACCEL_SYSTEM (object), g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_system_class_init (AccelSystemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->dispose = accel_system_dispose;
  object_class->finalize = accel_system_finalize;
  object_class->get_property = accel_system_get_property;
  object_class->set_property = accel_system_set_property;

  /**
   * AccelSystem:cpu-devices:
   *
   * How many CPU devices (`cpu:0`, `cpu:1`, …) the CPU backend makes, as
   * XLA's host device count: several ranks of a communicator on one
   * machine without a GPU. 0 (the default) means `ACCEL_CPU_DEVICES`, or
   * 1. It counts when devices are first listed; set it before.
   */
  properties[PROP_CPU_DEVICES] =
    g_param_spec_uint ("cpu-devices", NULL, "How many CPU devices (0: ACCEL_CPU_DEVICES, else 1)", 0, 256, 0,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
accel_system_init (AccelSystem *self)
{
  g_mutex_init (&self->lock);
  self->backends = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
}

/**
 * accel_system_new_with_registry:
 * @registry: (transfer none): the registry to use
 *
 * Makes a system over an existing registry (one made with
 * %ACCEL_REGISTRY_FLAGS_NO_SCAN and static plugins, say).
 *
 * Returns: (transfer full): the system
 */
AccelSystem *
accel_system_new_with_registry (AccelRegistry *registry)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (registry), NULL);

  AccelSystem *self = g_object_new (ACCEL_TYPE_SYSTEM, NULL);
  self->registry = g_object_ref (registry);

  /* The first system of the process is the one op types are looked up in
   * when no system is named (accel_op_new_by_name()). */
  G_LOCK (default_system);
  if (default_system == NULL)
    default_system = self;
  G_UNLOCK (default_system);
  return self;
}

/**
 * accel_system_new:
 * @error: return location for a #GError
 *
 * Makes a system: reads the plugin registry (scanning new or changed plugin
 * files in a child process) but opens no device yet.
 *
 * Returns: (transfer full): the system, or %NULL with @error set
 */
AccelSystem *
accel_system_new (GError **error)
{
  g_autoptr(AccelRegistry) registry = accel_registry_new (ACCEL_REGISTRY_FLAGS_NONE, error);
  if (registry == NULL)
    return NULL;
  return accel_system_new_with_registry (registry);
}

/**
 * accel_system_get_default:
 *
 * The process's default system: the first one made, or one made now. It
 * lives as long as the process.
 *
 * Returns: (transfer none) (nullable): the default system, or %NULL if it
 *   could not be made
 */
AccelSystem *
accel_system_get_default (void)
{
  AccelSystem *system;

  G_LOCK (default_system);
  system = default_system;
  G_UNLOCK (default_system);
  if (system)
    return system;

  g_autoptr(GError) error = NULL;
  system = accel_system_new (&error);
  if (system == NULL)
    {
      g_warning ("Cannot make the default Accel system: %s", error->message);
      return NULL;
    }
  G_LOCK (default_system);
  if (default_system != system)
    {
      /* Another thread won the race; keep its system. */
      AccelSystem *winner = default_system;
      G_UNLOCK (default_system);
      g_object_unref (system);
      return winner;
    }
  G_UNLOCK (default_system);
  /* The default system is never released: keep a reference for the process. */
  return system;
}

/**
 * accel_system_get_registry:
 * @self: a system
 *
 * Gets its registry.
 *
 * Returns: (transfer none): its registry
 */
AccelRegistry *
accel_system_get_registry (AccelSystem *self)
{
  g_return_val_if_fail (ACCEL_IS_SYSTEM (self), NULL);
  return self->registry;
}

static AccelBackend *
get_backend_locked (AccelSystem *self, const char *name, GError **error)
{
  AccelBackend *backend = g_hash_table_lookup (self->backends, name);
  if (backend)
    return backend;

  GType type = accel_registry_lookup_backend (self->registry, name, error);
  if (type == 0)
    return NULL;
  if (!g_type_is_a (type, ACCEL_TYPE_BACKEND) || G_TYPE_IS_ABSTRACT (type))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                   "Backend “%s” is registered with type %s, which is not a concrete AccelBackend",
                   name, g_type_name (type));
      return NULL;
    }
  backend = g_object_new (type, NULL);
  _accel_backend_setup (backend, self, name);
  g_hash_table_insert (self->backends, g_strdup (name), backend);
  return backend;
}

/**
 * accel_system_get_backend:
 * @self: a system
 * @name: a backend name (`cpu`, `cuda`)
 * @error: return location for a #GError
 *
 * Looks up a backend by name (`cpu`, `cuda`).
 *
 * Returns: (transfer none): the backend, loading its plugin if needed, or
 *   %NULL with %ACCEL_ERROR_UNKNOWN_TYPE or %ACCEL_ERROR_PLUGIN
 */
AccelBackend *
accel_system_get_backend (AccelSystem *self, const char *name, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_SYSTEM (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  g_mutex_lock (&self->lock);
  AccelBackend *backend = get_backend_locked (self, name, error);
  g_mutex_unlock (&self->lock);
  return backend;
}

static int
compare_devices (gconstpointer a, gconstpointer b)
{
  AccelDevice *da = *(AccelDevice **) a;
  AccelDevice *db = *(AccelDevice **) b;
  int pa = ACCEL_BACKEND_GET_CLASS (accel_device_get_backend (da))->priority;
  int pb = ACCEL_BACKEND_GET_CLASS (accel_device_get_backend (db))->priority;
  if (pa != pb)
    return pb - pa;
  return g_strcmp0 (accel_device_get_name (da), accel_device_get_name (db));
}

static void
enumerate_locked (AccelSystem *self)
{
  if (self->devices)
    return;
  self->devices = g_ptr_array_new_with_free_func (g_object_unref);
  if (self->shut_down)
    return;

  g_auto(GStrv) names = accel_registry_list_backends (self->registry);
  for (guint i = 0; names && names[i]; i++)
    {
      g_autoptr(GError) error = NULL;
      AccelBackend *backend = get_backend_locked (self, names[i], &error);
      if (backend == NULL)
        {
          g_debug ("Backend %s is not usable: %s", names[i], error->message);
          continue;
        }
      AccelBackendClass *klass = ACCEL_BACKEND_GET_CLASS (backend);
      if (klass->enumerate == NULL)
        continue;
      g_autoptr(GPtrArray) found = klass->enumerate (backend, &error);
      if (found == NULL)
        {
          accel_backend_set_unavailable_reason (backend, error ? error->message : "enumeration failed");
          continue;
        }
      for (guint j = 0; j < found->len; j++)
        g_ptr_array_add (self->devices, g_object_ref (found->pdata[j]));
    }
  g_ptr_array_sort (self->devices, compare_devices);
}

/**
 * accel_system_list_devices:
 * @self: a system
 *
 * Lists the devices of every backend, best first (GPUs before `cpu:0`).
 * Backends are asked once; the list then stays the same.
 *
 * Returns: (transfer container) (element-type AccelDevice): the devices
 */
GPtrArray *
accel_system_list_devices (AccelSystem *self)
{
  g_return_val_if_fail (ACCEL_IS_SYSTEM (self), NULL);

  g_mutex_lock (&self->lock);
  enumerate_locked (self);
  GPtrArray *out = g_ptr_array_new_full (self->devices->len, g_object_unref);
  for (guint i = 0; i < self->devices->len; i++)
    g_ptr_array_add (out, g_object_ref (self->devices->pdata[i]));
  g_mutex_unlock (&self->lock);
  return out;
}

/**
 * accel_system_get_device:
 * @self: a system
 * @name: a device name (`cpu:0`, `cuda:1`), or `default` for the best device
 *   present (a GPU where there is one, else `cpu:0`)
 * @error: return location for a #GError
 *
 * Looks up a device by name (`cpu:0`, `cuda:1`, or `default`: the first
 * device listed, a GPU where there is one).
 *
 * Returns: (transfer full): the device, or %NULL with %ACCEL_ERROR_NO_DEVICE
 */
AccelDevice *
accel_system_get_device (AccelSystem *self, const char *name, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_SYSTEM (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  AccelDevice *device = NULL;
  g_mutex_lock (&self->lock);
  enumerate_locked (self);
  if (g_str_equal (name, "default"))
    {
      if (self->devices->len > 0)
        device = g_object_ref (self->devices->pdata[0]);
    }
  else
    for (guint i = 0; i < self->devices->len; i++)
      if (g_strcmp0 (accel_device_get_name (self->devices->pdata[i]), name) == 0)
        {
          device = g_object_ref (self->devices->pdata[i]);
          break;
        }
  g_mutex_unlock (&self->lock);

  if (device == NULL)
    {
      g_autoptr(GString) known = g_string_new (NULL);
      g_autoptr(GPtrArray) all = accel_system_list_devices (self);
      for (guint i = 0; i < all->len; i++)
        g_string_append_printf (known, "%s%s", i ? ", " : "", accel_device_get_name (all->pdata[i]));
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_DEVICE,
                   "No device is named “%s” (devices: %s)", name,
                   known->len ? known->str : "none");
    }
  return device;
}

/**
 * accel_system_spawn_with_properties: (rename-to accel_system_spawn)
 * @self: a system
 * @type_name: a registered actor type name
 * @n_properties: how many properties follow
 * @names: (array length=n_properties): property names
 * @values: (array length=n_properties): their values
 * @error: return location for a #GError
 *
 * Makes an actor of a type a plugin registered, by name.
 *
 * Returns: (transfer full): the actor, or %NULL with
 *   %ACCEL_ERROR_UNKNOWN_TYPE or %ACCEL_ERROR_INVALID_ARGUMENT
 */
AccelActor *
accel_system_spawn_with_properties (AccelSystem *self,
                                    const char *type_name,
                                    guint n_properties,
                                    const char **names,
                                    const GValue *values,
                                    GError **error)
{
  g_return_val_if_fail (ACCEL_IS_SYSTEM (self), NULL);
  g_return_val_if_fail (type_name != NULL, NULL);

  GType type = accel_registry_lookup_actor_type (self->registry, type_name, error);
  if (type == 0)
    return NULL;
  if (!g_type_is_a (type, ACCEL_TYPE_ACTOR) || G_TYPE_IS_ABSTRACT (type))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE,
                   "“%s” is not a concrete actor type", type_name);
      return NULL;
    }
  GObjectClass *klass = g_type_class_ref (type);
  for (guint i = 0; i < n_properties; i++)
    if (g_object_class_find_property (klass, names[i]) == NULL)
      {
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "Actor type “%s” has no property “%s”", type_name, names[i]);
        g_type_class_unref (klass);
        return NULL;
      }
  g_type_class_unref (klass);
  return ACCEL_ACTOR (g_object_new_with_properties (type, n_properties, names, values));
}

/**
 * accel_system_spawn: (skip)
 * @self: a system
 * @type_name: a registered actor type name
 * @error: return location for a #GError
 * @first_property_name: (nullable): the first property name, then its value,
 *   then further pairs, ending with %NULL
 * @...: values and names
 *
 * Makes an actor by type name, like g_object_new(). The error comes before
 * the properties because a varargs list must end the parameters.
 *
 * Returns: (transfer full): the actor, or %NULL with %ACCEL_ERROR_UNKNOWN_TYPE
 */
AccelActor *
accel_system_spawn (AccelSystem *self,
                    const char *type_name,
                    GError **error,
                    const char *first_property_name,
                    ...)
{
  g_return_val_if_fail (ACCEL_IS_SYSTEM (self), NULL);
  g_return_val_if_fail (type_name != NULL, NULL);

  GType type = accel_registry_lookup_actor_type (self->registry, type_name, error);
  if (type == 0)
    return NULL;
  if (!g_type_is_a (type, ACCEL_TYPE_ACTOR) || G_TYPE_IS_ABSTRACT (type))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE,
                   "“%s” is not a concrete actor type", type_name);
      return NULL;
    }
  va_list args;
  va_start (args, first_property_name);
  GObject *actor = g_object_new_valist (type, first_property_name, args);
  va_end (args);
  return ACCEL_ACTOR (actor);
}

/**
 * accel_system_shutdown:
 * @self: a system
 *
 * Closes every device: queued work fails with %ACCEL_ERROR_DEVICE_FAILED,
 * contexts are released, device threads end, also for devices the
 * application still holds. Idempotent. Without it, each device closes when
 * its last reference goes, which may be after the system's.
 */
void
accel_system_shutdown (AccelSystem *self)
{
  g_return_if_fail (ACCEL_IS_SYSTEM (self));

  g_mutex_lock (&self->lock);
  self->shut_down = TRUE;
  GPtrArray *devices = self->devices ? g_ptr_array_ref (self->devices) : NULL;
  g_mutex_unlock (&self->lock);

  if (devices)
    {
      for (guint i = 0; i < devices->len; i++)
        _accel_device_shutdown (devices->pdata[i]);
      g_ptr_array_unref (devices);
    }
}

/**
 * accel_system_get_cpu_devices:
 * @self: a system
 *
 * How many CPU devices the CPU backend makes: the #AccelSystem:cpu-devices
 * property, else `ACCEL_CPU_DEVICES`, else 1.
 *
 * Returns: how many CPU devices the CPU backend makes: the
 *   #AccelSystem:cpu-devices property, else `ACCEL_CPU_DEVICES`, else 1
 */
guint
accel_system_get_cpu_devices (AccelSystem *self)
{
  g_return_val_if_fail (ACCEL_IS_SYSTEM (self), 1);

  /* No lock: backends ask while the system lists devices under it. */
  guint n = (guint) g_atomic_int_get (&self->cpu_devices);
  if (n)
    return n;
  const char *env = g_getenv ("ACCEL_CPU_DEVICES");
  if (env == NULL || *env == '\0')
    return 1;
  char *end = NULL;
  guint64 v = g_ascii_strtoull (env, &end, 10);
  if (end == env || *end != '\0' || v < 1 || v > 256)
    {
      g_warning ("Ignoring ACCEL_CPU_DEVICES=“%s”: not a count from 1 to 256", env);
      return 1;
    }
  return (guint) v;
}

/**
 * accel_system_set_cpu_devices:
 * @self: a system
 * @n: how many CPU devices, 1 to 256, or 0 for `ACCEL_CPU_DEVICES`
 *
 * Sets #AccelSystem:cpu-devices. Devices already listed stay as they are.
 */
void
accel_system_set_cpu_devices (AccelSystem *self, guint n)
{
  g_return_if_fail (ACCEL_IS_SYSTEM (self));
  g_return_if_fail (n <= 256);

  g_mutex_lock (&self->lock);
  gboolean changed = (guint) g_atomic_int_get (&self->cpu_devices) != n;
  gboolean listed = self->devices != NULL;
  g_atomic_int_set (&self->cpu_devices, n);
  g_mutex_unlock (&self->lock);
  if (listed && changed)
    g_warning ("AccelSystem:cpu-devices set to %u after the devices were listed; it counts for none of them", n);
  if (changed)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CPU_DEVICES]);
}
