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
  /* Values [n]: i32, u32, i64, f32 or f64 */
  AccelBuffer *input; /*< read required >*/
  /* Segment boundaries, i32 or i64 [n-segments + 1] */
  AccelBuffer *offsets; /*< read required >*/
  /* One result per segment [n-segments], type of input */
  AccelBuffer *output; /*< write required >*/
  /* sum, max, min or mean */
  AccelReduceOp reduction; /*< default=ACCEL_REDUCE_SUM >*/
};

ACCEL_API
AccelOp *accel_segmented_reduce_new (AccelBuffer *input, AccelBuffer *offsets, AccelBuffer *output, AccelReduceOp reduction);

G_END_DECLS
