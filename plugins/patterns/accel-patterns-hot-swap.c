/* accel-patterns-hot-swap.c: the `hot-swap` actor type: a batcher whose
 * model may be replaced while it serves.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-patterns-hot-swap.h"

struct _AccelPatternsHotSwap {
  AccelPatternsSingle parent_instance;
};

/**
 * AccelPatternsHotSwap:
 *
 * `hot-swap`: serves as `batcher` does, and `model` may be set while it
 * serves (a model of new weights, or another model taking and giving the
 * same tensors). Setting it prepares the new model on the device, then
 * swaps it in: no request fails or is dropped, every reply names the
 * `model-version` that answered, and a request sent after the set returns
 * meets only the new model.
 */
G_DEFINE_FINAL_TYPE (AccelPatternsHotSwap, accel_patterns_hot_swap, ACCEL_PATTERNS_TYPE_SINGLE)

static void
accel_patterns_hot_swap_class_init (AccelPatternsHotSwapClass *klass)
{
  accel_actor_class_set_metadata (ACCEL_ACTOR_CLASS (klass), "hot-swap",
                                  "A batcher whose model (or weights) can be replaced while it serves");
  accel_patterns_single_class_install_model (ACCEL_PATTERNS_SINGLE_CLASS (klass), TRUE);
}

static void
accel_patterns_hot_swap_init (AccelPatternsHotSwap *self)
{
}
