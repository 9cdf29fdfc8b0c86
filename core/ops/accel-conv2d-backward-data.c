/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelConv2dBackwardData:
 * @dy: the gradient of the output, shaped as `conv2d`'s `y`
 * @w: the filters
 * @dx: the gradient of the images, shaped as `conv2d`'s `x`
 * @params: the geometry of the forward convolution
 *
 * The gradient of `conv2d` with respect to its images: given the gradient @dy
 * of its output and the filters @w, `dx = ∂L/∂x` (the transposed convolution).
 * @dx has the images' shape, which the geometry must map onto @dy's (several
 * image sizes can map to one output size with strides above 1). @dx is
 * overwritten.
 *
 * Cross-correlation (no filter flip, as cuDNN and PyTorch) in two dimensions
 * with stride, zero padding, dilation and groups (#AccelConv2dParams). Types:
 * f32, f16 or bf16, the same for every buffer, accumulated in f32. Contiguous
 * buffers in the #AccelConvLayout of @params.
 *
 * Op name: `conv2d-backward-data`.
 */

static gboolean
accel_conv2d_backward_data_validate (AccelOp *op, GError **error)
{
  AccelConv2dBackwardData *self = ACCEL_CONV2D_BACKWARD_DATA (op);

  if (!accel_op_require_ ("conv2d-backward-data", "dy", self->dy, error)
      || !accel_op_require_ ("conv2d-backward-data", "w", self->w, error)
      || !accel_op_require_ ("conv2d-backward-data", "dx", self->dx, error))
    return FALSE;

  return _accel_conv2d_check_geometry (op, &self->params, "dx", self->dx, "w", self->w, "dy", self->dy, error)
         && accel_op_check_no_alias_ (error, "conv2d-backward-data", "dx", self->dx, "dy", self->dy)
         && accel_op_check_no_alias_ (error, "conv2d-backward-data", "dx", self->dx, "w", self->w);
}

static const AccelOpParam conv2d_backward_data_params[] = {
  ACCEL_OP_BUFFER (AccelConv2dBackwardData, dy, "dy", "Gradient of the output, shaped as conv2d y",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelConv2dBackwardData, w, "w", "Filters, shaped as conv2d w",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelConv2dBackwardData, dx, "dx", "Gradient of the input, shaped as conv2d x",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
  /**
   * AccelConv2dBackwardData:layout:
   *
   * The layout of the images and filters.
   */
  ACCEL_OP_ENUM (AccelConv2dBackwardData, params.layout, "layout", "nchw or nhwc",
                 accel_conv_layout_get_type, ACCEL_CONV_LAYOUT_NCHW),
  /**
   * AccelConv2dBackwardData:stride-h:
   *
   * The vertical stride.
   */
  ACCEL_OP_INT (AccelConv2dBackwardData, params.stride_h, "stride-h", "Vertical stride",
                1, G_MAXINT, 1),
  /**
   * AccelConv2dBackwardData:stride-w:
   *
   * The horizontal stride.
   */
  ACCEL_OP_INT (AccelConv2dBackwardData, params.stride_w, "stride-w", "Horizontal stride",
                1, G_MAXINT, 1),
  /**
   * AccelConv2dBackwardData:pad-h:
   *
   * Rows of zeros added above and below the input.
   */
  ACCEL_OP_INT (AccelConv2dBackwardData, params.pad_h, "pad-h", "Zero padding above and below",
                0, G_MAXINT, 0),
  /**
   * AccelConv2dBackwardData:pad-w:
   *
   * Columns of zeros added left and right of the input.
   */
  ACCEL_OP_INT (AccelConv2dBackwardData, params.pad_w, "pad-w", "Zero padding left and right",
                0, G_MAXINT, 0),
  /**
   * AccelConv2dBackwardData:dilation-h:
   *
   * The vertical spacing of filter taps (1: dense).
   */
  ACCEL_OP_INT (AccelConv2dBackwardData, params.dilation_h, "dilation-h", "Vertical filter dilation",
                1, G_MAXINT, 1),
  /**
   * AccelConv2dBackwardData:dilation-w:
   *
   * The horizontal spacing of filter taps (1: dense).
   */
  ACCEL_OP_INT (AccelConv2dBackwardData, params.dilation_w, "dilation-w", "Horizontal filter dilation",
                1, G_MAXINT, 1),
  /**
   * AccelConv2dBackwardData:groups:
   *
   * The number of groups: input channels and filters are split into this
   * many groups, each convolved on its own (depthwise: groups = channels).
   */
  ACCEL_OP_INT (AccelConv2dBackwardData, params.groups, "groups", "Number of channel groups",
                1, G_MAXINT, 1),
};

ACCEL_DEFINE_OP_TYPE (AccelConv2dBackwardData, accel_conv2d_backward_data, "conv2d-backward-data",
                      "Gradient of conv2d with respect to its input: dx from dy and w",
                      conv2d_backward_data_params, accel_conv2d_backward_data_validate)

/**
 * accel_conv2d_backward_data_new:
 * @dy: (transfer none) (nullable): the gradient of the output, shaped as `conv2d`'s `y`
 * @w: (transfer none) (nullable): the filters
 * @dx: (transfer none) (nullable): the gradient of the images, shaped as `conv2d`'s `x`
 *
 * Makes a `conv2d-backward-data` op with the default geometry.
 *
 * Returns: (transfer full): a new #AccelConv2dBackwardData
 */
AccelOp *
accel_conv2d_backward_data_new (AccelBuffer *dy, AccelBuffer *w, AccelBuffer *dx)
{
  g_return_val_if_fail (dy == NULL || ACCEL_IS_BUFFER (dy), NULL);
  g_return_val_if_fail (w == NULL || ACCEL_IS_BUFFER (w), NULL);
  g_return_val_if_fail (dx == NULL || ACCEL_IS_BUFFER (dx), NULL);

  return g_object_new (ACCEL_TYPE_CONV2D_BACKWARD_DATA, "dy", dy,
                       "w", w,
                       "dx", dx, NULL);
}
