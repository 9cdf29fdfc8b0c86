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
  AccelBuffer *x;
  AccelBuffer *y;
  AccelPoolMode mode;
  AccelConvLayout layout;
  int window_h;
  int window_w;
  int stride_h;
  int stride_w;
  int pad_h;
  int pad_w;
  gboolean count_include_pad;
};

ACCEL_API
AccelOp *accel_pool2d_new (AccelBuffer *x, AccelBuffer *y, AccelPoolMode mode);

G_END_DECLS
