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
  /* The values to send; read on the root only, where it is required (other
   * ranks may leave it unset). */
  AccelBuffer *src; /*< read >*/
  /* Where every rank gets the root's `src`; on the root it may be `src` itself
   * (in place). */
  AccelBuffer *dst; /*< write required >*/
  /* The rank whose `src` goes out. */
  int root; /*< min=0 max=G_MAXINT default=0 >*/
};

ACCEL_API
AccelOp *accel_broadcast_new (AccelBuffer *src, AccelBuffer *dst, int root);

G_END_DECLS
