/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

#define ACCEL_TYPE_CPU_DEVICE (accel_cpu_device_get_type ())
G_DECLARE_FINAL_TYPE (AccelCpuDevice, accel_cpu_device, ACCEL, CPU_DEVICE, AccelDevice)

G_END_DECLS
