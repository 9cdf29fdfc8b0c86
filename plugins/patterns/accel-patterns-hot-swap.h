/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-patterns-single.h"

G_BEGIN_DECLS

#define ACCEL_PATTERNS_TYPE_HOT_SWAP (accel_patterns_hot_swap_get_type ())
G_DECLARE_FINAL_TYPE (AccelPatternsHotSwap, accel_patterns_hot_swap, ACCEL_PATTERNS, HOT_SWAP, AccelPatternsSingle)

G_END_DECLS
