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
  /* This rank's values. */
  AccelBuffer *src; /*< read required >*/
  /* Where the root gets the reduction of every rank's `src`; required on the
   * root (where it may be `src`: in place), not written elsewhere. */
  AccelBuffer *dst; /*< write >*/
  /* How the ranks' values combine. */
  AccelReduction reduction; /*< default=ACCEL_REDUCTION_SUM >*/
  /* The rank that gets the result. */
  int root; /*< min=0 max=G_MAXINT default=0 >*/
};

ACCEL_API
AccelOp *accel_root_reduce_new (AccelBuffer *src, AccelBuffer *dst, AccelReduction reduction, int root);

G_END_DECLS
