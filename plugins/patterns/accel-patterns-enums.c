/* accel-patterns-enums.c: the enumerations of the patterns plugin's
 * properties, registered so that bindings and `accel-inspect` show them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-patterns-enums.h"

G_DEFINE_ENUM_TYPE (AccelPatternsActivation, accel_patterns_activation,
  G_DEFINE_ENUM_VALUE (ACCEL_PATTERNS_ACTIVATION_NONE, "none"),
  G_DEFINE_ENUM_VALUE (ACCEL_PATTERNS_ACTIVATION_RELU, "relu"),
  G_DEFINE_ENUM_VALUE (ACCEL_PATTERNS_ACTIVATION_GELU, "gelu"))

G_DEFINE_ENUM_TYPE (AccelPatternsTimeoutAction, accel_patterns_timeout_action,
  G_DEFINE_ENUM_VALUE (ACCEL_PATTERNS_TIMEOUT_ACTION_REJECT, "reject"),
  G_DEFINE_ENUM_VALUE (ACCEL_PATTERNS_TIMEOUT_ACTION_DELAY, "delay"))

G_DEFINE_ENUM_TYPE (AccelPatternsPlacement, accel_patterns_placement,
  G_DEFINE_ENUM_VALUE (ACCEL_PATTERNS_PLACEMENT_ROUND_ROBIN, "round-robin"),
  G_DEFINE_ENUM_VALUE (ACCEL_PATTERNS_PLACEMENT_LEAST_OUTSTANDING, "least-outstanding"))
