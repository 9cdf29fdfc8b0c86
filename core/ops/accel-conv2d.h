/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

/**
 * AccelConvLayout:
 * @ACCEL_CONV_LAYOUT_NCHW: images `[n, c, h, w]`, filters `[k, c / groups, r, s]`
 * @ACCEL_CONV_LAYOUT_NHWC: images `[n, h, w, c]`, filters `[k, r, s, c / groups]`
 *
 * The memory layout of the images and filters of `conv2d`, its backward
 * ops and `pool2d`.
 */
typedef enum {
  ACCEL_CONV_LAYOUT_NCHW,
  ACCEL_CONV_LAYOUT_NHWC,
} AccelConvLayout;

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

#define ACCEL_TYPE_CONV2D (accel_conv2d_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelConv2d, accel_conv2d, ACCEL, CONV2D, AccelOp)

struct _AccelConv2d {
  AccelOp parent_instance;

  /*< public >*/
  /* Images [n, c, h, w] (nchw) or [n, h, w, c] (nhwc) */
  AccelBuffer *x; /*< read required >*/
  /* Filters [k, c / groups, r, s] (nchw) or [k, r, s, c / groups] (nhwc) */
  AccelBuffer *w; /*< read required >*/
  /* Optional bias [k], one per filter */
  AccelBuffer *bias; /*< read >*/
  /* Result [n, k, p, q] (nchw) or [n, p, q, k] (nhwc) */
  AccelBuffer *y; /*< write required >*/
  AccelConv2dParams params;
};

ACCEL_API
AccelOp *accel_conv2d_new (AccelBuffer *x, AccelBuffer *w, AccelBuffer *y);

G_END_DECLS
