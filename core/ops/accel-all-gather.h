/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-collective.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_ALL_GATHER (accel_all_gather_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelAllGather, accel_all_gather, ACCEL, ALL_GATHER, AccelCollective)

struct _AccelAllGather {
  AccelCollective parent_instance;

  /*< public >*/
  /* This rank's block. */
  AccelBuffer *src; /*< read required >*/
  /* Every rank's block, rank 0's first; may hold `src` as this rank's block
   * (in place). */
  AccelBuffer *dst; /*< write required >*/
};

ACCEL_API
AccelOp *accel_all_gather_new (AccelBuffer *src, AccelBuffer *dst);

G_END_DECLS
