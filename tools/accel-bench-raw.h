/* accel-bench-raw.h: the raw side of the GPU groups that time a library
 * or kernel call beside the op that wraps it (accel-bench-libs,
 * accel-bench-flashattn): a stream of this process on the bench device's
 * GPU and two events to time bursts of calls on it; the inputs both sides
 * share; and the device-to-device copy that is the baseline of the
 * memory-bound figures.
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

/* A buffer of @dtype filled with uniform values in [lo, hi). */
AccelBuffer *accel_bench_raw_random_buffer (AccelDevice *device, AccelDType dtype, const gint64 *dims, guint rank,
                                            double lo, double hi, guint64 seed, GError **error);
/* A raw device copy of @buffer's bytes (cudaFree it): device to device
 * where the buffer lives in this process, else through the host. */
void *accel_bench_raw_copy_of (AccelBuffer *buffer, GError **error);

/* A device-to-device cudaMemcpyAsync of @bytes, the bound of a kernel that
 * reads as many bytes as it writes. */
typedef struct {
  void *src, *dst;
  gsize bytes;
} AccelBenchRawCopy;

/* Allocates @copy's two sides of @bytes each, the source zeroed on
 * raw->stream; accel_bench_raw_copy_clear() frees them, also after a failure. */
gboolean accel_bench_raw_copy_init (AccelBenchRaw *raw, AccelBenchRawCopy *copy, gsize bytes, GError **error);
void accel_bench_raw_copy_clear (AccelBenchRawCopy *copy);
/* An AccelBenchRawCall with an AccelBenchRawCopy as @data. */
gboolean accel_bench_raw_copy_call (AccelBenchRaw *raw, gpointer data, GError **error);

G_END_DECLS
