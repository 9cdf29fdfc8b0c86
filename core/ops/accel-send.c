/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-private.h"
#include "accel-collective-private.h"

/**
 * AccelSend:
 *
 * Point-to-point send (NCCL's `ncclSend`): submitted to an
 * #AccelCommunicator together with the matching `recv` of `peer` (same
 * dtype and element count). A rank may send once and receive once per
 * submission; it then runs both in one group, so exchanges between two
 * ranks and ring shifts cannot deadlock. Any dtype.
 *
 * Op name: `send`.
 */

static gboolean
accel_send_validate (AccelOp *op, GError **error)
{
  AccelSend *self = ACCEL_SEND (op);
  AccelCollective *c = ACCEL_COLLECTIVE (op);

  if (!accel_collective_check_binding_ (c, error)
      || !accel_collective_check_rank_value_ (c, "peer", self->peer, FALSE, error)
      || !accel_collective_check_count_ (c, "src", self->src, accel_buffer_get_n_elements (self->src),
                                         "contiguous", error))
    return FALSE;
  if (self->peer == c->rank)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "send: property “peer” is %d, the sending rank itself; use `copy` within a rank", c->rank);
      return FALSE;
    }
  return TRUE;
}

ACCEL_DEFINE_COLLECTIVE_TYPE (AccelSend, accel_send, "send",
                              "Send src to the recv of rank peer",
                              _accel_send_params, accel_send_validate, NULL, FALSE)
