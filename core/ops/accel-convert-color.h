/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-image.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_CONVERT_COLOR (accel_convert_color_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelConvertColor, accel_convert_color, ACCEL, CONVERT_COLOR, AccelOp)

struct _AccelConvertColor {
  AccelOp parent_instance;

  /*< public >*/
  AccelImage src;
  AccelImage dst;
  AccelColorMatrix src_matrix;
  AccelColorRange src_range;
  AccelChromaSiting src_chroma_siting;
  AccelColorMatrix dst_matrix;
  AccelColorRange dst_range;
  AccelChromaSiting dst_chroma_siting;
  AccelInterpolation method;
};

ACCEL_API
AccelOp *accel_convert_color_new (AccelBuffer *src, AccelBuffer *dst);

G_END_DECLS
