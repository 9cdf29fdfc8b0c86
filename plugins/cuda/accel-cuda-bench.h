/* accel-cuda-bench.h: what the GPU groups of accel-bench-cuda share
 * (accel-cuda-bench.c, accel-cuda-bench-graph.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-cuda.h"
#include "accel-bench.h"

G_BEGIN_DECLS

/* A stream of this process on the bench device's GPU, for the raw side. */
gboolean accel_cuda_bench_raw_setup (AccelBench *bench, cudaStream_t *stream, GError **error);
gboolean accel_cuda_bench_round_trip (AccelDevice *device, AccelOp *op, guint n, double *p50, double *p99,
                                      GError **error);
double accel_cuda_bench_pipelined_rate (AccelDevice *device, AccelOp *op, guint total, GError **error);

extern const AccelBenchGroup accel_bench_cuda_graph_groups[];

G_END_DECLS
