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

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelConv2dBackwardData, accel_conv2d_backward_data, "conv2d-backward-data",
                                "Gradient of conv2d with respect to its input: dx from dy and w",
                                _accel_conv2d_backward_data_params, accel_conv2d_backward_data_validate,
                                _accel_conv2d_install_geometry (op_class, G_STRUCT_OFFSET (AccelConv2dBackwardData, params)))
