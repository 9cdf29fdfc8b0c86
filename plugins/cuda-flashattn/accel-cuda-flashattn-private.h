/* accel-cuda-flashattn-private.h: what the glue files of the cuda_flashattn
 * plugin share (accel-cuda-flashattn-plugin.c defines these). Not
 * installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-cuda.h"
#include "accel-flashattn.h"

G_BEGIN_DECLS

/* The kernels of accel-cuda-flashattn-kvcache.c and
 * accel-cuda-flashattn-varlen.c (both varlen ops), for the plugin's table. */
gboolean accel_cuda_flashattn_kvcache_supports (AccelOp *op, AccelDevice *device, GError **error);
gboolean accel_cuda_flashattn_kvcache_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cuda_flashattn_varlen_supports (AccelOp *op, AccelDevice *device, GError **error);
gboolean accel_cuda_flashattn_varlen_run (AccelOp *op, gpointer context, GError **error);

gboolean accel_cuda_flashattn_head_dims_supported (const char *op_name, gint64 D, gint64 Dv, GError **error);
gboolean accel_cuda_flashattn_alibi_supported (const char *op_name, AccelBuffer *alibi_slopes, int sinks,
                                               GError **error);
gboolean accel_cuda_flashattn_report (const char *op_name, int status, GError **error);
gboolean accel_cuda_flashattn_device_supported (const char *op_name, AccelDevice *device, GError **error);
gboolean accel_cuda_flashattn_check (const char *op_name, const char *why, GError **error);
int32_t accel_cuda_flashattn_dtype (AccelDType dtype);
void accel_cuda_flashattn_fill_variants (AccelFlashAttnFwdParams *p, AccelBuffer *alibi_slopes, int sinks);

G_END_DECLS
