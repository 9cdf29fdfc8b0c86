/* accel-cuda-plan-cache.h: AccelCudaPlanCache, a lane's cache of library
 * plans (cuFFT plans, cuDNN convolution plans, cuBLASLt matmul plans).
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
 * AccelCudaPlanCache:
 *
 * A bounded cache of plans made from fixed-size keys, least recently used
 * first out. One belongs to one lane's library handle and is touched only
 * on that device's thread; plans it drops are freed at once, so a plan in
 * use must not be dropped by a later get before the lane has enqueued its
 * work (gets of one op are made before it launches).
 */
typedef struct _AccelCudaPlanCache AccelCudaPlanCache;

/**
 * AccelCudaPlanMake:
 * @key: the key, @key_size bytes as given to accel_cuda_plan_cache_new()
 * @user_data: what accel_cuda_plan_cache_get() was given
 * @error: return location for a #GError
 *
 * Makes the plan for @key.
 *
 * Returns: (transfer full) (nullable): the plan, or %NULL with @error set
 */
typedef gpointer (*AccelCudaPlanMake) (gconstpointer key, gpointer user_data, GError **error);

/**
 * AccelCudaPlanKind:
 * @name: names the lane's cache of these plans, in the key space of the
 *   lane's handles (`"cufft-plans"`)
 * @key_size: bytes of a key
 * @capacity: how many plans a lane keeps
 * @make: makes a plan on a miss
 * @free_plan: frees a plan
 *
 * One kind of plan for accel_cuda_lane_get_plan(), which keeps a cache of
 * them on each lane; declare it once, `static const`.
 */
typedef struct {
  const char *name;
  gsize key_size;
  guint capacity;
  AccelCudaPlanMake make;
  GDestroyNotify free_plan;
} AccelCudaPlanKind;

ACCEL_CUDA_API
AccelCudaPlanCache *accel_cuda_plan_cache_new (gsize key_size,
                                               guint capacity,
                                               AccelCudaPlanMake make,
                                               GDestroyNotify free_plan);
ACCEL_CUDA_API
gpointer accel_cuda_plan_cache_get (AccelCudaPlanCache *self,
                                    gconstpointer key,
                                    gpointer user_data,
                                    GError **error);
ACCEL_CUDA_API
guint accel_cuda_plan_cache_get_size (AccelCudaPlanCache *self);
ACCEL_CUDA_API
void accel_cuda_plan_cache_free (AccelCudaPlanCache *self);

G_END_DECLS
