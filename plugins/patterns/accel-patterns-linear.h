/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

#define ACCEL_PATTERNS_TYPE_LINEAR (accel_patterns_linear_get_type ())
G_DECLARE_FINAL_TYPE (AccelPatternsLinear, accel_patterns_linear, ACCEL_PATTERNS, LINEAR, GObject)

G_END_DECLS
