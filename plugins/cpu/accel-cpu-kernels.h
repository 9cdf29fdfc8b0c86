/* accel-cpu-kernels.h: what the CPU backend's kernel files share.
 *
 * Each kernel runs synchronously on the device thread (or on the caller's
 * thread when run directly) and receives an AccelCpuExec, or NULL, as its
 * context.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>
#include "accel-cpu-parallel.h"

G_BEGIN_DECLS

#define ACCEL_CPU_KERNEL_RANK 100

void accel_cpu_register_elementwise_kernels (AccelPlugin *plugin);
void accel_cpu_register_blas_kernels (AccelPlugin *plugin);
void accel_cpu_register_fft_kernels (AccelPlugin *plugin);
void accel_cpu_register_reduce_kernels (AccelPlugin *plugin);
void accel_cpu_register_attention_kernels (AccelPlugin *plugin);
void accel_cpu_register_attention_backward (AccelPlugin *plugin);
void accel_cpu_register_attention_kvcache (AccelPlugin *plugin);
void accel_cpu_register_graph (AccelPlugin *plugin);
void accel_cpu_register_collectives (AccelPlugin *plugin);

/* Whole-array conversions between f16/bf16/f32/f64 storage and binary32 or
 * binary64 working copies (accel-cpu-elementwise.c), in parallel for large
 * arrays. Narrowing rounds to nearest even. */
void accel_cpu_to_f32 (const AccelCpuExec *exec, AccelDType dtype, const void *src, float *dst, gint64 n);
void accel_cpu_from_f32 (const AccelCpuExec *exec, AccelDType dtype, const float *src, void *dst, gint64 n);
float *accel_cpu_widen (const AccelCpuExec *exec, AccelBuffer *buffer, gboolean *owned, GError **error);

/* Scratch memory aligned for SIMD; free with accel_cpu_scratch_free(). */
gpointer accel_cpu_scratch_alloc (gsize size, GError **error);
void accel_cpu_scratch_free (gpointer memory);

G_END_DECLS
