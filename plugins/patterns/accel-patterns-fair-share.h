/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-patterns-single.h"

G_BEGIN_DECLS

#define ACCEL_PATTERNS_TYPE_FAIR_SHARE (accel_patterns_fair_share_get_type ())
G_DECLARE_FINAL_TYPE (AccelPatternsFairShare, accel_patterns_fair_share, ACCEL_PATTERNS, FAIR_SHARE, AccelPatternsSingle)

G_END_DECLS
