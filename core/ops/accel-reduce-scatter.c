/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-private.h"
#include "accel-collective-private.h"
#include "accel-enum-types.h"

/**
 * AccelReduceScatter:
 *
 * Reduce-scatter: block r of the element-wise reduction of every rank's
 * `src` goes to rank r (NCCL's `ncclReduceScatter`). `src` holds n-ranks
 * times as many elements as `dst`, of the same dtype. Types as
 * `all-reduce`.
 *
 * Op name: `reduce-scatter`.
 */

static gboolean
accel_reduce_scatter_validate (AccelOp *op, GError **error)
{
  AccelReduceScatter *self = ACCEL_REDUCE_SCATTER (op);
  AccelCollective *c = ACCEL_COLLECTIVE (op);

  if (!accel_collective_check_binding_ (c, error))
    return FALSE;
  gint64 count = accel_buffer_get_n_elements (self->dst);
  if (!accel_collective_check_count_ (c, "dst", self->dst, count, "contiguous", error)
      || !accel_collective_check_count_ (c, "src", self->src, count * c->n_ranks, "n-ranks × “dst”", error)
      || !accel_op_check_same_dtype (op, "src", "dst", error)
      || !accel_collective_check_reduction_ (c, "src", accel_buffer_get_dtype (self->src), self->reduction, error))
    return FALSE;
  return accel_collective_check_alias_ (c, "src", self->src, "dst", self->dst, count * c->rank, error);
}

static gboolean
accel_reduce_scatter_check_peer (AccelCollective *c, AccelCollective *first, GError **error)
{
  AccelReduceScatter *self = ACCEL_REDUCE_SCATTER (c), *f = ACCEL_REDUCE_SCATTER (first);
  return accel_collective_check_same_ (c, first, "src", self->src, f->src, error)
         && accel_collective_check_same_int_ (c, first, "reduction", self->reduction, f->reduction, error);
}

ACCEL_DEFINE_COLLECTIVE_TYPE (AccelReduceScatter, accel_reduce_scatter, "reduce-scatter",
                              "Rank r gets block r of the reduction of all ranks' src",
                              _accel_reduce_scatter_params, accel_reduce_scatter_validate, accel_reduce_scatter_check_peer, TRUE)
