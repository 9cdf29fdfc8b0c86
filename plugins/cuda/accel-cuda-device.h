/* accel-cuda-device.h: AccelCudaDevice, a CUDA GPU driven from this process.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ACCEL_CUDA_INSIDE) && !defined(ACCEL_CUDA_COMPILATION)
#error "Only <accel-cuda.h> can be included directly."
#endif

#include "accel-cuda-types.h"

G_BEGIN_DECLS

#define ACCEL_CUDA_TYPE_DEVICE (accel_cuda_device_get_type ())
ACCEL_CUDA_API
G_DECLARE_FINAL_TYPE (AccelCudaDevice, accel_cuda_device, ACCEL_CUDA, DEVICE, AccelDevice)

ACCEL_CUDA_API
int accel_cuda_device_get_ordinal (AccelCudaDevice *self);
ACCEL_CUDA_API
const char *accel_cuda_device_get_device_name (AccelCudaDevice *self);
ACCEL_CUDA_API
const char *accel_cuda_device_get_compute_capability (AccelCudaDevice *self);
ACCEL_CUDA_API
int accel_cuda_device_get_compute_capability_major (AccelCudaDevice *self);
ACCEL_CUDA_API
int accel_cuda_device_get_compute_capability_minor (AccelCudaDevice *self);
ACCEL_CUDA_API
int accel_cuda_device_get_sm_count (AccelCudaDevice *self);
ACCEL_CUDA_API
AccelCudaIsolation accel_cuda_device_get_isolation (AccelCudaDevice *self);
ACCEL_CUDA_API
AccelCudaCompletion accel_cuda_device_get_completion (AccelCudaDevice *self);

/* Any CUDA device, in-process or served by a host process. */
ACCEL_CUDA_API
gboolean accel_cuda_is_cuda_device (AccelDevice *device);
ACCEL_CUDA_API
gboolean accel_cuda_get_compute_capability (AccelDevice *device, int *major, int *minor);

G_END_DECLS
