/* accel-cusparse-kernels.cu: the CSR structure check that runs before a
 * product (cuSPARSE reads out of bounds on a bad index instead of
 * reporting it), and the scaling of an output by beta where the sparse
 * matrix has no entries at all.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>
#include "accel-cusparse-kernels.h"

/* One thread per row. bad[0] gets the lowest row whose offsets are wrong
 * (not from 0 to nnz, decreasing, or outside [0, nnz]); bad[1] the lowest
 * row whose columns are out of range or not ascending. A row's columns are
 * read only once its own offsets are known to lie within [0, nnz], so no
 * thread reads out of bounds whatever the offsets hold. */
__global__ void
check_csr_kernel (const int *__restrict__ row_ptr, const int *__restrict__ col_ind, long long m,
                  long long nnz, long long n_cols, int *bad)
{
  long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x;
  if (m == 0)
    {
      if (i == 0 && (row_ptr[0] != 0 || nnz != 0))
        atomicMin (&bad[0], 0);
      return;
    }
  if (i >= m)
    return;

  long long b = row_ptr[i], e = row_ptr[i + 1];
  if ((i == 0 && b != 0) || (i == m - 1 && e != nnz) || e < b || b < 0 || e > nnz)
    {
      atomicMin (&bad[0], (int) i);
      return;
    }
  for (long long k = b; k < e; k++)
    {
      int c = col_ind[k];
      if (c < 0 || c >= n_cols || (k > b && c <= col_ind[k - 1]))
        {
          atomicMin (&bad[1], (int) i);
          return;
        }
    }
}

extern "C" cudaError_t
accel_cusparse_check_csr (const int *row_ptr, const int *col_ind, long long m, long long nnz,
                          long long n_cols, int *bad, cudaStream_t stream)
{
  long long threads = m > 0 ? m : 1;
  unsigned blocks = (unsigned) ((threads + 255) / 256);
  check_csr_kernel<<<blocks, 256, 0, stream>>> (row_ptr, col_ind, m, nnz, n_cols, bad);
  return cudaGetLastError ();
}

template <typename T>
__global__ void
scale_kernel (T *y, long long n, T beta)
{
  for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n; i += (long long) gridDim.x * blockDim.x)
    y[i] = beta == T (0) ? T (0) : y[i] * beta;
}

extern "C" cudaError_t
accel_cusparse_scale (void *y, long long n, double beta, size_t element_size, cudaStream_t stream)
{
  if (n == 0)
    return cudaSuccess;
  unsigned blocks = (unsigned) ((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);
  if (element_size == 4)
    scale_kernel<float><<<blocks, 256, 0, stream>>> ((float *) y, n, (float) beta);
  else
    scale_kernel<double><<<blocks, 256, 0, stream>>> ((double *) y, n, beta);
  return cudaGetLastError ();
}
