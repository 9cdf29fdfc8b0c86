/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-conv2d.h"

G_BEGIN_DECLS

/**
 * AccelPoolMode:
 * @ACCEL_POOL_MAX: the largest value in the window (padding never wins)
 * @ACCEL_POOL_AVG: the mean of the window (see #AccelPool2d:count-include-pad)
 *
 * What `pool2d` computes over each window.
 */
typedef enum {
  ACCEL_POOL_MAX,
  ACCEL_POOL_AVG,
} AccelPoolMode;

#define ACCEL_TYPE_POOL2D (accel_pool2d_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelPool2d, accel_pool2d, ACCEL, POOL2D, AccelOp)

struct _AccelPool2d {
  AccelOp parent_instance;

  /*< public >*/
  /* Images [n, c, h, w] (nchw) or [n, h, w, c] (nhwc) */
  AccelBuffer *x; /*< read required >*/
  /* Result [n, c, p, q] (nchw) or [n, p, q, c] (nhwc) */
  AccelBuffer *y; /*< write required >*/
  /* Maximum or average. */
  AccelPoolMode mode; /*< default=ACCEL_POOL_MAX >*/
  /* The layout of the images. */
  AccelConvLayout layout; /*< default=ACCEL_CONV_LAYOUT_NCHW >*/
  /* The height of the window. */
  int window_h; /*< min=1 max=G_MAXINT default=2 >*/
  /* The width of the window. */
  int window_w; /*< min=1 max=G_MAXINT default=2 >*/
  /* The vertical stride. */
  int stride_h; /*< min=1 max=G_MAXINT default=2 >*/
  /* The horizontal stride. */
  int stride_w; /*< min=1 max=G_MAXINT default=2 >*/
  /* Padding rows above and below, less than `window-h`. */
  int pad_h; /*< min=0 max=G_MAXINT default=0 >*/
  /* Padding columns left and right, less than `window-w`. */
  int pad_w; /*< min=0 max=G_MAXINT default=0 >*/
  /* For average pooling: whether the divisor is the whole window, padding
   * included (as PyTorch by default), or only the image elements in it. */
  gboolean count_include_pad; /*< default=TRUE >*/
};

ACCEL_API
AccelOp *accel_pool2d_new (AccelBuffer *x, AccelBuffer *y, AccelPoolMode mode);

G_END_DECLS
