/* accel-curand-kernels.h: launchers of accel-curand-kernels.cu.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t accel_curand_launch_affine (void *data, int is_double, int64_t n, double low, double high,
                                        cudaStream_t stream);
cudaError_t accel_curand_launch_narrow (const float *src, void *dst, int64_t n, int bf16, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
