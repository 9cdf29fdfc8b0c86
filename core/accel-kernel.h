/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-types.h"

G_BEGIN_DECLS

/**
 * AccelKernelSupportsFunc:
 * @op: a validated op
 * @device: the device it would run on
 * @error: return location for the reason it is not supported
 *
 * Tells whether a kernel can run one op instance on one device; a kernel
 * whose function says no is skipped for the next one of lower rank.
 *
 * Returns: %TRUE if the kernel can run this op instance (dtypes, layouts,
 *   compute capability...)
 */
typedef gboolean (*AccelKernelSupportsFunc) (AccelOp *op, AccelDevice *device, GError **error);

/**
 * AccelKernelRunFunc:
 * @op: a validated op whose buffers all belong to the device
 * @context: the backend's execution context (for CPU %NULL-able; for CUDA the lane)
 * @error: return location for a #GError
 *
 * Runs, or for asynchronous backends enqueues, the op.
 *
 * Returns: %TRUE on success
 */
typedef gboolean (*AccelKernelRunFunc) (AccelOp *op, gpointer context, GError **error);

/**
 * AccelKernelVTable:
 * @supports: (nullable): refines which op instances this kernel takes; %NULL takes all
 * @run: runs the op
 *
 * The implementation of one op type on one backend.
 */
typedef struct {
  AccelKernelSupportsFunc supports;
  AccelKernelRunFunc run;
  /*< private >*/
  gpointer _reserved[6];
} AccelKernelVTable;

#define ACCEL_TYPE_KERNEL (accel_kernel_get_type ())
ACCEL_API
GType accel_kernel_get_type (void) G_GNUC_CONST;

ACCEL_API
const char *accel_kernel_get_op_type (const AccelKernel *kernel);
ACCEL_API
const char *accel_kernel_get_backend (const AccelKernel *kernel);
ACCEL_API
guint accel_kernel_get_rank (const AccelKernel *kernel);
ACCEL_API
const char *accel_kernel_get_plugin_name (const AccelKernel *kernel);
ACCEL_API
const AccelKernelVTable *accel_kernel_get_vtable (const AccelKernel *kernel);
ACCEL_API
gboolean accel_kernel_supports (const AccelKernel *kernel, AccelOp *op, AccelDevice *device, GError **error);
ACCEL_API
gboolean accel_kernel_run (const AccelKernel *kernel, AccelOp *op, gpointer context, GError **error);

G_END_DECLS
