/* accel-cpu-kernels.h: what the CPU backend's kernel files share.
 *
 * Each kernel runs synchronously on the device thread (or on the caller's
 * thread when run directly) and receives an AccelCpuExec, or NULL, as its
 * context.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>
#include "accel-cpu-parallel.h"

G_BEGIN_DECLS

#define ACCEL_CPU_KERNEL_RANK 100

/* The kernels, one per op type, which accel-cpu-plugin.c registers in one
 * table; each file's, in the table's order. Those of the op types that the
 * CUDA library plugins (cuBLASLt, cuSOLVER, cuSPARSE, cuDNN, CUB) also
 * implement are the oracles their tests compare against. */
/* accel-cpu-elementwise.c */
gboolean accel_cpu_copy_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_fill_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_cast_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_rng_fill_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-blas.c */
gboolean accel_cpu_gemm_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_axpy_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_scal_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-fft.c */
gboolean accel_cpu_fft_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-reduce.c */
gboolean accel_cpu_reduce_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_softmax_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-attention.c */
gboolean accel_cpu_attention_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_attention_varlen_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-attention-backward.c */
gboolean accel_cpu_attention_backward_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_attention_varlen_backward_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-attention-kvcache.c */
gboolean accel_cpu_attention_kvcache_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-linalg.c */
gboolean accel_cpu_qr_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_lu_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_lu_solve_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_cholesky_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_cholesky_solve_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_svd_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_eigh_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-sparse.c */
gboolean accel_cpu_spmv_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_spmm_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-conv.c */
gboolean accel_cpu_conv2d_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_conv2d_backward_data_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_conv2d_backward_filter_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_pool2d_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-norm.c */
gboolean accel_cpu_layernorm_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_rmsnorm_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-primitives.c */
gboolean accel_cpu_sort_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_scan_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_histogram_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_select_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_segmented_reduce_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-matmul.c */
gboolean accel_cpu_matmul_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-grouped-gemm.c */
gboolean accel_cpu_grouped_gemm_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-quant-matmul.c */
gboolean accel_cpu_quant_matmul_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-graph.c */
gboolean accel_cpu_replay_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-collective.c */
gboolean accel_cpu_all_reduce_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_all_gather_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_reduce_scatter_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_broadcast_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_root_reduce_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_all_to_all_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_send_recv_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_collective_abort_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-image-resample.c */
gboolean accel_cpu_resample_run (AccelOp *op, gpointer context, GError **error);   /* resize, convert-color */
/* accel-cpu-image-filter.c */
gboolean accel_cpu_filter_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_morphology_run (AccelOp *op, gpointer context, GError **error);
/* accel-cpu-image-warp.c */
gboolean accel_cpu_warp_affine_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cpu_warp_perspective_run (AccelOp *op, gpointer context, GError **error);

/* Whole-array conversions between f16/bf16/f32/f64 storage and binary32 or
 * binary64 working copies (accel-cpu-elementwise.c), in parallel for large
 * arrays. Narrowing rounds to nearest even. */
void accel_cpu_to_f32 (const AccelCpuExec *exec, AccelDType dtype, const void *src, float *dst, gint64 n);
void accel_cpu_from_f32 (const AccelCpuExec *exec, AccelDType dtype, const float *src, void *dst, gint64 n);
float *accel_cpu_widen (const AccelCpuExec *exec, AccelBuffer *buffer, gboolean *owned, GError **error);

/* Scratch memory aligned for SIMD; free with accel_cpu_scratch_free(). */
gpointer accel_cpu_scratch_alloc (gsize size, GError **error);
void accel_cpu_scratch_free (gpointer memory);

G_END_DECLS
