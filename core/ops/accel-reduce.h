/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_REDUCE (accel_reduce_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelReduce, accel_reduce, ACCEL, REDUCE, AccelOp)

struct _AccelReduce {
  AccelOp parent_instance;

  /*< public >*/
  /* Input: f32, f64, f16 or bf16, contiguous */
  AccelBuffer *src; /*< read required >*/
  /* Result: src's shape with the axis removed or kept as 1 */
  AccelBuffer *dst; /*< write required >*/
  /* sum, max, min or mean */
  AccelReduceOp reduction; /*< default=ACCEL_REDUCE_SUM >*/
  /* The reduced axis; negative values count from the end (-1 is the last). */
  int axis; /*< min=-ACCEL_SHAPE_MAX_RANK max=ACCEL_SHAPE_MAX_RANK-1 default=-1 >*/
};

ACCEL_API
AccelOp *accel_reduce_new (AccelBuffer *src, AccelBuffer *dst, AccelReduceOp reduction, int axis);

G_END_DECLS
