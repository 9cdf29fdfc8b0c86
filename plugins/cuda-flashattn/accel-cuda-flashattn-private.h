/* accel-cuda-flashattn-private.h: what the glue files of the cuda_flashattn
 * plugin share (accel-cuda-flashattn-plugin.c defines these). Not
 * installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-cuda.h"

G_BEGIN_DECLS

void accel_cuda_flashattn_register_kvcache (AccelPlugin *plugin);   /* accel-cuda-flashattn-kvcache.c */
void accel_cuda_flashattn_register_varlen (AccelPlugin *plugin);    /* accel-cuda-flashattn-varlen.c */

gboolean accel_cuda_flashattn_head_dims_supported (const char *op_name, gint64 D, gint64 Dv, GError **error);
gboolean accel_cuda_flashattn_alibi_supported (const char *op_name, AccelBuffer *alibi_slopes, int sinks,
                                               GError **error);
gboolean accel_cuda_flashattn_report (const char *op_name, int status, GError **error);

G_END_DECLS
