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
  /* The Y′CbCr matrix of a YUV source (unused for RGB and gray sources). */
  AccelColorMatrix src_matrix; /*< default=ACCEL_COLOR_MATRIX_BT709 >*/
  /* The range of a YUV source. */
  AccelColorRange src_range; /*< default=ACCEL_COLOR_RANGE_LIMITED >*/
  /* Where the chroma samples of a subsampled source lie. */
  AccelChromaSiting src_chroma_siting; /*< default=ACCEL_CHROMA_SITING_MPEG2 >*/
  /* The Y′CbCr matrix of a YUV destination, or the luma weights of a gray one. */
  AccelColorMatrix dst_matrix; /*< default=ACCEL_COLOR_MATRIX_BT709 >*/
  /* The range of a YUV destination. */
  AccelColorRange dst_range; /*< default=ACCEL_COLOR_RANGE_LIMITED >*/
  /* Where the chroma samples of a subsampled destination lie. */
  AccelChromaSiting dst_chroma_siting; /*< default=ACCEL_CHROMA_SITING_MPEG2 >*/
  /* How samples are interpolated, for scaling and for chroma. */
  AccelInterpolation method; /*< default=ACCEL_INTERPOLATION_BILINEAR >*/
};

ACCEL_API
AccelOp *accel_convert_color_new (AccelBuffer *src, AccelBuffer *dst);

G_END_DECLS
