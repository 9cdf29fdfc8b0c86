/* accel-cuda-kernel-table.h: a CUDA plugin's kernels as one table of op
 * type and vtable, and the loop that registers them on the `cuda` backend.
 *
 * Not installed: it serves the plugins built in this tree (cuda, cub,
 * cublas, cudnn, cusolver, cusparse, nccl), which link libaccel-cuda
 * but must not grow its public API for a three-line loop; hence inline.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-cuda.h"

G_BEGIN_DECLS

/* One kernel of a plugin. The registry keeps a pointer to @vtable, so a
 * table must be static. */
typedef struct {
  const char *op_type;
  AccelKernelVTable vtable;
} AccelCudaKernelEntry;

/* Registers each kernel of @kernels on the cuda backend at @rank; called
 * from a plugin's init function. */
static inline void
accel_cuda_register_kernels (AccelPlugin *plugin, guint rank, const AccelCudaKernelEntry *kernels, gsize n_kernels)
{
  for (gsize i = 0; i < n_kernels; i++)
    accel_plugin_register_kernel (plugin, kernels[i].op_type, ACCEL_CUDA_BACKEND_NAME, rank, &kernels[i].vtable);
}

G_END_DECLS
