/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-private.h"
#include "accel-collective-private.h"

/**
 * AccelAllToAll:
 *
 * All-to-all: block j of rank i's `src` lands in block i of rank j's `dst`
 * (NCCL's `ncclAlltoAll`). `src` and `dst` hold as many elements of one
 * dtype, a multiple of n-ranks, and must not overlap. Any dtype.
 *
 * Op name: `all-to-all`.
 */

static gboolean
accel_all_to_all_validate (AccelOp *op, GError **error)
{
  AccelAllToAll *self = ACCEL_ALL_TO_ALL (op);
  AccelCollective *c = ACCEL_COLLECTIVE (op);

  if (!accel_collective_check_binding_ (c, error))
    return FALSE;
  gint64 count = accel_buffer_get_n_elements (self->src);
  if (!accel_collective_check_count_ (c, "src", self->src, count, "contiguous", error)
      || !accel_collective_check_count_ (c, "dst", self->dst, count, "as many as “src”", error)
      || !accel_op_check_same_dtype (op, "src", "dst", error))
    return FALSE;
  if (count % c->n_ranks != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "all-to-all: “src” holds %" G_GINT64_FORMAT " elements, not a multiple of the %d ranks",
                   count, c->n_ranks);
      return FALSE;
    }
  return _accel_op_check_results_alias (op, error);
}

static gboolean
accel_all_to_all_check_peer (AccelCollective *c, AccelCollective *first, GError **error)
{
  return accel_collective_check_same_ (c, first, "src", ACCEL_ALL_TO_ALL (c)->src, ACCEL_ALL_TO_ALL (first)->src,
                                       error);
}

ACCEL_DEFINE_COLLECTIVE_TYPE (AccelAllToAll, accel_all_to_all, "all-to-all",
                              "Block j of rank i's src goes to block i of rank j's dst",
                              _accel_all_to_all_params, accel_all_to_all_validate, accel_all_to_all_check_peer, TRUE)
