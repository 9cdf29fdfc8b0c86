/* accel-nvrtc-plugin.c: run-time compiled CUDA code: the `cuda` backend's
 * module compiler (NVRTC, an actor with a disk cache) and the kernels of
 * `module-load` and `launch` on the cuda backend.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-config.h"
#include "accel-nvrtc-private.h"

static gboolean
accel_nvrtc_plugin_init (AccelPlugin *plugin, GError **error)
{
  accel_plugin_register_actor_type (plugin, ACCEL_TYPE_NVRTC_COMPILER);
  accel_nvrtc_register_kernels (plugin);
  return TRUE;
}

ACCEL_PLUGIN_DEFINE (nvrtc,
                     "Run-time compiled CUDA: NVRTC with a disk cache, module loading and kernel launches",
                     accel_nvrtc_plugin_init,
                     ACCEL_VERSION,
                     "LGPL-2.1-or-later")
