/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-types.h"
#include "accel-plugin.h"
#include "accel-kernel.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_REGISTRY (accel_registry_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelRegistry, accel_registry, ACCEL, REGISTRY, GObject)

/**
 * AccelRegistryFlags:
 * @ACCEL_REGISTRY_FLAGS_NONE: scan the plugin path and use the cache
 * @ACCEL_REGISTRY_FLAGS_NO_SCAN: register only core types and static plugins
 *   (used by the introspection dumper and by programs that link plugins in)
 *
 * How a registry is set up.
 */
typedef enum /*< flags >*/ {
  ACCEL_REGISTRY_FLAGS_NONE = 0,
  ACCEL_REGISTRY_FLAGS_NO_SCAN = 1 << 0,
} AccelRegistryFlags;

ACCEL_API
AccelRegistry *accel_registry_new (AccelRegistryFlags flags, GError **error);
ACCEL_API
gboolean accel_registry_add_static_plugin (AccelRegistry *self,
                                           const AccelPluginDesc *desc,
                                           GError **error);
ACCEL_API
GPtrArray *accel_registry_get_plugins (AccelRegistry *self);
ACCEL_API
AccelPlugin *accel_registry_find_plugin (AccelRegistry *self, const char *name);
ACCEL_API
char **accel_registry_list_op_types (AccelRegistry *self);
ACCEL_API
char **accel_registry_list_backends (AccelRegistry *self);
ACCEL_API
char **accel_registry_list_actor_types (AccelRegistry *self);
ACCEL_API
char **accel_registry_list_model_types (AccelRegistry *self);
ACCEL_API
GType accel_registry_lookup_op_type (AccelRegistry *self, const char *name, GError **error);
ACCEL_API
GType accel_registry_lookup_actor_type (AccelRegistry *self, const char *name, GError **error);
ACCEL_API
GType accel_registry_lookup_model_type (AccelRegistry *self, const char *name, GError **error);
ACCEL_API
GType accel_registry_lookup_backend (AccelRegistry *self, const char *name, GError **error);
ACCEL_API
GPtrArray *accel_registry_list_kernels (AccelRegistry *self,
                                        const char *op_type,
                                        const char *backend);
ACCEL_API
const AccelKernel *accel_registry_find_kernel (AccelRegistry *self,
                                               AccelOp *op,
                                               AccelDevice *device,
                                               GError **error);
ACCEL_API
const char *accel_registry_get_cache_path (AccelRegistry *self);
ACCEL_API
guint accel_registry_get_n_scanned (AccelRegistry *self);
ACCEL_API
guint accel_registry_get_n_loaded (AccelRegistry *self);

G_END_DECLS
