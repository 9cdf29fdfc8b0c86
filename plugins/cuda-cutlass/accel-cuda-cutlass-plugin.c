/* accel-cuda-cutlass-plugin.c: the `cuda_cutlass` plugin: kernels of the
 * cuda backend where cuBLAS has nothing as good, built on CUTLASS and CuTe
 * (the headers of PyPI's nvidia-cutlass, found at build time) and on this
 * plugin's own CUDA C:
 *
 * - grouped-gemm (mixture-of-experts): CUTLASS's ptr-array grouped GEMM on
 *   sm_90a, a general kernel elsewhere (accel-cuda-cutlass-grouped.c);
 * - quant-matmul (weight-only int4/int8/fp8): tensor cores fed with codes
 *   dequantised in registers (accel-cuda-cutlass-quant.c);
 * - matmul with the epilogue extras cuBLASLt lacks (residual, row and
 *   column scales, amax): CUTLASS's Hopper GEMM with the epilogue fused on
 *   sm_90a, a general kernel elsewhere (accel-cuda-cutlass-matmul.c).
 *
 * The kernels are compiled with nvcc at build time, a small fixed set of
 * instances for the architectures of the `gpu_archs` option (the CUTLASS
 * ones for sm_90a alone). Ranks: see each file.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-cutlass-private.h"

const guint8 accel_cuda_cutlass_stand_in[16] __attribute__ ((aligned (256))) = { 0 };

static gboolean
plugin_init (AccelPlugin *plugin, GError **error)
{
  accel_cuda_cutlass_register_grouped (plugin);
  accel_cuda_cutlass_register_quant (plugin);
  accel_cuda_cutlass_register_matmul (plugin);
  return TRUE;
}

ACCEL_PLUGIN_DEFINE (cuda_cutlass,
                     "CUTLASS kernels on the cuda backend: grouped-gemm (mixture of experts), quant-matmul "
                     "(int4/int8/fp8 weights), matmul with residual, row/column scales and amax",
                     plugin_init, ACCEL_VERSION, "LGPL-2.1-or-later")
