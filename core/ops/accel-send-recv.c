/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-private.h"
#include "accel-collective-private.h"

/**
 * AccelSendRecv:
 *
 * One rank's part of a point-to-point submission: a send, a receive, or
 * both run together as one group (NCCL's `ncclGroupStart`, `ncclSend`,
 * `ncclRecv`, `ncclGroupEnd`). The communicator makes these from the
 * `send` and `recv` ops it is given; they may also be given directly, one
 * per taking part rank.
 *
 * Op name: `send-recv`.
 */

static gboolean
check_direction (AccelCollective *c, const char *buffer_name, AccelBuffer *buffer, const char *peer_name,
                 int peer, GError **error)
{
  if (!accel_collective_check_rank_value_ (c, peer_name, peer, TRUE, error))
    return FALSE;
  if ((buffer != NULL) != (peer >= 0))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "send-recv: property “%s” is %s but “%s” is %d; set both or neither",
                   buffer_name, buffer ? "set" : "unset", peer_name, peer);
      return FALSE;
    }
  if (peer == c->rank)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "send-recv: property “%s” is %d, this rank itself", peer_name, peer);
      return FALSE;
    }
  if (buffer == NULL)
    return TRUE;
  return accel_collective_check_count_ (c, buffer_name, buffer, accel_buffer_get_n_elements (buffer),
                                        "contiguous", error);
}

static gboolean
accel_send_recv_validate (AccelOp *op, GError **error)
{
  AccelSendRecv *self = ACCEL_SEND_RECV (op);
  AccelCollective *c = ACCEL_COLLECTIVE (op);

  if (!accel_collective_check_binding_ (c, error)
      || !check_direction (c, "src", self->src, "send-peer", self->send_peer, error)
      || !check_direction (c, "dst", self->dst, "recv-peer", self->recv_peer, error))
    return FALSE;
  if (self->src == NULL && self->dst == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "send-recv: neither “src” nor “dst” is set; a part sends, receives, or both");
      return FALSE;
    }
  return _accel_op_check_results_alias (op, error);
}

ACCEL_DEFINE_COLLECTIVE_TYPE (AccelSendRecv, accel_send_recv, "send-recv",
                              "One rank's send, receive, or both, run as one group",
                              _accel_send_recv_params, accel_send_recv_validate, NULL, FALSE)
