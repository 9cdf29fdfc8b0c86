/* accel-patterns-enums.h: the enumerations of the patterns plugin's
 * properties.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

/**
 * AccelPatternsActivation:
 * @ACCEL_PATTERNS_ACTIVATION_NONE: none (the bias only)
 * @ACCEL_PATTERNS_ACTIVATION_RELU: `max (x, 0)`
 * @ACCEL_PATTERNS_ACTIVATION_GELU: GELU, the tanh approximation
 *
 * What a `linear` model applies after a layer's bias.
 */
typedef enum {
  ACCEL_PATTERNS_ACTIVATION_NONE,
  ACCEL_PATTERNS_ACTIVATION_RELU,
  ACCEL_PATTERNS_ACTIVATION_GELU,
} AccelPatternsActivation;

/**
 * AccelPatternsTimeoutAction:
 * @ACCEL_PATTERNS_TIMEOUT_ACTION_REJECT: the request fails with
 *   %ACCEL_ERROR_TIMED_OUT
 * @ACCEL_PATTERNS_TIMEOUT_ACTION_DELAY: the request still runs, after every
 *   request that has not timed out
 *
 * What a serving actor does with a request still queued when its timeout
 * passes (as Triton's `timeout_action`).
 */
typedef enum {
  ACCEL_PATTERNS_TIMEOUT_ACTION_REJECT,
  ACCEL_PATTERNS_TIMEOUT_ACTION_DELAY,
} AccelPatternsTimeoutAction;

/**
 * AccelPatternsPlacement:
 * @ACCEL_PATTERNS_PLACEMENT_ROUND_ROBIN: each batch to the next replica in turn
 * @ACCEL_PATTERNS_PLACEMENT_LEAST_OUTSTANDING: each batch to the replica with
 *   the fewest rows in flight
 *
 * How a `replica-pool` places batches on its replicas.
 */
typedef enum {
  ACCEL_PATTERNS_PLACEMENT_ROUND_ROBIN,
  ACCEL_PATTERNS_PLACEMENT_LEAST_OUTSTANDING,
} AccelPatternsPlacement;

#define ACCEL_PATTERNS_TYPE_ACTIVATION (accel_patterns_activation_get_type ())
GType accel_patterns_activation_get_type (void);
#define ACCEL_PATTERNS_TYPE_TIMEOUT_ACTION (accel_patterns_timeout_action_get_type ())
GType accel_patterns_timeout_action_get_type (void);
#define ACCEL_PATTERNS_TYPE_PLACEMENT (accel_patterns_placement_get_type ())
GType accel_patterns_placement_get_type (void);

G_END_DECLS
