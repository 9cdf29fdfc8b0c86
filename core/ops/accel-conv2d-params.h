/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-op-enums.h"

G_BEGIN_DECLS

/**
 * AccelConv2dParams:
 * @layout: the layout of images and filters
 * @stride_h: the vertical stride, at least 1
 * @stride_w: the horizontal stride, at least 1
 * @pad_h: the zero padding above and below, at least 0
 * @pad_w: the zero padding left and right, at least 0
 * @dilation_h: the vertical filter dilation, at least 1
 * @dilation_w: the horizontal filter dilation, at least 1
 * @groups: the number of groups; channels and filters divide evenly into them
 *
 * The geometry that `conv2d` and its backward ops share, each field the
 * property of the same name in kebab-case (`stride-h`, …). An output side
 * is `(in + 2 pad - dilation (window - 1) - 1) / stride + 1`.
 */
typedef struct _AccelConv2dParams AccelConv2dParams;
struct _AccelConv2dParams {
  AccelConvLayout layout;
  int stride_h;
  int stride_w;
  int pad_h;
  int pad_w;
  int dilation_h;
  int dilation_w;
  int groups;
};

G_END_DECLS
