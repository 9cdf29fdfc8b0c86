/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_SORT (accel_sort_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelSort, accel_sort, ACCEL, SORT, AccelOp)

struct _AccelSort {
  AccelOp parent_instance;

  /*< public >*/
  /* Keys [..., n], sorted in place along the last axis */
  AccelBuffer *keys; /*< readwrite required >*/
  /* Optional values of any type, the dims of keys, permuted with them */
  AccelBuffer *values; /*< readwrite >*/
  /* Whether the order is descending (still stable: equal keys keep their
   * order). */
  gboolean descending; /*< default=FALSE >*/
};

ACCEL_API
AccelOp *accel_sort_new (AccelBuffer *keys, AccelBuffer *values);

G_END_DECLS
