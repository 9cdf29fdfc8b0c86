/* accel-bench-raw.h: the raw side of the GPU groups that time a library
 * or kernel call beside the op that wraps it (accel-bench-libs,
 * accel-bench-flashattn): a stream of this process on the bench device's
 * GPU and two events to time bursts of calls on it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <cuda_runtime.h>
#include "accel-bench.h"

G_BEGIN_DECLS

typedef struct {
  AccelBench *bench;
  AccelDevice *device;
  cudaStream_t stream;
  cudaEvent_t e0, e1;
} AccelBenchRaw;

/* One call of the raw side, enqueued on raw->stream. */
typedef gboolean (*AccelBenchRawCall) (AccelBenchRaw *raw, gpointer data, GError **error);

/* For the bench's device, which must be a CUDA one (@groups names the
 * groups in the error otherwise). */
gboolean accel_bench_raw_open (AccelBench *bench, AccelBenchRaw *raw, const char *groups, GError **error);
void accel_bench_raw_close (AccelBenchRaw *raw);

/* Seconds per call of a burst of @n calls, timed with the events; negative
 * with @error set on failure. */
double accel_bench_raw_burst (AccelBenchRaw *raw, AccelBenchRawCall call, gpointer data, guint n, GError **error);

G_END_DECLS
