/* accel-bench-nccl.h: the direct NCCL baseline of accel-bench-nccl,
 * built where NCCL is (accel-bench-nccl-raw.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _BenchNcclRaw BenchNcclRaw;

typedef enum {
  BENCH_ALL_REDUCE,
  BENCH_ALL_GATHER,
} BenchCollective;

/* Communicators of this process over the CUDA devices @ordinals
 * (ncclCommInitAll), one stream each. */
BenchNcclRaw *bench_nccl_raw_new (const int *ordinals, int n, GError **error);
void bench_nccl_raw_free (BenchNcclRaw *raw);
/* Seconds per collective: @iters of them back to back on every device,
 * issued from this thread in one NCCL group each, after @warmup. @send
 * and @recv hold a device pointer per rank; @bytes is what each rank
 * sends (all-reduce: the buffer; all-gather: its block). f32 data. */
double bench_nccl_raw_time (BenchNcclRaw *raw, BenchCollective what, void *const *send, void *const *recv,
                            gsize bytes, int warmup, int iters, GError **error);

/* Seconds per cudaMemcpyPeerAsync of @bytes from device @src_ordinal to
 * @dst_ordinal (peer access enabled where possible), @iters back to back
 * on a stream of the destination after @warmup. */
double bench_nccl_raw_peer_time (int src_ordinal, void *src, int dst_ordinal, void *dst, gsize bytes, int warmup,
                                 int iters, GError **error);

G_END_DECLS
