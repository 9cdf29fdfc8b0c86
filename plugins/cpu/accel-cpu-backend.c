/* accel-cpu-backend.c: the CPU backend, whose one device is `cpu:0`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cpu-backend.h"
#include "accel-cpu-device.h"

/**
 * AccelCpuBackend:
 *
 * The backend of the host processors: always present, the lowest priority
 * for the `default` device, and the reference every other backend is
 * checked against.
 */
struct _AccelCpuBackend {
  AccelBackend parent_instance;
};

G_DEFINE_FINAL_TYPE (AccelCpuBackend, accel_cpu_backend, ACCEL_TYPE_BACKEND)

static GPtrArray *
accel_cpu_backend_enumerate (AccelBackend *backend, GError **error)
{
  GPtrArray *devices = g_ptr_array_new_with_free_func (g_object_unref);
  g_ptr_array_add (devices, g_object_new (ACCEL_TYPE_CPU_DEVICE,
                                          "name", "cpu:0",
                                          "backend", backend,
                                          NULL));
  return devices;
}

static void
accel_cpu_backend_class_init (AccelCpuBackendClass *klass)
{
  AccelBackendClass *backend_class = ACCEL_BACKEND_CLASS (klass);

  backend_class->priority = 0;
  backend_class->enumerate = accel_cpu_backend_enumerate;
}

static void
accel_cpu_backend_init (AccelCpuBackend *self)
{
}
