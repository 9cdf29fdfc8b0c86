/* accel-cpu-backend.c: the CPU backend: `cpu:0`, and as many more CPU
 * devices as the system's cpu-devices property (or ACCEL_CPU_DEVICES)
 * asks for, so that several ranks of a communicator can run on one
 * machine without a GPU.
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
  AccelSystem *system = accel_backend_get_system (backend);
  guint n = system ? accel_system_get_cpu_devices (system) : 1;

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *name = g_strdup_printf ("cpu:%u", i);
      g_ptr_array_add (devices, g_object_new (ACCEL_TYPE_CPU_DEVICE,
                                              "name", name,
                                              "backend", backend,
                                              NULL));
    }
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
