/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "accel-types.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_GRAPH (accel_graph_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelGraph, accel_graph, ACCEL, GRAPH, GObject)

ACCEL_API
AccelGraph *accel_graph_new (AccelDevice *device, int lane);
ACCEL_API
gboolean accel_graph_add (AccelGraph *self, AccelOp *op, GError **error);
ACCEL_API
gboolean accel_graph_instantiate (AccelGraph *self, GError **error);
ACCEL_API
gboolean accel_graph_is_instantiated (AccelGraph *self);
ACCEL_API
AccelDevice *accel_graph_get_device (AccelGraph *self);
ACCEL_API
int accel_graph_get_lane (AccelGraph *self);
ACCEL_API
guint accel_graph_get_generation (AccelGraph *self);
ACCEL_API
guint accel_graph_get_n_ops (AccelGraph *self);
ACCEL_API
AccelOp *accel_graph_get_op (AccelGraph *self, guint index);
ACCEL_API
const AccelKernel *accel_graph_get_kernel (AccelGraph *self, guint index, AccelDevice *device, GError **error);

ACCEL_API
AccelOp *accel_graph_new_replay (AccelGraph *self);
ACCEL_API
gboolean accel_graph_replay (AccelGraph *self, GCancellable *cancellable, GError **error);
ACCEL_API
void accel_graph_replay_async (AccelGraph *self,
                               GCancellable *cancellable,
                               GAsyncReadyCallback callback,
                               gpointer user_data);
ACCEL_API
gboolean accel_graph_replay_finish (AccelGraph *self, GAsyncResult *result, GError **error);

G_END_DECLS
