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
  AccelBuffer *src;
  int send_peer;
  AccelBuffer *dst;
  int recv_peer;
  guint parts;
  char *remote_tag;
};

ACCEL_API
AccelOp *accel_send_recv_new (AccelBuffer *src, int send_peer, AccelBuffer *dst, int recv_peer);

G_END_DECLS
