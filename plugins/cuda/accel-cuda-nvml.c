/* accel-cuda-nvml.c: GPU telemetry from NVML, loaded at run time.
 *
 * libnvidia-ml comes with the driver, not the toolkit, so it is opened
 * with dlopen on first use: a machine without it (a build machine, a
 * container without the driver's libraries) still runs, and its GPUs
 * report no readings. The entry points are resolved once into one table
 * made from the X-macro list below, as the driver's are
 * (accel-cuda-driver.c). NVML's types are the few this file needs,
 * written from NVML's documented ABI. A GPU is found by its PCI bus id,
 * which the CUDA runtime and NVML agree on whatever the device ordering.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <dlfcn.h>
#include "accel-cuda-private.h"

typedef int NvmlReturn;          /* nvmlReturn_t: 0 is success */
typedef struct NvmlDevice *NvmlDevice;

typedef struct {
  unsigned int gpu;
  unsigned int memory;
} NvmlUtilization;

typedef struct {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} NvmlMemory;

#define NVML_SUCCESS 0
#define NVML_TEMPERATURE_GPU 0
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_MEMORY_ERROR_TYPE_CORRECTED 0
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC 0

#define NVML_ENTRY_POINTS(X) \
  X (nvmlInit_v2, NvmlReturn, (void)) \
  X (nvmlErrorString, const char *, (NvmlReturn result)) \
  X (nvmlDeviceGetHandleByPciBusId_v2, NvmlReturn, (const char *bus_id, NvmlDevice *device)) \
  X (nvmlDeviceGetTemperature, NvmlReturn, (NvmlDevice device, int sensor, unsigned int *temp)) \
  X (nvmlDeviceGetPowerUsage, NvmlReturn, (NvmlDevice device, unsigned int *milliwatts)) \
  X (nvmlDeviceGetEnforcedPowerLimit, NvmlReturn, (NvmlDevice device, unsigned int *milliwatts)) \
  X (nvmlDeviceGetClockInfo, NvmlReturn, (NvmlDevice device, int type, unsigned int *mhz)) \
  X (nvmlDeviceGetUtilizationRates, NvmlReturn, (NvmlDevice device, NvmlUtilization *utilization)) \
  X (nvmlDeviceGetMemoryInfo, NvmlReturn, (NvmlDevice device, NvmlMemory *memory)) \
  X (nvmlDeviceGetTotalEccErrors, NvmlReturn, (NvmlDevice device, int type, int counter, unsigned long long *count)) \
  X (nvmlDeviceGetCurrentClocksThrottleReasons, NvmlReturn, (NvmlDevice device, unsigned long long *reasons))

typedef struct {
#define NVML_FIELD(name, ret, args) ret (*name) args;
  NVML_ENTRY_POINTS (NVML_FIELD)
#undef NVML_FIELD
  gboolean ok;
  char *reason;                 /* why there are no readings */
} Nvml;

static Nvml nvml;

static const Nvml *
nvml_get (void)
{
  static gsize once = 0;

  if (g_once_init_enter (&once))
    {
      void *lib = dlopen ("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
      if (lib == NULL)
        nvml.reason = g_strdup_printf ("libnvidia-ml.so.1 cannot be loaded: %s", dlerror ());
      else
        {
          gboolean all = TRUE;
#define NVML_RESOLVE(name, ret, args) \
          nvml.name = (ret (*) args) dlsym (lib, #name); \
          if (nvml.name == NULL && all) \
            { \
              nvml.reason = g_strdup_printf ("libnvidia-ml.so.1 lacks %s", #name); \
              all = FALSE; \
            }
          NVML_ENTRY_POINTS (NVML_RESOLVE)
#undef NVML_RESOLVE
          NvmlReturn status = all ? nvml.nvmlInit_v2 () : NVML_SUCCESS;
          if (all && status != NVML_SUCCESS)
            nvml.reason = g_strdup_printf ("nvmlInit failed: %s", nvml.nvmlErrorString (status));
          nvml.ok = all && status == NVML_SUCCESS;
          /* The library stays loaded: NVML is initialised for the process. */
        }
      if (!nvml.ok)
        g_debug ("cuda: no GPU telemetry: %s", nvml.reason);
      g_once_init_leave (&once, 1);
    }
  return &nvml;
}

/* NVML handles are stable for the life of the process. */
G_LOCK_DEFINE_STATIC (handles);
static GHashTable *handles;     /* bus id -> NvmlDevice */

static NvmlDevice
device_for (const Nvml *n, const char *bus_id, char **why)
{
  G_LOCK (handles);
  if (handles == NULL)
    handles = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  NvmlDevice device = g_hash_table_lookup (handles, bus_id);
  if (device == NULL)
    {
      NvmlReturn status = n->nvmlDeviceGetHandleByPciBusId_v2 (bus_id, &device);
      if (status == NVML_SUCCESS)
        g_hash_table_insert (handles, g_strdup (bus_id), device);
      else
        {
          device = NULL;
          if (why)
            *why = g_strdup_printf ("NVML knows no GPU at PCI bus id %s: %s", bus_id, n->nvmlErrorString (status));
        }
    }
  G_UNLOCK (handles);
  return device;
}

/*
 * accel_cuda_nvml_read:
 * @bus_id: the GPU's PCI bus id (`00000000:19:00.0`)
 * @r: (out): what NVML says now; a reading it cannot give is left out of
 *   @r->have
 * @why: (out) (optional): why there is no reading at all
 *
 * Any thread. Returns: %FALSE if NVML is missing or does not know the GPU
 */
gboolean
accel_cuda_nvml_read (const char *bus_id, AccelCudaNvmlReadings *r, char **why)
{
  const Nvml *n = nvml_get ();

  memset (r, 0, sizeof *r);
  if (!n->ok)
    {
      if (why)
        *why = g_strdup (n->reason);
      return FALSE;
    }
  if (bus_id == NULL || *bus_id == '\0')
    {
      if (why)
        *why = g_strdup ("the GPU's PCI bus id is not known");
      return FALSE;
    }
  NvmlDevice device = device_for (n, bus_id, why);
  if (device == NULL)
    return FALSE;

  NvmlUtilization util;
  NvmlMemory memory;
  unsigned long long reasons = 0, corrected = 0, uncorrected = 0;
  if (n->nvmlDeviceGetTemperature (device, NVML_TEMPERATURE_GPU, &r->temperature) == NVML_SUCCESS)
    r->have |= ACCEL_CUDA_NVML_TEMPERATURE;
  if (n->nvmlDeviceGetPowerUsage (device, &r->power_usage) == NVML_SUCCESS)
    r->have |= ACCEL_CUDA_NVML_POWER_USAGE;
  if (n->nvmlDeviceGetEnforcedPowerLimit (device, &r->power_limit) == NVML_SUCCESS)
    r->have |= ACCEL_CUDA_NVML_POWER_LIMIT;
  if (n->nvmlDeviceGetClockInfo (device, NVML_CLOCK_SM, &r->sm_clock) == NVML_SUCCESS)
    r->have |= ACCEL_CUDA_NVML_SM_CLOCK;
  if (n->nvmlDeviceGetClockInfo (device, NVML_CLOCK_MEM, &r->memory_clock) == NVML_SUCCESS)
    r->have |= ACCEL_CUDA_NVML_MEMORY_CLOCK;
  if (n->nvmlDeviceGetUtilizationRates (device, &util) == NVML_SUCCESS)
    {
      r->utilization = util.gpu;
      r->memory_utilization = util.memory;
      r->have |= ACCEL_CUDA_NVML_UTILIZATION;
    }
  if (n->nvmlDeviceGetMemoryInfo (device, &memory) == NVML_SUCCESS)
    {
      r->memory_used = memory.used;
      r->memory_total = memory.total;
      r->have |= ACCEL_CUDA_NVML_MEMORY;
    }
  /* Counted since the driver loaded; a GPU without ECC has none. */
  if (n->nvmlDeviceGetTotalEccErrors (device, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC,
                                      &corrected) == NVML_SUCCESS
      && n->nvmlDeviceGetTotalEccErrors (device, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
                                         &uncorrected) == NVML_SUCCESS)
    {
      r->ecc_corrected = corrected;
      r->ecc_uncorrected = uncorrected;
      r->have |= ACCEL_CUDA_NVML_ECC;
    }
  if (n->nvmlDeviceGetCurrentClocksThrottleReasons (device, &reasons) == NVML_SUCCESS)
    {
      r->throttle_reasons = (guint) (reasons & 0x1ff);
      r->have |= ACCEL_CUDA_NVML_THROTTLE;
    }
  return TRUE;
}
