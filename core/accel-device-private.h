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

/* For the journal (accel-journal.c), on the device thread. @done sees how
 * a work ended (@error is not its to keep), before the work is completed. */
typedef void (*AccelWorkDoneFunc) (AccelWork *work, const GError *error, gpointer data);
void _accel_device_execute_observed (AccelDevice *self,
                                     AccelWork *work,
                                     AccelWorkDoneFunc done,
                                     gpointer data);
void _accel_device_execute_read (AccelDevice *self,
                                 AccelBuffer *buffer,
                                 gpointer host,
                                 gsize size,
                                 AccelWorkDoneFunc done,
                                 gpointer data);

G_END_DECLS
