/* accel-module-private.h: what the run-time module files of libaccel
 * share (modules, functions, the launch and module-load ops, graphs). Not
 * installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-private.h"

G_BEGIN_DECLS

/* accel-function.c */
GArray *_accel_function_parse_signature (const char *signature, GError **error);
AccelFunction *_accel_function_new (AccelModule *module,
                                    guint64 module_handle,
                                    const char *name,
                                    const char *symbol,
                                    const AccelArgKind *kinds,
                                    guint n_args);
gboolean _accel_function_matches (AccelFunction *self,
                                  const char *symbol,
                                  const AccelArgKind *kinds,
                                  guint n_args);

/* accel-module.c: a function of a module known by its handle only (in a
 * device host, which reads launch ops); kept for reuse. */
AccelFunction *_accel_module_function_for_handle (guint64 module_handle,
                                                  const char *name,
                                                  const char *symbol,
                                                  const AccelArgKind *kinds,
                                                  guint n_args);

/* accel-graph.c: the graph a serialised replay op names, from this
 * process's cache (the same content under the same handle), or built from
 * @content with @resolve. */
AccelGraph *_accel_graph_lookup_or_build (guint64 handle,
                                          GVariant *content,
                                          AccelBufferResolveFunc resolve,
                                          gpointer user_data,
                                          GError **error);
guint64 _accel_graph_get_handle (AccelGraph *self);
GVariant *_accel_graph_get_content (AccelGraph *self);
guint _accel_graph_get_n_buffers (AccelGraph *self);
AccelBuffer *_accel_graph_peek_buffer (AccelGraph *self, guint index, AccelAccess *access);

/* accel-device.c: every buffer of @op belongs to @self, in its current
 * generation; else %ACCEL_ERROR_WRONG_DEVICE or %ACCEL_ERROR_STALE_BUFFER
 * naming the property. */
gboolean _accel_device_check_op_buffers (AccelDevice *self, AccelOp *op, GError **error);

/* accel-device.c: objects whose state lives in the device's context (a
 * module's loaded code) and must be made again in each new context: after
 * a rebuild, before anything queued is served, the device runs the ops
 * @make_ops gives for each live one. Held weakly. */
typedef GPtrArray *(*AccelContextOpsFunc) (GObject *resource);
void _accel_device_submit_detached (AccelDevice *self, AccelOp *op);
void _accel_device_add_context_resource (AccelDevice *self, GObject *resource, AccelContextOpsFunc make_ops);
void _accel_device_remove_context_resource (AccelDevice *self, GObject *resource);

G_END_DECLS
