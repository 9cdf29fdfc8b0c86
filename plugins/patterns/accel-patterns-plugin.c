/* accel-patterns-plugin.c: the serving patterns: six actor types that run
 * models (batcher, replica-pool, fair-share, hot-swap, cascade,
 * moe-router) and the `linear` model type.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-config.h"
#include "accel-patterns-linear.h"
#include "accel-patterns-batcher.h"
#include "accel-patterns-hot-swap.h"
#include "accel-patterns-fair-share.h"
#include "accel-patterns-replica-pool.h"
#include "accel-patterns-cascade.h"
#include "accel-patterns-moe-router.h"

static gboolean
accel_patterns_plugin_init (AccelPlugin *plugin, GError **error)
{
  accel_plugin_register_model_type (plugin, "linear", ACCEL_PATTERNS_TYPE_LINEAR);
  accel_plugin_register_actor_type (plugin, ACCEL_PATTERNS_TYPE_BATCHER);
  accel_plugin_register_actor_type (plugin, ACCEL_PATTERNS_TYPE_REPLICA_POOL);
  accel_plugin_register_actor_type (plugin, ACCEL_PATTERNS_TYPE_FAIR_SHARE);
  accel_plugin_register_actor_type (plugin, ACCEL_PATTERNS_TYPE_HOT_SWAP);
  accel_plugin_register_actor_type (plugin, ACCEL_PATTERNS_TYPE_CASCADE);
  accel_plugin_register_actor_type (plugin, ACCEL_PATTERNS_TYPE_MOE_ROUTER);
  return TRUE;
}

ACCEL_PLUGIN_DEFINE (patterns,
                     "Serving patterns: batcher, replica-pool, fair-share, hot-swap, cascade, moe-router; the linear model",
                     accel_patterns_plugin_init,
                     ACCEL_VERSION,
                     "LGPL-2.1-or-later")
