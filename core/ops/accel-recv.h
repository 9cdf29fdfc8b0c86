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
  /* Where the values arrive. */
  AccelBuffer *dst; /*< write required >*/
  /* The sending rank. */
  int peer; /*< min=0 max=G_MAXINT default=0 >*/
};

ACCEL_API
AccelOp *accel_recv_new (AccelBuffer *dst, int peer);

G_END_DECLS
