/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-collective.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_COLLECTIVE_ABORT (accel_collective_abort_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelCollectiveAbort, accel_collective_abort, ACCEL, COLLECTIVE_ABORT, AccelOp)

struct _AccelCollectiveAbort {
  AccelOp parent_instance;

  /*< public >*/
  /* The communicator incarnation to end. */
  char *comm_key; /*< >*/
  /* Why, for the errors of the collectives it ends. */
  char *reason; /*< >*/
};

G_END_DECLS
