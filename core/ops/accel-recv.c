/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-private.h"
#include "accel-collective-private.h"

/**
 * AccelRecv:
 *
 * Point-to-point receive (NCCL's `ncclRecv`), the other half of a `send`:
 * see #AccelSend. Any dtype.
 *
 * Op name: `recv`.
 */

static gboolean
accel_recv_validate (AccelOp *op, GError **error)
{
  AccelRecv *self = ACCEL_RECV (op);
  AccelCollective *c = ACCEL_COLLECTIVE (op);

  if (!accel_collective_check_binding_ (c, error)
      || !accel_collective_check_rank_value_ (c, "peer", self->peer, FALSE, error)
      || !accel_collective_check_count_ (c, "dst", self->dst, accel_buffer_get_n_elements (self->dst),
                                         "contiguous", error))
    return FALSE;
  if (self->peer == c->rank)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "recv: property “peer” is %d, the receiving rank itself; use `copy` within a rank", c->rank);
      return FALSE;
    }
  return TRUE;
}

ACCEL_DEFINE_COLLECTIVE_TYPE (AccelRecv, accel_recv, "recv",
                              "Receive into dst what rank peer sends",
                              _accel_recv_params, accel_recv_validate, NULL, FALSE)
