/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-patterns-single.h"

G_BEGIN_DECLS

#define ACCEL_PATTERNS_TYPE_BATCHER (accel_patterns_batcher_get_type ())
G_DECLARE_FINAL_TYPE (AccelPatternsBatcher, accel_patterns_batcher, ACCEL_PATTERNS, BATCHER, AccelPatternsSingle)

G_END_DECLS
