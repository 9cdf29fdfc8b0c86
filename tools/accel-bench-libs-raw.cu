/* accel-bench-libs-raw.cu: the raw baselines of accel-bench-libs that are
 * CUDA C: the typed CUB calls an application would make itself
 * (accel-bench-libs.c), and the residual add of the two-pass matmul
 * (accel-bench-libs-cutlass.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_bf16.h>

extern "C" cudaError_t
accel_bench_raw_sort_f32 (float *keys, float *keys_alt, long long n, void *temp, size_t *temp_bytes,
                          cudaStream_t stream)
{
  cub::DoubleBuffer<float> d_keys (keys, keys_alt);
  return cub::DeviceRadixSort::SortKeys (temp, *temp_bytes, d_keys, n, 0, 32, stream);
}

extern "C" cudaError_t
accel_bench_raw_scan_f32 (const float *in, float *out, long long n, void *temp, size_t *temp_bytes,
                          cudaStream_t stream)
{
  return cub::DeviceScan::InclusiveSum (temp, *temp_bytes, in, out, n, stream);
}

/* c += r over n bf16 values, 8 at a time (the residual add of the
 * two-pass baseline of libs-cutlass; n a multiple of 8, 16-byte aligned). */
__global__ void
add_bf16 (uint4 *c, const uint4 *r, long long n8)
{
  long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n8)
    return;
  uint4 x = c[i], y = r[i];
  __nv_bfloat162 *px = (__nv_bfloat162 *) &x;
  const __nv_bfloat162 *py = (const __nv_bfloat162 *) &y;
  for (int j = 0; j < 4; j++)
    px[j] = __hadd2 (px[j], py[j]);
  c[i] = x;
}

extern "C" cudaError_t
accel_bench_raw_add_bf16 (void *c, const void *r, long long n, cudaStream_t stream)
{
  long long n8 = n / 8;
  add_bf16<<<(unsigned) ((n8 + 255) / 256), 256, 0, stream>>> ((uint4 *) c, (const uint4 *) r, n8);
  return cudaGetLastError ();
}
