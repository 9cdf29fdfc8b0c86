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
 * ones for sm_90a alone). Ranks: see each file; the one kernel table is
 * below.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-cutlass-private.h"

const guint8 accel_cuda_cutlass_stand_in[16] __attribute__ ((aligned (256))) = { 0 };

/* Each kernel with its rank; the files' headers say why they rank so: the
 * sm_90a and tensor-core kernels above the general ones of each op. */
static const AccelKernelEntry kernels[] = {
#ifdef ACCEL_CUTLASS_HAVE_SM90
  { "grouped-gemm",
    { .supports = accel_cuda_cutlass_grouped_sm90_supports, .run = accel_cuda_cutlass_grouped_sm90_run }, 200 },
#endif
  { "grouped-gemm",
    { .supports = accel_cuda_cutlass_grouped_generic_supports, .run = accel_cuda_cutlass_grouped_generic_run }, 100 },
  { "quant-matmul",
    { .supports = accel_cuda_cutlass_quant_mma_supports, .run = accel_cuda_cutlass_quant_mma_run }, 200 },
  { "quant-matmul",
    { .supports = accel_cuda_cutlass_quant_generic_supports, .run = accel_cuda_cutlass_quant_generic_run }, 100 },
#ifdef ACCEL_CUTLASS_HAVE_SM90
  { "matmul",
    { .supports = accel_cuda_cutlass_matmul_sm90_supports, .run = accel_cuda_cutlass_matmul_sm90_run }, 160 },
#endif
  { "matmul",
    { .supports = accel_cuda_cutlass_matmul_generic_supports, .run = accel_cuda_cutlass_matmul_generic_run }, 150 },
};

ACCEL_PLUGIN_DEFINE_KERNELS (cuda_cutlass,
                             "CUTLASS kernels on the cuda backend: grouped-gemm (mixture of experts), quant-matmul "
                             "(int4/int8/fp8 weights), matmul with residual, row/column scales and amax",
                             ACCEL_CUDA_BACKEND_NAME, 100, kernels, ACCEL_VERSION, "LGPL-2.1-or-later")
