/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-image.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_RESIZE (accel_resize_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelResize, accel_resize, ACCEL, RESIZE, AccelOp)

struct _AccelResize {
  AccelOp parent_instance;

  /*< public >*/
  AccelImage src;
  AccelImage dst;
  /* The interpolation. */
  AccelInterpolation method; /*< default=ACCEL_INTERPOLATION_BILINEAR >*/
};

ACCEL_API
AccelOp *accel_resize_new (AccelBuffer *src, AccelBuffer *dst, AccelInterpolation method);

G_END_DECLS
