/* accel-cuda-remote-device.c: CUDA devices behind an `accel-device-host`
 * (isolation=process, the default).
 *
 * The core's AccelRemoteDevice validates and serialises ops and restarts the
 * host after a sticky fault or its death. The host runs this same backend
 * with ACCEL_CUDA_ISOLATION=none, so the device it serves is an
 * AccelCudaDevice with the lanes and completion strategy asked for here.
 * This subclass has the same CUDA properties as AccelCudaDevice (the
 * AccelCudaGpu interface): read from the CUDA runtime of this process when
 * the device is enumerated, refreshed from what each new host reports, and
 * NVML's readings taken here.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-private.h"

/**
 * AccelCudaRemoteDevice:
 *
 * A CUDA GPU whose context lives in an `accel-device-host` process. It
 * implements #AccelCudaGpu as #AccelCudaDevice does (`ordinal`,
 * `device-name`, `compute-capability`, `sm-count`, `isolation`,
 * `completion`, the NVML readings), so a kernel's `supports` function can
 * read either with g_object_get() or accel_cuda_get_compute_capability().
 */
struct _AccelCudaRemoteDevice {
  AccelRemoteDevice parent_instance;

  AccelCudaGpuInfo gpu;
  guint64 memory_total;      /* as this process's CUDA runtime saw it */
};

ACCEL_CUDA_GPU_GLUE (accel_cuda_remote_device, ACCEL_CUDA_REMOTE_DEVICE)

G_DEFINE_FINAL_TYPE_WITH_CODE (AccelCudaRemoteDevice, accel_cuda_remote_device, ACCEL_TYPE_REMOTE_DEVICE,
                               G_IMPLEMENT_INTERFACE (ACCEL_CUDA_TYPE_GPU, accel_cuda_remote_device_gpu_init))

/* On the device thread, after each new host has answered. */
static void
accel_cuda_remote_device_host_started (AccelRemoteDevice *remote, GVariant *info)
{
  AccelCudaRemoteDevice *self = ACCEL_CUDA_REMOTE_DEVICE (remote);
  const char *name = NULL;
  int major = self->gpu.cc_major, minor = self->gpu.cc_minor, sm = self->gpu.sm_count;

  if (info == NULL)
    return;
  if (g_variant_lookup (info, "device-name", "&s", &name) && g_strcmp0 (name, self->gpu.device_name) != 0)
    {
      g_free (self->gpu.device_name);
      self->gpu.device_name = g_strdup (name);
      g_object_notify (G_OBJECT (self), "device-name");
    }
  g_variant_lookup (info, "compute-capability-major", "i", &major);
  g_variant_lookup (info, "compute-capability-minor", "i", &minor);
  g_variant_lookup (info, "sm-count", "i", &sm);
  if (major != self->gpu.cc_major || minor != self->gpu.cc_minor)
    {
      self->gpu.cc_major = major;
      self->gpu.cc_minor = minor;
      accel_cuda_gpu_info_constructed (&self->gpu);
      g_object_notify (G_OBJECT (self), "compute-capability");
    }
  self->gpu.sm_count = sm;
}

/* Before the first host has started the core knows no memory figures;
 * the total is known from enumeration, so report that much. */
static void
accel_cuda_remote_device_query_memory (AccelDevice *device, guint64 *total, guint64 *free_bytes)
{
  AccelCudaRemoteDevice *self = ACCEL_CUDA_REMOTE_DEVICE (device);

  ACCEL_DEVICE_CLASS (accel_cuda_remote_device_parent_class)->query_memory (device, total, free_bytes);
  if (*total == 0)
    *total = self->memory_total;
}

static void
accel_cuda_remote_device_constructed (GObject *object)
{
  accel_cuda_gpu_info_constructed (&ACCEL_CUDA_REMOTE_DEVICE (object)->gpu);
  G_OBJECT_CLASS (accel_cuda_remote_device_parent_class)->constructed (object);
}

static void
accel_cuda_remote_device_finalize (GObject *object)
{
  accel_cuda_gpu_info_clear (&ACCEL_CUDA_REMOTE_DEVICE (object)->gpu);
  G_OBJECT_CLASS (accel_cuda_remote_device_parent_class)->finalize (object);
}

static void
accel_cuda_remote_device_class_init (AccelCudaRemoteDeviceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = accel_cuda_remote_device_constructed;
  object_class->finalize = accel_cuda_remote_device_finalize;
  object_class->set_property = accel_cuda_remote_device_set_property;
  object_class->get_property = accel_cuda_remote_device_get_property;
  ACCEL_REMOTE_DEVICE_CLASS (klass)->host_started = accel_cuda_remote_device_host_started;
  ACCEL_DEVICE_CLASS (klass)->query_memory = accel_cuda_remote_device_query_memory;

  accel_cuda_gpu_override_properties (object_class);
}

static void
accel_cuda_remote_device_init (AccelCudaRemoteDevice *self)
{
}

AccelDevice *
accel_cuda_remote_device_new (AccelBackend *backend,
                              const char *name,
                              int ordinal,
                              const struct cudaDeviceProp *prop,
                              guint lanes,
                              AccelCudaCompletion completion,
                              GError **error)
{
  const char *path = accel_remote_device_get_host_path ();
  if (!g_file_test (path, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "the device host program “%s” is not there (set ACCEL_DEVICE_HOST)", path);
      return NULL;
    }

  g_autoptr(GEnumClass) klass = g_type_class_ref (ACCEL_TYPE_CUDA_COMPLETION);
  GEnumValue *value = g_enum_get_value (klass, completion);
  g_autofree char *lanes_env = g_strdup_printf ("ACCEL_CUDA_LANES=%u", lanes);
  g_autofree char *completion_env = g_strdup_printf ("ACCEL_CUDA_COMPLETION=%s",
                                                     value ? value->value_nick : "poll");
  const char *env[] = { "ACCEL_CUDA_ISOLATION=none", lanes_env, completion_env, NULL };
  g_autofree char *bus_id = accel_cuda_pci_bus_id (prop);

  AccelCudaRemoteDevice *self = g_object_new (ACCEL_CUDA_TYPE_REMOTE_DEVICE,
                                               "name", name,
                                               "backend", backend,
                                               "hosted-device", name,
                                               "host-env", env,
                                               "lanes", lanes,
                                               "ordinal", ordinal,
                                               "device-name", prop->name,
                                               "compute-capability-major", prop->major,
                                               "compute-capability-minor", prop->minor,
                                               "sm-count", prop->multiProcessorCount,
                                               "isolation", ACCEL_CUDA_ISOLATION_PROCESS,
                                               "completion", completion,
                                               "pci-bus-id", bus_id,
                                               NULL);
  self->memory_total = prop->totalGlobalMem;
  return ACCEL_DEVICE (self);
}
