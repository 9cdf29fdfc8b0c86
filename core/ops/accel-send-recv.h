/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-collective.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_SEND_RECV (accel_send_recv_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelSendRecv, accel_send_recv, ACCEL, SEND_RECV, AccelCollective)

struct _AccelSendRecv {
  AccelCollective parent_instance;

  /*< public >*/
  /* The values to send, or unset */
  AccelBuffer *src; /*< read >*/
  /* The rank `src` goes to, or -1. */
  int send_peer; /*< min=-1 max=G_MAXINT default=-1 >*/
  /* Where the values from `recv_peer` arrive, or NULL. */
  AccelBuffer *dst; /*< write >*/
  /* The rank that sends to `dst`, or -1. */
  int recv_peer; /*< min=-1 max=G_MAXINT default=-1 >*/
  /* How many parts of this process take part in the submission. Set by the
   * communicator. */
  guint parts; /*< min=0 max=G_MAXINT default=0 >*/
  /* Names the transfer with a rank of another process. Set by the
   * communicator. */
  char *remote_tag; /*< >*/
};

ACCEL_API
AccelOp *accel_send_recv_new (AccelBuffer *src, int send_peer, AccelBuffer *dst, int recv_peer);

G_END_DECLS
