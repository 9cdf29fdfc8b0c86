/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "accel-types.h"
#include "accel-rendezvous-store.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_RENDEZVOUS (accel_rendezvous_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelRendezvous, accel_rendezvous, ACCEL, RENDEZVOUS, GObject)

ACCEL_API
AccelRendezvous *accel_rendezvous_new (const char *master_address,
                                       guint16 master_port,
                                       guint rank,
                                       guint world_size,
                                       const char *token,
                                       guint timeout_ms,
                                       GCancellable *cancellable,
                                       GError **error);
ACCEL_API
AccelRendezvous *accel_rendezvous_new_from_env (GCancellable *cancellable, GError **error);
ACCEL_API
guint accel_rendezvous_get_rank (AccelRendezvous *self);
ACCEL_API
guint accel_rendezvous_get_world_size (AccelRendezvous *self);
ACCEL_API
guint accel_rendezvous_get_timeout_ms (AccelRendezvous *self);
ACCEL_API
AccelRendezvousStore *accel_rendezvous_get_store (AccelRendezvous *self);
ACCEL_API
gboolean accel_rendezvous_barrier (AccelRendezvous *self, const char *name, GError **error);

G_END_DECLS
