/* accel-cpu-lib-kernels.h: the CPU kernels of the op types that the CUDA
 * library plugins (cuBLASLt, cuSOLVER, cuSPARSE, cuDNN, CUB) also
 * implement; these are the oracles their tests compare against.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

void accel_cpu_register_linalg (AccelPlugin *plugin);
void accel_cpu_register_sparse (AccelPlugin *plugin);
void accel_cpu_register_conv (AccelPlugin *plugin);
void accel_cpu_register_norm (AccelPlugin *plugin);
void accel_cpu_register_primitives (AccelPlugin *plugin);
void accel_cpu_register_matmul (AccelPlugin *plugin);
void accel_cpu_register_grouped_gemm (AccelPlugin *plugin);
void accel_cpu_register_quant_matmul (AccelPlugin *plugin);

G_END_DECLS
