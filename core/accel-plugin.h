/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gmodule.h>
#include "accel-types.h"
#include "accel-kernel.h"

G_BEGIN_DECLS

/**
 * ACCEL_ABI_VERSION:
 *
 * The plugin ABI this build of Accel speaks. A plugin's descriptor carries the
 * value it was compiled against; the registry refuses any other.
 */
#define ACCEL_ABI_VERSION 1

/**
 * AccelPluginInitFunc:
 * @plugin: the plugin being initialised
 * @error: return location for a #GError
 *
 * Registers what the plugin provides. It must not open devices or
 * initialise vendor runtimes: it only registers.
 *
 * Returns: %TRUE on success
 */
typedef gboolean (*AccelPluginInitFunc) (AccelPlugin *plugin, GError **error);

/**
 * AccelPluginDesc:
 * @abi_version: %ACCEL_ABI_VERSION at the plugin's build
 * @name: the plugin name (also the suffix of its entry symbol)
 * @description: one line
 * @init: the registration function
 * @version: the plugin's version string
 * @license: its licence
 *
 * What `ACCEL_PLUGIN_DEFINE` exports from a plugin module.
 */
typedef struct {
  guint32 abi_version;
  const char *name;
  const char *description;
  AccelPluginInitFunc init;
  const char *version;
  const char *license;
  /*< private >*/
  gpointer _reserved[4];
} AccelPluginDesc;

/**
 * ACCEL_PLUGIN_DEFINE:
 * @name: the plugin name as a C identifier (`cpu`, `cuda_flashattn`)
 * @description: a string
 * @init_func: an #AccelPluginInitFunc
 * @version: a string
 * @license: a string
 *
 * Defines the plugin's entry symbol `accel_plugin_<name>_get_desc` and a
 * function `accel_plugin_<name>_register (AccelRegistry *)` that a program can
 * call to link the plugin in statically.
 */
#define ACCEL_PLUGIN_DEFINE(name, description, init_func, version, license)      \
  G_BEGIN_DECLS                                                                 \
  G_MODULE_EXPORT const AccelPluginDesc *accel_plugin_##name##_get_desc (void); \
  G_MODULE_EXPORT gboolean accel_plugin_##name##_register (AccelRegistry *registry, GError **error); \
  G_END_DECLS                                                                   \
  static const AccelPluginDesc accel_plugin_desc_ = {                           \
    ACCEL_ABI_VERSION, G_STRINGIFY (name), description, init_func, version,     \
    license, { NULL, }                                                          \
  };                                                                            \
  const AccelPluginDesc *accel_plugin_##name##_get_desc (void)                  \
  {                                                                             \
    return &accel_plugin_desc_;                                                 \
  }                                                                             \
  gboolean accel_plugin_##name##_register (AccelRegistry *registry, GError **error) \
  {                                                                             \
    return accel_registry_add_static_plugin (registry, &accel_plugin_desc_, error); \
  }

/**
 * ACCEL_PLUGIN_DEFINE_KERNELS:
 * @name: the plugin name as a C identifier (`cub`, `cuda_flashattn`)
 * @description: a string
 * @backend: the backend name every kernel of @kernels runs on (`cuda`)
 * @rank: the rank of the kernels whose entry names none
 * @kernels: the plugin's static array of #AccelKernelEntry
 * @version: a string
 * @license: a string
 *
 * ACCEL_PLUGIN_DEFINE() for a plugin whose init function would only
 * register its one kernel table: this defines that function too, which
 * calls accel_plugin_register_kernels() with @backend, @rank and every
 * entry of @kernels. A plugin whose init does more (registers a backend,
 * checks a library version) writes it and uses ACCEL_PLUGIN_DEFINE().
 *
 * |[<!-- language="C" -->
 * static const AccelKernelEntry kernels[] = {
 *   { "sort", { .supports = sort_supports, .run = sort_run } },
 *   { "scan", { .run = scan_run } },
 * };
 *
 * ACCEL_PLUGIN_DEFINE_KERNELS (my_sort, "Sorting kernels on the cuda backend", "cuda", 100, kernels,
 *                              "1.0", "LGPL-2.1-or-later")
 * ]|
 */
#define ACCEL_PLUGIN_DEFINE_KERNELS(name, description, backend, rank, kernels, version, license) \
  static gboolean                                                               \
  accel_plugin_##name##_register_kernels_ (AccelPlugin *plugin, GError **error) \
  {                                                                             \
    accel_plugin_register_kernels (plugin, backend, rank, kernels, G_N_ELEMENTS (kernels)); \
    return TRUE;                                                                \
  }                                                                             \
  ACCEL_PLUGIN_DEFINE (name, description, accel_plugin_##name##_register_kernels_, version, license)

/**
 * AccelPluginStatus:
 * @ACCEL_PLUGIN_STATUS_OK: usable (loaded, or loadable on first use)
 * @ACCEL_PLUGIN_STATUS_BLACKLISTED: refused; see accel_plugin_get_reason()
 * @ACCEL_PLUGIN_STATUS_DISABLED: usable but left out by allow/deny configuration
 * @ACCEL_PLUGIN_STATUS_DUPLICATE: another plugin of the same name came first on the path
 *
 * What the registry thinks of a plugin file.
 */
typedef enum {
  ACCEL_PLUGIN_STATUS_OK,
  ACCEL_PLUGIN_STATUS_BLACKLISTED,
  ACCEL_PLUGIN_STATUS_DISABLED,
  ACCEL_PLUGIN_STATUS_DUPLICATE,
} AccelPluginStatus;

#define ACCEL_TYPE_PLUGIN (accel_plugin_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelPlugin, accel_plugin, ACCEL, PLUGIN, GObject)

ACCEL_API
const char *accel_plugin_get_name (AccelPlugin *self);
ACCEL_API
const char *accel_plugin_get_description (AccelPlugin *self);
ACCEL_API
const char *accel_plugin_get_version (AccelPlugin *self);
ACCEL_API
const char *accel_plugin_get_license (AccelPlugin *self);
ACCEL_API
const char *accel_plugin_get_filename (AccelPlugin *self);
ACCEL_API
AccelPluginStatus accel_plugin_get_status (AccelPlugin *self);
ACCEL_API
const char *accel_plugin_get_reason (AccelPlugin *self);
ACCEL_API
gboolean accel_plugin_is_loaded (AccelPlugin *self);
ACCEL_API
gboolean accel_plugin_load (AccelPlugin *self, GError **error);
ACCEL_API
char **accel_plugin_list_backends (AccelPlugin *self);
ACCEL_API
char **accel_plugin_list_op_types (AccelPlugin *self);
ACCEL_API
char **accel_plugin_list_kernels (AccelPlugin *self);
ACCEL_API
char **accel_plugin_list_actor_types (AccelPlugin *self);
ACCEL_API
char **accel_plugin_list_model_types (AccelPlugin *self);

/* Called from a plugin's init function. */
ACCEL_API
void accel_plugin_register_backend (AccelPlugin *self, const char *name, GType backend_type);
ACCEL_API
void accel_plugin_register_op_type (AccelPlugin *self, GType op_type);
ACCEL_API
void accel_plugin_register_kernel (AccelPlugin *self,
                                   const char *op_type,
                                   const char *backend,
                                   guint rank,
                                   const AccelKernelVTable *vtable);
/**
 * AccelKernelEntry:
 * @op_type: the op type name (`gemm`)
 * @vtable: the kernel's functions
 * @rank: the kernel's own rank, or 0 to take the rank the table is
 *   registered at (a table whose kernels all rank alike leaves it out)
 *
 * One kernel of a plugin's table, for accel_plugin_register_kernels().
 */
typedef struct {
  const char *op_type;
  AccelKernelVTable vtable;
  guint rank;
} AccelKernelEntry;

ACCEL_API
void accel_plugin_register_kernels (AccelPlugin *self,
                                    const char *backend,
                                    guint rank,
                                    const AccelKernelEntry *kernels,
                                    gsize n_kernels);
ACCEL_API
void accel_plugin_register_actor_type (AccelPlugin *self, GType actor_type);
ACCEL_API
void accel_plugin_register_model_type (AccelPlugin *self, const char *name, GType model_type);
ACCEL_API
void accel_plugin_add_dependency (AccelPlugin *self,
                                  const char *const *env_vars,
                                  const char *const *paths);

G_END_DECLS
