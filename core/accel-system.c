/* accel-system.c: the entry point. Owns the registry, the backends and the
 * devices.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"

#include <gobject/gvaluecollector.h>

struct _AccelSystem {
  GObject parent_instance;

  AccelRegistry *registry;
  GMutex lock;
  GHashTable *backends;      /* name -> AccelBackend */
  GPtrArray *devices;        /* AccelDevice, best first; NULL until listed */
  AccelActor *root;          /* the supervision tree's root; NULL until asked for */
  gboolean shut_down;
  gint cpu_devices;          /* atomic; 0: ACCEL_CPU_DEVICES, else 1 */
};

static const AccelPropertyField system_fields[] = {
  /**
   * AccelSystem:cpu-devices:
   *
   * How many CPU devices (`cpu:0`, `cpu:1`, …) the CPU backend makes, as
   * XLA's host device count: several ranks of a communicator on one
   * machine without a GPU. 0 (the default) means `ACCEL_CPU_DEVICES`, or
   * 1. It counts when devices are first listed; set it before.
   */
  ACCEL_ACCESSOR_UINT (AccelSystem, accel_system_get_cpu_devices, accel_system_set_cpu_devices, "cpu-devices",
                       "How many CPU devices (0: ACCEL_CPU_DEVICES, else 1)", 0, 256, 0,
                       G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY),
};

/* The pspec notified by hand. */
enum {
  PROP_CPU_DEVICES,
  N_NOTIFIED
};

static GParamSpec *properties[N_NOTIFIED];

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
  g_clear_object (&self->root);
  g_clear_pointer (&self->backends, g_hash_table_unref);
  g_clear_object (&self->registry);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (accel_system_parent_class)->finalize (object);
}

static void
accel_system_class_init (AccelSystemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->dispose = accel_system_dispose;
  object_class->finalize = accel_system_finalize;

  accel_object_class_install_fields (object_class, system_fields, G_N_ELEMENTS (system_fields));
  properties[PROP_CPU_DEVICES] = g_object_class_find_property (object_class, "cpu-devices");
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
  GPtrArray *out = g_ptr_array_copy (self->devices, (GCopyFunc) g_object_ref, NULL);
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

/* The root of the supervision tree keeps itself out of its children's
 * trouble: what a child would escalate stops that child, and a failure of
 * the root itself is resumed. */
static AccelDirective
root_decider (AccelActor *supervisor, AccelActor *child, const GError *error, gpointer user_data)
{
  if (child == supervisor)
    return ACCEL_DIRECTIVE_RESUME;
  AccelDirective d = accel_actor_default_decider (supervisor, child, error, NULL);
  return d == ACCEL_DIRECTIVE_ESCALATE ? ACCEL_DIRECTIVE_STOP : d;
}

/**
 * accel_system_get_root_actor:
 * @self: a system
 *
 * The root of the system's supervision tree. Actors made by
 * accel_system_spawn() are its children unless they name another parent,
 * so its strategy (accel_actor_set_strategy(); by default up to 10
 * restarts a minute, and a child that would escalate is stopped) is what
 * they are supervised by. accel_system_shutdown() stops it, and so them.
 *
 * Returns: (transfer none): the root actor
 */
AccelActor *
accel_system_get_root_actor (AccelSystem *self)
{
  g_return_val_if_fail (ACCEL_IS_SYSTEM (self), NULL);

  g_mutex_lock (&self->lock);
  if (self->root == NULL)
    {
      self->root = g_object_new (ACCEL_TYPE_ACTOR, "name", "system", NULL);
      accel_actor_set_strategy (self->root, 10, 60000, root_decider, NULL, NULL);
      _accel_actor_set_system (self->root, self);
      if (self->shut_down)
        accel_actor_stop (self->root);
    }
  AccelActor *root = self->root;
  g_mutex_unlock (&self->lock);
  return root;
}

/* Brings @in to the type of @pspec, as bindings cannot always say which
 * type they mean: numbers and the like transform, a string names an enum
 * or flags value by nick or name. */
static gboolean
convert_value (GParamSpec *pspec, const GValue *in, GValue *out, const char *what, const char *type_name,
               GError **error)
{
  GType want = G_PARAM_SPEC_VALUE_TYPE (pspec);
  g_value_init (out, want);
  if (g_value_type_compatible (G_VALUE_TYPE (in), want))
    {
      g_value_copy (in, out);
      return TRUE;
    }
  if (G_VALUE_HOLDS_STRING (in) && g_value_get_string (in) && (G_TYPE_IS_ENUM (want) || G_TYPE_IS_FLAGS (want)))
    {
      const char *text = g_value_get_string (in);
      if (G_TYPE_IS_ENUM (want))
        {
          GEnumClass *klass = g_type_class_ref (want);
          GEnumValue *v = g_enum_get_value_by_nick (klass, text);
          if (v == NULL)
            v = g_enum_get_value_by_name (klass, text);
          if (v)
            g_value_set_enum (out, v->value);
          g_type_class_unref (klass);
          if (v)
            return TRUE;
        }
      else
        {
          GFlagsClass *klass = g_type_class_ref (want);
          guint flags = 0;
          gboolean ok = TRUE;
          g_auto(GStrv) parts = g_strsplit (text, "|", -1);
          for (guint i = 0; parts[i] && ok; i++)
            {
              GFlagsValue *v = g_flags_get_value_by_nick (klass, g_strstrip (parts[i]));
              if (v == NULL)
                v = g_flags_get_value_by_name (klass, parts[i]);
              ok = v != NULL;
              if (v)
                flags |= v->value;
            }
          g_type_class_unref (klass);
          if (ok)
            {
              g_value_set_flags (out, flags);
              return TRUE;
            }
        }
    }
  else if (g_value_type_transformable (G_VALUE_TYPE (in), want) && g_value_transform (in, out)
           && !g_param_value_validate (pspec, out))
    return TRUE;
  g_autofree char *contents = g_strdup_value_contents (in);
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "Property “%s” of %s type “%s” takes %s; %s %s does not fit",
               pspec->name, what, type_name, g_type_name (want), g_type_name (G_VALUE_TYPE (in)), contents);
  g_value_unset (out);
  return FALSE;
}

/* Makes an object of @type (an actor or model type called @type_name) with
 * properties checked by name and brought to their types, initialising it
 * where it is a #GInitable so that a bad property value is an error, not a
 * broken object. */
static GObject *
new_checked (GType type,
             const char *what,
             const char *type_name,
             guint n_properties,
             const char **names,
             const GValue *values,
             GError **error)
{
  GObjectClass *klass = g_type_class_ref (type);
  g_autofree GValue *converted = g_new0 (GValue, MAX (n_properties, 1));
  gboolean ok = TRUE;
  guint n_converted = 0;
  for (guint i = 0; i < n_properties && ok; i++)
    {
      GParamSpec *pspec = g_object_class_find_property (klass, names[i]);
      if (pspec == NULL || !(pspec->flags & G_PARAM_WRITABLE))
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       pspec ? "Property “%2$s” of %3$s type “%1$s” is read-only"
                             : "%3$s type “%1$s” has no property “%2$s”",
                       type_name, names[i], what);
          ok = FALSE;
        }
      else if ((ok = convert_value (pspec, &values[i], &converted[i], what, type_name, error)))
        n_converted++;
    }
  g_type_class_unref (klass);

  GObject *object = ok ? g_object_new_with_properties (type, n_properties, names, converted) : NULL;
  for (guint i = 0; i < n_converted; i++)
    g_value_unset (&converted[i]);
  if (object && G_IS_INITABLE (object) && !g_initable_init (G_INITABLE (object), NULL, error))
    {
      if (ACCEL_IS_ACTOR (object))
        accel_actor_stop (ACCEL_ACTOR (object));
      g_clear_object (&object);
    }
  return object;
}

/* Collects name/value pairs from a varargs list, as g_object_new() does. */
static gboolean
collect_properties (GType type,
                    const char *what,
                    const char *type_name,
                    const char *first_property_name,
                    va_list args,
                    GPtrArray *names,
                    GArray *values,
                    GError **error)
{
  GObjectClass *klass = g_type_class_ref (type);
  gboolean ok = TRUE;
  for (const char *name = first_property_name; name && ok; name = va_arg (args, const char *))
    {
      GParamSpec *pspec = g_object_class_find_property (klass, name);
      if (pspec == NULL)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "%s type “%s” has no property “%s”", what, type_name, name);
          ok = FALSE;
          break;
        }
      g_autofree char *collect_error = NULL;
      GValue value = G_VALUE_INIT;
      G_VALUE_COLLECT_INIT (&value, pspec->value_type, args, 0, &collect_error);
      if (collect_error)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "Property “%s” of %s type “%s”: %s", name, what, type_name, collect_error);
          ok = FALSE;
          break;
        }
      g_ptr_array_add (names, (gpointer) pspec->name);
      g_array_append_val (values, value);
    }
  g_type_class_unref (klass);
  return ok;
}

/* The type registered as @type_name, if it is a concrete actor type
 * (@actor) or model type: one that g_object_new() can make. */
static GType
registered_type (AccelSystem *self, gboolean actor, const char *type_name, GError **error)
{
  GType base = actor ? ACCEL_TYPE_ACTOR : ACCEL_TYPE_MODEL;
  GType type = actor ? accel_registry_lookup_actor_type (self->registry, type_name, error)
                     : accel_registry_lookup_model_type (self->registry, type_name, error);
  if (type != 0 && (!g_type_is_a (type, base) || !G_TYPE_IS_INSTANTIATABLE (type) || G_TYPE_IS_ABSTRACT (type)))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE,
                   "“%s” is not a concrete %s type", type_name, actor ? "actor" : "model");
      return 0;
    }
  return type;
}

static void
clear_values (GArray *values)
{
  for (guint i = 0; i < values->len; i++)
    g_value_unset (&g_array_index (values, GValue, i));
  g_array_unref (values);
}

/* What accel_system_spawn() and accel_system_new_model() share: the
 * name/value pairs collected, then the _with_properties() call. */
static GObject *
new_from_valist (AccelSystem *self, gboolean actor, const char *type_name, const char *first_property_name,
                 va_list args, GError **error)
{
  GType type = registered_type (self, actor, type_name, error);
  if (type == 0)
    return NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  GArray *values = g_array_new (FALSE, TRUE, sizeof (GValue));
  GObject *object = NULL;
  if (collect_properties (type, actor ? "Actor" : "Model", type_name, first_property_name, args, names, values, error))
    object = actor ? G_OBJECT (accel_system_spawn_with_properties (self, type_name, names->len,
                                                                   (const char **) names->pdata,
                                                                   (const GValue *) values->data, error))
                   : G_OBJECT (accel_system_new_model_with_properties (self, type_name, names->len,
                                                                       (const char **) names->pdata,
                                                                       (const GValue *) values->data, error));
  clear_values (values);
  return object;
}

/**
 * accel_system_spawn_with_properties: (rename-to accel_system_spawn)
 * @self: a system
 * @type_name: a registered actor type name (`batcher`)
 * @n_properties: how many properties follow
 * @names: (array length=n_properties): property names
 * @values: (array length=n_properties): their values
 * @error: return location for a #GError
 *
 * Makes an actor of a type a plugin registered, by name, as a child of
 * accel_system_get_root_actor() unless a `parent` is given. An actor type
 * that implements #GInitable is initialised, so that a bad property value
 * fails here, naming the property.
 *
 * Returns: (transfer full): the actor, or %NULL with
 *   %ACCEL_ERROR_UNKNOWN_TYPE, %ACCEL_ERROR_INVALID_ARGUMENT or the error
 *   of its initialisation
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
  g_return_val_if_fail (n_properties == 0 || (names != NULL && values != NULL), NULL);

  GType type = registered_type (self, TRUE, type_name, error);
  if (type == 0)
    return NULL;

  gboolean has_parent = FALSE;
  for (guint i = 0; i < n_properties && !has_parent; i++)
    has_parent = g_strcmp0 (names[i], "parent") == 0;
  if (has_parent)
    return ACCEL_ACTOR (new_checked (type, "Actor", type_name, n_properties, names, values, error));

  g_autofree const char **all_names = g_new (const char *, n_properties + 1);
  g_autofree GValue *all_values = g_new0 (GValue, n_properties + 1);
  for (guint i = 0; i < n_properties; i++)
    {
      all_names[i] = names[i];
      all_values[i] = values[i];   /* a shallow copy: not unset below */
    }
  all_names[n_properties] = "parent";
  g_value_init (&all_values[n_properties], ACCEL_TYPE_ACTOR);
  g_value_set_object (&all_values[n_properties], accel_system_get_root_actor (self));
  GObject *actor = new_checked (type, "Actor", type_name, n_properties + 1, all_names, all_values, error);
  g_value_unset (&all_values[n_properties]);
  return actor ? ACCEL_ACTOR (actor) : NULL;
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
 * Makes an actor by type name, like g_object_new(); see
 * accel_system_spawn_with_properties(). The error comes before the
 * properties because a varargs list must end the parameters.
 *
 * Returns: (transfer full): the actor, or %NULL with @error set
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

  va_list args;
  va_start (args, first_property_name);
  GObject *actor = new_from_valist (self, TRUE, type_name, first_property_name, args, error);
  va_end (args);
  return actor ? ACCEL_ACTOR (actor) : NULL;
}

/**
 * accel_system_new_model_with_properties: (rename-to accel_system_new_model)
 * @self: a system
 * @type_name: a registered model type name (`linear`)
 * @n_properties: how many properties follow
 * @names: (array length=n_properties): property names
 * @values: (array length=n_properties): their values
 * @error: return location for a #GError
 *
 * Makes a model of a type a plugin registered, by name. A model type that
 * implements #GInitable is initialised, so that a bad property value (a
 * weight of the wrong size, say) fails here, naming the property.
 *
 * Returns: (transfer full): the model, or %NULL with
 *   %ACCEL_ERROR_UNKNOWN_TYPE, %ACCEL_ERROR_INVALID_ARGUMENT or the error
 *   of its initialisation
 */
AccelModel *
accel_system_new_model_with_properties (AccelSystem *self,
                                        const char *type_name,
                                        guint n_properties,
                                        const char **names,
                                        const GValue *values,
                                        GError **error)
{
  g_return_val_if_fail (ACCEL_IS_SYSTEM (self), NULL);
  g_return_val_if_fail (type_name != NULL, NULL);
  g_return_val_if_fail (n_properties == 0 || (names != NULL && values != NULL), NULL);

  GType type = registered_type (self, FALSE, type_name, error);
  if (type == 0)
    return NULL;
  GObject *model = new_checked (type, "Model", type_name, n_properties, names, values, error);
  return model ? ACCEL_MODEL (model) : NULL;
}

/**
 * accel_system_new_model: (skip)
 * @self: a system
 * @type_name: a registered model type name (`linear`)
 * @error: return location for a #GError
 * @first_property_name: (nullable): the first property name, then its value,
 *   then further pairs, ending with %NULL
 * @...: values and names
 *
 * Makes a model by type name, like g_object_new(); see
 * accel_system_new_model_with_properties().
 *
 * Returns: (transfer full): the model, or %NULL with @error set
 */
AccelModel *
accel_system_new_model (AccelSystem *self,
                        const char *type_name,
                        GError **error,
                        const char *first_property_name,
                        ...)
{
  g_return_val_if_fail (ACCEL_IS_SYSTEM (self), NULL);
  g_return_val_if_fail (type_name != NULL, NULL);

  va_list args;
  va_start (args, first_property_name);
  GObject *model = new_from_valist (self, FALSE, type_name, first_property_name, args, error);
  va_end (args);
  return model ? ACCEL_MODEL (model) : NULL;
}

/**
 * accel_system_add_device:
 * @self: a system
 * @device: a device of one of @self's backends made outside enumeration
 *   (an #AccelRemoteDevice, say)
 * @error: return location for a #GError
 *
 * Adds @device to the devices accel_system_get_device() and
 * accel_system_list_devices() find, so that whatever takes device names
 * (a replica pool's #AccelActor properties, say) can name it.
 *
 * Returns: %TRUE, or %FALSE with %ACCEL_ERROR_INVALID_ARGUMENT when a
 *   device of that name is known already or @device belongs to another
 *   system
 */
gboolean
accel_system_add_device (AccelSystem *self, AccelDevice *device, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_SYSTEM (self), FALSE);
  g_return_val_if_fail (ACCEL_IS_DEVICE (device), FALSE);

  const char *name = accel_device_get_name (device);
  if (accel_device_get_system (device) != self)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "Device “%s” belongs to another system", name);
      return FALSE;
    }
  g_mutex_lock (&self->lock);
  enumerate_locked (self);
  for (guint i = 0; i < self->devices->len; i++)
    if (g_strcmp0 (accel_device_get_name (self->devices->pdata[i]), name) == 0)
      {
        g_mutex_unlock (&self->lock);
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "A device named “%s” is known already", name);
        return FALSE;
      }
  g_ptr_array_add (self->devices, g_object_ref (device));
  g_ptr_array_sort (self->devices, compare_devices);
  g_mutex_unlock (&self->lock);
  return TRUE;
}

/**
 * accel_system_shutdown:
 * @self: a system
 *
 * Stops the actors of the system's supervision tree (the asks they have
 * not answered fail), then closes every device: queued work fails with
 * %ACCEL_ERROR_DEVICE_FAILED, contexts are released, device threads end,
 * also for devices the application still holds. Idempotent. Without it,
 * each device closes when its last reference goes, which may be after the
 * system's.
 */
void
accel_system_shutdown (AccelSystem *self)
{
  g_return_if_fail (ACCEL_IS_SYSTEM (self));

  g_mutex_lock (&self->lock);
  self->shut_down = TRUE;
  GPtrArray *devices = self->devices ? g_ptr_array_ref (self->devices) : NULL;
  AccelActor *root = self->root ? g_object_ref (self->root) : NULL;
  g_mutex_unlock (&self->lock);

  /* Actors first: they may be using the devices. */
  if (root)
    {
      accel_actor_stop (root);
      g_object_unref (root);
    }

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
