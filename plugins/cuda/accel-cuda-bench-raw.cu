/* accel-cuda-bench-raw.cu: the raw baselines of accel-bench-cuda: an empty
 * kernel and a one-element fill, launched straight onto a stream.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime_api.h>

__global__ void
empty_kernel (void)
{
}

__global__ void
fill_one_kernel (float *p, float v)
{
  *p = v;
}

extern "C" cudaError_t
accel_bench_raw_launch_empty (cudaStream_t stream)
{
  empty_kernel<<<1, 1, 0, stream>>> ();
  return cudaGetLastError ();
}

extern "C" cudaError_t
accel_bench_raw_launch_fill_one (float *p, float v, cudaStream_t stream)
{
  fill_one_kernel<<<1, 1, 0, stream>>> (p, v);
  return cudaGetLastError ();
}
