/* accel-cuda-fault-kernel.cu: a kernel that writes through an invalid
 * pointer, leaving the CUDA context with a sticky illegal-address error, and
 * one that stores five numbers for the `lane-handle` op. Test only.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdint.h>
#include <cuda_runtime_api.h>

__global__ void
fault_kernel (volatile int *bad)
{
  *bad = 42;
}

extern "C" cudaError_t
accel_cuda_test_launch_fault (cudaStream_t stream)
{
  /* Far outside any allocation, and aligned: an illegal address, not a
   * misaligned one. */
  fault_kernel<<<1, 1, 0, stream>>> ((volatile int *) (uintptr_t) 0x7f0000000000ull);
  return cudaGetLastError ();
}

__global__ void
store_kernel (int32_t *dst, int32_t a, int32_t b, int32_t c, int32_t d, int32_t e)
{
  dst[0] = a;
  dst[1] = b;
  dst[2] = c;
  dst[3] = d;
  dst[4] = e;
}

extern "C" cudaError_t
accel_cuda_test_launch_store (int32_t *dst, int32_t a, int32_t b, int32_t c, int32_t d, int32_t e,
                              cudaStream_t stream)
{
  store_kernel<<<1, 1, 0, stream>>> (dst, a, b, c, d, e);
  return cudaGetLastError ();
}
