/* accel-cuda-smem.cuh: a kernel's dynamic shared memory past 48 KiB.
 *
 * A block may use more than 48 KiB of dynamic shared memory only after
 * its kernel's attribute is raised, on each GPU (the attribute lives in
 * the GPU's context), up to the GPU's opt-in limit (227 KiB on sm_90,
 * 163 on sm_80). Both are asked once per GPU here, not on every launch:
 * the device thread's path pays one cudaGetDevice () and an atomic load.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <cuda_runtime.h>

#define ACCEL_CUDA_SMEM_DEFAULT (48 * 1024)
#define ACCEL_CUDA_SMEM_GPUS 64

/* The current GPU's opt-in limit of dynamic shared memory a block, in
 * bytes, asked once per GPU (ACCEL_CUDA_SMEM_DEFAULT where it cannot be
 * asked). */
static inline int
accel_cuda_smem_optin (void)
{
  static int limit[ACCEL_CUDA_SMEM_GPUS];   /* 0: not asked yet */
  int device = 0, bytes = 0;
  if (cudaGetDevice (&device) != cudaSuccess)
    return ACCEL_CUDA_SMEM_DEFAULT;
  if (device < ACCEL_CUDA_SMEM_GPUS && (bytes = __atomic_load_n (&limit[device], __ATOMIC_RELAXED)) > 0)
    return bytes;
  if (cudaDeviceGetAttribute (&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess
      || bytes < ACCEL_CUDA_SMEM_DEFAULT)
    return ACCEL_CUDA_SMEM_DEFAULT;
  if (device < ACCEL_CUDA_SMEM_GPUS)
    __atomic_store_n (&limit[device], bytes, __ATOMIC_RELAXED);
  return bytes;
}

/* Raises the dynamic shared memory limit of kernel K to @smem bytes on
 * the current GPU, once per kernel instance and GPU: @smem must be the
 * same at every call for one K (a constant of the instance, or the GPU's
 * opt-in limit). Past the 64th GPU every call makes it. Returns the CUDA
 * error. */
template <auto K>
static inline cudaError_t
accel_cuda_smem_once (int smem)
{
  static unsigned long long configured = 0;   /* a bit per GPU, atomic */
  int device = 0;
  cudaError_t err = cudaGetDevice (&device);
  if (err != cudaSuccess)
    return err;
  unsigned long long bit = device < ACCEL_CUDA_SMEM_GPUS ? 1ull << device : 0;
  if (bit != 0 && (__atomic_load_n (&configured, __ATOMIC_ACQUIRE) & bit))
    return cudaSuccess;
  err = cudaFuncSetAttribute (K, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (err != cudaSuccess)
    return err;
  __atomic_fetch_or (&configured, bit, __ATOMIC_RELEASE);
  return cudaSuccess;
}
