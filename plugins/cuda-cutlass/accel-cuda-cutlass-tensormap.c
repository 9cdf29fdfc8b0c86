/* accel-cuda-cutlass-tensormap.c: cuTensorMapEncodeTiled for the CUTLASS
 * instances of this plugin, resolved once.
 *
 * CUTLASS builds the TMA descriptors of a Hopper GEMM on the host at every
 * initialize(), and unless CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL is
 * defined it looks the driver function up with
 * cudaGetDriverEntryPointByVersion at each call (CUTLASS issue 3003): on
 * the H100 that cost about 0.35 ms per op, as much as a 4096-cubed GEMM.
 * The .cu files define CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL, so CUTLASS
 * calls cuTensorMapEncodeTiled by name; this file defines that name (hidden
 * in the module, so it never stands in for the driver's own elsewhere) and
 * forwards to the driver's entry point, looked up the first time. Linking
 * libcuda instead would stop the module from loading where there is no
 * driver, which the registry must be able to do.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <glib.h>

__attribute__ ((visibility ("hidden"))) CUresult CUDAAPI
cuTensorMapEncodeTiled (CUtensorMap *tensor_map, CUtensorMapDataType data_type, cuuint32_t rank, void *address,
                        const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                        const cuuint32_t *element_strides, CUtensorMapInterleave interleave,
                        CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2_promotion,
                        CUtensorMapFloatOOBfill oob_fill)
{
  static gsize resolved = 0;   /* the entry point, or 1 where the driver has none */

  if (g_once_init_enter (&resolved))
    {
      void *entry = NULL;
      enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
      if (cudaGetDriverEntryPointByVersion ("cuTensorMapEncodeTiled", &entry, 12000, cudaEnableDefault, &found)
          != cudaSuccess || found != cudaDriverEntryPointSuccess)
        entry = NULL;
      g_once_init_leave (&resolved, entry ? (gsize) entry : 1);
    }
  if (resolved == 1)
    return CUDA_ERROR_NOT_SUPPORTED;
  return ((PFN_cuTensorMapEncodeTiled_v12000) resolved) (tensor_map, data_type, rank, address, dims, strides, box,
                                                        element_strides, interleave, swizzle, l2_promotion,
                                                        oob_fill);
}
