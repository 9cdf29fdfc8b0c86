/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
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
 * @can_copy: (nullable): whether the backend copies @src into @dst (two
 *   devices of it, valid, contiguous, of one size) itself, device to device
 *   (CUDA: peer copies); otherwise the runtime stages the copy through host
 *   memory. Any thread.
 * @copy_async: copies @src into @dst when @can_copy said so, each buffer
 *   in its own device's order (after the last writer of @src, after the
 *   last writer and readers of @dst); completes from any thread
 * @copy_finish: finishes @copy_async
 *
 * A backend: one instance per #AccelSystem, made when devices are first listed.
 */
struct _AccelBackendClass {
  GObjectClass parent_class;

  int priority;
  GPtrArray *(*enumerate) (AccelBackend *self, GError **error);
  const char *module_compiler;
  gboolean (*can_copy) (AccelBackend *self, AccelBuffer *src, AccelBuffer *dst);
  void (*copy_async) (AccelBackend *self,
                      AccelBuffer *src,
                      AccelBuffer *dst,
                      GCancellable *cancellable,
                      GAsyncReadyCallback callback,
                      gpointer user_data);
  gboolean (*copy_finish) (AccelBackend *self, GAsyncResult *result, GError **error);

  /*< private >*/
  gpointer padding[4];
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
