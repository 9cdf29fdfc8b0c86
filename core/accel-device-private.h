/* accel-device-private.h: what the files of the device actor share
 * (accel-device.c: the actor, its context and restarts; accel-device-submit.c:
 * work and its completion), and the private ways into a device of the rest
 * of libaccel and of `accel-device-host`. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-work-private.h"
#include "accel-module-private.h"

G_BEGIN_DECLS

/* accel-device-stats.c */
typedef struct {
  guint64 ops;
  guint64 transfers;
  guint64 errors;
  guint64 bytes_written;
  guint64 bytes_read;
  guint64 busy_us;
  gint64 busy_since;
} AccelDeviceStats;

void _accel_device_stats_busy (AccelDeviceStats *stats);
void _accel_device_stats_done (AccelDeviceStats *stats,
                               AccelWorkKind kind,
                               gsize bytes,
                               gboolean failed,
                               gboolean idle);
void _accel_device_stats_refused (AccelDeviceStats *stats);
GVariant *_accel_device_stats_to_variant (AccelDeviceStats *stats, gboolean busy_now);

/* accel-device-resources.c */
typedef struct {
  GMutex lock;
  GPtrArray *entries;           /* of heap entries: a GWeakRef must not move */
} AccelContextResources;

void _accel_context_resources_init (AccelContextResources *self);
void _accel_context_resources_clear (AccelContextResources *self);
void _accel_context_resources_add (AccelContextResources *self, GObject *resource, AccelContextOpsFunc make_ops);
void _accel_context_resources_remove (AccelContextResources *self, GObject *resource);
GPtrArray *_accel_context_resources_ops (AccelContextResources *self);

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
  gint observing;            /* atomic: the journal's reads not yet done (synchronize waits for them) */
  guint64 next_handle;       /* atomic */
  AccelDeviceStats stats;
  AccelContextResources resources;

  AccelDeviceHandOver hand_over;
  gboolean runs_elsewhere;   /* ops are matched with kernels where they run */
  guint64 serial;            /* unique in the process: what an op's kept check names */

  AccelJournal *journal;     /* atomic pointer; records the work run (accel-journal.c) */
} AccelDevicePrivate;

AccelDevicePrivate *_accel_device_get_private (AccelDevice *self);

/* accel-device.c */
void _accel_device_run_on_thread_sync (AccelDevice *self, AccelDispatchFunc func, gpointer data);
GError *_accel_device_failure_error (AccelDevice *self);
gboolean _accel_device_ensure_open (AccelDevice *self, GError **error);
void _accel_device_open_on_device (AccelDevice *self, GError **error);
void _accel_device_maybe_restart (AccelDevice *self);
void _accel_device_request_restart (AccelDevice *self, guint generation, const GError *reason);

/* accel-device-submit.c: what lived in the old context is made again in a
 * rebuilt one, before anything queued is served. On the device thread. */
void _accel_device_restore_resources (AccelDevice *self);

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

/* For the journal (accel-journal-record.c), on the device thread. @done
 * sees how a work ended (@error is not its to keep), before the work is
 * delivered. A device with a journal serves all its work on its thread
 * (no hand-over), so that the journal sees it in order. */
typedef void (*AccelWorkDoneFunc) (AccelWork *work, const GError *error, gpointer data);
void _accel_device_execute_observed (AccelDevice *self,
                                     AccelWork *work,
                                     AccelWorkDoneFunc done,
                                     gpointer data);
void _accel_device_execute_read (AccelDevice *self,
                                 AccelBuffer *buffer,
                                 gpointer host,
                                 gsize size,
                                 AccelWorkDoneFunc done,
                                 gpointer data);

/* accel-cross-device-copy.c: an op with a buffer of another device. */
void _accel_cross_device_copy_submit (AccelDevice *self, AccelOp *op, GTask *task);

G_END_DECLS
