/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-private.h"

G_BEGIN_DECLS

gboolean _accel_device_transfer_sync (AccelDevice *self,
                                      AccelWorkKind kind,
                                      AccelBuffer *buffer,
                                      gpointer host,
                                      gsize size,
                                      GError **error);
void _accel_device_transfer_async (AccelDevice *self,
                                   AccelWorkKind kind,
                                   AccelBuffer *buffer,
                                   GBytes *bytes,
                                   GTask *task);

G_END_DECLS
