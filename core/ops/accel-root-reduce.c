/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-private.h"
#include "accel-collective-private.h"
#include "accel-enum-types.h"

/**
 * AccelRootReduce:
 *
 * Reduce to one rank (NCCL's `ncclReduce`; the name `reduce` is the
 * per-device reduction op). Every rank's `src` holds as many elements of one
 * dtype. Types as `all-reduce`.
 *
 * Op name: `root-reduce`.
 */

static gboolean
accel_root_reduce_validate (AccelOp *op, GError **error)
{
  AccelRootReduce *self = ACCEL_ROOT_REDUCE (op);
  AccelCollective *c = ACCEL_COLLECTIVE (op);

  if (!accel_collective_check_binding_ (c, error)
      || !accel_collective_check_rank_value_ (c, "root", self->root, FALSE, error))
    return FALSE;
  gint64 count = accel_buffer_get_n_elements (self->src);
  if (!accel_collective_check_count_ (c, "src", self->src, count, "contiguous", error)
      || !accel_collective_check_reduction_ (c, "src", accel_buffer_get_dtype (self->src), self->reduction, error))
    return FALSE;
  if (self->dst == NULL && c->rank != self->root)
    return TRUE;
  if (self->dst == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "root-reduce: rank %d is the root and needs a buffer in property “dst”", c->rank);
      return FALSE;
    }
  if (!accel_collective_check_count_ (c, "dst", self->dst, count, "as many as “src”", error)
      || !accel_op_check_same_dtype (op, "src", "dst", error))
    return FALSE;
  return accel_collective_check_alias_ (c, "src", self->src, "dst", self->dst, -1, error);
}

static gboolean
accel_root_reduce_check_peer (AccelCollective *c, AccelCollective *first, GError **error)
{
  AccelRootReduce *self = ACCEL_ROOT_REDUCE (c), *f = ACCEL_ROOT_REDUCE (first);
  return accel_collective_check_same_ (c, first, "src", self->src, f->src, error)
         && accel_collective_check_same_int_ (c, first, "root", self->root, f->root, error)
         && accel_collective_check_same_int_ (c, first, "reduction", self->reduction, f->reduction, error);
}

ACCEL_DEFINE_COLLECTIVE_TYPE (AccelRootReduce, accel_root_reduce, "root-reduce",
                              "The root gets the reduction of all ranks' src",
                              _accel_root_reduce_params, accel_root_reduce_validate, accel_root_reduce_check_peer, TRUE)
