/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_LU_SOLVE (accel_lu_solve_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelLuSolve, accel_lu_solve, ACCEL, LU_SOLVE, AccelOp)

struct _AccelLuSolve {
  AccelOp parent_instance;

  /*< public >*/
  /* The factors written by `lu`, `[n, n]` or `[batch, n, n]`. */
  AccelBuffer *lu; /*< read required >*/
  /* I32 `[n]` or `[batch, n]`: the pivots written by `lu`. */
  AccelBuffer *pivots; /*< read required >*/
  /* Right-hand side [n] or [n, nrhs] (batched like lu) */
  AccelBuffer *b; /*< read required >*/
  /* The solution, shape of b; may be b */
  AccelBuffer *x; /*< write required >*/
};

ACCEL_API
AccelOp *accel_lu_solve_new (AccelBuffer *lu, AccelBuffer *pivots, AccelBuffer *b, AccelBuffer *x);

G_END_DECLS
