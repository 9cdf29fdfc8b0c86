/* accel-plugin.c: a plugin module, what it registers, and loading it.
 *
 * A plugin is known in one of two ways: loaded (its init function ran in
 * this process and registered real GTypes and kernel vtables), or from its
 * metadata (what the scanner or the registry cache said it registers, by
 * name only). In the second case it is loaded the first time something it
 * registered is used; its init then fills in the types and vtables of the
 * entries that were known by name.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-plugin-private.h"

#include <string.h>
#include <glib/gstdio.h>

/**
 * AccelPlugin:
 *
 * A plugin: a shared module exporting a descriptor made with
 * ACCEL_PLUGIN_DEFINE(), or a descriptor linked into the program. Its init
 * function registers backends, op types, kernels and actor types.
 *
 * Plugins belong to an #AccelRegistry. What a plugin registers is known
 * without loading it (from the registry cache); the module is opened the
 * first time one of those things is used, and then stays resident.
 */

G_DEFINE_FINAL_TYPE (AccelPlugin, accel_plugin, G_TYPE_OBJECT)

static const AccelPropertyField plugin_fields[] = {
  /**
   * AccelPlugin:name:
   *
   * The plugin's name, as given to ACCEL_PLUGIN_DEFINE().
   */
  ACCEL_FIELD_STRING (AccelPlugin, name, "name", "Plugin name", NULL, ACCEL_FIELD_READABLE),
  /**
   * AccelPlugin:description:
   *
   * One line on what the plugin provides.
   */
  ACCEL_FIELD_STRING (AccelPlugin, description, "description", "What the plugin provides", NULL, ACCEL_FIELD_READABLE),
  /**
   * AccelPlugin:version:
   *
   * The plugin's version string.
   */
  ACCEL_FIELD_STRING (AccelPlugin, version, "version", "Plugin version", NULL, ACCEL_FIELD_READABLE),
  /**
   * AccelPlugin:license:
   *
   * The plugin's licence.
   */
  ACCEL_FIELD_STRING (AccelPlugin, license, "license", "Plugin licence", NULL, ACCEL_FIELD_READABLE),
  /**
   * AccelPlugin:filename:
   *
   * The module file, or %NULL for a plugin linked into the program.
   */
  ACCEL_FIELD_STRING (AccelPlugin, filename, "filename", "Module file", NULL, ACCEL_FIELD_READABLE),
  /**
   * AccelPlugin:status:
   *
   * What the registry thinks of the plugin.
   */
  ACCEL_FIELD_ENUM (AccelPlugin, status, "status", "Registry status", accel_plugin_status_get_type,
                    ACCEL_PLUGIN_STATUS_OK, ACCEL_FIELD_READABLE),
  /**
   * AccelPlugin:reason:
   *
   * Why the plugin is not usable, or %NULL.
   */
  ACCEL_FIELD_STRING (AccelPlugin, reason, "reason", "Why the plugin is not usable", NULL, ACCEL_FIELD_READABLE),
};

static GRecMutex plugin_lock;
/* Plugin name -> the file it was loaded from ("" when linked in), for the
 * whole process: two files of one plugin would register the same GTypes. */
static GHashTable *loaded_names;

void
_accel_plugin_lock (void)
{
  g_rec_mutex_lock (&plugin_lock);
}

void
_accel_plugin_unlock (void)
{
  g_rec_mutex_unlock (&plugin_lock);
}

static void
feature_free (gpointer data)
{
  AccelPluginFeature *feature = data;
  g_free (feature->name);
  g_free (feature);
}

static void
accel_plugin_finalize (GObject *object)
{
  AccelPlugin *self = ACCEL_PLUGIN (object);

  accel_object_finalize_fields (object, ACCEL_TYPE_PLUGIN);
  for (guint i = 0; i < ACCEL_PLUGIN_N_FEATURE_KINDS; i++)
    g_ptr_array_unref (self->features[i]);
  g_ptr_array_unref (self->kernels);
  g_ptr_array_unref (self->dep_env);
  g_ptr_array_unref (self->dep_paths);
  /* The module, if any, stays resident: its GTypes cannot be unloaded. */
  G_OBJECT_CLASS (accel_plugin_parent_class)->finalize (object);
}

static void
accel_plugin_class_init (AccelPluginClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = accel_plugin_finalize;
  accel_object_class_install_fields (object_class, plugin_fields, G_N_ELEMENTS (plugin_fields));
}

static void
accel_plugin_init (AccelPlugin *self)
{
  for (guint i = 0; i < ACCEL_PLUGIN_N_FEATURE_KINDS; i++)
    self->features[i] = g_ptr_array_new_with_free_func (feature_free);
  self->kernels = g_ptr_array_new_with_free_func ((GDestroyNotify) _accel_kernel_free);
  self->dep_env = g_ptr_array_new_with_free_func (g_free);
  self->dep_paths = g_ptr_array_new_with_free_func (g_free);
  self->status = ACCEL_PLUGIN_STATUS_OK;
}

AccelPlugin *
_accel_plugin_new (const char *filename)
{
  AccelPlugin *self = g_object_new (ACCEL_TYPE_PLUGIN, NULL);
  self->filename = g_strdup (filename);
  return self;
}

void
_accel_plugin_set_loaded_from_desc (AccelPlugin *self, const AccelPluginDesc *desc)
{
  self->desc = desc;
  g_free (self->name);
  self->name = g_strdup (desc->name);
  g_free (self->description);
  self->description = g_strdup (desc->description);
  g_free (self->version);
  self->version = g_strdup (desc->version);
  g_free (self->license);
  self->license = g_strdup (desc->license);
}

void
_accel_plugin_set_registry (AccelPlugin *self, AccelRegistry *registry)
{
  self->registry = registry;
}

void
_accel_plugin_set_status (AccelPlugin *self, AccelPluginStatus status, const char *reason)
{
  _accel_plugin_lock ();
  self->status = status;
  /* A reason is set once: getters hand it out without a lock. */
  if (self->reason == NULL && reason != NULL)
    self->reason = g_strdup (reason);
  _accel_plugin_unlock ();
}

GPtrArray *
_accel_plugin_peek_features (AccelPlugin *self, AccelPluginFeatureKind kind)
{
  return self->features[kind];
}

GPtrArray *
_accel_plugin_peek_kernels (AccelPlugin *self)
{
  return self->kernels;
}

/* `libaccel-cuda-blas.so` -> `cuda_blas`: the suffix of the entry symbol. */
char *
_accel_plugin_name_from_filename (const char *filename)
{
  g_autofree char *base = g_path_get_basename (filename);
  const char *start = base;

  if (g_str_has_prefix (start, "libaccel-"))
    start += strlen ("libaccel-");
  else if (g_str_has_prefix (start, "lib"))
    start += strlen ("lib");
  char *name = g_strdup (start);
  char *dot = strchr (name, '.');
  if (dot)
    *dot = '\0';
  g_strdelimit (name, "-", '_');
  return name;
}

static gboolean
open_module (AccelPlugin *self, GError **error)
{
  g_autofree char *symbol_name = NULL;
  g_autofree char *expected = _accel_plugin_name_from_filename (self->filename);
  gpointer symbol = NULL;

  /* Local binding: two plugins may use the same symbol names. Immediate
   * binding: a missing library symbol fails here, in the scanner, rather
   * than at the first call. */
  GModule *module = g_module_open (self->filename, G_MODULE_BIND_LOCAL);
  if (module == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                   "dlopen failed: %s", g_module_error ());
      return FALSE;
    }

  symbol_name = g_strdup_printf ("accel_plugin_%s_get_desc", expected);
  if (!g_module_symbol (module, symbol_name, &symbol) || symbol == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                   "no plugin descriptor: %s does not export %s "
                   "(a plugin named “%s” must be defined with ACCEL_PLUGIN_DEFINE)",
                   self->filename, symbol_name, expected);
      g_module_close (module);
      return FALSE;
    }

  const AccelPluginDesc *desc = ((const AccelPluginDesc *(*) (void)) symbol) ();
  if (desc == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                   "%s returned no descriptor", symbol_name);
      g_module_close (module);
      return FALSE;
    }
  if (desc->abi_version != ACCEL_ABI_VERSION)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                   "ABI mismatch: the plugin was built for plugin ABI version %u, "
                   "this Accel speaks version %u",
                   desc->abi_version, (guint) ACCEL_ABI_VERSION);
      g_module_close (module);
      return FALSE;
    }
  if (desc->name == NULL || desc->init == NULL || !g_str_equal (desc->name, expected))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                   "bad descriptor: it names plugin “%s” (expected “%s”) %s an init function",
                   desc->name ? desc->name : "(null)", expected,
                   desc->init ? "with" : "without");
      g_module_close (module);
      return FALSE;
    }
  if (self->name != NULL && !g_str_equal (self->name, desc->name))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                   "the module now names plugin “%s”, not “%s”", desc->name, self->name);
      g_module_close (module);
      return FALSE;
    }

  /* Types a plugin registers can never be unregistered. */
  g_module_make_resident (module);

  if (self->name == NULL)
    _accel_plugin_set_loaded_from_desc (self, desc);
  self->desc = desc;
  return TRUE;
}

/**
 * accel_plugin_load:
 * @self: a plugin
 * @error: return location for a #GError
 *
 * Loads the plugin if it is not loaded yet: opens its module (resolving
 * `accel_plugin_<name>_get_desc`, where the name comes from the file name
 * `libaccel-<name>.so`), checks the ABI version and runs its init function.
 * The registry calls this the first time something the plugin registered is
 * used; calling it again does nothing. Thread-safe.
 *
 * A plugin that is blacklisted, disabled or shadowed by a duplicate is not
 * loaded. A plugin whose loading fails becomes blacklisted for the rest of
 * the process.
 *
 * Returns: %TRUE if the plugin is loaded; %FALSE with %ACCEL_ERROR_PLUGIN
 */
gboolean
accel_plugin_load (AccelPlugin *self, GError **error)
{
  g_return_val_if_fail (ACCEL_IS_PLUGIN (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (g_atomic_int_get (&self->loaded))
    return TRUE;

  _accel_plugin_lock ();
  if (self->loaded)
    {
      _accel_plugin_unlock ();
      return TRUE;
    }
  if (self->status != ACCEL_PLUGIN_STATUS_OK)
    {
      static const char *const what[] = { "usable", "blacklisted", "disabled", "shadowed by a duplicate" };
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                   "Plugin “%s” (%s) is %s: %s",
                   self->name ? self->name : "?",
                   self->filename ? self->filename : "static",
                   what[self->status], self->reason ? self->reason : "no reason given");
      _accel_plugin_unlock ();
      return FALSE;
    }

  GError *local_error = NULL;
  if (self->desc == NULL && !open_module (self, &local_error))
    goto failed;

  const char *source = self->filename ? self->filename : "";
  const char *loaded_from = loaded_names ? g_hash_table_lookup (loaded_names, self->desc->name) : NULL;
  if (loaded_from && !g_str_equal (loaded_from, source))
    {
      local_error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_PLUGIN,
                                 "another copy of plugin “%s” is already loaded in this process, from %s",
                                 self->desc->name, *loaded_from ? loaded_from : "the program");
      goto failed;
    }

  self->initialising = TRUE;
  gboolean ok = self->desc->init (self, &local_error);
  self->initialising = FALSE;
  if (!ok)
    {
      if (local_error == NULL)
        local_error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_PLUGIN, "its init function failed without a reason");
      g_prefix_error (&local_error, "init failed: ");
      goto failed;
    }
  g_clear_error (&local_error);
  if (loaded_names == NULL)
    loaded_names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  if (loaded_from == NULL)
    g_hash_table_insert (loaded_names, g_strdup (self->desc->name), g_strdup (source));

  /* Publish to the registry before marking it loaded: a thread that saw the
   * registry's by-name entry waits on the lock, then finds the types. */
  if (self->registry)
    _accel_registry_plugin_loaded (self->registry, self);
  g_atomic_int_set (&self->loaded, TRUE);
  _accel_plugin_unlock ();
  g_debug ("Loaded plugin %s from %s", self->name, self->filename ? self->filename : "the program");
  return TRUE;

failed:
  _accel_plugin_set_status (self, ACCEL_PLUGIN_STATUS_BLACKLISTED, local_error->message);
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN, "Plugin %s%s%s cannot be loaded: %s",
               self->name ? "“" : "", self->name ? self->name : self->filename,
               self->name ? "”" : "", local_error->message);
  g_error_free (local_error);
  _accel_plugin_unlock ();
  return FALSE;
}

/**
 * accel_plugin_is_loaded:
 * @self: a plugin
 *
 * Whether the plugin's module was loaded and its init function ran in this
 * process (a plugin known only from the registry cache is not loaded until
 * something it registered is used).
 *
 * Returns: whether its init function has run in this process
 */
gboolean
accel_plugin_is_loaded (AccelPlugin *self)
{
  g_return_val_if_fail (ACCEL_IS_PLUGIN (self), FALSE);
  return g_atomic_int_get (&self->loaded);
}

/**
 * accel_plugin_get_name:
 * @self: a plugin
 *
 * Gets its name; %NULL for a file that could not be read as a plugin.
 *
 * Returns: (nullable): its name; %NULL for a file that could not be read as
 *   a plugin
 */
const char *
accel_plugin_get_name (AccelPlugin *self)
{
  g_return_val_if_fail (ACCEL_IS_PLUGIN (self), NULL);
  return self->name;
}

/**
 * accel_plugin_get_description:
 * @self: a plugin
 *
 * Gets one line on what it provides.
 *
 * Returns: (nullable): one line on what it provides
 */
const char *
accel_plugin_get_description (AccelPlugin *self)
{
  g_return_val_if_fail (ACCEL_IS_PLUGIN (self), NULL);
  return self->description;
}

/**
 * accel_plugin_get_version:
 * @self: a plugin
 *
 * Gets its version string.
 *
 * Returns: (nullable): its version string
 */
const char *
accel_plugin_get_version (AccelPlugin *self)
{
  g_return_val_if_fail (ACCEL_IS_PLUGIN (self), NULL);
  return self->version;
}

/**
 * accel_plugin_get_license:
 * @self: a plugin
 *
 * Gets its licence.
 *
 * Returns: (nullable): its licence
 */
const char *
accel_plugin_get_license (AccelPlugin *self)
{
  g_return_val_if_fail (ACCEL_IS_PLUGIN (self), NULL);
  return self->license;
}

/**
 * accel_plugin_get_filename:
 * @self: a plugin
 *
 * Gets its module file, or %NULL for a plugin linked into the program.
 *
 * Returns: (nullable) (type filename): its module file, or %NULL for a
 *   plugin linked into the program
 */
const char *
accel_plugin_get_filename (AccelPlugin *self)
{
  g_return_val_if_fail (ACCEL_IS_PLUGIN (self), NULL);
  return self->filename;
}

/**
 * accel_plugin_get_status:
 * @self: a plugin
 *
 * Gets whether it is usable, and if not, why in one word.
 *
 * Returns: whether it is usable, and if not, why in one word
 */
AccelPluginStatus
accel_plugin_get_status (AccelPlugin *self)
{
  g_return_val_if_fail (ACCEL_IS_PLUGIN (self), ACCEL_PLUGIN_STATUS_BLACKLISTED);
  return self->status;
}

/**
 * accel_plugin_get_reason:
 * @self: a plugin
 *
 * Gets why the plugin is blacklisted, disabled or a duplicate, or %NULL for a
 * usable plugin.
 *
 * Returns: (nullable): why the plugin is blacklisted, disabled or a
 *   duplicate, or %NULL for a usable plugin
 */
const char *
accel_plugin_get_reason (AccelPlugin *self)
{
  g_return_val_if_fail (ACCEL_IS_PLUGIN (self), NULL);
  return self->reason;
}

static char **
features_to_strv (AccelPlugin *self, AccelPluginFeatureKind kind)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

  _accel_plugin_lock ();
  GPtrArray *features = self->features[kind];
  for (guint i = 0; i < features->len; i++)
    g_strv_builder_add (builder, ((AccelPluginFeature *) features->pdata[i])->name);
  _accel_plugin_unlock ();
  return g_strv_builder_end (builder);
}

/**
 * accel_plugin_list_backends:
 * @self: a plugin
 *
 * Lists the backends the plugin registers. Loads nothing.
 *
 * Returns: (transfer full) (array zero-terminated=1): backend names
 */
char **
accel_plugin_list_backends (AccelPlugin *self)
{
  g_return_val_if_fail (ACCEL_IS_PLUGIN (self), NULL);
  return features_to_strv (self, ACCEL_PLUGIN_FEATURE_BACKEND);
}

/**
 * accel_plugin_list_op_types:
 * @self: a plugin
 *
 * Lists the op types the plugin registers. Loads nothing.
 *
 * Returns: (transfer full) (array zero-terminated=1): op type names
 */
char **
accel_plugin_list_op_types (AccelPlugin *self)
{
  g_return_val_if_fail (ACCEL_IS_PLUGIN (self), NULL);
  return features_to_strv (self, ACCEL_PLUGIN_FEATURE_OP_TYPE);
}

/**
 * accel_plugin_list_actor_types:
 * @self: a plugin
 *
 * Lists the actor types the plugin registers, by GType name. Loads nothing.
 *
 * Returns: (transfer full) (array zero-terminated=1): actor type names
 */
char **
accel_plugin_list_actor_types (AccelPlugin *self)
{
  g_return_val_if_fail (ACCEL_IS_PLUGIN (self), NULL);
  return features_to_strv (self, ACCEL_PLUGIN_FEATURE_ACTOR_TYPE);
}

/**
 * accel_plugin_list_model_types:
 * @self: a plugin
 *
 * Lists the model types the plugin registers. Loads nothing.
 *
 * Returns: (transfer full) (array zero-terminated=1): model type names
 */
char **
accel_plugin_list_model_types (AccelPlugin *self)
{
  g_return_val_if_fail (ACCEL_IS_PLUGIN (self), NULL);
  return features_to_strv (self, ACCEL_PLUGIN_FEATURE_MODEL_TYPE);
}

/**
 * accel_plugin_list_kernels:
 * @self: a plugin
 *
 * Lists the (op type, backend) pairs the plugin registers kernels for, each
 * once, as `OP-TYPE/BACKEND` (`gemm/cpu`). Loads nothing.
 *
 * Returns: (transfer full) (array zero-terminated=1): kernel names
 */
char **
accel_plugin_list_kernels (AccelPlugin *self)
{
  g_return_val_if_fail (ACCEL_IS_PLUGIN (self), NULL);

  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  _accel_plugin_lock ();
  for (guint i = 0; i < self->kernels->len; i++)
    {
      AccelKernel *kernel = self->kernels->pdata[i];
      g_autofree char *name = g_strdup_printf ("%s/%s", kernel->op_type, kernel->backend);
      gboolean seen = FALSE;
      for (guint j = 0; j < i && !seen; j++)
        {
          AccelKernel *other = self->kernels->pdata[j];
          seen = g_str_equal (other->op_type, kernel->op_type) && g_str_equal (other->backend, kernel->backend);
        }
      if (!seen)
        g_strv_builder_add (builder, name);
    }
  _accel_plugin_unlock ();
  return g_strv_builder_end (builder);
}

static AccelPluginFeature *
find_feature (AccelPlugin *self, AccelPluginFeatureKind kind, const char *name)
{
  GPtrArray *features = self->features[kind];
  for (guint i = 0; i < features->len; i++)
    {
      AccelPluginFeature *feature = features->pdata[i];
      if (g_str_equal (feature->name, name))
        return feature;
    }
  return NULL;
}

static void
add_feature (AccelPlugin *self, AccelPluginFeatureKind kind, const char *name, GType type)
{
  static const char *const what[] = { "backend", "op type", "actor type", "model type" };

  _accel_plugin_lock ();
  AccelPluginFeature *feature = find_feature (self, kind, name);
  if (feature == NULL)
    {
      feature = g_new0 (AccelPluginFeature, 1);
      feature->name = g_strdup (name);
      g_ptr_array_add (self->features[kind], feature);
    }
  else if (feature->type != 0 && feature->type != type)
    g_warning ("Plugin “%s” registers %s “%s” twice, as %s and as %s; the first stays",
               self->name, what[kind], name, g_type_name (feature->type), g_type_name (type));
  if (feature->type == 0)
    feature->type = type;
  _accel_plugin_unlock ();
}

/**
 * accel_plugin_register_backend:
 * @self: the plugin being initialised
 * @name: the backend name devices carry (`cpu`, `cuda`)
 * @backend_type: a concrete #AccelBackend subtype
 *
 * Registers a backend. Called from a plugin's init function.
 */
void
accel_plugin_register_backend (AccelPlugin *self, const char *name, GType backend_type)
{
  g_return_if_fail (ACCEL_IS_PLUGIN (self));
  g_return_if_fail (self->initialising);
  g_return_if_fail (name != NULL && *name != '\0');
  g_return_if_fail (g_type_is_a (backend_type, ACCEL_TYPE_BACKEND));

  add_feature (self, ACCEL_PLUGIN_FEATURE_BACKEND, name, backend_type);
}

/**
 * accel_plugin_register_op_type:
 * @self: the plugin being initialised
 * @op_type: an #AccelOp subtype whose class set its name with
 *   accel_op_class_set_metadata()
 *
 * Registers an op type under its op name. Called from a plugin's init
 * function.
 */
void
accel_plugin_register_op_type (AccelPlugin *self, GType op_type)
{
  g_return_if_fail (ACCEL_IS_PLUGIN (self));
  g_return_if_fail (self->initialising);
  g_return_if_fail (g_type_is_a (op_type, ACCEL_TYPE_OP));

  /* Class init names the op type; the class then stays for the process. */
  AccelOpClass *klass = g_type_class_ref (op_type);
  const char *name = accel_op_class_get_name (klass);
  if (name == NULL)
    {
      g_warning ("Op type %s of plugin “%s” has no name (accel_op_class_set_metadata()); "
                 "it is registered as “%s”", g_type_name (op_type), self->name, g_type_name (op_type));
      name = g_type_name (op_type);
    }
  add_feature (self, ACCEL_PLUGIN_FEATURE_OP_TYPE, name, op_type);
}

/**
 * accel_plugin_register_actor_type:
 * @self: the plugin being initialised
 * @actor_type: a concrete #AccelActor subtype
 *
 * Registers an actor type under the name its class gave with
 * accel_actor_class_set_metadata() (`batcher`), or else under its GType
 * name; accel_system_spawn() makes one by that name. Called from a
 * plugin's init function.
 */
void
accel_plugin_register_actor_type (AccelPlugin *self, GType actor_type)
{
  g_return_if_fail (ACCEL_IS_PLUGIN (self));
  g_return_if_fail (self->initialising);
  g_return_if_fail (g_type_is_a (actor_type, ACCEL_TYPE_ACTOR));

  /* Class init names the actor type; the class then stays for the process. */
  AccelActorClass *klass = g_type_class_ref (actor_type);
  const char *name = accel_actor_class_get_type_name (klass);
  add_feature (self, ACCEL_PLUGIN_FEATURE_ACTOR_TYPE, name ? name : g_type_name (actor_type), actor_type);
}

/**
 * accel_plugin_register_model_type:
 * @self: the plugin being initialised
 * @name: the model type name users make (`linear`)
 * @model_type: a concrete GObject type implementing #AccelModel
 *
 * Registers a model type; accel_system_new_model() makes one by @name.
 * Called from a plugin's init function.
 */
void
accel_plugin_register_model_type (AccelPlugin *self, const char *name, GType model_type)
{
  g_return_if_fail (ACCEL_IS_PLUGIN (self));
  g_return_if_fail (self->initialising);
  g_return_if_fail (name != NULL && *name != '\0');
  g_return_if_fail (g_type_is_a (model_type, ACCEL_TYPE_MODEL));

  add_feature (self, ACCEL_PLUGIN_FEATURE_MODEL_TYPE, name, model_type);
}

/**
 * accel_plugin_register_kernel:
 * @self: the plugin being initialised
 * @op_type: the op type name (`gemm`)
 * @backend: the backend name (`cpu`, `cuda`)
 * @rank: higher ranks are tried first
 * @vtable: (transfer none): the kernel's functions; copied
 *
 * Registers the implementation of an op type on a backend. Called from a
 * plugin's init function. The op type and the backend may come from other
 * plugins.
 */
void
accel_plugin_register_kernel (AccelPlugin *self,
                              const char *op_type,
                              const char *backend,
                              guint rank,
                              const AccelKernelVTable *vtable)
{
  g_return_if_fail (ACCEL_IS_PLUGIN (self));
  g_return_if_fail (self->initialising);
  g_return_if_fail (op_type != NULL && *op_type != '\0');
  g_return_if_fail (backend != NULL && *backend != '\0');
  g_return_if_fail (vtable != NULL && vtable->run != NULL);

  _accel_plugin_lock ();
  /* A kernel known from the cache gets its vtable: the one of the same
   * rank if there is one, else any of the pair still without one. */
  AccelKernel *match = NULL;
  for (guint pass = 0; pass < 2 && match == NULL; pass++)
    for (guint i = 0; i < self->kernels->len && match == NULL; i++)
      {
        AccelKernel *kernel = self->kernels->pdata[i];
        if (!kernel->has_vtable && g_str_equal (kernel->op_type, op_type)
            && g_str_equal (kernel->backend, backend) && (pass == 1 || kernel->rank == rank))
          match = kernel;
      }
  if (match)
    _accel_kernel_set_vtable (match, rank, vtable);
  else
    g_ptr_array_add (self->kernels, _accel_kernel_new (self, op_type, backend, rank, vtable));
  _accel_plugin_unlock ();
}

/**
 * accel_plugin_register_kernels: (skip)
 * @self: the plugin being initialised
 * @backend: the backend name (`cpu`, `cuda`)
 * @rank: the rank of the kernels whose entry names none (higher ranks are
 *   tried first)
 * @kernels: (array length=n_kernels): the kernels; their vtables are copied
 * @n_kernels: how many
 *
 * Registers each of @kernels on @backend, at its entry's rank or else at
 * @rank, in the table's order, as accel_plugin_register_kernel() does one:
 * a plugin lists its kernels in one table. Called from a plugin's init
 * function, or from the one ACCEL_PLUGIN_DEFINE_KERNELS() defines.
 */
void
accel_plugin_register_kernels (AccelPlugin *self,
                               const char *backend,
                               guint rank,
                               const AccelKernelEntry *kernels,
                               gsize n_kernels)
{
  g_return_if_fail (kernels != NULL || n_kernels == 0);

  for (gsize i = 0; i < n_kernels; i++)
    accel_plugin_register_kernel (self, kernels[i].op_type, backend, kernels[i].rank ? kernels[i].rank : rank,
                                  &kernels[i].vtable);
}

void
_accel_plugin_add_unique (GPtrArray *array, const char *value)
{
  for (guint i = 0; i < array->len; i++)
    if (g_str_equal (array->pdata[i], value))
      return;
  g_ptr_array_add (array, g_strdup (value));
}

/**
 * accel_plugin_add_dependency:
 * @self: the plugin being initialised
 * @env_vars: (nullable) (array zero-terminated=1): environment variables
 *   whose values the plugin's registrations depend on
 * @paths: (nullable) (array zero-terminated=1) (element-type filename):
 *   files or directories whose presence, size or modification time they
 *   depend on (a vendor library, say)
 *
 * Declares what, besides the plugin file itself, decides what the plugin
 * registers. When any of it changes, the registry scans the plugin again
 * instead of trusting its cache entry.
 */
void
accel_plugin_add_dependency (AccelPlugin *self,
                             const char *const *env_vars,
                             const char *const *paths)
{
  g_return_if_fail (ACCEL_IS_PLUGIN (self));
  g_return_if_fail (self->initialising);

  _accel_plugin_lock ();
  for (guint i = 0; env_vars && env_vars[i]; i++)
    _accel_plugin_add_unique (self->dep_env, env_vars[i]);
  for (guint i = 0; paths && paths[i]; i++)
    _accel_plugin_add_unique (self->dep_paths, paths[i]);
  _accel_plugin_unlock ();
}
