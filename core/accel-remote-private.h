/* accel-remote-private.h: one connection from an AccelRemoteDevice to one
 * `accel-device-host` process (one generation of the device). Not installed.
 *
 * Threads: _accel_remote_connection_open(), _close() and _execute() run on
 * the device thread; _hand_over() on a submitting thread; _alloc(),
 * _free(), _query_memory() and _hang() on any thread. A reader thread
 * completes work as answers arrive; a watcher
 * thread notices the host's death, which is reported to the device (held
 * by a weak reference) even when no work was in flight, so that it starts
 * a new host at once rather than when the next work fails. Every
 * AccelWork handed to _execute() is completed exactly once: with the
 * host's answer, or with
 * %ACCEL_ERROR_CONTEXT_POISONED when the host dies, reports a lost context,
 * answers nothing within the deadline, or the connection is closed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-private.h"

G_BEGIN_DECLS

typedef struct _AccelRemoteConnection AccelRemoteConnection;

/* accel-remote-arena.c: the transfer arena (a ring of regions) and the
 * host memory handed to the application, inside the shared memory. */
typedef struct _AccelRemoteArena AccelRemoteArena;
typedef struct _AccelRemoteHostMemory AccelRemoteHostMemory;

typedef struct {
  guint64 start;             /* in the ring's unwrapped byte count */
  guint64 end;
  gsize offset;              /* in the arena */
  guint8 *data;
  gboolean done;
} AccelRemoteRegion;

AccelRemoteArena *_accel_remote_arena_new (guint8 *base, gsize size);
void _accel_remote_arena_free (AccelRemoteArena *self);
gsize _accel_remote_arena_get_size (AccelRemoteArena *self);
AccelRemoteRegion *_accel_remote_arena_alloc (AccelRemoteArena *self, gsize length, GError **error);
void _accel_remote_arena_release (AccelRemoteArena *self, AccelRemoteRegion *region);
void _accel_remote_arena_close (AccelRemoteArena *self, const GError *reason);

AccelRemoteHostMemory *_accel_remote_host_memory_new (guint8 *base, gsize size);
void _accel_remote_host_memory_free (AccelRemoteHostMemory *self);
gsize _accel_remote_host_memory_get_size (AccelRemoteHostMemory *self);
gpointer _accel_remote_host_memory_alloc (AccelRemoteHostMemory *self, gsize size);
gboolean _accel_remote_host_memory_release (AccelRemoteHostMemory *self, gpointer memory);
gboolean _accel_remote_host_memory_owns (AccelRemoteHostMemory *self, gconstpointer memory);

typedef struct {
  const char *host_path;
  const char *hosted_device;
  const char * const *env;      /* KEY=VALUE for the child, or NULL */
  gsize arena_size;
  gsize host_memory_size;       /* handed to the application, after the arena */
  guint deadline_ms;            /* 0: no deadline */
  guint start_timeout_ms;
  guint generation;             /* of the device this host serves */
} AccelRemoteConfig;

/* accel-device.c: a host of @generation died although no work reported
 * it; restarts the device unless it has moved past that generation. */
void _accel_device_report_context_lost_at (AccelDevice *self, guint generation, const GError *reason);

AccelRemoteConnection *_accel_remote_connection_open (AccelDevice *device,
                                                      const AccelRemoteConfig *config,
                                                      GError **error);
void _accel_remote_connection_close (AccelRemoteConnection *self, const GError *reason);
AccelRemoteConnection *_accel_remote_connection_ref (AccelRemoteConnection *self);
void _accel_remote_connection_unref (AccelRemoteConnection *self);

GVariant *_accel_remote_connection_get_info (AccelRemoteConnection *self);
GPid _accel_remote_connection_get_pid (AccelRemoteConnection *self);
void _accel_remote_connection_set_deadline_ms (AccelRemoteConnection *self, guint deadline_ms);

gpointer _accel_remote_connection_alloc (AccelRemoteConnection *self, gsize size, GError **error);
void _accel_remote_connection_free (AccelRemoteConnection *self, gpointer memory);
gboolean _accel_remote_connection_query_memory (AccelRemoteConnection *self,
                                                guint64 *total,
                                                guint64 *free_bytes,
                                                GError **error);
void _accel_remote_connection_execute (AccelRemoteConnection *self, AccelWork *work);
gboolean _accel_remote_connection_hand_over (AccelRemoteConnection *self, AccelWork *work);
void _accel_remote_connection_hang (AccelRemoteConnection *self);

/* Host memory inside the shared memory (any thread). It stays mapped as
 * long as the connection lives, also after the host is gone. */
gpointer _accel_remote_connection_alloc_host_memory (AccelRemoteConnection *self, gsize size, GError **error);
void _accel_remote_connection_free_host_memory (AccelRemoteConnection *self, gpointer memory);
gboolean _accel_remote_connection_owns_host_memory (AccelRemoteConnection *self, gconstpointer memory);

/* accel-remote-replies.c: the application's reading of its host's
 * message bodies (the fuzzers in fuzz/ read through these too). */
gboolean _accel_remote_read_hello (guint32 kind, GVariant *body, GVariant **info, GError **error);
gboolean _accel_remote_read_alloc (GVariant *reply, const char *device_name, guint64 *alloc, GError **error);
gboolean _accel_remote_read_memory (GVariant *reply, guint64 *total, guint64 *free_bytes, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AccelRemoteConnection, _accel_remote_connection_unref)

G_END_DECLS
