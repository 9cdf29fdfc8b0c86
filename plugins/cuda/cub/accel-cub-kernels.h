/* accel-cub-kernels.h: the CUB algorithms of the cub plugin
 * (accel-cub-kernels.cu), behind a C interface.
 *
 * Each entry point enqueues on @stream and returns the CUDA status. Those
 * taking @temp and @temp_bytes follow CUB's convention: with @temp NULL
 * they only set *@temp_bytes to the scratch size they need.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ACCEL_CUB_I8,
  ACCEL_CUB_U8,
  ACCEL_CUB_I32,
  ACCEL_CUB_U32,
  ACCEL_CUB_I64,
  ACCEL_CUB_U64,
  ACCEL_CUB_F16,
  ACCEL_CUB_BF16,
  ACCEL_CUB_F32,
  ACCEL_CUB_F64,
} AccelCubType;

typedef enum {
  ACCEL_CUB_SUM,
  ACCEL_CUB_MIN,
  ACCEL_CUB_MAX,
} AccelCubReduction;

/* Stable sort of @rows rows of @n keys in place, descending or not, with
 * @values (element size @value_size, NULL for none) permuted alike. */
cudaError_t accel_cub_sort (AccelCubType key_type, void *keys, void *values, size_t value_size,
                            long long rows, long long n, int descending,
                            void *temp, size_t *temp_bytes, cudaStream_t stream);

/* Inclusive or exclusive sums along rows of @n of U32, U64, F32 or F64. */
cudaError_t accel_cub_scan (AccelCubType type, const void *in, void *out, long long rows, long long n,
                            int exclusive, void *temp, size_t *temp_bytes, cudaStream_t stream);

/* Adds to *last_bin the samples equal to @upper (numpy's closed last bin);
 * none when @upper is outside the sample type's range. */
cudaError_t accel_cub_histogram_count_upper (AccelCubType type, const void *samples, long long n, double upper,
                                             int *last_bin, cudaStream_t stream);

/* Counts @n samples (U8, I32, F32, F64) into @n_bins even bins of [lower, upper). */
cudaError_t accel_cub_histogram (AccelCubType type, const void *samples, int *bins, int n_bins,
                                 double lower, double upper, long long n,
                                 void *temp, size_t *temp_bytes, cudaStream_t stream);

/* Copies the elements (1, 2, 4, 8 or 16 bytes) whose u8 flag is set; the
 * count goes to *@count. */
cudaError_t accel_cub_select (size_t element_size, const void *in, const unsigned char *flags, void *out,
                              long long *count, long long n,
                              void *temp, size_t *temp_bytes, cudaStream_t stream);

/* Reduces segments [offsets[i], offsets[i + 1]). Sums take U32, U64, F32,
 * F64; min and max I32, U32, I64, F32, F64. */
cudaError_t accel_cub_segmented_reduce (AccelCubType type, AccelCubReduction reduction, const void *in, void *out,
                                        const long long *offsets, int n_segments,
                                        void *temp, size_t *temp_bytes, cudaStream_t stream);

/* Small conversions around the algorithms. */
cudaError_t accel_cub_flags_to_u8 (const void *flags, size_t flag_size, unsigned char *out, long long n,
                                   cudaStream_t stream);
cudaError_t accel_cub_offsets_to_i64 (const int *offsets, long long *out, long long n, cudaStream_t stream);
cudaError_t accel_cub_count_to_i32 (const long long *count, int *out, cudaStream_t stream);
cudaError_t accel_cub_divide_by_length (AccelCubType type, void *sums, const long long *offsets, int n_segments,
                                        cudaStream_t stream);

#ifdef __cplusplus
}
#endif
