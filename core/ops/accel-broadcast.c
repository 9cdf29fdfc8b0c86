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

static const AccelOpParam broadcast_params[] = {
  ACCEL_OP_BUFFER (AccelBroadcast, src, "src",
                   "The values to send; read on the root only, where it is required (other ranks may leave it "
                   "unset).",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_DEFAULT),
  ACCEL_OP_BUFFER (AccelBroadcast, dst, "dst",
                   "Where every rank gets the root's `src`; on the root it may be `src` itself (in place).",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_INT (AccelBroadcast, root, "root", "The rank whose `src` goes out.", 0, G_MAXINT, 0),
};

ACCEL_DEFINE_COLLECTIVE_TYPE (AccelBroadcast, accel_broadcast, "broadcast",
                              "Every rank gets the root's src",
                              broadcast_params, accel_broadcast_validate, accel_broadcast_check_peer, TRUE)

/**
 * accel_broadcast_new:
 * @src: (transfer none) (nullable): the values to send (on the root)
 * @dst: (transfer none) (nullable): where this rank gets them
 * @root: the sending rank
 *
 * Makes one rank's `broadcast` op.
 *
 * Returns: (transfer full): a new #AccelBroadcast
 */
AccelOp *
accel_broadcast_new (AccelBuffer *src, AccelBuffer *dst, int root)
{
  g_return_val_if_fail (src == NULL || ACCEL_IS_BUFFER (src), NULL);
  g_return_val_if_fail (dst == NULL || ACCEL_IS_BUFFER (dst), NULL);

  return g_object_new (ACCEL_TYPE_BROADCAST, "src", src, "dst", dst, "root", root, NULL);
}
