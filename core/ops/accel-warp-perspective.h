/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-image.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_WARP_PERSPECTIVE (accel_warp_perspective_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelWarpPerspective, accel_warp_perspective, ACCEL, WARP_PERSPECTIVE, AccelOp)

struct _AccelWarpPerspective {
  AccelOp parent_instance;

  /*< public >*/
  AccelImage src;
  AccelImage dst;
  double matrix[9];
  AccelInterpolation method;
  AccelBorderMode border;
  double border_value;
};

ACCEL_API
AccelOp *accel_warp_perspective_new (AccelBuffer *src, AccelBuffer *dst);

G_END_DECLS
