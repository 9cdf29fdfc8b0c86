/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-patterns-server.h"

G_BEGIN_DECLS

#define ACCEL_PATTERNS_TYPE_CASCADE (accel_patterns_cascade_get_type ())
G_DECLARE_FINAL_TYPE (AccelPatternsCascade, accel_patterns_cascade, ACCEL_PATTERNS, CASCADE, AccelPatternsServer)

G_END_DECLS
