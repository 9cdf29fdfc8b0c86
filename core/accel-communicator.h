/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "accel-types.h"
#include "accel-device.h"
#include "accel-rendezvous.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_COMMUNICATOR (accel_communicator_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelCommunicator, accel_communicator, ACCEL, COMMUNICATOR, GObject)

ACCEL_API
AccelCommunicator *accel_communicator_new (AccelDevice **devices, guint n_devices, GError **error);
ACCEL_API
AccelCommunicator *accel_communicator_new_distributed (AccelRendezvous *rendezvous,
                                                       AccelDevice **devices,
                                                       guint n_devices,
                                                       GError **error);
ACCEL_API
guint accel_communicator_get_n_ranks (AccelCommunicator *self);
ACCEL_API
guint accel_communicator_get_first_rank (AccelCommunicator *self);
ACCEL_API
guint accel_communicator_get_n_local_ranks (AccelCommunicator *self);
ACCEL_API
AccelDevice *accel_communicator_get_device (AccelCommunicator *self, guint local_index);
ACCEL_API
guint accel_communicator_get_epoch (AccelCommunicator *self);
ACCEL_API
guint accel_communicator_get_timeout_ms (AccelCommunicator *self);
ACCEL_API
void accel_communicator_set_timeout_ms (AccelCommunicator *self, guint timeout_ms);
ACCEL_API
int accel_communicator_get_lane (AccelCommunicator *self);
ACCEL_API
void accel_communicator_set_lane (AccelCommunicator *self, int lane);
ACCEL_API
AccelRendezvous *accel_communicator_get_rendezvous (AccelCommunicator *self);

ACCEL_API
void accel_communicator_submit_async (AccelCommunicator *self,
                                      AccelOp **ops,
                                      guint n_ops,
                                      GCancellable *cancellable,
                                      GAsyncReadyCallback callback,
                                      gpointer user_data);
ACCEL_API
gboolean accel_communicator_submit_finish (AccelCommunicator *self, GAsyncResult *result, GError **error);
ACCEL_API
gboolean accel_communicator_submit (AccelCommunicator *self,
                                    AccelOp **ops,
                                    guint n_ops,
                                    GCancellable *cancellable,
                                    GError **error);
ACCEL_API
void accel_communicator_abort (AccelCommunicator *self, const char *reason);

G_END_DECLS
