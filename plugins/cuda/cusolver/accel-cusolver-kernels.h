/* accel-cusolver-kernels.h: the layout kernels of the cusolver plugin
 * (accel-cusolver-kernels.cu). Each enqueues on @stream and returns the
 * launch status. Element sizes are 4 (f32) or 8 (f64).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* dst[b] = transpose of src[b], row-major rows x cols -> cols x rows. */
cudaError_t accel_cusolver_transpose (const void *src, void *dst, int rows, int cols, long long batch,
                                      size_t element_size, cudaStream_t stream);
/* Zeroes the strictly upper (keep_lower) or strictly lower triangle. */
cudaError_t accel_cusolver_zero_triangle (void *matrices, int n, long long batch, int keep_lower,
                                          size_t element_size, cudaStream_t stream);
/* Row-major r [min(m, n), n] from the column-major m x n output of geqrf. */
/* codes[0] = 1 + the first of @n info codes that is not 0 (left alone if
 * none), codes[1] = that code. */
cudaError_t accel_cusolver_first_bad_info (const int *info, long long n, int *codes, cudaStream_t stream);
cudaError_t accel_cusolver_extract_r (const void *a, int m, int n, void *r, size_t element_size,
                                      cudaStream_t stream);

#ifdef __cplusplus
}
#endif
