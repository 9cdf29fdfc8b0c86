/* accel-communicator-private.h: one incarnation of a communicator as this
 * process knows it (AccelCommGroup), and what the communicator, the
 * rendezvous and the host-memory collectives share. Not installed.
 *
 * A group is named by its key (the `comm-key` of every part it runs) in a
 * process-wide table, so that the kernels of a backend whose ranks share
 * this process's memory (the CPU backend) find each other's parts through
 * accel_collective_gather() and accel_collective_exchange(). It knows
 * which ranks live in this process and which process owns each of the
 * others, and moves the bytes of those through the rendezvous.
 *
 * Threads: any. A group's state is guarded by its own lock, which is never
 * held across a wait on another thread or on the network.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-private.h"

G_BEGIN_DECLS

typedef struct _AccelCommGroup AccelCommGroup;

typedef struct {
  const char *key;
  guint n_ranks;
  const int *local_index;       /* per rank: its index among this process's ranks, or -1 */
  const guint *rank_process;    /* per rank: the process that owns it; NULL: all here */
  guint my_process;
  guint n_processes;
  AccelRendezvous *rendezvous;  /* nullable */
  guint timeout_ms;             /* 0: no limit */
} AccelCommGroupConfig;

/* Registers a new group under config->key; the table holds a reference
 * until _accel_comm_group_retire(). */
AccelCommGroup *_accel_comm_group_new (const AccelCommGroupConfig *config);
AccelCommGroup *_accel_comm_group_ref (AccelCommGroup *self);
void _accel_comm_group_unref (AccelCommGroup *self);
void _accel_comm_group_retire (AccelCommGroup *self);
const char *_accel_comm_group_get_key (AccelCommGroup *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AccelCommGroup, _accel_comm_group_unref)

/* Marks the group aborted (the first reason wins) and wakes every part
 * waiting in it; later parts fail at once. Returns TRUE for the call that
 * aborted it. */
gboolean _accel_comm_group_abort (AccelCommGroup *self, const GError *reason);
/* The reason it was aborted (a copy), or NULL. */
GError *_accel_comm_group_dup_abort_reason (AccelCommGroup *self);

/* accel-rendezvous.c, for the communicator and the groups. */
typedef enum {
  ACCEL_RENDEZVOUS_NOTICE_ABORTED,     /* an incarnation (a tag prefix) was aborted by some process */
  ACCEL_RENDEZVOUS_NOTICE_PROCESS_LOST, /* a process left the job, or the store is gone */
} AccelRendezvousNotice;

typedef void (*AccelRendezvousListener) (AccelRendezvousNotice notice,
                                         const char *prefix,
                                         guint process,
                                         const char *reason,
                                         gpointer user_data);

/* An all-gather of byte strings among the processes @procs (sorted,
 * including this one): the array holds one GBytes per entry of @procs. */
GPtrArray *_accel_rendezvous_exchange (AccelRendezvous *self,
                                       const char *tag,
                                       const guint *procs,
                                       guint n_procs,
                                       GBytes *data,
                                       guint timeout_ms,
                                       GError **error);
void _accel_rendezvous_post_abort (AccelRendezvous *self, const char *prefix, const char *reason);
guint _accel_rendezvous_next_comm_index (AccelRendezvous *self);
const char *_accel_rendezvous_get_job (AccelRendezvous *self);
/* The most bytes one process may put into one exchange among @n_procs. */
gsize _accel_rendezvous_get_max_chunk (AccelRendezvous *self, guint n_procs);
guint _accel_rendezvous_add_listener (AccelRendezvous *self, AccelRendezvousListener func, gpointer user_data);
void _accel_rendezvous_remove_listener (AccelRendezvous *self, guint id);
/* Whether @process has left the job (and why, a copy), as this process knows. */
gboolean _accel_rendezvous_process_lost (AccelRendezvous *self, guint process, char **reason);

G_END_DECLS

/* accel-communicator.c: one incarnation as the communicator sees it. The
 * communicator's current one is swapped under its state lock; collectives
 * in flight hold references to theirs. */
typedef struct {
  gint ref;
  AccelCommGroup *group;
  GCancellable *cancellable;    /* fails the parts still queued once aborted */
  char *key;
  char *comm_id;                /* hex, or NULL */
  guint epoch;
  guint *generations;           /* of the local devices when it was built */
  gboolean host_exchange;       /* no bootstrap kernel: parts meet in host memory */
  guint64 next_seq;             /* under the build lock */
  guint64 next_p2p;
  GHashTable *pair_counters;    /* "src>dst" -> count, for transfers with other processes */
} AccelCommInc;

AccelCommInc *_accel_comm_inc_ref (AccelCommInc *inc);
void _accel_comm_inc_unref (AccelCommInc *inc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AccelCommInc, _accel_comm_inc_unref)

struct _AccelCommunicator {
  GObject parent_instance;

  GPtrArray *devices;           /* the local ranks' devices, in rank order */
  guint n_ranks;
  guint first_rank;
  guint *rank_process;          /* per rank; NULL in one process */
  guint my_process;
  guint n_processes;
  AccelRendezvous *rendezvous;
  guint listener;
  char *uid;                    /* the same in every process */
  AccelRegistry *registry;

  GMutex build_lock;            /* held while an incarnation is made and a submission posted */
  GMutex state_lock;            /* short: guards inc */
  AccelCommInc *inc;
  guint epoch;                  /* atomic */
  guint timeout_ms;             /* atomic */
  gint lane;                    /* atomic */

  GPtrArray *watches;           /* one per local device */
};

/* The thread that posts every collective's parts and hears their answers. */
AccelDispatcher *_accel_communicator_dispatcher (void);
/* With the build lock held: the incarnation to post the next collective
 * on, made now if the last one was aborted or a device moved on. */
AccelCommInc *_accel_communicator_ensure_incarnation (AccelCommunicator *self, GError **error);
/* Aborts @inc (if still live) with @reason: parts waiting in it fail,
 * queued parts are cancelled, every rank's device is told
 * (`collective-abort`) and so are the other processes. Any thread. */
void _accel_communicator_abort_incarnation (AccelCommunicator *self, AccelCommInc *inc, const GError *reason);
/* Whether the ranks exchange their data through host memory. */
gboolean _accel_communicator_is_local_rank (AccelCommunicator *self, int rank);
