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
  /* The symmetric positive definite matrix, `[n, n]` or `[batch, n, n]`. */
  AccelBuffer *a; /*< read required >*/
  /* The triangular factor, shape of a; may be a */
  AccelBuffer *l; /*< write required >*/
  /* Whether the factor is lower triangular (`a = l lᵀ`, reading the lower
   * triangle of `a`) or upper triangular (`a = uᵀ u`, reading the upper
   * triangle). */
  gboolean lower; /*< default=TRUE >*/
};

ACCEL_API
AccelOp *accel_cholesky_new (AccelBuffer *a, AccelBuffer *l);

G_END_DECLS
