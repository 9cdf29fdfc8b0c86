/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_CHOLESKY_SOLVE (accel_cholesky_solve_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelCholeskySolve, accel_cholesky_solve, ACCEL, CHOLESKY_SOLVE, AccelOp)

struct _AccelCholeskySolve {
  AccelOp parent_instance;

  /*< public >*/
  AccelBuffer *l;
  AccelBuffer *b;
  AccelBuffer *x;
  gboolean lower;
};

ACCEL_API
AccelOp *accel_cholesky_solve_new (AccelBuffer *l, AccelBuffer *b, AccelBuffer *x);

G_END_DECLS
