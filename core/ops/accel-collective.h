/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

/**
 * AccelReduction:
 * @ACCEL_REDUCTION_SUM: sum
 * @ACCEL_REDUCTION_PROD: product
 * @ACCEL_REDUCTION_MIN: minimum
 * @ACCEL_REDUCTION_MAX: maximum
 * @ACCEL_REDUCTION_AVG: the sum divided by the number of ranks (integers:
 *   truncated towards zero)
 *
 * How `all-reduce`, `reduce-scatter` and `root-reduce` combine the ranks'
 * values, element by element.
 */
typedef enum {
  ACCEL_REDUCTION_SUM,
  ACCEL_REDUCTION_PROD,
  ACCEL_REDUCTION_MIN,
  ACCEL_REDUCTION_MAX,
  ACCEL_REDUCTION_AVG,
} AccelReduction;

/**
 * ACCEL_COLLECTIVE_ID_SIZE:
 *
 * The size in bytes of the `id` buffer of `collective-bootstrap` (an NCCL
 * unique id is 128 bytes).
 */
#define ACCEL_COLLECTIVE_ID_SIZE 128

#define ACCEL_TYPE_COLLECTIVE (accel_collective_get_type ())
#define ACCEL_COLLECTIVE(obj) (G_TYPE_CHECK_INSTANCE_CAST ((obj), ACCEL_TYPE_COLLECTIVE, AccelCollective))
#define ACCEL_IS_COLLECTIVE(obj) (G_TYPE_CHECK_INSTANCE_TYPE ((obj), ACCEL_TYPE_COLLECTIVE))
#define ACCEL_COLLECTIVE_CLASS(klass) (G_TYPE_CHECK_CLASS_CAST ((klass), ACCEL_TYPE_COLLECTIVE, AccelCollectiveClass))
#define ACCEL_IS_COLLECTIVE_CLASS(klass) (G_TYPE_CHECK_CLASS_TYPE ((klass), ACCEL_TYPE_COLLECTIVE))
#define ACCEL_COLLECTIVE_GET_CLASS(obj) (G_TYPE_INSTANCE_GET_CLASS ((obj), ACCEL_TYPE_COLLECTIVE, AccelCollectiveClass))

typedef struct _AccelCollective AccelCollective;
typedef struct _AccelCollectiveClass AccelCollectiveClass;

/**
 * AccelCollective:
 * @rank: the rank this part runs as (set by the communicator)
 * @n_ranks: the number of ranks of the communicator (set by the communicator)
 * @comm_key: names the communicator's current incarnation in every process
 *   (set by the communicator)
 * @comm_id: the backend's bootstrap bytes as hex (an NCCL unique id), or
 *   %NULL (set by the communicator)
 * @tag: names this collective within the incarnation (set by the communicator)
 * @timeout_ms: how long a rank waits for the others before it gives up
 *   (set by the communicator)
 *
 * The base of the collective op types (`all-reduce`, `all-gather`,
 * `reduce-scatter`, `broadcast`, `root-reduce`, `all-to-all`, `send`,
 * `recv`, `send-recv`). One op describes one rank's part: its buffers live
 * on that rank's device. Collectives are submitted to an
 * #AccelCommunicator, one op per rank, never to a device directly; the
 * communicator fills in the fields above on its own copies of the ops,
 * which are what the devices run.
 */
struct _AccelCollective {
  AccelOp parent_instance;

  /*< public >*/
  int rank;
  int n_ranks;
  char *comm_key;
  char *comm_id;
  char *tag;
  guint timeout_ms;
};

/**
 * AccelCollectiveClass:
 * @parent_class: the parent class
 * @check_peer: checks that this rank's op fits the op of rank @first
 *   (same dtype and counts, the same root and reduction); the
 *   communicator calls it before anything is launched
 * @needs_all_ranks: whether every rank of the communicator takes part
 *   (%FALSE for the point-to-point ops)
 *
 * The class of the collective op types.
 */
struct _AccelCollectiveClass {
  AccelOpClass parent_class;

  gboolean (*check_peer) (AccelCollective *self, AccelCollective *first, GError **error);
  gboolean needs_all_ranks;

  /*< private >*/
  gpointer padding[8];
};

ACCEL_API
GType accel_collective_get_type (void) G_GNUC_CONST;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AccelCollective, g_object_unref)

ACCEL_API
gboolean accel_collective_is_bound (AccelCollective *self);

/* For backends whose ranks share this process's memory (the CPU backend):
 * the meeting point of a collective's parts. */

/**
 * AccelCollectiveData: (skip)
 *
 * Every rank's contribution to one collective, as accel_collective_gather()
 * found them: in this process's memory for the ranks of this process,
 * received copies for the ranks of other processes. Opaque.
 */
typedef struct _AccelCollectiveData AccelCollectiveData;

ACCEL_API
AccelCollectiveData *accel_collective_gather (AccelCollective *self,
                                              gconstpointer data,
                                              gsize size,
                                              GError **error);
ACCEL_API
gconstpointer accel_collective_data_get (AccelCollectiveData *data, int rank, gsize *size);
ACCEL_API
void accel_collective_data_release (AccelCollectiveData *data);
ACCEL_API
gboolean accel_collective_exchange (AccelCollective *self,
                                    gconstpointer send,
                                    gsize send_size,
                                    gpointer recv,
                                    gsize recv_size,
                                    GError **error);
ACCEL_API
gboolean accel_collective_check_aborted (AccelCollective *self, GError **error);
ACCEL_API
void accel_collective_abort_key (const char *comm_key, const GError *reason);

G_END_DECLS
