/* accel-cuda-backend.h: AccelCudaBackend, the backend "cuda".
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ACCEL_CUDA_INSIDE) && !defined(ACCEL_CUDA_COMPILATION)
#error "Only <accel-cuda.h> can be included directly."
#endif

#include "accel-cuda-types.h"

G_BEGIN_DECLS

#define ACCEL_CUDA_TYPE_BACKEND (accel_cuda_backend_get_type ())
ACCEL_CUDA_API
G_DECLARE_FINAL_TYPE (AccelCudaBackend, accel_cuda_backend, ACCEL_CUDA, BACKEND, AccelBackend)

G_END_DECLS
