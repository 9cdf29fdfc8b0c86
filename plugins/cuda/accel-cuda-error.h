/* accel-cuda-error.h: CUDA and CUDA-library status codes as GErrors.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ACCEL_CUDA_INSIDE) && !defined(ACCEL_CUDA_COMPILATION)
#error "Only <accel-cuda.h> can be included directly."
#endif

#include "accel-cuda-types.h"

G_BEGIN_DECLS

ACCEL_CUDA_API
gboolean accel_cuda_check (cudaError_t status, const char *what, GError **error);
ACCEL_CUDA_API
gboolean accel_cuda_check_library (int status,
                                   const char *library,
                                   const char *status_name,
                                   gboolean out_of_memory,
                                   const char *what,
                                   GError **error);
ACCEL_CUDA_API
gboolean accel_cuda_error_is_sticky (cudaError_t status);

/**
 * ACCEL_CUDA_CHECK:
 * @call: a CUDA runtime call
 * @error: a `GError **`
 *
 * Evaluates to %TRUE if @call returned `cudaSuccess`, else sets @error with
 * accel_cuda_check(), naming the call by its source text.
 */
#define ACCEL_CUDA_CHECK(call, error) accel_cuda_check ((call), #call, (error))

G_END_DECLS
