/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_EIGH (accel_eigh_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelEigh, accel_eigh, ACCEL, EIGH, AccelOp)

struct _AccelEigh {
  AccelOp parent_instance;

  /*< public >*/
  /* Symmetric matrix [n, n] (or [b, n, n]); f32 or f64 */
  AccelBuffer *a; /*< read required >*/
  /* The eigenvalues, `[n]`, ascending. */
  AccelBuffer *w; /*< write required >*/
  /* The eigenvectors as columns, the shape of `a`. */
  AccelBuffer *v; /*< write required >*/
  /* Whether the lower triangle of `a` is read (else the upper one). */
  gboolean lower; /*< default=TRUE >*/
};

ACCEL_API
AccelOp *accel_eigh_new (AccelBuffer *a, AccelBuffer *w, AccelBuffer *v);

G_END_DECLS
