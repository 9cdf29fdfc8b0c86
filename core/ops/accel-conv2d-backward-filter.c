/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelConv2dBackwardFilter:
 *
 * The gradient of `conv2d` with respect to its filters: given the images `x` and
 * the gradient `dy` of the output, `dw = ∂L/∂w`. `dw` is overwritten.
 *
 * Cross-correlation (no filter flip, as cuDNN and PyTorch) in two dimensions
 * with stride, zero padding, dilation and groups (#AccelConv2dParams). Types:
 * f32, f16 or bf16, the same for every buffer, accumulated in f32. Contiguous
 * buffers in the #AccelConvLayout of `params`.
 *
 * Op name: `conv2d-backward-filter`.
 */

static gboolean
accel_conv2d_backward_filter_validate (AccelOp *op, GError **error)
{
  AccelConv2dBackwardFilter *self = ACCEL_CONV2D_BACKWARD_FILTER (op);

  return _accel_conv2d_check_geometry (op, &self->params, "x", self->x, "dw", self->dw, "dy", self->dy,
                                       ACCEL_CONV2D_ROLE_W, error)
         && _accel_op_check_results_alias (op, error);
}

static const AccelOpParam conv2d_backward_filter_params[] = {
  ACCEL_OP_BUFFER (AccelConv2dBackwardFilter, x, "x", "Images, shaped as conv2d x",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelConv2dBackwardFilter, dy, "dy", "Gradient of the output, shaped as conv2d y",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelConv2dBackwardFilter, dw, "dw", "The gradient of the filters, shaped as `conv2d`'s `w`.",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
};

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelConv2dBackwardFilter, accel_conv2d_backward_filter, "conv2d-backward-filter",
                                "Gradient of conv2d with respect to its filters: dw from x and dy",
                                conv2d_backward_filter_params, accel_conv2d_backward_filter_validate,
                                _accel_conv2d_install_geometry (op_class, G_STRUCT_OFFSET (AccelConv2dBackwardFilter, params)))

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
  return g_object_new (ACCEL_TYPE_CONV2D_BACKWARD_FILTER, "x", x,
                       "dy", dy,
                       "dw", dw, NULL);
}
