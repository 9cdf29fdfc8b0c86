/* accel-cuda-gpu.h: AccelCudaGpu, what every CUDA device is, in-process or
 * served by a host process: its description and its telemetry.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ACCEL_CUDA_INSIDE) && !defined(ACCEL_CUDA_COMPILATION)
#error "Only <accel-cuda.h> can be included directly."
#endif

#include "accel-cuda-types.h"

G_BEGIN_DECLS

#define ACCEL_CUDA_TYPE_GPU (accel_cuda_gpu_get_type ())
ACCEL_CUDA_API
G_DECLARE_INTERFACE (AccelCudaGpu, accel_cuda_gpu, ACCEL_CUDA, GPU, AccelDevice)

/**
 * AccelCudaGpuInterface:
 * @parent_iface: the parent interface
 *
 * The interface of #AccelCudaDevice and #AccelCudaRemoteDevice. Its
 * properties are implemented once, in libaccel-cuda, for both.
 */
struct _AccelCudaGpuInterface {
  GTypeInterface parent_iface;

  /*< private >*/
  gpointer (*get_info) (AccelCudaGpu *self);
  gpointer padding[4];
};

ACCEL_CUDA_API
int accel_cuda_gpu_get_ordinal (AccelCudaGpu *self);
ACCEL_CUDA_API
const char *accel_cuda_gpu_get_device_name (AccelCudaGpu *self);
ACCEL_CUDA_API
const char *accel_cuda_gpu_get_pci_bus_id (AccelCudaGpu *self);
ACCEL_CUDA_API
GVariant *accel_cuda_gpu_get_telemetry (AccelCudaGpu *self);

G_END_DECLS
