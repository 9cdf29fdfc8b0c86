/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_SEGMENTED_REDUCE (accel_segmented_reduce_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelSegmentedReduce, accel_segmented_reduce, ACCEL, SEGMENTED_REDUCE, AccelOp)

struct _AccelSegmentedReduce {
  AccelOp parent_instance;

  /*< public >*/
  AccelBuffer *input;
  AccelBuffer *offsets;
  AccelBuffer *output;
  AccelReduceOp reduction;
};

ACCEL_API
AccelOp *accel_segmented_reduce_new (AccelBuffer *input, AccelBuffer *offsets, AccelBuffer *output, AccelReduceOp reduction);

G_END_DECLS
