/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-types.h"
#include "accel-device.h"

G_BEGIN_DECLS

/**
 * ACCEL_REMOTE_DEVICE_HOST_MEMORY_MESSAGE:
 *
 * The actor message (first member of a `(stt)`: this name, the address and
 * the size in bytes) that `accel-device-host` asks (accel_actor_ask()) the
 * device it hosts once, before any work, to announce the shared memory
 * through which uploads and downloads travel. The memory is page-aligned,
 * stays mapped for the life of the host process, and is never moved.
 *
 * A device whose transfers gain from page-locked host memory handles the
 * message in its `receive` vfunc (on its own thread): the CUDA device calls
 * `cudaHostRegister()` on the range, so that every WRITE and READ of a
 * hosted buffer is a direct DMA from or to the shared memory. Any other
 * device may ignore it: a `receive` that does not know a message must
 * return %NULL without setting an error (an error would count as a failure
 * of the device).
 */
#define ACCEL_REMOTE_DEVICE_HOST_MEMORY_MESSAGE "register-host-memory"

#define ACCEL_TYPE_REMOTE_DEVICE (accel_remote_device_get_type ())
ACCEL_API
G_DECLARE_DERIVABLE_TYPE (AccelRemoteDevice, accel_remote_device, ACCEL, REMOTE_DEVICE, AccelDevice)

/**
 * AccelRemoteDeviceClass:
 * @parent_class: the parent class
 * @host_started: (nullable): called on the device thread after each new
 *   host process has answered, with its description of the hosted device
 *   (the same as accel_remote_device_get_info()); a subclass refreshes its
 *   own properties here. It runs as a message of the device's mailbox
 *   after the context is open, so it may use the device; work already
 *   queued may run before it.
 *
 * The class of devices served by an `accel-device-host` child process. A
 * backend subclasses it to add the properties of its devices.
 */
struct _AccelRemoteDeviceClass {
  AccelDeviceClass parent_class;

  void (*host_started) (AccelRemoteDevice *self, GVariant *info);

  /*< private >*/
  gpointer padding[8];
};

ACCEL_API
AccelDevice *accel_remote_device_new (AccelBackend *backend,
                                      const char *name,
                                      const char *hosted_device,
                                      const char * const *env,
                                      GError **error);
ACCEL_API
const char *accel_remote_device_get_hosted_device (AccelRemoteDevice *self);
ACCEL_API
GVariant *accel_remote_device_get_info (AccelRemoteDevice *self);
ACCEL_API
GPid accel_remote_device_get_host_pid (AccelRemoteDevice *self);
ACCEL_API
guint accel_remote_device_get_deadline_ms (AccelRemoteDevice *self);
ACCEL_API
void accel_remote_device_set_deadline_ms (AccelRemoteDevice *self, guint deadline_ms);
ACCEL_API
const char *accel_remote_device_get_host_path (void);
ACCEL_API
gpointer accel_remote_device_alloc_host_memory (AccelRemoteDevice *self, gsize size, GError **error);
ACCEL_API
void accel_remote_device_free_host_memory (AccelRemoteDevice *self, gpointer memory);

G_END_DECLS
