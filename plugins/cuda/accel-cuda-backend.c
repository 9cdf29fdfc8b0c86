/* accel-cuda-backend.c: the backend `cuda`, one device `cuda:N` per GPU the
 * CUDA runtime of this process sees.
 *
 * With no driver or no GPU, enumeration returns no device and records the
 * runtime's reason, which `accel-inspect cuda` shows. Nothing here runs at
 * plugin load: the first CUDA call is in enumerate.
 *
 * Environment (read when the devices are enumerated):
 * - `ACCEL_CUDA_ISOLATION`: `process` (default; each device is served by an
 *   `accel-device-host` child) or `none` (the context lives in this process)
 * - `ACCEL_CUDA_COMPLETION`: `poll` (default), `callback` or `sync`
 * - `ACCEL_CUDA_LANES`: lanes (streams) per device, 1 to 64 (default 4)
 *
 * Read by the device when its context opens: `ACCEL_CUDA_POLL_SPIN_US`
 * (how long the completion thread spins before it backs off, default 100),
 * `ACCEL_CUDA_POLL_FLAGS=0` (an event per op instead of the lane flags the
 * GPU writes), `ACCEL_CUDA_WAITER_POLL=0` (a blocking caller waits for the
 * completion thread instead of watching its lane flag itself),
 * `ACCEL_CUDA_MEMPOOL=0` (buffers from cudaMalloc instead of the
 * stream-ordered pool, for comparison). `ACCEL_CUDA_RNG=curand` makes the
 * `cuda` plugin's rng-fill decline in favour of the `curand` plugin's.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-private.h"

#define DEFAULT_LANES 4

/**
 * AccelCudaBackend:
 *
 * The CUDA backend. Its priority (100) puts the first GPU ahead of `cpu:0`
 * as the default device.
 */
struct _AccelCudaBackend {
  AccelBackend parent_instance;
};

G_DEFINE_FINAL_TYPE (AccelCudaBackend, accel_cuda_backend, ACCEL_TYPE_BACKEND)

static int
enum_from_env (const char *variable, GType enum_type, int fallback)
{
  const char *value = g_getenv (variable);
  if (value == NULL || *value == '\0')
    return fallback;

  g_autoptr(GEnumClass) klass = g_type_class_ref (enum_type);
  GEnumValue *ev = g_enum_get_value_by_nick (klass, value);
  if (ev == NULL)
    {
      g_warning ("cuda: ignoring %s=“%s”; expected one of the values of %s", variable, value,
                 g_type_name (enum_type));
      return fallback;
    }
  return ev->value;
}

AccelCudaIsolation
accel_cuda_isolation_from_env (void)
{
  return enum_from_env ("ACCEL_CUDA_ISOLATION", ACCEL_TYPE_CUDA_ISOLATION, ACCEL_CUDA_ISOLATION_PROCESS);
}

AccelCudaCompletion
accel_cuda_completion_from_env (void)
{
  return enum_from_env ("ACCEL_CUDA_COMPLETION", ACCEL_TYPE_CUDA_COMPLETION, ACCEL_CUDA_COMPLETION_POLL);
}

static guint
lanes_from_env (void)
{
  const char *value = g_getenv ("ACCEL_CUDA_LANES");
  if (value == NULL || *value == '\0')
    return DEFAULT_LANES;
  guint64 n = 0;
  if (!g_ascii_string_to_unsigned (value, 10, 1, ACCEL_CUDA_MAX_LANES, &n, NULL))
    {
      g_warning ("cuda: ignoring ACCEL_CUDA_LANES=“%s”; expected 1 to %d", value, ACCEL_CUDA_MAX_LANES);
      return DEFAULT_LANES;
    }
  return (guint) n;
}

static GPtrArray *
accel_cuda_backend_enumerate (AccelBackend *backend, GError **error)
{
  GPtrArray *devices = g_ptr_array_new_with_free_func (g_object_unref);
  int count = 0;
  cudaError_t status = cudaGetDeviceCount (&count);

  if (status != cudaSuccess)
    {
      g_autofree char *reason = g_strdup_printf ("cudaGetDeviceCount failed: %s (%s)",
                                                 cudaGetErrorString (status), cudaGetErrorName (status));
      (void) cudaGetLastError ();
      accel_backend_set_unavailable_reason (backend, reason);
      return devices;
    }
  if (count == 0)
    {
      accel_backend_set_unavailable_reason (backend, "the CUDA runtime sees no GPU (cudaGetDeviceCount is 0)");
      return devices;
    }

  AccelCudaIsolation isolation = accel_cuda_isolation_from_env ();
  AccelCudaCompletion completion = accel_cuda_completion_from_env ();
  guint lanes = lanes_from_env ();

  for (int i = 0; i < count; i++)
    {
      struct cudaDeviceProp prop;
      g_autofree char *name = g_strdup_printf ("cuda:%d", i);

      if (cudaGetDeviceProperties (&prop, i) != cudaSuccess)
        {
          g_warning ("cuda: cannot read the properties of %s: %s", name,
                     cudaGetErrorString (cudaGetLastError ()));
          continue;
        }

      AccelDevice *device = NULL;
      g_autofree char *bus_id = accel_cuda_pci_bus_id (&prop);
      if (isolation == ACCEL_CUDA_ISOLATION_PROCESS)
        {
          g_autoptr(GError) local = NULL;
          device = accel_cuda_remote_device_new (backend, name, i, &prop, lanes, completion, &local);
          if (device == NULL)
            {
              g_message ("cuda: cannot set up the host process of %s (%s); it runs in this process instead",
                         name, local->message);
            }
        }
      if (device == NULL)
        device = g_object_new (ACCEL_CUDA_TYPE_DEVICE,
                               "name", name,
                               "backend", backend,
                               "lanes", lanes,
                               "ordinal", i,
                               "device-name", prop.name,
                               "compute-capability-major", prop.major,
                               "compute-capability-minor", prop.minor,
                               "sm-count", prop.multiProcessorCount,
                               "isolation", ACCEL_CUDA_ISOLATION_NONE,
                               "completion", completion,
                               "pci-bus-id", bus_id,
                               NULL);
      g_ptr_array_add (devices, device);
    }
  return devices;
}

static void
accel_cuda_backend_class_init (AccelCudaBackendClass *klass)
{
  AccelBackendClass *backend_class = ACCEL_BACKEND_CLASS (klass);

  backend_class->priority = 100;
  backend_class->enumerate = accel_cuda_backend_enumerate;
  /* The nvrtc plugin registers it; without that plugin, modules of source
   * fail with the registry's “unknown actor type”. */
  backend_class->module_compiler = "AccelNvrtcCompiler";
  backend_class->can_copy = accel_cuda_backend_can_copy_;
  backend_class->copy_async = accel_cuda_backend_copy_async_;
  backend_class->copy_finish = accel_cuda_backend_copy_finish_;
}

static void
accel_cuda_backend_init (AccelCudaBackend *self)
{
}

/**
 * accel_cuda_is_cuda_device:
 * @device: a device
 *
 * Whether @device is a CUDA GPU, driven from this process or served by an
 * `accel-device-host`. Useful in a kernel's `supports` function, which may
 * be asked about either.
 *
 * Returns: %TRUE for devices of the `cuda` backend
 */
gboolean
accel_cuda_is_cuda_device (AccelDevice *device)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (device), FALSE);
  return g_strcmp0 (accel_device_get_backend_name (device), ACCEL_CUDA_BACKEND_NAME) == 0;
}

/**
 * accel_cuda_get_compute_capability:
 * @device: a device of the `cuda` backend (in-process or remote)
 * @major: (out) (optional): the major compute capability
 * @minor: (out) (optional): the minor compute capability
 *
 * Returns: %FALSE if @device is not a CUDA device
 */
gboolean
accel_cuda_get_compute_capability (AccelDevice *device, int *major, int *minor)
{
  g_return_val_if_fail (ACCEL_IS_DEVICE (device), FALSE);
  int ma = 0, mi = 0;

  if (ACCEL_CUDA_IS_DEVICE (device))
    {
      ma = accel_cuda_device_get_compute_capability_major (ACCEL_CUDA_DEVICE (device));
      mi = accel_cuda_device_get_compute_capability_minor (ACCEL_CUDA_DEVICE (device));
    }
  else if (accel_cuda_is_cuda_device (device)
           && g_object_class_find_property (G_OBJECT_GET_CLASS (device), "compute-capability-major"))
    g_object_get (device, "compute-capability-major", &ma, "compute-capability-minor", &mi, NULL);
  else
    return FALSE;
  if (major)
    *major = ma;
  if (minor)
    *minor = mi;
  return TRUE;
}
