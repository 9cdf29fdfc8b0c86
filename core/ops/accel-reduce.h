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
  AccelBuffer *src;
  AccelBuffer *dst;
  AccelReduceOp reduction;
  int axis;
};

ACCEL_API
AccelOp *accel_reduce_new (AccelBuffer *src, AccelBuffer *dst, AccelReduceOp reduction, int axis);

G_END_DECLS
