/* accel-cuda-remote-device.h: AccelCudaRemoteDevice, a CUDA GPU served by
 * an `accel-device-host` child process (isolation=process).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ACCEL_CUDA_INSIDE) && !defined(ACCEL_CUDA_COMPILATION)
#error "Only <accel-cuda.h> can be included directly."
#endif

#include "accel-cuda-types.h"

G_BEGIN_DECLS

#define ACCEL_CUDA_TYPE_REMOTE_DEVICE (accel_cuda_remote_device_get_type ())
ACCEL_CUDA_API
G_DECLARE_FINAL_TYPE (AccelCudaRemoteDevice, accel_cuda_remote_device, ACCEL_CUDA, REMOTE_DEVICE, AccelRemoteDevice)

G_END_DECLS
