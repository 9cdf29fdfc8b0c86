/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_QR (accel_qr_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelQr, accel_qr, ACCEL, QR, AccelOp)

struct _AccelQr {
  AccelOp parent_instance;

  /*< public >*/
  /* The matrix [m, n], or a batch [b, m, n]; f32 or f64 */
  AccelBuffer *a; /*< read required >*/
  /* Orthonormal columns [m, min(m, n)] */
  AccelBuffer *q; /*< write required >*/
  /* Upper triangular factor [min(m, n), n] */
  AccelBuffer *r; /*< write required >*/
};

ACCEL_API
AccelOp *accel_qr_new (AccelBuffer *a, AccelBuffer *q, AccelBuffer *r);

G_END_DECLS
