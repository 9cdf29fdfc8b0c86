/* accel-cusparse-kernels.h: the kernels of the cusparse plugin
 * (accel-cusparse-kernels.cu). Each enqueues on @stream and returns the
 * launch status.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes to *bad_row the lowest row whose CSR structure is wrong (offsets
 * not from 0 to nnz or decreasing, a column outside [0, n_cols), columns not
 * ascending), or leaves it alone; *bad_row must hold INT_MAX-ish before. */
cudaError_t accel_cusparse_check_csr (const int *row_ptr, const int *col_ind, long long m, long long nnz,
                                      long long n_cols, int *bad_row, cudaStream_t stream);

/* y[i] *= beta for n elements of f32 (element_size 4) or f64. */
cudaError_t accel_cusparse_scale (void *y, long long n, double beta, size_t element_size, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
