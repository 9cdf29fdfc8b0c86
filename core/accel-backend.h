/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-types.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_BACKEND (accel_backend_get_type ())
ACCEL_API
G_DECLARE_DERIVABLE_TYPE (AccelBackend, accel_backend, ACCEL, BACKEND, GObject)

/**
 * AccelBackendClass:
 * @parent_class: the parent class
 * @priority: higher is preferred for the `default` device (CPU 0, GPUs above)
 * @enumerate: makes the devices this backend finds on this machine; on none,
 *   returns an empty array and sets the reason with accel_backend_set_unavailable_reason()
 * @module_compiler: (nullable): the actor type name (a plugin registers it)
 *   that compiles the sources of #AccelModule for this backend's devices,
 *   or %NULL if they run no run-time compiled code; see accel_module_new_from_source()
 *
 * A backend: one instance per #AccelSystem, made when devices are first listed.
 */
struct _AccelBackendClass {
  GObjectClass parent_class;

  int priority;
  GPtrArray *(*enumerate) (AccelBackend *self, GError **error);
  const char *module_compiler;

  /*< private >*/
  gpointer padding[7];
};

ACCEL_API
const char *accel_backend_get_name (AccelBackend *self);
ACCEL_API
AccelSystem *accel_backend_get_system (AccelBackend *self);
ACCEL_API
const char *accel_backend_get_unavailable_reason (AccelBackend *self);
ACCEL_API
void accel_backend_set_unavailable_reason (AccelBackend *self, const char *reason);

G_END_DECLS
