/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-conv2d.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_CONV2D_BACKWARD_FILTER (accel_conv2d_backward_filter_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelConv2dBackwardFilter, accel_conv2d_backward_filter, ACCEL, CONV2D_BACKWARD_FILTER, AccelOp)

struct _AccelConv2dBackwardFilter {
  AccelOp parent_instance;

  /*< public >*/
  /* Images, shaped as conv2d x */
  AccelBuffer *x; /*< read required >*/
  /* Gradient of the output, shaped as conv2d y */
  AccelBuffer *dy; /*< read required >*/
  /* The gradient of the filters, shaped as `conv2d`'s `w`. */
  AccelBuffer *dw; /*< write required >*/
  AccelConv2dParams params;
};

ACCEL_API
AccelOp *accel_conv2d_backward_filter_new (AccelBuffer *x, AccelBuffer *dy, AccelBuffer *dw);

G_END_DECLS
