/* accel-cuda-remote-device.c: CUDA devices behind an `accel-device-host`
 * (isolation=process, the default).
 *
 * The core's AccelRemoteDevice validates and serialises ops and restarts the
 * host after a sticky fault or its death. The host runs this same backend
 * with ACCEL_CUDA_ISOLATION=none, so the device it serves is an
 * AccelCudaDevice with the lanes and completion strategy asked for here.
 * This subclass carries the same CUDA properties as AccelCudaDevice: read
 * from the CUDA runtime of this process when the device is enumerated, and
 * refreshed from what each new host reports.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-private.h"

/**
 * AccelCudaRemoteDevice:
 *
 * A CUDA GPU whose context lives in an `accel-device-host` process. It has
 * the properties of #AccelCudaDevice (`ordinal`, `device-name`,
 * `compute-capability`, `sm-count`, `isolation`, `completion`), so a
 * kernel's `supports` function can read either with g_object_get() or
 * accel_cuda_get_compute_capability().
 */
struct _AccelCudaRemoteDevice {
  AccelRemoteDevice parent_instance;

  int ordinal;
  char *device_name;
  char *compute_capability;
  int cc_major, cc_minor;
  int sm_count;
  AccelCudaCompletion completion;
  guint64 memory_total;      /* as this process's CUDA runtime saw it */
};

G_DEFINE_FINAL_TYPE (AccelCudaRemoteDevice, accel_cuda_remote_device, ACCEL_TYPE_REMOTE_DEVICE)

enum {
  PROP_0,
  PROP_ORDINAL,
  PROP_DEVICE_NAME,
  PROP_COMPUTE_CAPABILITY,
  PROP_COMPUTE_CAPABILITY_MAJOR,
  PROP_COMPUTE_CAPABILITY_MINOR,
  PROP_SM_COUNT,
  PROP_ISOLATION,
  PROP_COMPLETION,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
update_capability (AccelCudaRemoteDevice *self)
{
  g_free (self->compute_capability);
  self->compute_capability = g_strdup_printf ("%d.%d", self->cc_major, self->cc_minor);
}

/* On the device thread, after each new host has answered. */
static void
accel_cuda_remote_device_host_started (AccelRemoteDevice *remote, GVariant *info)
{
  AccelCudaRemoteDevice *self = ACCEL_CUDA_REMOTE_DEVICE (remote);
  const char *name = NULL;
  int major = self->cc_major, minor = self->cc_minor, sm = self->sm_count;

  if (info == NULL)
    return;
  if (g_variant_lookup (info, "device-name", "&s", &name) && g_strcmp0 (name, self->device_name) != 0)
    {
      g_free (self->device_name);
      self->device_name = g_strdup (name);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DEVICE_NAME]);
    }
  g_variant_lookup (info, "compute-capability-major", "i", &major);
  g_variant_lookup (info, "compute-capability-minor", "i", &minor);
  g_variant_lookup (info, "sm-count", "i", &sm);
  if (major != self->cc_major || minor != self->cc_minor)
    {
      self->cc_major = major;
      self->cc_minor = minor;
      update_capability (self);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMPUTE_CAPABILITY]);
    }
  self->sm_count = sm;
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
  update_capability (ACCEL_CUDA_REMOTE_DEVICE (object));
  G_OBJECT_CLASS (accel_cuda_remote_device_parent_class)->constructed (object);
}

static void
accel_cuda_remote_device_finalize (GObject *object)
{
  AccelCudaRemoteDevice *self = ACCEL_CUDA_REMOTE_DEVICE (object);

  g_free (self->device_name);
  g_free (self->compute_capability);
  G_OBJECT_CLASS (accel_cuda_remote_device_parent_class)->finalize (object);
}

static void
accel_cuda_remote_device_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelCudaRemoteDevice *self = ACCEL_CUDA_REMOTE_DEVICE (object);

  switch (prop_id)
    {
    case PROP_ORDINAL: self->ordinal = g_value_get_int (value); break;
    case PROP_DEVICE_NAME: g_free (self->device_name); self->device_name = g_value_dup_string (value); break;
    case PROP_COMPUTE_CAPABILITY_MAJOR: self->cc_major = g_value_get_int (value); break;
    case PROP_COMPUTE_CAPABILITY_MINOR: self->cc_minor = g_value_get_int (value); break;
    case PROP_SM_COUNT: self->sm_count = g_value_get_int (value); break;
    case PROP_COMPLETION: self->completion = g_value_get_enum (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_cuda_remote_device_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelCudaRemoteDevice *self = ACCEL_CUDA_REMOTE_DEVICE (object);

  switch (prop_id)
    {
    case PROP_ORDINAL: g_value_set_int (value, self->ordinal); break;
    case PROP_DEVICE_NAME: g_value_set_string (value, self->device_name); break;
    case PROP_COMPUTE_CAPABILITY: g_value_set_string (value, self->compute_capability); break;
    case PROP_COMPUTE_CAPABILITY_MAJOR: g_value_set_int (value, self->cc_major); break;
    case PROP_COMPUTE_CAPABILITY_MINOR: g_value_set_int (value, self->cc_minor); break;
    case PROP_SM_COUNT: g_value_set_int (value, self->sm_count); break;
    case PROP_ISOLATION: g_value_set_enum (value, ACCEL_CUDA_ISOLATION_PROCESS); break;
    case PROP_COMPLETION: g_value_set_enum (value, self->completion); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_cuda_remote_device_class_init (AccelCudaRemoteDeviceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;
  const GParamFlags co = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->constructed = accel_cuda_remote_device_constructed;
  object_class->finalize = accel_cuda_remote_device_finalize;
  object_class->set_property = accel_cuda_remote_device_set_property;
  object_class->get_property = accel_cuda_remote_device_get_property;
  ACCEL_REMOTE_DEVICE_CLASS (klass)->host_started = accel_cuda_remote_device_host_started;
  ACCEL_DEVICE_CLASS (klass)->query_memory = accel_cuda_remote_device_query_memory;

  /**
   * AccelCudaRemoteDevice:ordinal:
   *
   * The CUDA device ordinal (in this process and in the host).
   */
  properties[PROP_ORDINAL] = g_param_spec_int ("ordinal", NULL, "CUDA device ordinal", 0, G_MAXINT, 0, co);
  /**
   * AccelCudaRemoteDevice:device-name:
   *
   * The GPU's name.
   */
  properties[PROP_DEVICE_NAME] =
    g_param_spec_string ("device-name", NULL, "GPU name", NULL, co | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AccelCudaRemoteDevice:compute-capability:
   *
   * The compute capability as `major.minor`.
   */
  properties[PROP_COMPUTE_CAPABILITY] =
    g_param_spec_string ("compute-capability", NULL, "Compute capability", NULL, ro | G_PARAM_EXPLICIT_NOTIFY);
  /**
   * AccelCudaRemoteDevice:compute-capability-major:
   *
   * The major compute capability.
   */
  properties[PROP_COMPUTE_CAPABILITY_MAJOR] =
    g_param_spec_int ("compute-capability-major", NULL, "Major compute capability", 0, G_MAXINT, 0, co);
  /**
   * AccelCudaRemoteDevice:compute-capability-minor:
   *
   * The minor compute capability.
   */
  properties[PROP_COMPUTE_CAPABILITY_MINOR] =
    g_param_spec_int ("compute-capability-minor", NULL, "Minor compute capability", 0, G_MAXINT, 0, co);
  /**
   * AccelCudaRemoteDevice:sm-count:
   *
   * The number of streaming multiprocessors.
   */
  properties[PROP_SM_COUNT] = g_param_spec_int ("sm-count", NULL, "Multiprocessors", 0, G_MAXINT, 0, co);
  /**
   * AccelCudaRemoteDevice:isolation:
   *
   * Always %ACCEL_CUDA_ISOLATION_PROCESS.
   */
  properties[PROP_ISOLATION] =
    g_param_spec_enum ("isolation", NULL, "Where the context lives", ACCEL_TYPE_CUDA_ISOLATION,
                       ACCEL_CUDA_ISOLATION_PROCESS, ro);
  /**
   * AccelCudaRemoteDevice:completion:
   *
   * The completion strategy of the device in the host.
   */
  properties[PROP_COMPLETION] =
    g_param_spec_enum ("completion", NULL, "Completion strategy", ACCEL_TYPE_CUDA_COMPLETION,
                       ACCEL_CUDA_COMPLETION_POLL, co);
  g_object_class_install_properties (object_class, N_PROPS, properties);
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
                                               "completion", completion,
                                               NULL);
  self->memory_total = prop->totalGlobalMem;
  return ACCEL_DEVICE (self);
}
