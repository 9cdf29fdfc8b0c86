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

G_DEFINE_FINAL_TYPE (AccelConv2dBackwardData, accel_conv2d_backward_data, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_DY,
  PROP_W,
  PROP_DX,
  PROP_LAYOUT,
  PROP_STRIDE_H,
  PROP_STRIDE_W,
  PROP_PAD_H,
  PROP_PAD_W,
  PROP_DILATION_H,
  PROP_DILATION_W,
  PROP_GROUPS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
accel_conv2d_backward_data_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelConv2dBackwardData *self = ACCEL_CONV2D_BACKWARD_DATA (object);

  switch (prop_id)
    {
    case PROP_DY:
      accel_op_set_buffer_ (object, &self->dy, value, pspec);
      break;
    case PROP_W:
      accel_op_set_buffer_ (object, &self->w, value, pspec);
      break;
    case PROP_DX:
      accel_op_set_buffer_ (object, &self->dx, value, pspec);
      break;
    case PROP_LAYOUT:
      accel_op_set_enum_ (object, (int *) &self->params.layout, value, pspec);
      break;
    case PROP_STRIDE_H:
      accel_op_set_int_ (object, &self->params.stride_h, value, pspec);
      break;
    case PROP_STRIDE_W:
      accel_op_set_int_ (object, &self->params.stride_w, value, pspec);
      break;
    case PROP_PAD_H:
      accel_op_set_int_ (object, &self->params.pad_h, value, pspec);
      break;
    case PROP_PAD_W:
      accel_op_set_int_ (object, &self->params.pad_w, value, pspec);
      break;
    case PROP_DILATION_H:
      accel_op_set_int_ (object, &self->params.dilation_h, value, pspec);
      break;
    case PROP_DILATION_W:
      accel_op_set_int_ (object, &self->params.dilation_w, value, pspec);
      break;
    case PROP_GROUPS:
      accel_op_set_int_ (object, &self->params.groups, value, pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_conv2d_backward_data_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelConv2dBackwardData *self = ACCEL_CONV2D_BACKWARD_DATA (object);

  switch (prop_id)
    {
    case PROP_DY:
      g_value_set_object (value, self->dy);
      break;
    case PROP_W:
      g_value_set_object (value, self->w);
      break;
    case PROP_DX:
      g_value_set_object (value, self->dx);
      break;
    case PROP_LAYOUT:
      g_value_set_enum (value, self->params.layout);
      break;
    case PROP_STRIDE_H:
      g_value_set_int (value, self->params.stride_h);
      break;
    case PROP_STRIDE_W:
      g_value_set_int (value, self->params.stride_w);
      break;
    case PROP_PAD_H:
      g_value_set_int (value, self->params.pad_h);
      break;
    case PROP_PAD_W:
      g_value_set_int (value, self->params.pad_w);
      break;
    case PROP_DILATION_H:
      g_value_set_int (value, self->params.dilation_h);
      break;
    case PROP_DILATION_W:
      g_value_set_int (value, self->params.dilation_w);
      break;
    case PROP_GROUPS:
      g_value_set_int (value, self->params.groups);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_conv2d_backward_data_dispose (GObject *object)
{
  AccelConv2dBackwardData *self = ACCEL_CONV2D_BACKWARD_DATA (object);

  g_clear_object (&self->dy);
  g_clear_object (&self->w);
  g_clear_object (&self->dx);

  G_OBJECT_CLASS (accel_conv2d_backward_data_parent_class)->dispose (object);
}

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

static void
accel_conv2d_backward_data_class_init (AccelConv2dBackwardDataClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_conv2d_backward_data_set_property;
  object_class->get_property = accel_conv2d_backward_data_get_property;
  object_class->dispose = accel_conv2d_backward_data_dispose;
  op_class->validate = accel_conv2d_backward_data_validate;

  accel_op_class_set_metadata (op_class, "conv2d-backward-data",
                               "Gradient of conv2d with respect to its input: dx from dy and w");

  accel_op_class_install_buffer (op_class, PROP_DY, "dy",
                                 "Gradient of the output, shaped as conv2d y",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_W, "w",
                                 "Filters, shaped as conv2d w",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_DX, "dx",
                                 "Gradient of the input, shaped as conv2d x",
                                 ACCEL_ACCESS_WRITE, TRUE);

  /**
   * AccelConv2dBackwardData:layout:
   *
   * The layout of the images and filters.
   */
  properties[PROP_LAYOUT] =
    g_param_spec_enum ("layout", NULL, "nchw or nhwc",
                       ACCEL_TYPE_CONV_LAYOUT, ACCEL_CONV_LAYOUT_NCHW, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelConv2dBackwardData:stride-h:
   *
   * The vertical stride.
   */
  properties[PROP_STRIDE_H] =
    g_param_spec_int ("stride-h", NULL, "Vertical stride",
                      1, G_MAXINT, 1, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelConv2dBackwardData:stride-w:
   *
   * The horizontal stride.
   */
  properties[PROP_STRIDE_W] =
    g_param_spec_int ("stride-w", NULL, "Horizontal stride",
                      1, G_MAXINT, 1, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelConv2dBackwardData:pad-h:
   *
   * Rows of zeros added above and below the input.
   */
  properties[PROP_PAD_H] =
    g_param_spec_int ("pad-h", NULL, "Zero padding above and below",
                      0, G_MAXINT, 0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelConv2dBackwardData:pad-w:
   *
   * Columns of zeros added left and right of the input.
   */
  properties[PROP_PAD_W] =
    g_param_spec_int ("pad-w", NULL, "Zero padding left and right",
                      0, G_MAXINT, 0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelConv2dBackwardData:dilation-h:
   *
   * The vertical spacing of filter taps (1: dense).
   */
  properties[PROP_DILATION_H] =
    g_param_spec_int ("dilation-h", NULL, "Vertical filter dilation",
                      1, G_MAXINT, 1, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelConv2dBackwardData:dilation-w:
   *
   * The horizontal spacing of filter taps (1: dense).
   */
  properties[PROP_DILATION_W] =
    g_param_spec_int ("dilation-w", NULL, "Horizontal filter dilation",
                      1, G_MAXINT, 1, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelConv2dBackwardData:groups:
   *
   * The number of groups: input channels and filters are split into this
   * many groups, each convolved on its own (depthwise: groups = channels).
   */
  properties[PROP_GROUPS] =
    g_param_spec_int ("groups", NULL, "Number of channel groups",
                      1, G_MAXINT, 1, ACCEL_OP_PARAM_FLAGS);

  for (guint i = PROP_LAYOUT; i < N_PROPS; i++)
    g_object_class_install_property (object_class, i, properties[i]);
}

static void
accel_conv2d_backward_data_init (AccelConv2dBackwardData *self)
{
  self->params.layout = ACCEL_CONV_LAYOUT_NCHW;
  self->params.stride_h = 1;
  self->params.stride_w = 1;
  self->params.dilation_h = 1;
  self->params.dilation_w = 1;
  self->params.groups = 1;
}

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
