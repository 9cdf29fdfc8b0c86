/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>
#include "accel-types.h"
#include "accel-dtype.h"
#include "accel-shape.h"
#include "accel-kernel.h"
#include "actor/accel-actor.h"

G_BEGIN_DECLS

/**
 * AccelDeviceState:
 * @ACCEL_DEVICE_STATE_READY: serving work
 * @ACCEL_DEVICE_STATE_RESTARTING: its context is being rebuilt; work queues
 * @ACCEL_DEVICE_STATE_FAILED: it cannot go on (restart budget spent, or an
 *   unrecoverable fault); every request fails with %ACCEL_ERROR_DEVICE_FAILED
 *
 * The state of a device.
 */
typedef enum {
  ACCEL_DEVICE_STATE_READY,
  ACCEL_DEVICE_STATE_RESTARTING,
  ACCEL_DEVICE_STATE_FAILED,
} AccelDeviceState;

/**
 * AccelWorkKind:
 * @ACCEL_WORK_OP: run an op's kernel
 * @ACCEL_WORK_WRITE: copy host bytes into a buffer
 * @ACCEL_WORK_READ: copy a buffer into host bytes
 * @ACCEL_WORK_ZERO: zero-fill a buffer
 *
 * What a unit of work handed to a backend does.
 */
typedef enum {
  ACCEL_WORK_OP,
  ACCEL_WORK_WRITE,
  ACCEL_WORK_READ,
  ACCEL_WORK_ZERO,
} AccelWorkKind;

/**
 * AccelWork:
 *
 * One unit of work handed to a backend's `execute`. Opaque; completed
 * exactly once with accel_device_complete_work().
 */
typedef struct _AccelWork AccelWork;

/**
 * AccelWorkPoll:
 * @work: the work a blocking caller waits for
 * @data: what was given to accel_work_set_poll()
 * @arg: what was given to accel_work_set_poll()
 *
 * Called by a blocking caller (accel_device_submit()) on its own thread,
 * over and over while it spins waiting for @work: the backend may see that
 * the work is done and complete it right there, with
 * accel_device_complete_work(), sparing the caller a hand-off from the
 * thread that would otherwise complete it. The backend must make sure the
 * work is completed exactly once, whichever thread gets there first.
 *
 * Returns: %TRUE if it completed @work
 */
typedef gboolean (*AccelWorkPoll) (AccelWork *work, gpointer data, guint64 arg);

#define ACCEL_TYPE_DEVICE (accel_device_get_type ())
ACCEL_API
G_DECLARE_DERIVABLE_TYPE (AccelDevice, accel_device, ACCEL, DEVICE, AccelActor)

/**
 * AccelDeviceClass:
 * @parent_class: the parent class
 * @open_context: creates the backend context, or a new one after a fault; on the device thread
 * @close_context: drops the context and all memory of its generation; on the device thread
 * @mem_alloc: allocates @size bytes of device memory in the current context; any thread
 * @mem_free: frees memory of the current context; any thread
 * @execute: runs or enqueues @work on the device thread; completes it, now or
 *   later from any thread, with accel_device_complete_work()
 * @query_memory: reports total and free device memory
 * @get_dlpack_device: (nullable): where buffer memory is, as DLPack names
 *   it (a device type such as %ACCEL_DLPACK_DEVICE_CPU and an ordinal),
 *   for devices whose memory a pointer in this process reaches; leave it
 *   %NULL otherwise. Any thread.
 * @detach_memory: (nullable): takes @memory, of the current context, out
 *   of the context's care, because a buffer over it was lent to another
 *   library (accel_buffer_to_dlpack()): the context no longer frees it
 *   when it closes, and @free_detached_memory frees it once the last
 *   buffer over it is gone. Returns %FALSE when the memory is not the
 *   current context's (it went with an older one). Any thread; required
 *   with @get_dlpack_device.
 * @free_detached_memory: (nullable): frees memory that @detach_memory took;
 *   any thread, in any generation, also after the device shut down
 *
 * What a backend implements for its devices.
 */
struct _AccelDeviceClass {
  AccelActorClass parent_class;

  gboolean (*open_context) (AccelDevice *self, GError **error);
  void (*close_context) (AccelDevice *self);
  gpointer (*mem_alloc) (AccelDevice *self, gsize size, GError **error);
  void (*mem_free) (AccelDevice *self, gpointer memory, gsize size);
  void (*execute) (AccelDevice *self, AccelWork *work);
  void (*query_memory) (AccelDevice *self, guint64 *total, guint64 *free_bytes);
  gboolean (*get_dlpack_device) (AccelDevice *self, gint32 *device_type, gint32 *device_id);
  gboolean (*detach_memory) (AccelDevice *self, gpointer memory, gsize size);
  void (*free_detached_memory) (AccelDevice *self, gpointer memory, gsize size);

  /*< private >*/
  gpointer padding[9];
};

ACCEL_API
const char *accel_device_get_name (AccelDevice *self);
ACCEL_API
const char *accel_device_get_backend_name (AccelDevice *self);
ACCEL_API
AccelBackend *accel_device_get_backend (AccelDevice *self);
ACCEL_API
AccelSystem *accel_device_get_system (AccelDevice *self);
ACCEL_API
guint accel_device_get_generation (AccelDevice *self);
ACCEL_API
AccelDeviceState accel_device_get_state (AccelDevice *self);
ACCEL_API
guint accel_device_get_lanes (AccelDevice *self);
ACCEL_API
guint64 accel_device_get_memory_total (AccelDevice *self);
ACCEL_API
guint64 accel_device_get_memory_free (AccelDevice *self);

ACCEL_API
AccelBuffer *accel_device_alloc (AccelDevice *self,
                                 AccelDType dtype,
                                 const AccelShape *shape,
                                 GError **error);
ACCEL_API
void accel_device_submit_async (AccelDevice *self,
                                AccelOp *op,
                                GCancellable *cancellable,
                                GAsyncReadyCallback callback,
                                gpointer user_data);
ACCEL_API
gboolean accel_device_submit_finish (AccelDevice *self, GAsyncResult *result, GError **error);
ACCEL_API
gboolean accel_device_submit (AccelDevice *self,
                              AccelOp *op,
                              GCancellable *cancellable,
                              GError **error);
ACCEL_API
gboolean accel_device_synchronize (AccelDevice *self, GError **error);
ACCEL_API
const GError *accel_device_get_failure (AccelDevice *self);
ACCEL_API
GVariant *accel_device_get_stats (AccelDevice *self);

/* For backends. */
ACCEL_API
void accel_device_complete_work (AccelDevice *self, AccelWork *work, GError *error);
ACCEL_API
void accel_device_set_state_failed (AccelDevice *self, const GError *reason);
ACCEL_API
void accel_device_report_context_lost (AccelDevice *self, const GError *reason);
ACCEL_API
AccelWorkKind accel_work_get_kind (AccelWork *work);
ACCEL_API
AccelOp *accel_work_get_op (AccelWork *work);
ACCEL_API
const AccelKernel *accel_work_get_kernel (AccelWork *work);
ACCEL_API
AccelBuffer *accel_work_get_buffer (AccelWork *work);
ACCEL_API
gpointer accel_work_get_host_data (AccelWork *work, gsize *size);
ACCEL_API
int accel_work_get_lane (AccelWork *work);
ACCEL_API
gboolean accel_work_set_poll (AccelWork *work, AccelWorkPoll poll, gpointer data, guint64 arg, GDestroyNotify destroy);

G_END_DECLS
