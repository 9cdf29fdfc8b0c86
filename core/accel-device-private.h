/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-private.h"
#include "accel-module-private.h"

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

/* accel-device-stats.c */
typedef struct {
  guint64 ops;
  guint64 transfers;
  guint64 errors;
  guint64 bytes_written;
  guint64 bytes_read;
  guint64 busy_us;
  gint64 busy_since;
} AccelDeviceStats;

void _accel_device_stats_busy (AccelDeviceStats *stats);
void _accel_device_stats_done (AccelDeviceStats *stats,
                               AccelWorkKind kind,
                               gsize bytes,
                               gboolean failed,
                               gboolean idle);
void _accel_device_stats_refused (AccelDeviceStats *stats);
GVariant *_accel_device_stats_to_variant (AccelDeviceStats *stats, gboolean busy_now);

/* accel-device-resources.c */
typedef struct {
  GMutex lock;
  GArray *entries;
} AccelContextResources;

void _accel_context_resources_init (AccelContextResources *self);
void _accel_context_resources_clear (AccelContextResources *self);
void _accel_context_resources_add (AccelContextResources *self, GObject *resource, AccelContextOpsFunc make_ops);
void _accel_context_resources_remove (AccelContextResources *self, GObject *resource);
GPtrArray *_accel_context_resources_ops (AccelContextResources *self);

G_END_DECLS
