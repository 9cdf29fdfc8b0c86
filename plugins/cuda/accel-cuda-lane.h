/* accel-cuda-lane.h: AccelCudaLane, what every kernel of backend "cuda" runs on.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ACCEL_CUDA_INSIDE) && !defined(ACCEL_CUDA_COMPILATION)
#error "Only <accel-cuda.h> can be included directly."
#endif

#include "accel-cuda-types.h"
#include "accel-cuda-plan-cache.h"

G_BEGIN_DECLS

/**
 * AccelCudaHandleOpen:
 * @lane: the lane the handle is for
 * @handle: (out): where the handle goes, the moment the library has made it
 * @error: return location for a #GError
 *
 * Makes a library handle for @lane and sets it up: binds it to the lane's
 * stream (accel_cuda_lane_get_stream()), sets its modes. Called on the
 * device thread with the device's context current. When a step after the
 * handle was stored fails, the lane frees the handle with the destroy
 * function given to accel_cuda_lane_open_handle().
 *
 * Returns: %TRUE with @handle set, else %FALSE with @error set
 */
typedef gboolean (*AccelCudaHandleOpen) (AccelCudaLane *lane, gpointer *handle, GError **error);

/**
 * AccelCudaCheckFunc:
 * @codes: (array length=n_codes): the codes the op's kernels left, copied to
 *   the host after the op's work ran
 * @n_codes: how many
 * @user_data: what was given to accel_cuda_lane_check_after()
 * @error: return location for the op's error
 *
 * Decides, once an op's GPU work has completed, whether the codes its
 * kernels wrote mean the op failed (a bad index found in device memory, a
 * solver's info code). Runs on the device's completion thread: it may read
 * the op, which stays alive and unchanged until it completes, but must not
 * call CUDA.
 *
 * Returns: %TRUE if the op succeeded, else %FALSE with @error set
 */
typedef gboolean (*AccelCudaCheckFunc) (const gint32 *codes, guint n_codes, gpointer user_data, GError **error);

ACCEL_CUDA_API
cudaStream_t accel_cuda_lane_get_stream (AccelCudaLane *lane);
ACCEL_CUDA_API
int accel_cuda_lane_get_ordinal (AccelCudaLane *lane);
ACCEL_CUDA_API
guint accel_cuda_lane_get_index (AccelCudaLane *lane);
ACCEL_CUDA_API
AccelCudaDevice *accel_cuda_lane_get_device (AccelCudaLane *lane);
ACCEL_CUDA_API
gpointer accel_cuda_lane_open_handle (AccelCudaLane *lane,
                                      const char *key,
                                      AccelCudaHandleOpen open,
                                      GDestroyNotify destroy,
                                      GError **error);
ACCEL_CUDA_API
gpointer accel_cuda_lane_get_plan (AccelCudaLane *lane,
                                   const AccelCudaPlanKind *kind,
                                   gconstpointer key,
                                   gpointer user_data,
                                   GError **error);
ACCEL_CUDA_API
gpointer accel_cuda_lane_alloc_workspace (AccelCudaLane *lane, gsize size, GError **error);
ACCEL_CUDA_API
guint64 accel_cuda_lane_get_write_serial (AccelCudaLane *lane, AccelBuffer *buffer);
ACCEL_CUDA_API
gint32 *accel_cuda_lane_check_after (AccelCudaLane *lane,
                                     guint n_codes,
                                     AccelCudaCheckFunc func,
                                     gpointer user_data,
                                     GDestroyNotify destroy,
                                     GError **error);

ACCEL_CUDA_API
gboolean accel_cuda_lane_run_graph (AccelCudaLane *lane, AccelGraph *graph, GError **error);

G_END_DECLS
