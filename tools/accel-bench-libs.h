/* accel-bench-libs.h: what the libs-* groups of accel-bench-libs share
 * (accel-bench-libs-common.c): a raw side (a CUDA stream and events on the
 * bench's device) beside which each op is timed, and the timing itself.
 *
 * Each side runs a burst back to back after a warm-up (Accel through
 * submit_async with the burst in flight, the raw side timed with CUDA
 * events on its own stream) and the median of LIBS_REPS bursts counts.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <cublasLt.h>
#include "accel-cuda.h"
#include "accel-bench.h"
#include "accel-bench-raw.h"

G_BEGIN_DECLS

#define LIBS_REPS 5

/* The raw side (accel-bench-raw.h). */
typedef AccelBenchRaw Raw;
typedef AccelBenchRawCall RawCall;
#define libs_random_buffer accel_bench_raw_random_buffer
#define libs_raw_copy accel_bench_raw_copy_of

gboolean libs_cuda_ok (cudaError_t status, const char *what, GError **error);
gboolean libs_lib_ok (int status, const char *library, const char *what, GError **error);


/* Median seconds per run of each side over LIBS_REPS bursts of @burst
 * after a warm-up, reported as @work / seconds in @unit (milliseconds when
 * @work is 0); @call NULL measures the Accel side alone. The _ops form
 * cycles through @n_ops ops (inputs too large for the caches, say). */
gboolean libs_compare (Raw *raw, const char *label, AccelOp *op, RawCall call, gpointer data, guint burst,
                       double work, const char *unit, GError **error);
gboolean libs_compare_ops (Raw *raw, const char *label, AccelOp **ops, guint n_ops, RawCall call, gpointer data,
                           guint burst, double work, const char *unit, GError **error);

/* cublasLtMatmul with a fused epilogue, the raw side of the matmul groups:
 * c [m, n] = epilogue (a [m, k] bᵀ + bias), b stored [n, k]. */
typedef struct {
  cublasLtHandle_t handle;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulAlgo_t algo;
  void *a, *b, *c, *bias, *work;
  gsize work_size;
  float alpha, beta;
} LtCall;

/* Fills @l's descriptors and algorithm for @l->a, b, c, bias (set before;
 * the workspace is allocated here), bias bf16. */
gboolean libs_lt_prepare (LtCall *l, cublasLtHandle_t handle, cublasLtEpilogue_t epilogue, cudaDataType cin,
                          cudaDataType cout, gint64 m, gint64 n, gint64 k, GError **error);
gboolean libs_lt_call (Raw *raw, gpointer data, GError **error);
/* Destroys the descriptors and frees the device memory of @l. */
void libs_lt_release (LtCall *l);

G_END_DECLS
