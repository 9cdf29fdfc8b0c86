/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelConv2dBackwardFilter:
 * @x: the images
 * @dy: the gradient of the output
 * @dw: the gradient of the filters, shaped as `conv2d`'s `w`
 * @params: the geometry of the forward convolution
 *
 * The gradient of `conv2d` with respect to its filters: given the images @x and
 * the gradient @dy of the output, `dw = ∂L/∂w`. @dw is overwritten.
 *
 * Cross-correlation (no filter flip, as cuDNN and PyTorch) in two dimensions
 * with stride, zero padding, dilation and groups (#AccelConv2dParams). Types:
 * f32, f16 or bf16, the same for every buffer, accumulated in f32. Contiguous
 * buffers in the #AccelConvLayout of @params.
 *
 * Op name: `conv2d-backward-filter`.
 */

static gboolean
accel_conv2d_backward_filter_validate (AccelOp *op, GError **error)
{
  AccelConv2dBackwardFilter *self = ACCEL_CONV2D_BACKWARD_FILTER (op);

  if (!accel_op_require_ ("conv2d-backward-filter", "x", self->x, error)
      || !accel_op_require_ ("conv2d-backward-filter", "dy", self->dy, error)
      || !accel_op_require_ ("conv2d-backward-filter", "dw", self->dw, error))
    return FALSE;

  return _accel_conv2d_check_geometry (op, &self->params, "x", self->x, "dw", self->dw, "dy", self->dy, error)
         && accel_op_check_no_alias_ (error, "conv2d-backward-filter", "dw", self->dw, "x", self->x)
         && accel_op_check_no_alias_ (error, "conv2d-backward-filter", "dw", self->dw, "dy", self->dy);
}

static const AccelOpParam conv2d_backward_filter_params[] = {
  ACCEL_OP_BUFFER (AccelConv2dBackwardFilter, x, "x", "Images, shaped as conv2d x",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelConv2dBackwardFilter, dy, "dy", "Gradient of the output, shaped as conv2d y",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelConv2dBackwardFilter, dw, "dw", "Gradient of the filters, shaped as conv2d w",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
  /**
   * AccelConv2dBackwardFilter:layout:
   *
   * The layout of the images and filters.
   */
  ACCEL_OP_ENUM (AccelConv2dBackwardFilter, params.layout, "layout", "nchw or nhwc",
                 accel_conv_layout_get_type, ACCEL_CONV_LAYOUT_NCHW),
  /**
   * AccelConv2dBackwardFilter:stride-h:
   *
   * The vertical stride.
   */
  ACCEL_OP_INT (AccelConv2dBackwardFilter, params.stride_h, "stride-h", "Vertical stride",
                1, G_MAXINT, 1),
  /**
   * AccelConv2dBackwardFilter:stride-w:
   *
   * The horizontal stride.
   */
  ACCEL_OP_INT (AccelConv2dBackwardFilter, params.stride_w, "stride-w", "Horizontal stride",
                1, G_MAXINT, 1),
  /**
   * AccelConv2dBackwardFilter:pad-h:
   *
   * Rows of zeros added above and below the input.
   */
  ACCEL_OP_INT (AccelConv2dBackwardFilter, params.pad_h, "pad-h", "Zero padding above and below",
                0, G_MAXINT, 0),
  /**
   * AccelConv2dBackwardFilter:pad-w:
   *
   * Columns of zeros added left and right of the input.
   */
  ACCEL_OP_INT (AccelConv2dBackwardFilter, params.pad_w, "pad-w", "Zero padding left and right",
                0, G_MAXINT, 0),
  /**
   * AccelConv2dBackwardFilter:dilation-h:
   *
   * The vertical spacing of filter taps (1: dense).
   */
  ACCEL_OP_INT (AccelConv2dBackwardFilter, params.dilation_h, "dilation-h", "Vertical filter dilation",
                1, G_MAXINT, 1),
  /**
   * AccelConv2dBackwardFilter:dilation-w:
   *
   * The horizontal spacing of filter taps (1: dense).
   */
  ACCEL_OP_INT (AccelConv2dBackwardFilter, params.dilation_w, "dilation-w", "Horizontal filter dilation",
                1, G_MAXINT, 1),
  /**
   * AccelConv2dBackwardFilter:groups:
   *
   * The number of groups: input channels and filters are split into this
   * many groups, each convolved on its own (depthwise: groups = channels).
   */
  ACCEL_OP_INT (AccelConv2dBackwardFilter, params.groups, "groups", "Number of channel groups",
                1, G_MAXINT, 1),
};

ACCEL_DEFINE_OP_TYPE (AccelConv2dBackwardFilter, accel_conv2d_backward_filter, "conv2d-backward-filter",
                      "Gradient of conv2d with respect to its filters: dw from x and dy",
                      conv2d_backward_filter_params, accel_conv2d_backward_filter_validate)

/**
 * accel_conv2d_backward_filter_new:
 * @x: (transfer none) (nullable): the images
 * @dy: (transfer none) (nullable): the gradient of the output
 * @dw: (transfer none) (nullable): the gradient of the filters, shaped as `conv2d`'s `w`
 *
 * Makes a `conv2d-backward-filter` op with the default geometry.
 *
 * Returns: (transfer full): a new #AccelConv2dBackwardFilter
 */
AccelOp *
accel_conv2d_backward_filter_new (AccelBuffer *x, AccelBuffer *dy, AccelBuffer *dw)
{
  g_return_val_if_fail (x == NULL || ACCEL_IS_BUFFER (x), NULL);
  g_return_val_if_fail (dy == NULL || ACCEL_IS_BUFFER (dy), NULL);
  g_return_val_if_fail (dw == NULL || ACCEL_IS_BUFFER (dw), NULL);

  return g_object_new (ACCEL_TYPE_CONV2D_BACKWARD_FILTER, "x", x,
                       "dy", dy,
                       "dw", dw, NULL);
}
