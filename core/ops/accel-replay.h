/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "../accel-graph.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_REPLAY (accel_replay_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelReplay, accel_replay, ACCEL, REPLAY, AccelOp)

struct _AccelReplay {
  AccelOp parent_instance;

  /*< public >*/
  /* The graph to run */
  AccelGraph *graph; /*< required >*/
};

ACCEL_API
AccelOp *accel_replay_new (AccelGraph *graph);

G_END_DECLS
