/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-private.h"
#include "accel-collective-private.h"

/**
 * AccelAllGather:
 *
 * All-gather: every rank gets the concatenation of all ranks' `src`, in
 * rank order (NCCL's `ncclAllGather`). `dst` holds n-ranks times as many
 * elements as `src`, of the same dtype; every rank's `src` holds as many.
 * Any dtype.
 *
 * Op name: `all-gather`.
 */

static gboolean
accel_all_gather_validate (AccelOp *op, GError **error)
{
  AccelAllGather *self = ACCEL_ALL_GATHER (op);
  AccelCollective *c = ACCEL_COLLECTIVE (op);

  if (!accel_collective_check_binding_ (c, error))
    return FALSE;
  gint64 count = accel_buffer_get_n_elements (self->src);
  if (!accel_collective_check_count_ (c, "src", self->src, count, "contiguous", error)
      || !accel_collective_check_count_ (c, "dst", self->dst, count * c->n_ranks, "n-ranks × “src”", error)
      || !accel_op_check_same_dtype (op, "src", "dst", error))
    return FALSE;
  return accel_collective_check_alias_ (c, "src", self->src, "dst", self->dst, count * c->rank, error);
}

static gboolean
accel_all_gather_check_peer (AccelCollective *c, AccelCollective *first, GError **error)
{
  return accel_collective_check_same_ (c, first, "src", ACCEL_ALL_GATHER (c)->src, ACCEL_ALL_GATHER (first)->src,
                                       error);
}

ACCEL_DEFINE_COLLECTIVE_TYPE (AccelAllGather, accel_all_gather, "all-gather",
                              "Every rank gets all ranks' src, concatenated in rank order",
                              _accel_all_gather_params, accel_all_gather_validate, accel_all_gather_check_peer, TRUE)
