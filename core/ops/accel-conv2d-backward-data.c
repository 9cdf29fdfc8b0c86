/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelConv2dBackwardData:
 *
 * The gradient of `conv2d` with respect to its images: given the gradient `dy`
 * of its output and the filters `w`, `dx = ∂L/∂x` (the transposed convolution).
 * `dx` has the images' shape, which the geometry must map onto `dy`'s (several
 * image sizes can map to one output size with strides above 1). `dx` is
 * overwritten.
 *
 * Cross-correlation (no filter flip, as cuDNN and PyTorch) in two dimensions
 * with stride, zero padding, dilation and groups (#AccelConv2dParams). Types:
 * f32, f16 or bf16, the same for every buffer, accumulated in f32. Contiguous
 * buffers in the #AccelConvLayout of `params`.
 *
 * Op name: `conv2d-backward-data`.
 */

static gboolean
accel_conv2d_backward_data_validate (AccelOp *op, GError **error)
{
  AccelConv2dBackwardData *self = ACCEL_CONV2D_BACKWARD_DATA (op);

  return _accel_conv2d_check_geometry (op, &self->params, "dx", self->dx, "w", self->w, "dy", self->dy,
                                       ACCEL_CONV2D_ROLE_X, error)
         && _accel_op_check_results_alias (op, error);
}

static const AccelOpParam conv2d_backward_data_params[] = {
  ACCEL_OP_BUFFER (AccelConv2dBackwardData, dy, "dy", "The gradient of the output, shaped as `conv2d`'s `y`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelConv2dBackwardData, w, "w", "Filters, shaped as conv2d w",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelConv2dBackwardData, dx, "dx", "The gradient of the images, shaped as `conv2d`'s `x`.",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
};

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelConv2dBackwardData, accel_conv2d_backward_data, "conv2d-backward-data",
                                "Gradient of conv2d with respect to its input: dx from dy and w",
                                conv2d_backward_data_params, accel_conv2d_backward_data_validate,
                                _accel_conv2d_install_geometry (op_class, G_STRUCT_OFFSET (AccelConv2dBackwardData, params)))

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
  return g_object_new (ACCEL_TYPE_CONV2D_BACKWARD_DATA, "dy", dy,
                       "w", w,
                       "dx", dx, NULL);
}
