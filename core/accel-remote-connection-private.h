/* accel-remote-connection-private.h: the insides of an
 * AccelRemoteConnection, shared by accel-remote-connection.c (its host
 * process, its threads, and the table of requests awaiting an answer) and
 * accel-remote-work.c (work written into the channel). Not installed.
 *
 * Every request that expects an answer gets an id and a pending entry in
 * the table; the entry leaves the table exactly once, under the lock:
 * taken by the reader thread when the answer comes, by a blocking caller
 * that found the answer in its reply slot, or stolen with all the others
 * when the connection dies. Whoever takes an entry completes it, so every
 * AccelWork completes exactly once.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-work-private.h"
#include "accel-remote-private.h"
#include "accel-channel.h"

G_BEGIN_DECLS

typedef enum {
  PENDING_WORK,
  PENDING_CHUNK,
  PENDING_SYNC,
} PendingType;

/* A WRITE or READ split into chunks. */
typedef struct {
  AccelWork *work;
  AccelWorkKind kind;
  guint8 *host;
  guint remaining;           /* chunks unanswered, +1 while still sending; under lock */
  guint unsent;              /* chunks given to copy threads, not yet sent; under lock */
  GError *error;             /* the first failure */
} Transfer;

typedef struct {
  gboolean done;
  GVariant *reply;
  GError *error;
} SyncCall;

typedef struct {
  PendingType type;
  int slot;                  /* reply slot, or -1 */
  AccelWork *work;
  Transfer *xfer;
  AccelRemoteRegion *region; /* NULL: the transfer is in place in host memory */
  gsize host_offset;
  gsize length;
  SyncCall *sync;
  gint64 trace_ns;           /* ACCEL_REMOTE_TRACE: when it was registered */
} Pending;

struct _AccelRemoteConnection {
  gint ref_count;
  guint64 serial;               /* unique in the process: kept op bodies name it */
  AccelDevice *device;          /* unowned: used only to complete work, which holds it */
  GWeakRef device_ref;          /* to tell the device of a death while idle */
  guint generation;             /* the device's, while this host serves it */
  char *device_name;            /* for messages: the device may be gone before the threads */
  char *hosted_device;
  AccelChannel *channel;
  guint8 *shared;               /* the arena, then the host memory */
  AccelRemoteArena *arena;
  AccelRemoteHostMemory *host_memory;
  gsize chunk_size;
  GSubprocess *process;
  GPid pid;
  int sock;
  int stop_pipe[2];
  GVariant *info;
  guint deadline_ms;            /* atomic */
  gint host_gone;               /* atomic: the host's end of the socket closed */
  gint64 last_answer;           /* atomic: when an answer last came, µs */
  guint32 free_slots;           /* atomic: bit n set when reply slot n is free */

  GMutex send_lock;             /* serialises senders of requests */

  GMutex lock;                  /* guards what follows */
  GCond cond;                   /* signalled only when someone waits */
  guint waiters;
  GHashTable *pending;          /* id -> Pending */
  guint64 next_id;
  gboolean dead;
  gboolean closing;             /* the device itself closes this connection */
  GError *death;
  gint64 busy_since;            /* when the table last became non-empty */
  guint completing;             /* entries taken and not yet completed */

  GThread *reader;
  GThread *watcher;
};

/* accel-remote-connection.c */
gboolean _accel_remote_connection_register (AccelRemoteConnection *self, Pending *p, guint64 *id, GError **error);
Pending *_accel_remote_connection_take (AccelRemoteConnection *self, guint64 id);
void _accel_remote_connection_complete (AccelRemoteConnection *self, Pending *p, GVariant *reply, GError *error);
void _accel_remote_connection_done_completing (AccelRemoteConnection *self, guint n);
void _accel_remote_connection_send (AccelRemoteConnection *self, AccelChannelKind kind, guint64 id, GVariant *body);

/* accel-remote-work.c */
gsize _accel_remote_chunk_size (gsize arena_size);
/* Completes an answered READ chunk (copied out, maybe by a copy thread); takes @p. */
void _accel_remote_chunk_read (AccelRemoteConnection *self, Pending *p);
void _accel_remote_transfer_release (AccelRemoteConnection *self, Transfer *xfer, GError *error);

G_END_DECLS
