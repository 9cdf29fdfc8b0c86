/* accel-work-private.h: the work items a device hands to its backend, and
 * the rendezvous of a blocking caller with the thread that completes its
 * work. Not installed.
 *
 * A work item is completed exactly once (accel_device_complete_work()),
 * and then delivered in one of three ways:
 *
 * - TASK: its GTask returns on the caller's main context, through the
 *   context's delivery queue (accel-delivery.c): many completions, one
 *   wake-up;
 * - WAIT: a blocking caller's AccelWaiter is signalled; the work then
 *   lives on the caller's stack and borrows the caller's references;
 * - CALLBACK: a function runs on the completing thread (the device host
 *   answers its application from there).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-private.h"

G_BEGIN_DECLS

typedef enum {
  ACCEL_WORK_MODE_TASK,
  ACCEL_WORK_MODE_WAIT,
  ACCEL_WORK_MODE_CALLBACK,
} AccelWorkMode;

/* Runs on the thread that completes @work; takes @error. @work is freed
 * when it returns. */
typedef void (*AccelWorkCallback) (AccelWork *work, GError *error, gpointer data);

typedef struct _AccelWaiter AccelWaiter;
typedef struct _AccelDelivery AccelDelivery;

/* Called by a waiting caller while it spins (@parking FALSE) and once more
 * just before it parks (@parking TRUE): whoever handed the work over may
 * let the caller finish it itself (the device host's answer in a reply
 * slot). Returns TRUE when it completed the work, so the wait is over. */
typedef gboolean (*AccelWaiterPoll) (AccelWaiter *waiter, gboolean parking);

/* The first cache line holds what the signaller writes and the spinning
 * waiter reads: the work beside it on the caller's stack is written by
 * other threads while the waiter spins. */
struct _AccelWaiter {
  gint state;
  GError *error;
  AccelWaiterPoll poll;      /* set before the wait, by whoever took the work */
  gpointer poll_data;
  GDestroyNotify poll_destroy;   /* of poll_data, when the wait is over */
  guint64 poll_id;
  guint poll_slot;
  gint64 spin_us;            /* with poll: how long to spin before parking (0: the default) */
  GMutex lock __attribute__ ((aligned (64)));
  GCond cond;
} __attribute__ ((aligned (64)));

struct _AccelWork {
  AccelWorkKind kind;
  AccelWorkMode mode;
  AccelDevice *device;
  AccelOp *op;
  const AccelKernel *kernel;
  AccelBuffer *buffer;
  gpointer host;
  gsize size;
  GBytes *bytes;
  gboolean owns_host;
  int lane;
  guint generation;
  gboolean counted;          /* in the device's in_flight count */
  gint completed;
  gboolean borrowed;         /* on its caller's stack, holding no references */
  GCancellable *cancellable;
  GTask *task;
  AccelDelivery *delivery;   /* where a TASK is returned */
  GError *error;             /* a TASK's result, while queued for delivery */
  AccelWaiter *waiter;
  AccelWorkCallback callback;
  gpointer callback_data;
  AccelWorkPoll poll;        /* atomic: set by the backend for a waiting caller */
  gpointer poll_data;
  guint64 poll_arg;
  GDestroyNotify poll_destroy;
  gpointer done_func;        /* the journal's AccelWorkDoneFunc: it observes this work */
  gpointer done_data;
};

AccelWork *_accel_work_new (AccelDevice *device, AccelWorkKind kind);
void _accel_work_init_borrowed (AccelWork *work, AccelDevice *device, AccelWorkKind kind);
void _accel_work_free (AccelWork *work);
void _accel_work_set_task (AccelWork *work, GTask *task);
void _accel_work_deliver (AccelWork *work, GError *error);
/* For the delivery queue, on the task's main context. */
void _accel_work_return_task (AccelWork *work);

/* A waiter's poll that asks its work's backend (accel_work_set_poll()). */
gboolean _accel_work_waiter_poll (AccelWaiter *waiter, gboolean parking);

void _accel_waiter_init (AccelWaiter *waiter);
/* Spins briefly (calling its poll), then parks; clears the waiter. */
void _accel_waiter_wait (AccelWaiter *waiter);
void _accel_waiter_signal (AccelWaiter *waiter, GError *error);

/* A call made on another thread and waited for (on the device's thread, on
 * a model's home context): _accel_sync_call_init(), then hand
 * _accel_sync_call_run (or _accel_sync_call_run_source, a #GSourceFunc)
 * with the call to that thread, then _accel_waiter_wait (&call.waiter). */
typedef struct {
  AccelDispatchFunc func;
  gpointer data;
  AccelWaiter waiter;
} AccelSyncCall;

void _accel_sync_call_init (AccelSyncCall *call, AccelDispatchFunc func, gpointer data);
void _accel_sync_call_run (gpointer call);
gboolean _accel_sync_call_run_source (gpointer call);

/* accel-delivery.c: a caller's main context, where its tasks return. */
AccelDelivery *_accel_delivery_get_for_thread (void);
AccelDelivery *_accel_delivery_ref (AccelDelivery *self);
void _accel_delivery_unref (AccelDelivery *self);
void _accel_delivery_push (AccelDelivery *self, AccelWork *work);

G_END_DECLS
