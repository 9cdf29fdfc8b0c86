/* accel-device-private.h: what the files of the device actor share
 * (accel-device.c: the actor, its context and restarts; accel-device-submit.c:
 * work and its completion), and the private ways into a device of the rest
 * of libaccel and of `accel-device-host`. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-work-private.h"

G_BEGIN_DECLS

/* Hands @work over from the submitting thread, when the device's thread
 * has nothing queued or running (an AccelRemoteDevice writes it straight
 * into its host's channel). Returns FALSE, having done nothing with @work,
 * if it cannot take it now: the work then goes through the mailbox. */
typedef gboolean (*AccelDeviceHandOver) (AccelDevice *self, AccelWork *work);

typedef struct {
  AccelBackend *backend;
  AccelDispatcher *dispatcher;
  guint lanes;

  guint generation;          /* atomic */
  gint state;                /* AccelDeviceState, atomic */
  gint open;                 /* atomic: context is open */
  GRWLock ctx_lock;          /* readers: memory calls; writer: context swaps */

  GMutex fail_lock;
  guint restart_gen;         /* generation whose poisoning awaits a restart, +1; 0 for none; atomic reads */
  GError *restart_reason;
  GError *failure;           /* set once the device is FAILED */

  gint in_flight;            /* atomic */
  guint64 next_handle;       /* atomic */

  AccelDeviceHandOver hand_over;
  gboolean runs_elsewhere;   /* ops are matched with kernels where they run */
} AccelDevicePrivate;

AccelDevicePrivate *_accel_device_get_private (AccelDevice *self);

/* accel-device.c */
void _accel_device_run_on_thread_sync (AccelDevice *self, AccelDispatchFunc func, gpointer data);
GError *_accel_device_failure_error (AccelDevice *self);
gboolean _accel_device_ensure_open (AccelDevice *self, GError **error);
void _accel_device_open_on_device (AccelDevice *self, GError **error);
void _accel_device_maybe_restart (AccelDevice *self);
void _accel_device_request_restart (AccelDevice *self, guint generation, const GError *reason);

/* accel-device-submit.c */
void _accel_device_run_work (gpointer work);
/* Queues or hands over @work (not borrowed) and returns. */
void _accel_device_start_work (AccelDevice *self, AccelWork *work);
/* Runs @work (WAIT mode is set here) and waits for it. */
gboolean _accel_device_run_work_sync (AccelDevice *self, AccelWork *work, GError **error);
gboolean _accel_device_check_usable (AccelDevice *self, GError **error);
gboolean _accel_device_check_op_buffers (AccelDevice *self, AccelOp *op, GError **error);

/* For AccelRemoteDevice: its work goes straight to its host (see
 * AccelDeviceHandOver), and its ops get no kernel here: the host chooses. */
void _accel_device_set_hand_over (AccelDevice *self, AccelDeviceHandOver hand_over);

/* For `accel-device-host` and cross-device copies: submit with a callback
 * run on the completing thread, which takes the error. Errors found before
 * the work is queued (validation, stale buffers, no kernel) call @callback
 * at once, on this thread. From the device's own thread, the work runs
 * right away rather than through the mailbox. The op is validated and its
 * kernel chosen here. */
ACCEL_API
void _accel_device_submit_with_callback (AccelDevice *self,
                                         AccelOp *op,
                                         AccelWorkCallback callback,
                                         gpointer data);
/* @host is borrowed until @callback runs. */
ACCEL_API
void _accel_device_transfer_with_callback (AccelDevice *self,
                                           AccelWorkKind kind,
                                           AccelBuffer *buffer,
                                           gpointer host,
                                           gsize size,
                                           AccelWorkCallback callback,
                                           gpointer data);

/* accel-cross-device-copy.c: an op with a buffer of another device. */
void _accel_cross_device_copy_submit (AccelDevice *self, AccelOp *op, GTask *task);

G_END_DECLS
