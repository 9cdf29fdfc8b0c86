/* accel-patterns-batcher.c: the `batcher` actor type: dynamic batching of
 * one model on one device, with the options of Triton's dynamic batcher.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-patterns-batcher.h"

struct _AccelPatternsBatcher {
  AccelPatternsSingle parent_instance;
};

/**
 * AccelPatternsBatcher:
 *
 * `batcher`: requests (an `a{sv}` of inputs, see accel-patterns-request.c)
 * wait in a queue with `priority-levels`; batches of up to
 * `max-batch-size` rows go out when they can fill a preferred size, or
 * when the oldest request has waited `max-queue-delay-us`. Each batch is
 * one upload per input, one run of `model` on `device` and one download
 * per output, cut into the replies. A full queue (`max-queue-size`)
 * refuses with %ACCEL_ERROR_BUSY; a request whose timeout passes is
 * refused or run late (`timeout-action`).
 */
G_DEFINE_FINAL_TYPE (AccelPatternsBatcher, accel_patterns_batcher, ACCEL_PATTERNS_TYPE_SINGLE)

static void
accel_patterns_batcher_class_init (AccelPatternsBatcherClass *klass)
{
  accel_actor_class_set_metadata (ACCEL_ACTOR_CLASS (klass), "batcher",
                                  "Dynamic batching of one model on one device (Triton's options)");
  accel_patterns_single_class_install_model (ACCEL_PATTERNS_SINGLE_CLASS (klass), FALSE);
}

static void
accel_patterns_batcher_init (AccelPatternsBatcher *self)
{
}
