/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "accel-types.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_RENDEZVOUS_STORE (accel_rendezvous_store_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelRendezvousStore, accel_rendezvous_store, ACCEL, RENDEZVOUS_STORE, GObject)

ACCEL_API
AccelRendezvousStore *accel_rendezvous_store_new (const char *address,
                                                  guint16 port,
                                                  guint world_size,
                                                  const char *token,
                                                  guint timeout_ms,
                                                  GError **error);
ACCEL_API
guint16 accel_rendezvous_store_get_port (AccelRendezvousStore *self);
ACCEL_API
guint accel_rendezvous_store_get_world_size (AccelRendezvousStore *self);
ACCEL_API
guint accel_rendezvous_store_get_n_joined (AccelRendezvousStore *self);
ACCEL_API
guint accel_rendezvous_store_get_n_refused (AccelRendezvousStore *self);
ACCEL_API
void accel_rendezvous_store_stop (AccelRendezvousStore *self);

G_END_DECLS
