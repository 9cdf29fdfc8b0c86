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
  /* The Cholesky factor [n, n] (or [b, n, n]) as written by cholesky */
  AccelBuffer *l; /*< read required >*/
  /* Right-hand side [n] or [n, nrhs] (batched like l) */
  AccelBuffer *b; /*< read required >*/
  /* The solution, shape of b; may be b */
  AccelBuffer *x; /*< write required >*/
  /* Whether `l` is the lower factor (`a = l lᵀ`) or the upper one (`a = uᵀ
   * u`); only that triangle is read. */
  gboolean lower; /*< default=TRUE >*/
};

ACCEL_API
AccelOp *accel_cholesky_solve_new (AccelBuffer *l, AccelBuffer *b, AccelBuffer *x);

G_END_DECLS
