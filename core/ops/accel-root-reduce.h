/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-collective.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_ROOT_REDUCE (accel_root_reduce_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelRootReduce, accel_root_reduce, ACCEL, ROOT_REDUCE, AccelCollective)

struct _AccelRootReduce {
  AccelCollective parent_instance;

  /*< public >*/
  AccelBuffer *src;
  AccelBuffer *dst;
  AccelReduction reduction;
  int root;
};

ACCEL_API
AccelOp *accel_root_reduce_new (AccelBuffer *src, AccelBuffer *dst, AccelReduction reduction, int root);

G_END_DECLS
