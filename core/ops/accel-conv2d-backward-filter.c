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

G_DEFINE_FINAL_TYPE (AccelConv2dBackwardFilter, accel_conv2d_backward_filter, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_X,
  PROP_DY,
  PROP_DW,
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
accel_conv2d_backward_filter_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelConv2dBackwardFilter *self = ACCEL_CONV2D_BACKWARD_FILTER (object);

  switch (prop_id)
    {
    case PROP_X:
      accel_op_set_buffer_ (object, &self->x, value, pspec);
      break;
    case PROP_DY:
      accel_op_set_buffer_ (object, &self->dy, value, pspec);
      break;
    case PROP_DW:
      accel_op_set_buffer_ (object, &self->dw, value, pspec);
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
accel_conv2d_backward_filter_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelConv2dBackwardFilter *self = ACCEL_CONV2D_BACKWARD_FILTER (object);

  switch (prop_id)
    {
    case PROP_X:
      g_value_set_object (value, self->x);
      break;
    case PROP_DY:
      g_value_set_object (value, self->dy);
      break;
    case PROP_DW:
      g_value_set_object (value, self->dw);
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
accel_conv2d_backward_filter_dispose (GObject *object)
{
  AccelConv2dBackwardFilter *self = ACCEL_CONV2D_BACKWARD_FILTER (object);

  g_clear_object (&self->x);
  g_clear_object (&self->dy);
  g_clear_object (&self->dw);

  G_OBJECT_CLASS (accel_conv2d_backward_filter_parent_class)->dispose (object);
}

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

static void
accel_conv2d_backward_filter_class_init (AccelConv2dBackwardFilterClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_conv2d_backward_filter_set_property;
  object_class->get_property = accel_conv2d_backward_filter_get_property;
  object_class->dispose = accel_conv2d_backward_filter_dispose;
  op_class->validate = accel_conv2d_backward_filter_validate;

  accel_op_class_set_metadata (op_class, "conv2d-backward-filter",
                               "Gradient of conv2d with respect to its filters: dw from x and dy");

  accel_op_class_install_buffer (op_class, PROP_X, "x",
                                 "Images, shaped as conv2d x",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_DY, "dy",
                                 "Gradient of the output, shaped as conv2d y",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_DW, "dw",
                                 "Gradient of the filters, shaped as conv2d w",
                                 ACCEL_ACCESS_WRITE, TRUE);

  /**
   * AccelConv2dBackwardFilter:layout:
   *
   * The layout of the images and filters.
   */
  properties[PROP_LAYOUT] =
    g_param_spec_enum ("layout", NULL, "nchw or nhwc",
                       ACCEL_TYPE_CONV_LAYOUT, ACCEL_CONV_LAYOUT_NCHW, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelConv2dBackwardFilter:stride-h:
   *
   * The vertical stride.
   */
  properties[PROP_STRIDE_H] =
    g_param_spec_int ("stride-h", NULL, "Vertical stride",
                      1, G_MAXINT, 1, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelConv2dBackwardFilter:stride-w:
   *
   * The horizontal stride.
   */
  properties[PROP_STRIDE_W] =
    g_param_spec_int ("stride-w", NULL, "Horizontal stride",
                      1, G_MAXINT, 1, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelConv2dBackwardFilter:pad-h:
   *
   * Rows of zeros added above and below the input.
   */
  properties[PROP_PAD_H] =
    g_param_spec_int ("pad-h", NULL, "Zero padding above and below",
                      0, G_MAXINT, 0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelConv2dBackwardFilter:pad-w:
   *
   * Columns of zeros added left and right of the input.
   */
  properties[PROP_PAD_W] =
    g_param_spec_int ("pad-w", NULL, "Zero padding left and right",
                      0, G_MAXINT, 0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelConv2dBackwardFilter:dilation-h:
   *
   * The vertical spacing of filter taps (1: dense).
   */
  properties[PROP_DILATION_H] =
    g_param_spec_int ("dilation-h", NULL, "Vertical filter dilation",
                      1, G_MAXINT, 1, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelConv2dBackwardFilter:dilation-w:
   *
   * The horizontal spacing of filter taps (1: dense).
   */
  properties[PROP_DILATION_W] =
    g_param_spec_int ("dilation-w", NULL, "Horizontal filter dilation",
                      1, G_MAXINT, 1, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelConv2dBackwardFilter:groups:
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
accel_conv2d_backward_filter_init (AccelConv2dBackwardFilter *self)
{
  self->params.layout = ACCEL_CONV_LAYOUT_NCHW;
  self->params.stride_h = 1;
  self->params.stride_w = 1;
  self->params.dilation_h = 1;
  self->params.dilation_w = 1;
  self->params.groups = 1;
}

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
