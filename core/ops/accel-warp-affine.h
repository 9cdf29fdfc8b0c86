/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-image.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_WARP_AFFINE (accel_warp_affine_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelWarpAffine, accel_warp_affine, ACCEL, WARP_AFFINE, AccelOp)

struct _AccelWarpAffine {
  AccelOp parent_instance;

  /*< public >*/
  AccelImage src;
  AccelImage dst;
  double matrix[6];
  AccelInterpolation method;
  AccelBorderMode border;
  double border_value;
};

ACCEL_API
AccelOp *accel_warp_affine_new (AccelBuffer *src, AccelBuffer *dst);

G_END_DECLS
