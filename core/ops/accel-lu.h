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
  /* The matrix [m, n], or a batch [b, m, n]; f32 or f64 */
  AccelBuffer *a; /*< read required >*/
  /* l (unit diagonal not stored) and u in one matrix, shape of a; may be a */
  AccelBuffer *lu; /*< write required >*/
  /* I32 `[min (m, n)]` (or `[batch, min (m, n)]`): the 1-based row
   * interchanges. */
  AccelBuffer *pivots; /*< write required >*/
};

ACCEL_API
AccelOp *accel_lu_new (AccelBuffer *a, AccelBuffer *lu, AccelBuffer *pivots);

G_END_DECLS
