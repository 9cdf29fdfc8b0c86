/* accel-curand-kernels.cu: the finishing pass of the `curand` plugin's
 * rng-fill: cuRAND's uniform values in (0, 1] scaled to [low, high), and
 * binary32 values rounded to f16 or bf16.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdint.h>
#include <accel-half.h>
#include "accel-curand-kernels.h"

#define THREADS 256

/* The value next below @x, towards @low. */
static __device__ __forceinline__ float
below (float x, float low)
{
  return nextafterf (x, low);
}

static __device__ __forceinline__ double
below (double x, double low)
{
  return nextafter (x, low);
}

template <typename T>
__global__ void
affine_kernel (T *data, int64_t n, T low, T high)
{
  const T span = high - low;

  for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n; i += (int64_t) gridDim.x * blockDim.x)
    {
      /* cuRAND's uniforms lie in (0, 1]; 1 - u lies in [0, 1) before
       * rounding, but a u below half an ulp of 1 (about 2^-25 of binary32
       * values) rounds 1 - u up to 1, and low + span * u may round up to
       * high: such a value becomes the one next below high, which the op
       * excludes. */
      T value = low + span * ((T) 1 - data[i]);
      data[i] = value < high ? value : below (high, low);
    }
}

__global__ void
narrow_kernel (const float *src, uint16_t *dst, int64_t n, int bf16)
{
  for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n; i += (int64_t) gridDim.x * blockDim.x)
    dst[i] = bf16 ? accel_bf16_from_f32 (src[i]) : accel_f16_from_f32 (src[i]);
}

static unsigned int
grid_for (int64_t n)
{
  int64_t blocks = (n + THREADS - 1) / THREADS;
  return (unsigned int) (blocks < 1 ? 1 : blocks > 65536 ? 65536 : blocks);
}

extern "C" cudaError_t
accel_curand_launch_affine (void *data, int is_double, int64_t n, double low, double high, cudaStream_t stream)
{
  if (n <= 0)
    return cudaSuccess;
  if (is_double)
    affine_kernel<double><<<grid_for (n), THREADS, 0, stream>>> ((double *) data, n, low, high);
  else
    affine_kernel<float><<<grid_for (n), THREADS, 0, stream>>> ((float *) data, n, (float) low, (float) high);
  return cudaGetLastError ();
}

extern "C" cudaError_t
accel_curand_launch_narrow (const float *src, void *dst, int64_t n, int bf16, cudaStream_t stream)
{
  if (n <= 0)
    return cudaSuccess;
  narrow_kernel<<<grid_for (n), THREADS, 0, stream>>> (src, (uint16_t *) dst, n, bf16);
  return cudaGetLastError ();
}
