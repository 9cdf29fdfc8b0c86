/* accel-bench-libs-raw.cu: the raw CUB baselines of accel-bench-libs.c:
 * the typed CUB calls an application would make itself.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

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
