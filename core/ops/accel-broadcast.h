/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-collective.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_BROADCAST (accel_broadcast_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelBroadcast, accel_broadcast, ACCEL, BROADCAST, AccelCollective)

struct _AccelBroadcast {
  AccelCollective parent_instance;

  /*< public >*/
  AccelBuffer *src;
  AccelBuffer *dst;
  int root;
};

ACCEL_API
AccelOp *accel_broadcast_new (AccelBuffer *src, AccelBuffer *dst, int root);

G_END_DECLS
