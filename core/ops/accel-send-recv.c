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

static const AccelOpParam send_recv_params[] = {
  ACCEL_OP_BUFFER (AccelSendRecv, src, "src", "The values to send, or unset", ACCEL_ACCESS_READ,
                   ACCEL_OP_PARAM_DEFAULT),
  ACCEL_OP_INT (AccelSendRecv, send_peer, "send-peer", "The rank `src` goes to, or -1.", -1, G_MAXINT, -1),
  ACCEL_OP_BUFFER (AccelSendRecv, dst, "dst", "Where the values from `recv_peer` arrive, or NULL.",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_DEFAULT),
  ACCEL_OP_INT (AccelSendRecv, recv_peer, "recv-peer", "The rank that sends to `dst`, or -1.", -1, G_MAXINT, -1),
  ACCEL_OP_UINT (AccelSendRecv, parts, "parts",
                 "How many parts of this process take part in the submission. Set by the communicator.",
                 0, G_MAXINT, 0),
  ACCEL_OP_STRING (AccelSendRecv, remote_tag, "remote-tag",
                   "Names the transfer with a rank of another process. Set by the communicator."),
};

ACCEL_DEFINE_COLLECTIVE_TYPE (AccelSendRecv, accel_send_recv, "send-recv",
                              "One rank's send, receive, or both, run as one group",
                              send_recv_params, accel_send_recv_validate, NULL, FALSE)

/**
 * accel_send_recv_new:
 * @src: (transfer none) (nullable): the values to send
 * @send_peer: the rank they go to, or -1
 * @dst: (transfer none) (nullable): where the values received arrive
 * @recv_peer: the rank they come from, or -1
 *
 * Makes one rank's `send-recv` op.
 *
 * Returns: (transfer full): a new #AccelSendRecv
 */
AccelOp *
accel_send_recv_new (AccelBuffer *src, int send_peer, AccelBuffer *dst, int recv_peer)
{
  g_return_val_if_fail (src == NULL || ACCEL_IS_BUFFER (src), NULL);
  g_return_val_if_fail (dst == NULL || ACCEL_IS_BUFFER (dst), NULL);

  return g_object_new (ACCEL_TYPE_SEND_RECV, "src", src, "send-peer", send_peer, "dst", dst,
                       "recv-peer", recv_peer, NULL);
}
