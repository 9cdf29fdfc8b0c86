/* accel-cuda-image.h: registration of the image op kernels of the `cuda`
 * plugin (accel-cuda-image.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

void accel_cuda_register_image_kernels (AccelPlugin *plugin);

G_END_DECLS
