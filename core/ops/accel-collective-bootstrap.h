/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-collective.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_COLLECTIVE_BOOTSTRAP (accel_collective_bootstrap_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelCollectiveBootstrap, accel_collective_bootstrap, ACCEL, COLLECTIVE_BOOTSTRAP, AccelOp)

struct _AccelCollectiveBootstrap {
  AccelOp parent_instance;

  /*< public >*/
  /* Receives the bootstrap bytes, ACCEL_COLLECTIVE_ID_SIZE elements of u8 on
   * the device that runs the op. */
  AccelBuffer *id; /*< write required >*/
};

G_END_DECLS
