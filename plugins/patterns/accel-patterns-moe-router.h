/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-patterns-server.h"

G_BEGIN_DECLS

#define ACCEL_PATTERNS_TYPE_MOE_ROUTER (accel_patterns_moe_router_get_type ())
G_DECLARE_FINAL_TYPE (AccelPatternsMoeRouter, accel_patterns_moe_router, ACCEL_PATTERNS, MOE_ROUTER, AccelPatternsServer)

G_END_DECLS
