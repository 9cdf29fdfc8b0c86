/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_SVD (accel_svd_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelSvd, accel_svd, ACCEL, SVD, AccelOp)

struct _AccelSvd {
  AccelOp parent_instance;

  /*< public >*/
  /* The matrix [m, n] (or [b, m, n]); f32 or f64 */
  AccelBuffer *a; /*< read required >*/
  /* Singular values [min(m, n)], descending */
  AccelBuffer *s; /*< write required >*/
  /* Left singular vectors as columns [m, min(m, n)] */
  AccelBuffer *u; /*< write required >*/
  /* Right singular vectors as rows [min(m, n), n] */
  AccelBuffer *vt; /*< write required >*/
};

ACCEL_API
AccelOp *accel_svd_new (AccelBuffer *a, AccelBuffer *s, AccelBuffer *u, AccelBuffer *vt);

G_END_DECLS
