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
  AccelBuffer *keys;
  AccelBuffer *values;
  gboolean descending;
};

ACCEL_API
AccelOp *accel_sort_new (AccelBuffer *keys, AccelBuffer *values);

G_END_DECLS
