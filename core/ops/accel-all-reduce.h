/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-collective.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_ALL_REDUCE (accel_all_reduce_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelAllReduce, accel_all_reduce, ACCEL, ALL_REDUCE, AccelCollective)

struct _AccelAllReduce {
  AccelCollective parent_instance;

  /*< public >*/
  /* This rank's values. */
  AccelBuffer *src; /*< read required >*/
  /* Where this rank gets the reduction of every rank's `src`; may be `src`
   * itself (in place). */
  AccelBuffer *dst; /*< write required >*/
  /* How the ranks' values combine. */
  AccelReduction reduction; /*< default=ACCEL_REDUCTION_SUM >*/
};

ACCEL_API
AccelOp *accel_all_reduce_new (AccelBuffer *src, AccelBuffer *dst, AccelReduction reduction);

G_END_DECLS
