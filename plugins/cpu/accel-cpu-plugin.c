/* accel-cpu-plugin.c: the CPU backend plugin: the `cpu` backend and a
 * kernel for every op of the portable set, on OpenBLAS, FFTW3 and a thread
 * pool.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-config.h"
#include "accel-cpu-backend.h"
#include "accel-cpu-kernels.h"
#include "accel-cpu-lib-kernels.h"
#include "accel-cpu-image.h"

static gboolean
accel_cpu_plugin_init (AccelPlugin *plugin, GError **error)
{
  accel_plugin_register_backend (plugin, "cpu", ACCEL_TYPE_CPU_BACKEND);

  accel_cpu_register_elementwise_kernels (plugin);
  accel_cpu_register_blas_kernels (plugin);
  accel_cpu_register_fft_kernels (plugin);
  accel_cpu_register_reduce_kernels (plugin);
  accel_cpu_register_attention_kernels (plugin);
  accel_cpu_register_attention_backward (plugin);
  accel_cpu_register_attention_kvcache (plugin);
  accel_cpu_register_linalg (plugin);
  accel_cpu_register_sparse (plugin);
  accel_cpu_register_conv (plugin);
  accel_cpu_register_norm (plugin);
  accel_cpu_register_primitives (plugin);
  accel_cpu_register_matmul (plugin);
  accel_cpu_register_grouped_gemm (plugin);
  accel_cpu_register_quant_matmul (plugin);
  accel_cpu_register_graph (plugin);
  accel_cpu_register_collectives (plugin);
  accel_cpu_register_image_resample (plugin);
  accel_cpu_register_image_filter (plugin);
  accel_cpu_register_image_warp (plugin);
  return TRUE;
}

ACCEL_PLUGIN_DEFINE (cpu,
                     "CPU backend: OpenBLAS, FFTW3 and Philox kernels for the portable op set",
                     accel_cpu_plugin_init,
                     ACCEL_VERSION,
                     "LGPL-2.1-or-later")
