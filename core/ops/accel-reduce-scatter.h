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
  /* This rank's values: n-ranks blocks of dst's size */
  AccelBuffer *src; /*< read required >*/
  /* Where this rank gets the reduction of block `rank` over all ranks; may be
   * this rank's block of `src` (in place). */
  AccelBuffer *dst; /*< write required >*/
  /* How the ranks' values combine. */
  AccelReduction reduction; /*< default=ACCEL_REDUCTION_SUM >*/
};

ACCEL_API
AccelOp *accel_reduce_scatter_new (AccelBuffer *src, AccelBuffer *dst, AccelReduction reduction);

G_END_DECLS
