/* accel-private.h: what the files of libaccel share and users must not see.
 * Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel.h"

G_BEGIN_DECLS

/* Kernels: the registry owns them; they live as long as the process. */
struct _AccelKernel {
  char *op_type;
  char *backend;
  guint rank;
  char *plugin_name;
  AccelKernelVTable vtable;
  gboolean has_vtable;   /* FALSE while known only from the cache */
};

/* ops/accel-ops.c: registers the portable op set with a registry. */
void _accel_ops_register_core (AccelRegistry *registry);

/* accel-registry.c */
void _accel_registry_register_core_op_type (AccelRegistry *self, GType op_type);
void _accel_registry_register_core_backend (AccelRegistry *self, const char *name, GType backend_type);
GType _accel_op_type_from_name (const char *name);   /* already-registered types only */

/* accel-plugin.c: the registration calls a plugin makes while it is being
 * initialised land in its AccelPlugin; the registry then reads them. */
AccelPlugin *_accel_plugin_new (const char *filename);
void _accel_plugin_set_loaded_from_desc (AccelPlugin *self, const AccelPluginDesc *desc);

/* accel-buffer.c */
AccelBuffer *_accel_buffer_new (AccelDevice *device,
                                AccelDType dtype,
                                const AccelShape *shape,
                                gpointer memory,
                                gsize size,
                                guint generation,
                                guint64 handle);

/* accel-device.c */
void _accel_device_shutdown (AccelDevice *self);
gboolean _accel_device_check_buffer (AccelDevice *self,
                                     AccelBuffer *buffer,
                                     const char *what,
                                     GError **error);
void _accel_device_release_memory (AccelDevice *self,
                                   gpointer memory,
                                   gsize size,
                                   guint generation);
guint64 _accel_device_next_handle (AccelDevice *self);

/* actor/accel-actor.c */
void _accel_actor_set_dispatcher (AccelActor *self, AccelDispatcher *dispatcher);
void _accel_actor_count_restart (AccelActor *self, const GError *reason);

/* accel-backend.c */
void _accel_backend_setup (AccelBackend *self, AccelSystem *system, const char *name);

/* accel-op.c */
GParamSpec **_accel_op_class_list_buffer_pspecs (AccelOpClass *klass, guint *n);
void _accel_op_foreach_buffer (AccelOp *self,
                               void (*func) (AccelOp *, GParamSpec *, AccelBuffer *, AccelAccess, gpointer),
                               gpointer data);

G_END_DECLS
