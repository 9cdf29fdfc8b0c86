/* accel-cusolver-kernels.cu: the layout kernels around cuSOLVER. Accel's
 * matrices are row-major and cuSOLVER's column-major, so factors go through
 * transposes; triangles are cut out and zeroed here.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>
#include "accel-cusolver-kernels.h"

#define TILE 32
#define ROWS 8
#define MAX_GRID_Z 65535

/* dst[b][j][i] = src[b][i][j] for rows x cols matrices, through a padded
 * shared tile so both sides are read and written in coalesced rows. */
template <typename T>
__global__ void
transpose_kernel (const T *__restrict__ src, T *__restrict__ dst, int rows, int cols)
{
  __shared__ T tile[TILE][TILE + 1];
  size_t plane = (size_t) rows * cols;
  src += blockIdx.z * plane;
  dst += blockIdx.z * plane;

  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < cols && y + j < rows)
      tile[threadIdx.y + j][threadIdx.x] = src[(size_t) (y + j) * cols + x];
  __syncthreads ();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < rows && y + j < cols)
      dst[(size_t) (y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

extern "C" cudaError_t
accel_cusolver_transpose (const void *src, void *dst, int rows, int cols, long long batch,
                          size_t element_size, cudaStream_t stream)
{
  if (rows == 0 || cols == 0 || batch == 0)
    return cudaSuccess;
  size_t plane = (size_t) rows * cols * element_size;
  for (long long b = 0; b < batch; b += MAX_GRID_Z)
    {
      unsigned z = (unsigned) (batch - b < MAX_GRID_Z ? batch - b : MAX_GRID_Z);
      dim3 block (TILE, ROWS), grid ((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE, z);
      const char *s = (const char *) src + b * plane;
      char *d = (char *) dst + b * plane;
      if (element_size == 4)
        transpose_kernel<float><<<grid, block, 0, stream>>> ((const float *) s, (float *) d, rows, cols);
      else
        transpose_kernel<double><<<grid, block, 0, stream>>> ((const double *) s, (double *) d, rows, cols);
    }
  return cudaGetLastError ();
}

/* Zeroes the triangle of row-major n x n matrices that a factor leaves. */
template <typename T>
__global__ void
zero_triangle_kernel (T *m, int n, int keep_lower)
{
  m += blockIdx.z * (size_t) n * n;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && j < n && (keep_lower ? j > i : j < i))
    m[(size_t) i * n + j] = T (0);
}

extern "C" cudaError_t
accel_cusolver_zero_triangle (void *matrices, int n, long long batch, int keep_lower,
                              size_t element_size, cudaStream_t stream)
{
  if (n == 0 || batch == 0)
    return cudaSuccess;
  size_t plane = (size_t) n * n * element_size;
  for (long long b = 0; b < batch; b += MAX_GRID_Z)
    {
      unsigned z = (unsigned) (batch - b < MAX_GRID_Z ? batch - b : MAX_GRID_Z);
      dim3 block (32, 8), grid ((n + 31) / 32, (n + 7) / 8, z);
      char *p = (char *) matrices + b * plane;
      if (element_size == 4)
        zero_triangle_kernel<float><<<grid, block, 0, stream>>> ((float *) p, n, keep_lower);
      else
        zero_triangle_kernel<double><<<grid, block, 0, stream>>> ((double *) p, n, keep_lower);
    }
  return cudaGetLastError ();
}

/* r[i][j] (row-major k x n) = the upper triangle of the first k rows of the
 * column-major m x n matrix geqrf left. */
template <typename T>
__global__ void
extract_r_kernel (const T *__restrict__ a, int m, int n, int k, T *__restrict__ r)
{
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < k && j < n)
    r[(size_t) i * n + j] = j >= i ? a[i + (size_t) j * m] : T (0);
}

extern "C" cudaError_t
accel_cusolver_extract_r (const void *a, int m, int n, void *r, size_t element_size, cudaStream_t stream)
{
  int k = m < n ? m : n;
  if (k == 0 || n == 0)
    return cudaSuccess;
  dim3 block (32, 8), grid ((n + 31) / 32, (k + 7) / 8);
  if (element_size == 4)
    extract_r_kernel<float><<<grid, block, 0, stream>>> ((const float *) a, m, n, k, (float *) r);
  else
    extract_r_kernel<double><<<grid, block, 0, stream>>> ((const double *) a, m, n, k, (double *) r);
  return cudaGetLastError ();
}

/* codes[0] = 1 + the first batch entry whose info is not 0 (0 if none),
 * codes[1] = that info. One block: batches are small beside the work. */
__global__ void
first_bad_info_kernel (const int *__restrict__ info, long long n, int *codes)
{
  __shared__ long long first;
  if (threadIdx.x == 0)
    first = n;
  __syncthreads ();
  for (long long b = threadIdx.x; b < n; b += blockDim.x)
    if (info[b] != 0)
      {
        atomicMin ((unsigned long long *) &first, (unsigned long long) b);
        break;
      }
  __syncthreads ();
  if (threadIdx.x == 0 && first < n)
    {
      codes[0] = (int) (first + 1);
      codes[1] = info[first];
    }
}

extern "C" cudaError_t
accel_cusolver_first_bad_info (const int *info, long long n, int *codes, cudaStream_t stream)
{
  if (n <= 0)
    return cudaSuccess;
  first_bad_info_kernel<<<1, 256, 0, stream>>> (info, n, codes);
  return cudaGetLastError ();
}
