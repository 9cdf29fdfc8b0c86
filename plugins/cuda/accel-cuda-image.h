/* accel-cuda-image.h: the image op kernels of the `cuda` plugin
 * (accel-cuda-image.c), which accel-cuda-plugin.c registers.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

gboolean accel_cuda_resample_run (AccelOp *op, gpointer context, GError **error);   /* resize, convert-color */
gboolean accel_cuda_filter_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cuda_morphology_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cuda_warp_affine_run (AccelOp *op, gpointer context, GError **error);
gboolean accel_cuda_warp_perspective_run (AccelOp *op, gpointer context, GError **error);

G_END_DECLS
