/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-types.h"
#include "accel-registry.h"
#include "accel-model.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_SYSTEM (accel_system_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelSystem, accel_system, ACCEL, SYSTEM, GObject)

ACCEL_API
AccelSystem *accel_system_new (GError **error);
ACCEL_API
AccelSystem *accel_system_new_with_registry (AccelRegistry *registry);
ACCEL_API
AccelSystem *accel_system_get_default (void);
ACCEL_API
AccelRegistry *accel_system_get_registry (AccelSystem *self);
ACCEL_API
GPtrArray *accel_system_list_devices (AccelSystem *self);
ACCEL_API
AccelDevice *accel_system_get_device (AccelSystem *self, const char *name, GError **error);
ACCEL_API
AccelBackend *accel_system_get_backend (AccelSystem *self, const char *name, GError **error);
ACCEL_API
AccelActor *accel_system_spawn (AccelSystem *self,
                                const char *type_name,
                                GError **error,
                                const char *first_property_name,
                                ...);
ACCEL_API
AccelActor *accel_system_spawn_with_properties (AccelSystem *self,
                                                const char *type_name,
                                                guint n_properties,
                                                const char **names,
                                                const GValue *values,
                                                GError **error);
ACCEL_API
AccelActor *accel_system_get_root_actor (AccelSystem *self);
ACCEL_API
gboolean accel_system_add_device (AccelSystem *self, AccelDevice *device, GError **error);
ACCEL_API
AccelModel *accel_system_new_model (AccelSystem *self,
                                    const char *type_name,
                                    GError **error,
                                    const char *first_property_name,
                                    ...);
ACCEL_API
AccelModel *accel_system_new_model_with_properties (AccelSystem *self,
                                                    const char *type_name,
                                                    guint n_properties,
                                                    const char **names,
                                                    const GValue *values,
                                                    GError **error);
ACCEL_API
void accel_system_shutdown (AccelSystem *self);
ACCEL_API
guint accel_system_get_cpu_devices (AccelSystem *self);
ACCEL_API
void accel_system_set_cpu_devices (AccelSystem *self, guint n);

G_END_DECLS
