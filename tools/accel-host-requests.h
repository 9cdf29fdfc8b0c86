/* accel-host-requests.h: how `accel-device-host` serves the requests it
 * reads from its channel. Not installed: compiled into the host program and
 * into the fuzzer of this reader (fuzz/fuzz-host-requests.c), so that the
 * fuzzer drives the same code as the host.
 *
 * Threads: _accel_host_requests_handle() on one thread at a time (the
 * host: the device's own thread, which polls the channel); answers are
 * sent from there and from the thread that completes each work, so the
 * send function must serialise them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-device-private.h"
#include "accel-channel.h"

G_BEGIN_DECLS

typedef struct _AccelHostRequests AccelHostRequests;

/* Sends an answer; takes @body (floating or full). A %NULL @body (with
 * ACCEL_CHANNEL_REPLY) is a success that carries nothing: the host puts
 * it into the request's reply slot when its id names one. */
typedef void (*AccelHostSendFunc) (AccelChannelKind kind, guint64 id, GVariant *body, gpointer user_data);

/* The device's context is gone (@error says how; @id is the request that
 * found out, or 0): nothing more can be served. The host answers and exits. */
typedef void (*AccelHostLostFunc) (guint64 id, const GError *error, gpointer user_data);

AccelHostRequests *_accel_host_requests_new (AccelDevice *device,
                                             guint8 *arena,
                                             gsize arena_size,
                                             AccelHostSendFunc send,
                                             AccelHostLostFunc lost,
                                             gpointer user_data);
/* Waits for every answer first (see _accel_host_requests_drain()). */
void _accel_host_requests_free (AccelHostRequests *self);

/* Serves one request, read with _accel_channel_parse(); never HANG, which
 * the program itself acts on. */
void _accel_host_requests_handle (AccelHostRequests *self, guint32 kind, guint64 id, GVariant *body);

/* Waits until everything handled so far has been answered. Not on the
 * device's thread. */
void _accel_host_requests_drain (AccelHostRequests *self);

G_END_DECLS
