/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-collective.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_ALL_TO_ALL (accel_all_to_all_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelAllToAll, accel_all_to_all, ACCEL, ALL_TO_ALL, AccelCollective)

struct _AccelAllToAll {
  AccelCollective parent_instance;

  /*< public >*/
  /* N-ranks blocks; block j goes to rank j. */
  AccelBuffer *src; /*< read required >*/
  /* N-ranks blocks; block i comes from rank i. */
  AccelBuffer *dst; /*< write required >*/
};

ACCEL_API
AccelOp *accel_all_to_all_new (AccelBuffer *src, AccelBuffer *dst);

G_END_DECLS
