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

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelConv2dBackwardFilter, accel_conv2d_backward_filter, "conv2d-backward-filter",
                                "Gradient of conv2d with respect to its filters: dw from x and dy",
                                _accel_conv2d_backward_filter_params, accel_conv2d_backward_filter_validate,
                                _accel_conv2d_install_geometry (op_class, G_STRUCT_OFFSET (AccelConv2dBackwardFilter, params)))
