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

/* Lowers bad[0] to the lowest row whose offsets are wrong (not from 0 to
 * nnz, decreasing, outside [0, nnz]) and bad[1] to the lowest row whose
 * columns are outside [0, n_cols) or not ascending; both must hold
 * INT_MAX-ish before. Offsets are judged before columns are read. */
cudaError_t accel_cusparse_check_csr (const int *row_ptr, const int *col_ind, long long m, long long nnz,
                                      long long n_cols, int *bad, cudaStream_t stream);

/* y[i] *= beta for n elements of f32 (element_size 4) or f64. */
cudaError_t accel_cusparse_scale (void *y, long long n, double beta, size_t element_size, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
