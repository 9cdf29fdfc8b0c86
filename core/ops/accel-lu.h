/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_LU (accel_lu_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelLu, accel_lu, ACCEL, LU, AccelOp)

struct _AccelLu {
  AccelOp parent_instance;

  /*< public >*/
  AccelBuffer *a;
  AccelBuffer *lu;
  AccelBuffer *pivots;
};

ACCEL_API
AccelOp *accel_lu_new (AccelBuffer *a, AccelBuffer *lu, AccelBuffer *pivots);

G_END_DECLS
