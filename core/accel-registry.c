/* accel-registry.c: plugin discovery, the metadata cache, the blacklist,
 * allow/deny policy and lazy loading.
 *
 * At start-up every `*.so` file on the plugin path is matched against the
 * cache (path, size, mtime and the state of what the plugin declared it
 * depends on). A match is believed without opening the file; anything else
 * is scanned in a child process, `accel-plugin-scanner`, which loads it,
 * runs its init function and reports what it registered, so that a plugin
 * which crashes or hangs only costs its own entry. The registry then knows
 * every op type, backend, actor type and kernel by name, and loads a plugin
 * the first time something it registered is used.
 *
 * Threads: the lookups may be called from any thread. The tables are
 * guarded by a GRWLock; loading a plugin takes the process-wide plugin lock
 * first and then rebuilds the tables under the write lock.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-private.h"
#include "accel-config.h"

#include <string.h>


/**
 * AccelRegistry:
 *
 * Every plugin Accel found, and what each registers: op types, backends,
 * kernels and actor types, by name. Made by accel_system_new() (or
 * accel_registry_new()); an #AccelSystem owns one.
 *
 * What unchanged plugins register is read from a cache file; they are
 * loaded only when something of theirs is first used. New or changed
 * plugin files are scanned in a child process with a time limit, and one
 * that fails is blacklisted with the reason.
 */
struct _AccelRegistry {
  GObject parent_instance;

  AccelRegistryFlags flags;
  char *cache_path;
  guint n_scanned;

  GArray *core_op_types;        /* GType */

  GRWLock lock;                 /* guards everything below */
  GPtrArray *plugins;           /* AccelPlugin, path order, then static ones */
  GHashTable *plugins_by_name;  /* name -> AccelPlugin (borrowed) */
  GHashTable *tables[ACCEL_PLUGIN_N_FEATURE_KINDS];   /* name -> Provider */
  GHashTable *kernels;          /* KernelKey -> GPtrArray of AccelKernel, best first */
  guint kernels_serial;         /* atomic: bumped whenever the kernels change */
};

G_DEFINE_FINAL_TYPE (AccelRegistry, accel_registry, G_TYPE_OBJECT)

typedef struct {
  GType type;                   /* 0 while its plugin is not loaded */
  AccelPlugin *plugin;          /* borrowed; NULL for core types */
} Provider;

typedef struct {
  const char *op_type;          /* borrowed from a kernel */
  const char *backend;
} KernelKey;

static const char *const feature_what[] = { "backend", "op type", "actor type", "model type" };

static guint
kernel_key_hash (gconstpointer data)
{
  const KernelKey *key = data;
  return g_str_hash (key->op_type) * 31 + g_str_hash (key->backend);
}

static gboolean
kernel_key_equal (gconstpointer a, gconstpointer b)
{
  const KernelKey *ka = a, *kb = b;
  return strcmp (ka->op_type, kb->op_type) == 0 && strcmp (ka->backend, kb->backend) == 0;
}

static void
accel_registry_finalize (GObject *object)
{
  AccelRegistry *self = ACCEL_REGISTRY (object);

  _accel_op_remove_type_source (self);
  /* The tables borrow from the plugins: drop them first. */
  g_hash_table_unref (self->kernels);
  for (guint i = 0; i < ACCEL_PLUGIN_N_FEATURE_KINDS; i++)
    g_hash_table_unref (self->tables[i]);
  g_hash_table_unref (self->plugins_by_name);
  for (guint i = 0; i < self->plugins->len; i++)
    _accel_plugin_set_registry (self->plugins->pdata[i], NULL);
  g_ptr_array_unref (self->plugins);
  g_array_unref (self->core_op_types);
  g_free (self->cache_path);
  g_rw_lock_clear (&self->lock);
  G_OBJECT_CLASS (accel_registry_parent_class)->finalize (object);
}

static void
accel_registry_class_init (AccelRegistryClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = accel_registry_finalize;
}

static void
accel_registry_init (AccelRegistry *self)
{
  g_rw_lock_init (&self->lock);
  self->core_op_types = g_array_new (FALSE, FALSE, sizeof (GType));
  self->plugins = g_ptr_array_new_with_free_func (g_object_unref);
  self->plugins_by_name = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < ACCEL_PLUGIN_N_FEATURE_KINDS; i++)
    self->tables[i] = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, g_free);
  self->kernels = g_hash_table_new_full (kernel_key_hash, kernel_key_equal, g_free,
                                         (GDestroyNotify) g_ptr_array_unref);
}

/* ---- the tables ---------------------------------------------------------- */

static int
compare_kernels (gconstpointer a, gconstpointer b)
{
  const AccelKernel *ka = *(const AccelKernel **) a;
  const AccelKernel *kb = *(const AccelKernel **) b;
  return (ka->rank < kb->rank) - (ka->rank > kb->rank);
}

/* By op type, backend, then rank; stable, so equal ranks keep path order. */
static int
compare_kernel_names (gconstpointer a, gconstpointer b)
{
  const AccelKernel *ka = *(const AccelKernel **) a;
  const AccelKernel *kb = *(const AccelKernel **) b;
  int cmp = strcmp (ka->op_type, kb->op_type);
  if (cmp == 0)
    cmp = strcmp (ka->backend, kb->backend);
  return cmp != 0 ? cmp : compare_kernels (a, b);
}

static void
add_provider (AccelRegistry *self, AccelPluginFeatureKind kind, const char *name,
              GType type, AccelPlugin *plugin)
{
  Provider *existing = g_hash_table_lookup (self->tables[kind], name);
  if (existing)
    {
      if (existing->plugin != plugin)
        g_debug ("%s “%s” of plugin %s is shadowed by the one of %s", feature_what[kind], name,
                 plugin ? accel_plugin_get_name (plugin) : "core",
                 existing->plugin ? accel_plugin_get_name (existing->plugin) : "core");
      return;
    }
  Provider *provider = g_new0 (Provider, 1);
  provider->type = type;
  provider->plugin = plugin;
  g_hash_table_insert (self->tables[kind], (gpointer) name, provider);
}

/* Rebuilds every by-name table from the core types and the usable plugins.
 * Called at start-up and each time a plugin loads (which fills in types and
 * vtables). Plugin loads are rare; lookups only ever read. */
static void
rebuild_tables (AccelRegistry *self)
{
  _accel_plugin_lock ();
  g_rw_lock_writer_lock (&self->lock);

  g_hash_table_remove_all (self->kernels);
  for (guint i = 0; i < ACCEL_PLUGIN_N_FEATURE_KINDS; i++)
    g_hash_table_remove_all (self->tables[i]);
  g_hash_table_remove_all (self->plugins_by_name);

  for (guint i = 0; i < self->core_op_types->len; i++)
    {
      GType type = g_array_index (self->core_op_types, GType, i);
      const char *name = accel_op_class_get_name (g_type_class_peek (type));
      add_provider (self, ACCEL_PLUGIN_FEATURE_OP_TYPE, name ? name : g_type_name (type), type, NULL);
    }

  for (guint i = 0; i < self->plugins->len; i++)
    {
      AccelPlugin *plugin = self->plugins->pdata[i];
      AccelPluginStatus status = accel_plugin_get_status (plugin);
      const char *name = accel_plugin_get_name (plugin);

      /* By name: the first usable (or disabled) one, else the first at all. */
      if (name)
        {
          AccelPlugin *known = g_hash_table_lookup (self->plugins_by_name, name);
          gboolean usable = status == ACCEL_PLUGIN_STATUS_OK || status == ACCEL_PLUGIN_STATUS_DISABLED;
          if (known == NULL
              || (usable && accel_plugin_get_status (known) != ACCEL_PLUGIN_STATUS_OK
                  && accel_plugin_get_status (known) != ACCEL_PLUGIN_STATUS_DISABLED))
            g_hash_table_insert (self->plugins_by_name, (gpointer) name, plugin);
        }
      if (status != ACCEL_PLUGIN_STATUS_OK)
        continue;

      for (guint kind = 0; kind < ACCEL_PLUGIN_N_FEATURE_KINDS; kind++)
        {
          GPtrArray *features = _accel_plugin_peek_features (plugin, kind);
          for (guint j = 0; j < features->len; j++)
            {
              AccelPluginFeature *feature = features->pdata[j];
              add_provider (self, kind, feature->name, feature->type, plugin);
            }
        }

      GPtrArray *kernels = _accel_plugin_peek_kernels (plugin);
      for (guint j = 0; j < kernels->len; j++)
        {
          AccelKernel *kernel = kernels->pdata[j];
          KernelKey key = { kernel->op_type, kernel->backend };
          GPtrArray *list = g_hash_table_lookup (self->kernels, &key);
          if (list == NULL)
            {
              KernelKey *owned = g_new (KernelKey, 1);
              *owned = key;
              list = g_ptr_array_new ();
              g_hash_table_insert (self->kernels, owned, list);
            }
          g_ptr_array_add (list, kernel);
        }
    }

  /* Stable: of equal ranks, the plugin earlier on the path comes first. */
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, self->kernels);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_sort (value, compare_kernels);
  g_atomic_int_inc (&self->kernels_serial);

  g_rw_lock_writer_unlock (&self->lock);
  _accel_plugin_unlock ();
}

void
_accel_registry_plugin_loaded (AccelRegistry *self, AccelPlugin *plugin)
{
  rebuild_tables (self);
}

void
_accel_registry_register_core_op_type (AccelRegistry *self, GType op_type)
{
  g_return_if_fail (ACCEL_IS_REGISTRY (self));
  g_return_if_fail (g_type_is_a (op_type, ACCEL_TYPE_OP));

  g_type_class_ref (op_type);   /* kept: op classes live for the process */
  g_array_append_val (self->core_op_types, op_type);
}

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* ---- start-up ------------------------------------------------------------ */

static char *
default_cache_path (void)
{
  const char *path = g_getenv ("ACCEL_REGISTRY");
  if (path && *path)
    return g_strdup (path);
  return g_build_filename (g_get_user_cache_dir (), "accel-1.0", "registry-" ACCEL_HOST_ARCH ".bin", NULL);
}

static void
load_plugin_path (AccelRegistry *self)
{
  g_autoptr(GHashTable) cache = _accel_registry_cache_read (self->cache_path);
  g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func ((GDestroyNotify) _accel_registry_cache_entry_free);
  g_autoptr(GPtrArray) files = _accel_registry_list_plugin_files ();
  gboolean dirty = cache == NULL;

  for (guint i = 0; i < files->len; i++)
    {
      AccelRegistryCacheEntry *entry = NULL;
      gboolean scanned = FALSE;
      AccelPlugin *plugin = _accel_registry_cache_find_or_scan (cache, files->pdata[i], &entry, &scanned);
      if (plugin == NULL)
        continue;
      if (scanned)
        {
          self->n_scanned++;
          dirty = TRUE;
        }
      g_ptr_array_add (entries, entry);
      _accel_plugin_set_registry (plugin, self);
      g_ptr_array_add (self->plugins, plugin);
    }

  /* Entries of files that are gone. */
  if (cache && g_hash_table_size (cache) > 0)
    dirty = TRUE;

  if (dirty)
    {
      g_autoptr(GError) error = NULL;
      if (!_accel_registry_cache_write (self->cache_path, entries, &error))
        g_debug ("%s", error->message);
    }
}

/**
 * accel_registry_new:
 * @flags: how to set it up
 * @error: return location for a #GError
 *
 * Makes a registry: the core op types, then (unless
 * %ACCEL_REGISTRY_FLAGS_NO_SCAN) every plugin on the plugin path. Unchanged
 * plugins are known from the cache without being opened; new or changed
 * files are scanned in a child process, and refused ones blacklisted.
 *
 * Most programs get the registry of accel_system_new() instead.
 *
 * Returns: (transfer full): the registry, or %NULL with @error set
 */
AccelRegistry *
accel_registry_new (AccelRegistryFlags flags, GError **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  AccelRegistry *self = g_object_new (ACCEL_TYPE_REGISTRY, NULL);
  self->flags = flags;
  _accel_ops_register_core (self);
  _accel_op_add_type_source (self);

  if (!(flags & ACCEL_REGISTRY_FLAGS_NO_SCAN))
    {
      self->cache_path = default_cache_path ();
      load_plugin_path (self);
      _accel_registry_apply_policy (self->plugins);
    }
  rebuild_tables (self);
  return self;
}

/**
 * accel_registry_add_static_plugin:
 * @self: a registry
 * @desc: (transfer none): the descriptor of a plugin linked into the
 *   program (what `accel_plugin_<name>_register()` passes); it must live
 *   as long as the process
 * @error: return location for a #GError
 *
 * Adds and initialises a plugin that is linked into the program rather
 * than loaded from a file. A not yet loaded plugin file of the same name
 * becomes a duplicate of it. Adding the same plugin twice does nothing.
 *
 * Returns: %TRUE on success; %FALSE with %ACCEL_ERROR_PLUGIN
 */
gboolean
accel_registry_add_static_plugin (AccelRegistry *self,
                                  const AccelPluginDesc *desc,
                                  GError **error)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (self), FALSE);
  g_return_val_if_fail (desc != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (desc->abi_version != ACCEL_ABI_VERSION)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                   "Static plugin “%s” was built for plugin ABI version %u; this Accel speaks version %u",
                   desc->name ? desc->name : "?", desc->abi_version, (guint) ACCEL_ABI_VERSION);
      return FALSE;
    }
  if (desc->name == NULL || desc->init == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                   "Static plugin descriptor has no %s", desc->name ? "init function" : "name");
      return FALSE;
    }

  _accel_plugin_lock ();
  g_rw_lock_reader_lock (&self->lock);
  AccelPlugin *existing = g_hash_table_lookup (self->plugins_by_name, desc->name);
  g_rw_lock_reader_unlock (&self->lock);

  if (existing && accel_plugin_get_filename (existing) == NULL)
    {
      _accel_plugin_unlock ();
      return TRUE;
    }
  if (existing && accel_plugin_is_loaded (existing))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                   "Plugin “%s” is already loaded from %s; it cannot also be linked in",
                   desc->name, accel_plugin_get_filename (existing));
      _accel_plugin_unlock ();
      return FALSE;
    }
  if (existing && accel_plugin_get_status (existing) != ACCEL_PLUGIN_STATUS_BLACKLISTED)
    _accel_plugin_set_status (existing, ACCEL_PLUGIN_STATUS_DUPLICATE,
                              "duplicate: the program links in a plugin of the same name");

  AccelPlugin *plugin = _accel_plugin_new (NULL);
  _accel_plugin_set_loaded_from_desc (plugin, desc);
  _accel_plugin_set_registry (plugin, self);
  g_rw_lock_writer_lock (&self->lock);
  g_ptr_array_add (self->plugins, plugin);
  g_rw_lock_writer_unlock (&self->lock);

  gboolean ok = accel_plugin_load (plugin, error);
  if (!ok)
    rebuild_tables (self);
  _accel_plugin_unlock ();
  return ok;
}

/* ---- queries ------------------------------------------------------------- */

/**
 * accel_registry_get_plugins:
 * @self: a registry
 *
 * Lists every plugin file found (usable, blacklisted, disabled and
 * duplicates, in path order), then the plugins linked into the program.
 * Loads nothing.
 *
 * Returns: (transfer container) (element-type AccelPlugin): the plugins
 */
GPtrArray *
accel_registry_get_plugins (AccelRegistry *self)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (self), NULL);

  g_rw_lock_reader_lock (&self->lock);
  GPtrArray *out = g_ptr_array_copy (self->plugins, (GCopyFunc) g_object_ref, NULL);
  g_rw_lock_reader_unlock (&self->lock);
  return out;
}

/**
 * accel_registry_find_plugin:
 * @self: a registry
 * @name: a plugin name (`cpu`; `-` and `_` are the same)
 *
 * Finds a plugin by name: the one in use if there are duplicates. Loads
 * nothing.
 *
 * Returns: (transfer none) (nullable): the plugin, or %NULL
 */
AccelPlugin *
accel_registry_find_plugin (AccelRegistry *self, const char *name)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  g_autofree char *normalized = g_strdelimit (g_strdup (name), "-", '_');
  g_rw_lock_reader_lock (&self->lock);
  AccelPlugin *plugin = g_hash_table_lookup (self->plugins_by_name, name);
  if (plugin == NULL)
    plugin = g_hash_table_lookup (self->plugins_by_name, normalized);
  g_rw_lock_reader_unlock (&self->lock);
  return plugin;
}

static char **
list_table (AccelRegistry *self, AccelPluginFeatureKind kind)
{
  g_rw_lock_reader_lock (&self->lock);
  guint n;
  const char **keys = (const char **) g_hash_table_get_keys_as_array (self->tables[kind], &n);
  char **out = g_new (char *, n + 1);
  for (guint i = 0; i < n; i++)
    out[i] = g_strdup (keys[i]);
  out[n] = NULL;
  g_free (keys);
  g_rw_lock_reader_unlock (&self->lock);
  qsort (out, n, sizeof (char *), compare_names);
  return out;
}

/**
 * accel_registry_list_op_types:
 * @self: a registry
 *
 * Lists the op types of the core and of every usable plugin, sorted.
 * Loads nothing.
 *
 * Returns: (transfer full) (array zero-terminated=1): op type names
 */
char **
accel_registry_list_op_types (AccelRegistry *self)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (self), NULL);
  return list_table (self, ACCEL_PLUGIN_FEATURE_OP_TYPE);
}

/**
 * accel_registry_list_backends:
 * @self: a registry
 *
 * Lists the backends of every usable plugin, sorted. Loads nothing.
 *
 * Returns: (transfer full) (array zero-terminated=1): backend names
 */
char **
accel_registry_list_backends (AccelRegistry *self)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (self), NULL);
  return list_table (self, ACCEL_PLUGIN_FEATURE_BACKEND);
}

/**
 * accel_registry_list_actor_types:
 * @self: a registry
 *
 * Lists the actor types of every usable plugin, sorted. Loads nothing.
 *
 * Returns: (transfer full) (array zero-terminated=1): actor type names
 */
char **
accel_registry_list_actor_types (AccelRegistry *self)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (self), NULL);
  return list_table (self, ACCEL_PLUGIN_FEATURE_ACTOR_TYPE);
}

/**
 * accel_registry_list_model_types:
 * @self: a registry
 *
 * Lists the model types of every usable plugin, sorted. Loads nothing.
 *
 * Returns: (transfer full) (array zero-terminated=1): model type names
 */
char **
accel_registry_list_model_types (AccelRegistry *self)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (self), NULL);
  return list_table (self, ACCEL_PLUGIN_FEATURE_MODEL_TYPE);
}

/* Says why nothing usable provides @name: unknown, or its plugin is
 * blacklisted, disabled or a duplicate. */
static void
set_unknown_error (AccelRegistry *self, AccelPluginFeatureKind kind, const char *name, GError **error)
{
  g_autoptr(GPtrArray) plugins = accel_registry_get_plugins (self);

  for (guint i = 0; i < plugins->len; i++)
    {
      AccelPlugin *plugin = plugins->pdata[i];
      if (accel_plugin_get_status (plugin) == ACCEL_PLUGIN_STATUS_OK)
        continue;
      g_auto(GStrv) names = NULL;
      switch (kind)
        {
        case ACCEL_PLUGIN_FEATURE_BACKEND: names = accel_plugin_list_backends (plugin); break;
        case ACCEL_PLUGIN_FEATURE_OP_TYPE: names = accel_plugin_list_op_types (plugin); break;
        case ACCEL_PLUGIN_FEATURE_ACTOR_TYPE: names = accel_plugin_list_actor_types (plugin); break;
        default: names = accel_plugin_list_model_types (plugin); break;
        }
      if (g_strv_contains ((const char *const *) names, name))
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE,
                       "No usable %s is named “%s”: plugin “%s” (%s) provides it but is %s",
                       feature_what[kind], name, accel_plugin_get_name (plugin),
                       accel_plugin_get_filename (plugin) ? accel_plugin_get_filename (plugin) : "static",
                       accel_plugin_get_reason (plugin) ? accel_plugin_get_reason (plugin) : "not usable");
          return;
        }
    }
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_UNKNOWN_TYPE,
               "No %s is named “%s”", feature_what[kind], name);
}

static GType
lookup_type (AccelRegistry *self, AccelPluginFeatureKind kind, const char *name, GError **error)
{
  GType type = 0;
  AccelPlugin *plugin = NULL;
  gboolean known;

  g_rw_lock_reader_lock (&self->lock);
  Provider *provider = g_hash_table_lookup (self->tables[kind], name);
  known = provider != NULL;
  if (provider)
    {
      type = provider->type;
      plugin = provider->plugin ? g_object_ref (provider->plugin) : NULL;
    }
  g_rw_lock_reader_unlock (&self->lock);

  if (!known)
    {
      set_unknown_error (self, kind, name, error);
      return 0;
    }
  if (type != 0 || plugin == NULL)
    {
      g_clear_object (&plugin);
      return type;
    }

  /* Known from the cache: load its plugin, which fills in the type. */
  if (!accel_plugin_load (plugin, error))
    {
      g_object_unref (plugin);
      return 0;
    }
  g_rw_lock_reader_lock (&self->lock);
  provider = g_hash_table_lookup (self->tables[kind], name);
  type = provider ? provider->type : 0;
  g_rw_lock_reader_unlock (&self->lock);
  if (type == 0)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                 "Plugin “%s” (%s) no longer registers %s “%s”; its cache entry is stale",
                 accel_plugin_get_name (plugin), accel_plugin_get_filename (plugin),
                 feature_what[kind], name);
  g_object_unref (plugin);
  return type;
}

/**
 * accel_registry_lookup_op_type:
 * @self: a registry
 * @name: an op type name (`gemm`)
 * @error: return location for a #GError
 *
 * Finds an op type by name, loading the plugin that registers it if
 * needed.
 *
 * Returns: the #AccelOp subtype, or 0 with %ACCEL_ERROR_UNKNOWN_TYPE (no such
 *   op type, or its plugin is not usable) or %ACCEL_ERROR_PLUGIN (its plugin
 *   failed to load)
 */
GType
accel_registry_lookup_op_type (AccelRegistry *self, const char *name, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (self), 0);
  g_return_val_if_fail (name != NULL, 0);
  g_return_val_if_fail (error == NULL || *error == NULL, 0);
  return lookup_type (self, ACCEL_PLUGIN_FEATURE_OP_TYPE, name, error);
}

/**
 * accel_registry_lookup_actor_type:
 * @self: a registry
 * @name: an actor type name (its GType name)
 * @error: return location for a #GError
 *
 * Finds an actor type by name, loading the plugin that registers it if
 * needed.
 *
 * Returns: the #AccelActor subtype, or 0 with %ACCEL_ERROR_UNKNOWN_TYPE or
 *   %ACCEL_ERROR_PLUGIN
 */
GType
accel_registry_lookup_actor_type (AccelRegistry *self, const char *name, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (self), 0);
  g_return_val_if_fail (name != NULL, 0);
  g_return_val_if_fail (error == NULL || *error == NULL, 0);
  return lookup_type (self, ACCEL_PLUGIN_FEATURE_ACTOR_TYPE, name, error);
}

/**
 * accel_registry_lookup_model_type:
 * @self: a registry
 * @name: a model type name (`linear`)
 * @error: return location for a #GError
 *
 * Finds a model type by name, loading the plugin that registers it if
 * needed.
 *
 * Returns: the GType implementing #AccelModel, or 0 with
 *   %ACCEL_ERROR_UNKNOWN_TYPE or %ACCEL_ERROR_PLUGIN
 */
GType
accel_registry_lookup_model_type (AccelRegistry *self, const char *name, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (self), 0);
  g_return_val_if_fail (name != NULL, 0);
  g_return_val_if_fail (error == NULL || *error == NULL, 0);
  return lookup_type (self, ACCEL_PLUGIN_FEATURE_MODEL_TYPE, name, error);
}

/**
 * accel_registry_lookup_backend:
 * @self: a registry
 * @name: a backend name (`cpu`, `cuda`)
 * @error: return location for a #GError
 *
 * Finds a backend type by name, loading the plugin that registers it if
 * needed.
 *
 * Returns: the #AccelBackend subtype, or 0 with %ACCEL_ERROR_UNKNOWN_TYPE or
 *   %ACCEL_ERROR_PLUGIN
 */
GType
accel_registry_lookup_backend (AccelRegistry *self, const char *name, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (self), 0);
  g_return_val_if_fail (name != NULL, 0);
  g_return_val_if_fail (error == NULL || *error == NULL, 0);
  return lookup_type (self, ACCEL_PLUGIN_FEATURE_BACKEND, name, error);
}

/**
 * accel_registry_list_kernels:
 * @self: a registry
 * @op_type: (nullable): only kernels of this op type
 * @backend: (nullable): only kernels on this backend
 *
 * Lists the kernels of the usable plugins, by op type, then backend, then
 * rank (highest first). Loads nothing.
 *
 * Returns: (transfer container) (element-type AccelKernel): the kernels;
 *   they belong to the registry
 */
GPtrArray *
accel_registry_list_kernels (AccelRegistry *self,
                             const char *op_type,
                             const char *backend)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (self), NULL);

  GPtrArray *out = g_ptr_array_new ();
  g_rw_lock_reader_lock (&self->lock);
  guint n;
  KernelKey **keys = (KernelKey **) g_hash_table_get_keys_as_array (self->kernels, &n);
  for (guint i = 0; i < n; i++)
    {
      if ((op_type && strcmp (op_type, keys[i]->op_type) != 0)
          || (backend && strcmp (backend, keys[i]->backend) != 0))
        continue;
      GPtrArray *list = g_hash_table_lookup (self->kernels, keys[i]);
      for (guint j = 0; j < list->len; j++)
        g_ptr_array_add (out, list->pdata[j]);
    }
  g_free (keys);
  g_rw_lock_reader_unlock (&self->lock);

  g_ptr_array_sort (out, compare_kernel_names);
  return out;
}

/**
 * accel_registry_find_kernel:
 * @self: a registry
 * @op: a validated op
 * @device: the device it is to run on
 * @error: return location for a #GError
 *
 * Picks the kernel that runs @op on @device: of the kernels registered for
 * the op's type on the device's backend, the highest-ranked one that
 * supports this op instance. Loads the kernel's plugin if needed.
 *
 * Returns: (transfer none): the kernel (it belongs to the registry), or
 *   %NULL with %ACCEL_ERROR_NO_KERNEL if none is registered, or the error of
 *   the highest-ranked kernel that refused
 */
guint
_accel_registry_get_kernels_serial (AccelRegistry *self)
{
  return (guint) g_atomic_int_get (&self->kernels_serial);
}

const AccelKernel *
accel_registry_find_kernel (AccelRegistry *self,
                            AccelOp *op,
                            AccelDevice *device,
                            GError **error)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (ACCEL_IS_OP (op), NULL);
  g_return_val_if_fail (ACCEL_IS_DEVICE (device), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  KernelKey key = { accel_op_get_type_name (op), accel_device_get_backend_name (device) };
  if (key.backend == NULL)
    key.backend = "";

  g_rw_lock_reader_lock (&self->lock);
  GPtrArray *list = g_hash_table_lookup (self->kernels, &key);
  if (list)
    g_ptr_array_ref (list);
  g_rw_lock_reader_unlock (&self->lock);

  if (list == NULL || list->len == 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL,
                   "No kernel implements op “%s” on backend “%s”", key.op_type, key.backend);
      g_clear_pointer (&list, g_ptr_array_unref);
      return NULL;
    }

  const AccelKernel *found = NULL;
  GError *first_refusal = NULL;
  for (guint i = 0; i < list->len && found == NULL; i++)
    {
      const AccelKernel *kernel = list->pdata[i];
      GError *refusal = NULL;
      if (accel_kernel_supports (kernel, op, device, &refusal))
        found = kernel;
      else if (first_refusal == NULL)
        first_refusal = refusal;
      else
        g_error_free (refusal);
    }
  g_ptr_array_unref (list);

  if (found)
    g_clear_error (&first_refusal);
  else
    g_propagate_error (error, first_refusal);
  return found;
}

/**
 * accel_registry_get_cache_path:
 * @self: a registry
 *
 * Gets the path of the registry's metadata cache.
 *
 * Returns: (nullable) (type filename): the cache file it reads and writes
 *   (`$ACCEL_REGISTRY`, else `$XDG_CACHE_HOME/accel-1.0/registry-ARCH.bin`),
 *   or %NULL for a registry made with %ACCEL_REGISTRY_FLAGS_NO_SCAN
 */
const char *
accel_registry_get_cache_path (AccelRegistry *self)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (self), NULL);
  return self->cache_path;
}

/**
 * accel_registry_get_n_scanned:
 * @self: a registry
 *
 * How many plugin files were scanned when the registry was made, that is,
 * were new, changed, or not in the cache. With a warm cache and no
 * change, 0.
 *
 * Returns: the number of files scanned
 */
guint
accel_registry_get_n_scanned (AccelRegistry *self)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (self), 0);
  return self->n_scanned;
}

/**
 * accel_registry_get_n_loaded:
 * @self: a registry
 *
 * How many of the registry's plugins are loaded in this process (their
 * modules opened and init functions run), static plugins included.
 *
 * Returns: the number of loaded plugins
 */
guint
accel_registry_get_n_loaded (AccelRegistry *self)
{
  g_return_val_if_fail (ACCEL_IS_REGISTRY (self), 0);

  guint n = 0;
  g_rw_lock_reader_lock (&self->lock);
  for (guint i = 0; i < self->plugins->len; i++)
    n += accel_plugin_is_loaded (self->plugins->pdata[i]) ? 1 : 0;
  g_rw_lock_reader_unlock (&self->lock);
  return n;
}
