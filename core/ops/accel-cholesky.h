/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_CHOLESKY (accel_cholesky_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelCholesky, accel_cholesky, ACCEL, CHOLESKY, AccelOp)

struct _AccelCholesky {
  AccelOp parent_instance;

  /*< public >*/
  AccelBuffer *a;
  AccelBuffer *l;
  gboolean lower;
};

ACCEL_API
AccelOp *accel_cholesky_new (AccelBuffer *a, AccelBuffer *l);

G_END_DECLS
