/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-private.h"
#include "accel-collective-private.h"

/**
 * AccelBroadcast:
 *
 * Broadcast: every rank's `dst` gets the root's `src` (NCCL's
 * `ncclBroadcast`). Every rank's `dst` holds as many elements of one dtype.
 * Any dtype.
 *
 * Op name: `broadcast`.
 */

static gboolean
accel_broadcast_validate (AccelOp *op, GError **error)
{
  AccelBroadcast *self = ACCEL_BROADCAST (op);
  AccelCollective *c = ACCEL_COLLECTIVE (op);

  if (!accel_collective_check_binding_ (c, error)
      || !accel_collective_check_rank_value_ (c, "root", self->root, FALSE, error))
    return FALSE;
  gint64 count = accel_buffer_get_n_elements (self->dst);
  if (!accel_collective_check_count_ (c, "dst", self->dst, count, "contiguous", error))
    return FALSE;
  if (c->rank != self->root)
    return TRUE;
  if (self->src == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "broadcast: rank %d is the root and needs a buffer in property “src”", c->rank);
      return FALSE;
    }
  if (!accel_collective_check_count_ (c, "src", self->src, count, "as many as “dst”", error)
      || !accel_op_check_same_dtype (op, "src", "dst", error))
    return FALSE;
  return accel_collective_check_alias_ (c, "src", self->src, "dst", self->dst, -1, error);
}

static gboolean
accel_broadcast_check_peer (AccelCollective *c, AccelCollective *first, GError **error)
{
  AccelBroadcast *self = ACCEL_BROADCAST (c), *f = ACCEL_BROADCAST (first);
  return accel_collective_check_same_ (c, first, "dst", self->dst, f->dst, error)
         && accel_collective_check_same_int_ (c, first, "root", self->root, f->root, error);
}

ACCEL_DEFINE_COLLECTIVE_TYPE (AccelBroadcast, accel_broadcast, "broadcast",
                              "Every rank gets the root's src",
                              _accel_broadcast_params, accel_broadcast_validate, accel_broadcast_check_peer, TRUE)
