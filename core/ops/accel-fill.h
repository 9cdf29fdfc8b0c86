/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_FILL (accel_fill_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelFill, accel_fill, ACCEL, FILL, AccelOp)

struct _AccelFill {
  AccelOp parent_instance;

  /*< public >*/
  /* Buffer to fill, any dtype */
  AccelBuffer *dst; /*< write required >*/
  /* The value, converted to the dtype of `dst` as `cast` would (for integers:
   * truncated and saturated). */
  double value; /*< min=-INFINITY max=INFINITY default=0.0 allow-nan >*/
  /* The imaginary part; must be 0 unless `dst` is complex. */
  double value_imag; /*< min=-INFINITY max=INFINITY default=0.0 allow-nan >*/
};

ACCEL_API
AccelOp *accel_fill_new (AccelBuffer *dst, double value);

G_END_DECLS
