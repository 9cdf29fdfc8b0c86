/* accel-cuda-cutlass-private.h: what the C files of the cuda_cutlass
 * plugin share (not installed).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <string.h>
#include "accel-config.h"
#include "accel-cuda.h"
#include "accel-cutlass-kernels.h"

G_BEGIN_DECLS

/* The kernels, for the plugin's table (accel-cuda-cutlass-plugin.c); each
 * file's header says what they take and why they rank as they do. */
gboolean accel_cuda_cutlass_grouped_generic_supports (AccelOp *op, AccelDevice *device, GError **error);
gboolean accel_cuda_cutlass_grouped_generic_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cuda_cutlass_quant_mma_supports (AccelOp *op, AccelDevice *device, GError **error);
gboolean accel_cuda_cutlass_quant_mma_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cuda_cutlass_quant_generic_supports (AccelOp *op, AccelDevice *device, GError **error);
gboolean accel_cuda_cutlass_quant_generic_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cuda_cutlass_matmul_generic_supports (AccelOp *op, AccelDevice *device, GError **error);
gboolean accel_cuda_cutlass_matmul_generic_run (AccelOp *op, gpointer context, GError **error);
#ifdef ACCEL_CUTLASS_HAVE_SM90
gboolean accel_cuda_cutlass_grouped_sm90_supports (AccelOp *op, AccelDevice *device, GError **error);
gboolean accel_cuda_cutlass_grouped_sm90_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cuda_cutlass_matmul_sm90_supports (AccelOp *op, AccelDevice *device, GError **error);
gboolean accel_cuda_cutlass_matmul_sm90_run (AccelOp *op, gpointer context, GError **error);
#endif

/* What the C files put for a buffer's address where the device is served by
 * a host process (the address is only known there): aligned like any
 * allocation, so that a supports() function judging alignment on this side
 * says what the host will say of a real buffer. */
extern const guint8 accel_cuda_cutlass_stand_in[];

/* The kernels' name for @dtype; FALSE for a type they do not take. */
static inline gboolean
accel_cuda_cutlass_type (AccelDType dtype, AccelCutlassType *type)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F32: *type = ACCEL_CUTLASS_F32; return TRUE;
    case ACCEL_DTYPE_F16: *type = ACCEL_CUTLASS_F16; return TRUE;
    case ACCEL_DTYPE_BF16: *type = ACCEL_CUTLASS_BF16; return TRUE;
    case ACCEL_DTYPE_FP8_E4M3: *type = ACCEL_CUTLASS_E4M3; return TRUE;
    case ACCEL_DTYPE_FP8_E5M2: *type = ACCEL_CUTLASS_E5M2; return TRUE;
    default: return FALSE;
    }
}

/* Whether the device's compute capability is at least @major.@minor; sets
 * ACCEL_ERROR_NO_KERNEL naming @what otherwise. */
static inline gboolean
accel_cuda_cutlass_needs_cc (AccelDevice *device, int major, int minor, const char *what, GError **error)
{
  int ma = 0, mi = 0;
  if (accel_cuda_get_compute_capability (device, &ma, &mi) && ma * 10 + mi >= major * 10 + minor)
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL,
               "%s (cuda_cutlass): needs compute capability %d.%d or newer (device has %d.%d)",
               what, major, minor, ma, mi);
  return FALSE;
}

/* Whether the device is an sm_90 one (H100, H200), the only one the
 * sm_90a instances run on; sets ACCEL_ERROR_NO_KERNEL naming @what
 * otherwise. */
static inline gboolean
accel_cuda_cutlass_is_sm90 (AccelDevice *device, const char *what, GError **error)
{
  int ma = 0, mi = 0;
  if (accel_cuda_get_compute_capability (device, &ma, &mi) && ma == 9 && mi == 0)
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL,
               "%s (cuda_cutlass sm90): needs compute capability 9.0 (device has %d.%d)", what, ma, mi);
  return FALSE;
}

/* Whether the general tiled kernels' grid holds the op: 64-wide column
 * tiles and batches in a grid dimension of at most 65535. */
static inline gboolean
accel_cuda_cutlass_general_fits (gint64 n, gint64 batch, const char *what, GError **error)
{
  if ((n + 63) / 64 <= 65535 && batch <= 65535)
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "%s (cuda_cutlass): %" G_GINT64_FORMAT " columns (at most 4194240) or a batch of %" G_GINT64_FORMAT
               " (at most 65535)", what, n, batch);
  return FALSE;
}

/* A kernel entry point's status: cudaError_t, or ACCEL_CUTLASS_UNSUPPORTED. */
static inline gboolean
accel_cuda_cutlass_check (int status, const char *what, GError **error)
{
  if (status == ACCEL_CUTLASS_UNSUPPORTED)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL, "%s (cuda_cutlass): parameters not supported", what);
      return FALSE;
    }
  return accel_cuda_check ((cudaError_t) status, what, error);
}

G_END_DECLS
