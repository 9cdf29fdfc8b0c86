/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-collective.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_SEND (accel_send_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelSend, accel_send, ACCEL, SEND, AccelCollective)

struct _AccelSend {
  AccelCollective parent_instance;

  /*< public >*/
  /* The values to send. */
  AccelBuffer *src; /*< read required >*/
  /* The receiving rank. */
  int peer; /*< min=0 max=G_MAXINT default=0 >*/
};

ACCEL_API
AccelOp *accel_send_new (AccelBuffer *src, int peer);

G_END_DECLS
