/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-conv2d.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_CONV2D_BACKWARD_DATA (accel_conv2d_backward_data_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelConv2dBackwardData, accel_conv2d_backward_data, ACCEL, CONV2D_BACKWARD_DATA, AccelOp)

struct _AccelConv2dBackwardData {
  AccelOp parent_instance;

  /*< public >*/
  /* The gradient of the output, shaped as `conv2d`'s `y`. */
  AccelBuffer *dy; /*< read required >*/
  /* Filters, shaped as conv2d w */
  AccelBuffer *w; /*< read required >*/
  /* The gradient of the images, shaped as `conv2d`'s `x`. */
  AccelBuffer *dx; /*< write required >*/
  AccelConv2dParams params;
};

ACCEL_API
AccelOp *accel_conv2d_backward_data_new (AccelBuffer *dy, AccelBuffer *w, AccelBuffer *dx);

G_END_DECLS
