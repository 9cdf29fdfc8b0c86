/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

#define ACCEL_TYPE_CPU_BACKEND (accel_cpu_backend_get_type ())
G_DECLARE_FINAL_TYPE (AccelCpuBackend, accel_cpu_backend, ACCEL, CPU_BACKEND, AccelBackend)

G_END_DECLS
