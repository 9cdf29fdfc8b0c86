/* accel-cuda-lane.h: AccelCudaLane, what every kernel of backend "cuda" runs on.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ACCEL_CUDA_INSIDE) && !defined(ACCEL_CUDA_COMPILATION)
#error "Only <accel-cuda.h> can be included directly."
#endif

#include "accel-cuda-types.h"

G_BEGIN_DECLS

/**
 * AccelCudaHandleCreate:
 * @lane: the lane the handle is for; make it current on the lane's stream
 * @error: return location for a #GError
 *
 * Makes a library handle (a `cublasHandle_t`, a plan cache, …) for @lane.
 * Called on the device thread with the device's context current.
 *
 * Returns: (transfer full) (nullable): the handle, or %NULL with @error set
 */
typedef gpointer (*AccelCudaHandleCreate) (AccelCudaLane *lane, GError **error);

ACCEL_CUDA_API
cudaStream_t accel_cuda_lane_get_stream (AccelCudaLane *lane);
ACCEL_CUDA_API
int accel_cuda_lane_get_ordinal (AccelCudaLane *lane);
ACCEL_CUDA_API
guint accel_cuda_lane_get_index (AccelCudaLane *lane);
ACCEL_CUDA_API
AccelCudaDevice *accel_cuda_lane_get_device (AccelCudaLane *lane);
ACCEL_CUDA_API
gpointer accel_cuda_lane_get_handle (AccelCudaLane *lane,
                                     const char *key,
                                     AccelCudaHandleCreate create,
                                     GDestroyNotify destroy,
                                     GError **error);
ACCEL_CUDA_API
gpointer accel_cuda_lane_alloc_workspace (AccelCudaLane *lane, gsize size, GError **error);

G_END_DECLS
