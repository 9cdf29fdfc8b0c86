/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-private.h"
#include "accel-collective-private.h"
#include "accel-enum-types.h"

/**
 * AccelAllReduce:
 *
 * All-reduce: every rank gets, element by element, the reduction of all
 * ranks' `src` (NCCL's `ncclAllReduce`). One op per rank, submitted
 * together to an #AccelCommunicator; every rank's `src` and `dst` hold the
 * same number of elements of one dtype, contiguous. Types: every real
 * type; complex types with sum and avg.
 *
 * Op name: `all-reduce`.
 */

static gboolean
accel_all_reduce_validate (AccelOp *op, GError **error)
{
  AccelAllReduce *self = ACCEL_ALL_REDUCE (op);
  AccelCollective *c = ACCEL_COLLECTIVE (op);

  if (!accel_collective_check_binding_ (c, error)
      || !accel_collective_check_count_ (c, "src", self->src, accel_buffer_get_n_elements (self->src),
                                         "contiguous", error)
      || !accel_collective_check_count_ (c, "dst", self->dst, accel_buffer_get_n_elements (self->src),
                                         "as many as “src”", error)
      || !accel_op_check_same_dtype (op, "src", "dst", error)
      || !accel_collective_check_reduction_ (c, "src", accel_buffer_get_dtype (self->src), self->reduction, error))
    return FALSE;
  return accel_collective_check_alias_ (c, "src", self->src, "dst", self->dst, -1, error);
}

static gboolean
accel_all_reduce_check_peer (AccelCollective *c, AccelCollective *first, GError **error)
{
  AccelAllReduce *self = ACCEL_ALL_REDUCE (c), *f = ACCEL_ALL_REDUCE (first);
  return accel_collective_check_same_ (c, first, "src", self->src, f->src, error)
         && accel_collective_check_same_int_ (c, first, "reduction", self->reduction, f->reduction, error);
}

ACCEL_DEFINE_COLLECTIVE_TYPE (AccelAllReduce, accel_all_reduce, "all-reduce",
                              "Every rank gets the sum, product, min, max or average of all ranks' src",
                              _accel_all_reduce_params, accel_all_reduce_validate, accel_all_reduce_check_peer, TRUE)
