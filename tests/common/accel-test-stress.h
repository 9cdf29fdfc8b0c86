/* accel-test-stress.h: many threads submitting to one device while it
 * faults, for the device tests (in process and behind a device host).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

typedef struct {
  guint n_threads;
  guint n_ops;               /* per thread */
  guint faults_per_mille;    /* of the ops submitted, `fault` ops */
  guint in_flight;           /* per thread, at most */
} AccelTestStress;

typedef struct {
  guint ok;
  guint poisoned;
  guint stale;
  guint min_ok;              /* the fewest successful ops of one thread */
} AccelTestStressResult;

/* Runs @stress on @dev: each thread fills a buffer of its own (allocated
 * again once a restart made it stale) through submit_async on a main
 * context of its own, with `fault` ops among them. Asserts that every op
 * completed exactly once, each with success, CONTEXT_POISONED or
 * STALE_BUFFER and nothing else. */
AccelTestStressResult accel_test_stress_run (AccelDevice *dev, const AccelTestStress *stress);

G_END_DECLS
