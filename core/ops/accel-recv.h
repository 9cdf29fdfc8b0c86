/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-collective.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_RECV (accel_recv_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelRecv, accel_recv, ACCEL, RECV, AccelCollective)

struct _AccelRecv {
  AccelCollective parent_instance;

  /*< public >*/
  AccelBuffer *dst;
  int peer;
};

ACCEL_API
AccelOp *accel_recv_new (AccelBuffer *dst, int peer);

G_END_DECLS
