/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-patterns-server.h"

G_BEGIN_DECLS

#define ACCEL_PATTERNS_TYPE_REPLICA_POOL (accel_patterns_replica_pool_get_type ())
G_DECLARE_FINAL_TYPE (AccelPatternsReplicaPool, accel_patterns_replica_pool, ACCEL_PATTERNS, REPLICA_POOL,
                      AccelPatternsServer)

G_END_DECLS
