/* accel-cuda-gpu.c: the properties every CUDA device has, in-process
 * (AccelCudaDevice) or behind a host process (AccelCudaRemoteDevice),
 * written once: the interface installs them, each class overrides them
 * (g_object_class_override_property(), as GStreamer does for the
 * properties of its interfaces) and hands its get/set to the code here
 * over the description it embeds (AccelCudaGpuInfo).
 *
 * The telemetry properties are NVML readings taken when asked, in this
 * process, by the GPU's PCI bus id: a device served by a host process is
 * read the same way, with no round trip. Where NVML is missing they are 0,
 * and #AccelCudaGpu:telemetry is empty.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-private.h"

/**
 * AccelCudaGpu:
 *
 * A CUDA GPU as an Accel device: #AccelCudaDevice (its context in this
 * process) and #AccelCudaRemoteDevice (in an `accel-device-host`) both
 * implement it, so a kernel's `supports` function or a tool reads either
 * with the same property names. Besides the GPU's description, its
 * properties give NVML's readings (temperature, power, clocks,
 * utilisation, memory, ECC errors, throttle reasons), read when asked.
 */
G_DEFINE_INTERFACE (AccelCudaGpu, accel_cuda_gpu, ACCEL_TYPE_DEVICE)

static const char *const prop_names[ACCEL_CUDA_GPU_N_PROPS] = {
  [ACCEL_CUDA_GPU_PROP_ORDINAL] = "ordinal",
  [ACCEL_CUDA_GPU_PROP_DEVICE_NAME] = "device-name",
  [ACCEL_CUDA_GPU_PROP_COMPUTE_CAPABILITY] = "compute-capability",
  [ACCEL_CUDA_GPU_PROP_COMPUTE_CAPABILITY_MAJOR] = "compute-capability-major",
  [ACCEL_CUDA_GPU_PROP_COMPUTE_CAPABILITY_MINOR] = "compute-capability-minor",
  [ACCEL_CUDA_GPU_PROP_SM_COUNT] = "sm-count",
  [ACCEL_CUDA_GPU_PROP_ISOLATION] = "isolation",
  [ACCEL_CUDA_GPU_PROP_COMPLETION] = "completion",
  [ACCEL_CUDA_GPU_PROP_PCI_BUS_ID] = "pci-bus-id",
  [ACCEL_CUDA_GPU_PROP_TEMPERATURE] = "temperature",
  [ACCEL_CUDA_GPU_PROP_POWER_USAGE] = "power-usage",
  [ACCEL_CUDA_GPU_PROP_POWER_LIMIT] = "power-limit",
  [ACCEL_CUDA_GPU_PROP_SM_CLOCK] = "sm-clock",
  [ACCEL_CUDA_GPU_PROP_MEMORY_CLOCK] = "memory-clock",
  [ACCEL_CUDA_GPU_PROP_UTILIZATION] = "utilization",
  [ACCEL_CUDA_GPU_PROP_MEMORY_UTILIZATION] = "memory-utilization",
  [ACCEL_CUDA_GPU_PROP_MEMORY_USED] = "memory-used",
  [ACCEL_CUDA_GPU_PROP_ECC_ERRORS_CORRECTED] = "ecc-errors-corrected",
  [ACCEL_CUDA_GPU_PROP_ECC_ERRORS_UNCORRECTED] = "ecc-errors-uncorrected",
  [ACCEL_CUDA_GPU_PROP_THROTTLE_REASONS] = "throttle-reasons",
  [ACCEL_CUDA_GPU_PROP_TELEMETRY] = "telemetry",
};

static void
accel_cuda_gpu_default_init (AccelCudaGpuInterface *iface)
{
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;
  const GParamFlags co = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  /**
   * AccelCudaGpu:ordinal:
   *
   * The CUDA device ordinal (in this process, and in its host process).
   */
  g_object_interface_install_property (iface, g_param_spec_int ("ordinal", NULL, "CUDA device ordinal",
                                                                0, G_MAXINT, 0, co));
  /**
   * AccelCudaGpu:device-name:
   *
   * The GPU's name (`NVIDIA H100 80GB HBM3`).
   */
  g_object_interface_install_property (iface, g_param_spec_string ("device-name", NULL, "GPU name", NULL,
                                                                   co | G_PARAM_EXPLICIT_NOTIFY));
  /**
   * AccelCudaGpu:compute-capability:
   *
   * The compute capability as `major.minor` (`9.0`).
   */
  g_object_interface_install_property (iface, g_param_spec_string ("compute-capability", NULL,
                                                                   "Compute capability", NULL,
                                                                   ro | G_PARAM_EXPLICIT_NOTIFY));
  /**
   * AccelCudaGpu:compute-capability-major:
   *
   * The major compute capability (9 on Hopper).
   */
  g_object_interface_install_property (iface, g_param_spec_int ("compute-capability-major", NULL,
                                                                "Major compute capability", 0, G_MAXINT, 0, co));
  /**
   * AccelCudaGpu:compute-capability-minor:
   *
   * The minor compute capability.
   */
  g_object_interface_install_property (iface, g_param_spec_int ("compute-capability-minor", NULL,
                                                                "Minor compute capability", 0, G_MAXINT, 0, co));
  /**
   * AccelCudaGpu:sm-count:
   *
   * The number of streaming multiprocessors.
   */
  g_object_interface_install_property (iface, g_param_spec_int ("sm-count", NULL, "Multiprocessors",
                                                                0, G_MAXINT, 0, co));
  /**
   * AccelCudaGpu:isolation:
   *
   * Where the context lives: %ACCEL_CUDA_ISOLATION_NONE for an
   * #AccelCudaDevice, %ACCEL_CUDA_ISOLATION_PROCESS for an
   * #AccelCudaRemoteDevice.
   */
  g_object_interface_install_property (iface, g_param_spec_enum ("isolation", NULL, "Where the context lives",
                                                                 ACCEL_TYPE_CUDA_ISOLATION,
                                                                 ACCEL_CUDA_ISOLATION_NONE, co));
  /**
   * AccelCudaGpu:completion:
   *
   * How finished work is noticed; see #AccelCudaCompletion.
   */
  g_object_interface_install_property (iface, g_param_spec_enum ("completion", NULL, "Completion strategy",
                                                                 ACCEL_TYPE_CUDA_COMPLETION,
                                                                 ACCEL_CUDA_COMPLETION_POLL, co));
  /**
   * AccelCudaGpu:pci-bus-id:
   *
   * The GPU's PCI bus id (`00000000:19:00.0`), by which NVML knows it.
   */
  g_object_interface_install_property (iface, g_param_spec_string ("pci-bus-id", NULL, "PCI bus id", NULL, co));
  /**
   * AccelCudaGpu:temperature:
   *
   * The GPU's temperature in °C (NVML; 0 without it).
   */
  g_object_interface_install_property (iface, g_param_spec_uint ("temperature", NULL, "Temperature in °C",
                                                                 0, G_MAXUINT, 0, ro));
  /**
   * AccelCudaGpu:power-usage:
   *
   * The board's power draw in milliwatts (NVML; 0 without it).
   */
  g_object_interface_install_property (iface, g_param_spec_uint ("power-usage", NULL, "Power draw in mW",
                                                                 0, G_MAXUINT, 0, ro));
  /**
   * AccelCudaGpu:power-limit:
   *
   * The power limit in force, in milliwatts (NVML; 0 without it).
   */
  g_object_interface_install_property (iface, g_param_spec_uint ("power-limit", NULL, "Power limit in mW",
                                                                 0, G_MAXUINT, 0, ro));
  /**
   * AccelCudaGpu:sm-clock:
   *
   * The SM clock in MHz now (NVML; 0 without it).
   */
  g_object_interface_install_property (iface, g_param_spec_uint ("sm-clock", NULL, "SM clock in MHz",
                                                                 0, G_MAXUINT, 0, ro));
  /**
   * AccelCudaGpu:memory-clock:
   *
   * The memory clock in MHz now (NVML; 0 without it).
   */
  g_object_interface_install_property (iface, g_param_spec_uint ("memory-clock", NULL, "Memory clock in MHz",
                                                                 0, G_MAXUINT, 0, ro));
  /**
   * AccelCudaGpu:utilization:
   *
   * The percentage of NVML's last sample period during which a kernel ran.
   */
  g_object_interface_install_property (iface, g_param_spec_uint ("utilization", NULL,
                                                                 "Percentage of time a kernel ran",
                                                                 0, 100, 0, ro));
  /**
   * AccelCudaGpu:memory-utilization:
   *
   * The percentage of NVML's last sample period during which memory was
   * read or written.
   */
  g_object_interface_install_property (iface, g_param_spec_uint ("memory-utilization", NULL,
                                                                 "Percentage of time memory was busy",
                                                                 0, 100, 0, ro));
  /**
   * AccelCudaGpu:memory-used:
   *
   * Device memory in use, by every process, in bytes (NVML; 0 without it).
   */
  g_object_interface_install_property (iface, g_param_spec_uint64 ("memory-used", NULL, "Memory in use in bytes",
                                                                   0, G_MAXUINT64, 0, ro));
  /**
   * AccelCudaGpu:ecc-errors-corrected:
   *
   * Single-bit ECC errors corrected since the driver loaded (NVML; 0
   * without it or without ECC).
   */
  g_object_interface_install_property (iface, g_param_spec_uint64 ("ecc-errors-corrected", NULL,
                                                                   "Corrected ECC errors", 0, G_MAXUINT64, 0, ro));
  /**
   * AccelCudaGpu:ecc-errors-uncorrected:
   *
   * Double-bit ECC errors since the driver loaded (NVML; 0 without it or
   * without ECC).
   */
  g_object_interface_install_property (iface, g_param_spec_uint64 ("ecc-errors-uncorrected", NULL,
                                                                   "Uncorrected ECC errors", 0, G_MAXUINT64, 0, ro));
  /**
   * AccelCudaGpu:throttle-reasons:
   *
   * Why the clocks are below their maximum now (NVML).
   */
  g_object_interface_install_property (iface, g_param_spec_flags ("throttle-reasons", NULL,
                                                                  "Why the clocks are slowed",
                                                                  ACCEL_TYPE_CUDA_THROTTLE_REASONS,
                                                                  ACCEL_CUDA_THROTTLE_NONE, ro));
  /**
   * AccelCudaGpu:telemetry:
   *
   * Every NVML reading at once (accel_cuda_gpu_get_telemetry()).
   */
  g_object_interface_install_property (iface, g_param_spec_variant ("telemetry", NULL, "NVML readings",
                                                                    G_VARIANT_TYPE_VARDICT, NULL, ro));
}

/* For the classes. */

void
accel_cuda_gpu_override_properties (GObjectClass *klass)
{
  for (guint i = 1; i < ACCEL_CUDA_GPU_N_PROPS; i++)
    g_object_class_override_property (klass, i, prop_names[i]);
}

void
accel_cuda_gpu_info_constructed (AccelCudaGpuInfo *info)
{
  g_free (info->compute_capability);
  info->compute_capability = g_strdup_printf ("%d.%d", info->cc_major, info->cc_minor);
}

void
accel_cuda_gpu_info_clear (AccelCudaGpuInfo *info)
{
  g_clear_pointer (&info->device_name, g_free);
  g_clear_pointer (&info->compute_capability, g_free);
  g_clear_pointer (&info->pci_bus_id, g_free);
}

/* As NVML writes it: domain:bus:device.function, in hexadecimal. */
char *
accel_cuda_pci_bus_id (const struct cudaDeviceProp *prop)
{
  return g_strdup_printf ("%08X:%02X:%02X.0", (guint) prop->pciDomainID, (guint) prop->pciBusID,
                          (guint) prop->pciDeviceID);
}

void
accel_cuda_gpu_info_set_property (AccelCudaGpuInfo *info, guint prop_id, const GValue *value)
{
  switch (prop_id)
    {
    case ACCEL_CUDA_GPU_PROP_ORDINAL: info->ordinal = g_value_get_int (value); break;
    case ACCEL_CUDA_GPU_PROP_DEVICE_NAME:
      g_free (info->device_name);
      info->device_name = g_value_dup_string (value);
      break;
    case ACCEL_CUDA_GPU_PROP_COMPUTE_CAPABILITY_MAJOR: info->cc_major = g_value_get_int (value); break;
    case ACCEL_CUDA_GPU_PROP_COMPUTE_CAPABILITY_MINOR: info->cc_minor = g_value_get_int (value); break;
    case ACCEL_CUDA_GPU_PROP_SM_COUNT: info->sm_count = g_value_get_int (value); break;
    case ACCEL_CUDA_GPU_PROP_ISOLATION: info->isolation = g_value_get_enum (value); break;
    case ACCEL_CUDA_GPU_PROP_COMPLETION: info->completion = g_value_get_enum (value); break;
    case ACCEL_CUDA_GPU_PROP_PCI_BUS_ID:
      g_free (info->pci_bus_id);
      info->pci_bus_id = g_value_dup_string (value);
      break;
    default:
      g_warn_if_reached ();
    }
}

/* The readings in accel_cuda_gpu_get_telemetry(), by key. */
static const struct {
  const char *key;
  guint have;                   /* AccelCudaNvmlHave */
  gsize offset;                 /* in AccelCudaNvmlReadings */
  gboolean wide;                /* guint64, else a 32-bit unsigned */
} readings[] = {
  { "temperature", ACCEL_CUDA_NVML_TEMPERATURE, G_STRUCT_OFFSET (AccelCudaNvmlReadings, temperature), FALSE },
  { "power-usage", ACCEL_CUDA_NVML_POWER_USAGE, G_STRUCT_OFFSET (AccelCudaNvmlReadings, power_usage), FALSE },
  { "power-limit", ACCEL_CUDA_NVML_POWER_LIMIT, G_STRUCT_OFFSET (AccelCudaNvmlReadings, power_limit), FALSE },
  { "sm-clock", ACCEL_CUDA_NVML_SM_CLOCK, G_STRUCT_OFFSET (AccelCudaNvmlReadings, sm_clock), FALSE },
  { "memory-clock", ACCEL_CUDA_NVML_MEMORY_CLOCK, G_STRUCT_OFFSET (AccelCudaNvmlReadings, memory_clock), FALSE },
  { "utilization", ACCEL_CUDA_NVML_UTILIZATION, G_STRUCT_OFFSET (AccelCudaNvmlReadings, utilization), FALSE },
  { "memory-utilization", ACCEL_CUDA_NVML_UTILIZATION,
    G_STRUCT_OFFSET (AccelCudaNvmlReadings, memory_utilization), FALSE },
  { "memory-used", ACCEL_CUDA_NVML_MEMORY, G_STRUCT_OFFSET (AccelCudaNvmlReadings, memory_used), TRUE },
  { "memory-total", ACCEL_CUDA_NVML_MEMORY, G_STRUCT_OFFSET (AccelCudaNvmlReadings, memory_total), TRUE },
  { "ecc-errors-corrected", ACCEL_CUDA_NVML_ECC, G_STRUCT_OFFSET (AccelCudaNvmlReadings, ecc_corrected), TRUE },
  { "ecc-errors-uncorrected", ACCEL_CUDA_NVML_ECC, G_STRUCT_OFFSET (AccelCudaNvmlReadings, ecc_uncorrected), TRUE },
  { "throttle-reasons", ACCEL_CUDA_NVML_THROTTLE, G_STRUCT_OFFSET (AccelCudaNvmlReadings, throttle_reasons), FALSE },
};

static GVariant *
telemetry (AccelCudaGpuInfo *info)
{
  AccelCudaNvmlReadings r;
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE_VARDICT);
  if (accel_cuda_nvml_read (info->pci_bus_id, &r, NULL))
    for (guint i = 0; i < G_N_ELEMENTS (readings); i++)
      {
        if ((r.have & readings[i].have) == 0)
          continue;
        gconstpointer field = G_STRUCT_MEMBER_P (&r, readings[i].offset);
        g_variant_builder_add (&b, "{sv}", readings[i].key,
                               readings[i].wide ? g_variant_new_uint64 (*(const guint64 *) field)
                                                : g_variant_new_uint32 (*(const guint32 *) field));
      }
  return g_variant_builder_end (&b);
}

void
accel_cuda_gpu_info_get_property (AccelCudaGpuInfo *info, guint prop_id, GValue *value)
{
  AccelCudaNvmlReadings r = { 0 };
  if (prop_id >= ACCEL_CUDA_GPU_PROP_TEMPERATURE && prop_id < ACCEL_CUDA_GPU_PROP_TELEMETRY)
    accel_cuda_nvml_read (info->pci_bus_id, &r, NULL);

  switch (prop_id)
    {
    case ACCEL_CUDA_GPU_PROP_ORDINAL: g_value_set_int (value, info->ordinal); break;
    case ACCEL_CUDA_GPU_PROP_DEVICE_NAME: g_value_set_string (value, info->device_name); break;
    case ACCEL_CUDA_GPU_PROP_COMPUTE_CAPABILITY: g_value_set_string (value, info->compute_capability); break;
    case ACCEL_CUDA_GPU_PROP_COMPUTE_CAPABILITY_MAJOR: g_value_set_int (value, info->cc_major); break;
    case ACCEL_CUDA_GPU_PROP_COMPUTE_CAPABILITY_MINOR: g_value_set_int (value, info->cc_minor); break;
    case ACCEL_CUDA_GPU_PROP_SM_COUNT: g_value_set_int (value, info->sm_count); break;
    case ACCEL_CUDA_GPU_PROP_ISOLATION: g_value_set_enum (value, info->isolation); break;
    case ACCEL_CUDA_GPU_PROP_COMPLETION: g_value_set_enum (value, info->completion); break;
    case ACCEL_CUDA_GPU_PROP_PCI_BUS_ID: g_value_set_string (value, info->pci_bus_id); break;
    case ACCEL_CUDA_GPU_PROP_TEMPERATURE: g_value_set_uint (value, r.temperature); break;
    case ACCEL_CUDA_GPU_PROP_POWER_USAGE: g_value_set_uint (value, r.power_usage); break;
    case ACCEL_CUDA_GPU_PROP_POWER_LIMIT: g_value_set_uint (value, r.power_limit); break;
    case ACCEL_CUDA_GPU_PROP_SM_CLOCK: g_value_set_uint (value, r.sm_clock); break;
    case ACCEL_CUDA_GPU_PROP_MEMORY_CLOCK: g_value_set_uint (value, r.memory_clock); break;
    case ACCEL_CUDA_GPU_PROP_UTILIZATION: g_value_set_uint (value, MIN (r.utilization, 100)); break;
    case ACCEL_CUDA_GPU_PROP_MEMORY_UTILIZATION: g_value_set_uint (value, MIN (r.memory_utilization, 100)); break;
    case ACCEL_CUDA_GPU_PROP_MEMORY_USED: g_value_set_uint64 (value, r.memory_used); break;
    case ACCEL_CUDA_GPU_PROP_ECC_ERRORS_CORRECTED: g_value_set_uint64 (value, r.ecc_corrected); break;
    case ACCEL_CUDA_GPU_PROP_ECC_ERRORS_UNCORRECTED: g_value_set_uint64 (value, r.ecc_uncorrected); break;
    case ACCEL_CUDA_GPU_PROP_THROTTLE_REASONS: g_value_set_flags (value, r.throttle_reasons); break;
    case ACCEL_CUDA_GPU_PROP_TELEMETRY: g_value_set_variant (value, telemetry (info)); break;
    default:
      g_warn_if_reached ();
    }
}

static AccelCudaGpuInfo *
info_of (AccelCudaGpu *self)
{
  return ACCEL_CUDA_GPU_GET_IFACE (self)->get_info (self);
}

/**
 * accel_cuda_gpu_get_ordinal:
 * @self: a CUDA device
 *
 * Returns: its CUDA device ordinal
 */
int
accel_cuda_gpu_get_ordinal (AccelCudaGpu *self)
{
  g_return_val_if_fail (ACCEL_CUDA_IS_GPU (self), -1);
  return info_of (self)->ordinal;
}

/**
 * accel_cuda_gpu_get_device_name:
 * @self: a CUDA device
 *
 * Returns: the GPU's name
 */
const char *
accel_cuda_gpu_get_device_name (AccelCudaGpu *self)
{
  g_return_val_if_fail (ACCEL_CUDA_IS_GPU (self), NULL);
  return info_of (self)->device_name;
}

/**
 * accel_cuda_gpu_get_pci_bus_id:
 * @self: a CUDA device
 *
 * Returns: (nullable): the GPU's PCI bus id
 */
const char *
accel_cuda_gpu_get_pci_bus_id (AccelCudaGpu *self)
{
  g_return_val_if_fail (ACCEL_CUDA_IS_GPU (self), NULL);
  return info_of (self)->pci_bus_id;
}

/**
 * accel_cuda_gpu_get_telemetry:
 * @self: a CUDA device
 *
 * NVML's readings of the GPU now, as an `a{sv}`: `temperature` (°C),
 * `power-usage` and `power-limit` (mW), `sm-clock` and `memory-clock`
 * (MHz), `utilization` and `memory-utilization` (%) as `uint32`;
 * `memory-used`, `memory-total`, `ecc-errors-corrected` and
 * `ecc-errors-uncorrected` as `uint64`; `throttle-reasons` as a `uint32`
 * of #AccelCudaThrottleReasons. A reading NVML cannot give (ECC on a GPU
 * without it) is left out; without NVML the dictionary is empty.
 *
 * Returns: (transfer full): the readings, a floating reference
 */
GVariant *
accel_cuda_gpu_get_telemetry (AccelCudaGpu *self)
{
  g_return_val_if_fail (ACCEL_CUDA_IS_GPU (self), NULL);
  return telemetry (info_of (self));
}
