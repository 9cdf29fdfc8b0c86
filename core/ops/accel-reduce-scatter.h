/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-collective.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_REDUCE_SCATTER (accel_reduce_scatter_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelReduceScatter, accel_reduce_scatter, ACCEL, REDUCE_SCATTER, AccelCollective)

struct _AccelReduceScatter {
  AccelCollective parent_instance;

  /*< public >*/
  AccelBuffer *src;
  AccelBuffer *dst;
  AccelReduction reduction;
};

ACCEL_API
AccelOp *accel_reduce_scatter_new (AccelBuffer *src, AccelBuffer *dst, AccelReduction reduction);

G_END_DECLS
