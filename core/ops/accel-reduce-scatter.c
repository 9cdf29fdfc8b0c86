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

static const AccelOpParam reduce_scatter_params[] = {
  ACCEL_OP_BUFFER (AccelReduceScatter, src, "src", "This rank's values: n-ranks blocks of dst's size",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelReduceScatter, dst, "dst",
                   "Where this rank gets the reduction of block `rank` over all ranks; may be this rank's block of "
                   "`src` (in place).",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_ENUM (AccelReduceScatter, reduction, "reduction", "How the ranks' values combine.",
                 accel_reduction_get_type, ACCEL_REDUCTION_SUM),
};

ACCEL_DEFINE_COLLECTIVE_TYPE (AccelReduceScatter, accel_reduce_scatter, "reduce-scatter",
                              "Rank r gets block r of the reduction of all ranks' src",
                              reduce_scatter_params, accel_reduce_scatter_validate, accel_reduce_scatter_check_peer, TRUE)

/**
 * accel_reduce_scatter_new:
 * @src: (transfer none) (nullable): this rank's values
 * @dst: (transfer none) (nullable): this rank's block of the result
 * @reduction: how the ranks' values combine
 *
 * Makes one rank's `reduce-scatter` op.
 *
 * Returns: (transfer full): a new #AccelReduceScatter
 */
AccelOp *
accel_reduce_scatter_new (AccelBuffer *src, AccelBuffer *dst, AccelReduction reduction)
{
  g_return_val_if_fail (src == NULL || ACCEL_IS_BUFFER (src), NULL);
  g_return_val_if_fail (dst == NULL || ACCEL_IS_BUFFER (dst), NULL);

  return g_object_new (ACCEL_TYPE_REDUCE_SCATTER, "src", src, "dst", dst, "reduction", reduction, NULL);
}
