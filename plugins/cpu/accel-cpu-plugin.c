/* accel-cpu-plugin.c: the CPU backend plugin: the `cpu` backend and a
 * kernel for every op of the portable set, on OpenBLAS, FFTW3 and a thread
 * pool. The kernels live in the accel-cpu-AREA.c files; the one table below
 * registers them all.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-config.h"
#include "accel-cpu-backend.h"
#include "accel-cpu-kernels.h"

static const AccelKernelEntry kernels[] = {
  { "copy", { .run = accel_cpu_copy_run } },
  { "fill", { .run = accel_cpu_fill_run } },
  { "cast", { .run = accel_cpu_cast_run } },
  { "rng-fill", { .run = accel_cpu_rng_fill_run } },
  { "gemm", { .run = accel_cpu_gemm_run } },
  { "axpy", { .run = accel_cpu_axpy_run } },
  { "scal", { .run = accel_cpu_scal_run } },
  { "fft", { .run = accel_cpu_fft_run } },
  { "reduce", { .run = accel_cpu_reduce_run } },
  { "softmax", { .run = accel_cpu_softmax_run } },
  { "attention", { .run = accel_cpu_attention_run } },
  { "attention-varlen", { .run = accel_cpu_attention_varlen_run } },
  { "attention-backward", { .run = accel_cpu_attention_backward_run } },
  { "attention-varlen-backward", { .run = accel_cpu_attention_varlen_backward_run } },
  { "attention-kvcache", { .run = accel_cpu_attention_kvcache_run } },
  { "qr", { .run = accel_cpu_qr_run } },
  { "lu", { .run = accel_cpu_lu_run } },
  { "lu-solve", { .run = accel_cpu_lu_solve_run } },
  { "cholesky", { .run = accel_cpu_cholesky_run } },
  { "cholesky-solve", { .run = accel_cpu_cholesky_solve_run } },
  { "svd", { .run = accel_cpu_svd_run } },
  { "eigh", { .run = accel_cpu_eigh_run } },
  { "spmv", { .run = accel_cpu_spmv_run } },
  { "spmm", { .run = accel_cpu_spmm_run } },
  { "conv2d", { .run = accel_cpu_conv2d_run } },
  { "conv2d-backward-data", { .run = accel_cpu_conv2d_backward_data_run } },
  { "conv2d-backward-filter", { .run = accel_cpu_conv2d_backward_filter_run } },
  { "pool2d", { .run = accel_cpu_pool2d_run } },
  { "layernorm", { .run = accel_cpu_layernorm_run } },
  { "rmsnorm", { .run = accel_cpu_rmsnorm_run } },
  { "sort", { .run = accel_cpu_sort_run } },
  { "scan", { .run = accel_cpu_scan_run } },
  { "histogram", { .run = accel_cpu_histogram_run } },
  { "select", { .run = accel_cpu_select_run } },
  { "segmented-reduce", { .run = accel_cpu_segmented_reduce_run } },
  { "matmul", { .run = accel_cpu_matmul_run } },
  { "grouped-gemm", { .run = accel_cpu_grouped_gemm_run } },
  { "quant-matmul", { .run = accel_cpu_quant_matmul_run } },
  { "replay", { .run = accel_cpu_replay_run } },
  { "all-reduce", { .run = accel_cpu_all_reduce_run } },
  { "all-gather", { .run = accel_cpu_all_gather_run } },
  { "reduce-scatter", { .run = accel_cpu_reduce_scatter_run } },
  { "broadcast", { .run = accel_cpu_broadcast_run } },
  { "root-reduce", { .run = accel_cpu_root_reduce_run } },
  { "all-to-all", { .run = accel_cpu_all_to_all_run } },
  { "send-recv", { .run = accel_cpu_send_recv_run } },
  { "collective-abort", { .run = accel_cpu_collective_abort_run } },
  { "resize", { .run = accel_cpu_resample_run } },
  { "convert-color", { .run = accel_cpu_resample_run } },
  { "filter", { .run = accel_cpu_filter_run } },
  { "morphology", { .run = accel_cpu_morphology_run } },
  { "warp-affine", { .run = accel_cpu_warp_affine_run } },
  { "warp-perspective", { .run = accel_cpu_warp_perspective_run } },
};

static gboolean
accel_cpu_plugin_init (AccelPlugin *plugin, GError **error)
{
  accel_plugin_register_backend (plugin, "cpu", ACCEL_TYPE_CPU_BACKEND);
  accel_plugin_register_kernels (plugin, "cpu", ACCEL_CPU_KERNEL_RANK, kernels, G_N_ELEMENTS (kernels));
  return TRUE;
}

ACCEL_PLUGIN_DEFINE (cpu,
                     "CPU backend: OpenBLAS, FFTW3 and Philox kernels for the portable op set",
                     accel_cpu_plugin_init,
                     ACCEL_VERSION,
                     "LGPL-2.1-or-later")
