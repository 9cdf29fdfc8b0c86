/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelPool2d:
 * @x: the images
 * @y: the result
 * @mode: maximum or average
 * @layout: the layout of the images
 * @window_h: the height of the window
 * @window_w: the width of the window
 * @stride_h: the vertical stride
 * @stride_w: the horizontal stride
 * @pad_h: the padding above and below
 * @pad_w: the padding left and right
 * @count_include_pad: whether average pooling counts the padding in its divisor
 *
 * Max or average pooling over `window_h x window_w` windows moved by
 * `stride_h`, `stride_w` over the image padded by `pad_h`, `pad_w` on each
 * side; an output side is `(in + 2 pad - window) / stride + 1`. Padding must
 * be smaller than the window, so every window holds an image element. Types:
 * f32, f16 or bf16 (computed in f32), contiguous, in the #AccelConvLayout of
 * @layout; @y has @x's batch and channels.
 *
 * Op name: `pool2d`.
 */

G_DEFINE_FINAL_TYPE (AccelPool2d, accel_pool2d, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_X,
  PROP_Y,
  PROP_MODE,
  PROP_LAYOUT,
  PROP_WINDOW_H,
  PROP_WINDOW_W,
  PROP_STRIDE_H,
  PROP_STRIDE_W,
  PROP_PAD_H,
  PROP_PAD_W,
  PROP_COUNT_INCLUDE_PAD,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const AccelDType pool_dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16 };

static void
accel_pool2d_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelPool2d *self = ACCEL_POOL2D (object);

  switch (prop_id)
    {
    case PROP_X:
      accel_op_set_buffer_ (object, &self->x, value, pspec);
      break;
    case PROP_Y:
      accel_op_set_buffer_ (object, &self->y, value, pspec);
      break;
    case PROP_MODE:
      accel_op_set_enum_ (object, (int *) &self->mode, value, pspec);
      break;
    case PROP_LAYOUT:
      accel_op_set_enum_ (object, (int *) &self->layout, value, pspec);
      break;
    case PROP_WINDOW_H:
      accel_op_set_int_ (object, &self->window_h, value, pspec);
      break;
    case PROP_WINDOW_W:
      accel_op_set_int_ (object, &self->window_w, value, pspec);
      break;
    case PROP_STRIDE_H:
      accel_op_set_int_ (object, &self->stride_h, value, pspec);
      break;
    case PROP_STRIDE_W:
      accel_op_set_int_ (object, &self->stride_w, value, pspec);
      break;
    case PROP_PAD_H:
      accel_op_set_int_ (object, &self->pad_h, value, pspec);
      break;
    case PROP_PAD_W:
      accel_op_set_int_ (object, &self->pad_w, value, pspec);
      break;
    case PROP_COUNT_INCLUDE_PAD:
      accel_op_set_boolean_ (object, &self->count_include_pad, value, pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_pool2d_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelPool2d *self = ACCEL_POOL2D (object);

  switch (prop_id)
    {
    case PROP_X:
      g_value_set_object (value, self->x);
      break;
    case PROP_Y:
      g_value_set_object (value, self->y);
      break;
    case PROP_MODE:
      g_value_set_enum (value, self->mode);
      break;
    case PROP_LAYOUT:
      g_value_set_enum (value, self->layout);
      break;
    case PROP_WINDOW_H:
      g_value_set_int (value, self->window_h);
      break;
    case PROP_WINDOW_W:
      g_value_set_int (value, self->window_w);
      break;
    case PROP_STRIDE_H:
      g_value_set_int (value, self->stride_h);
      break;
    case PROP_STRIDE_W:
      g_value_set_int (value, self->stride_w);
      break;
    case PROP_PAD_H:
      g_value_set_int (value, self->pad_h);
      break;
    case PROP_PAD_W:
      g_value_set_int (value, self->pad_w);
      break;
    case PROP_COUNT_INCLUDE_PAD:
      g_value_set_boolean (value, self->count_include_pad);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_pool2d_dispose (GObject *object)
{
  AccelPool2d *self = ACCEL_POOL2D (object);

  g_clear_object (&self->x);
  g_clear_object (&self->y);

  G_OBJECT_CLASS (accel_pool2d_parent_class)->dispose (object);
}

static gboolean
accel_pool2d_validate (AccelOp *op, GError **error)
{
  AccelPool2d *self = ACCEL_POOL2D (op);

  if (!accel_op_require_ ("pool2d", "x", self->x, error)
      || !accel_op_require_ ("pool2d", "y", self->y, error))
    return FALSE;

  if (self->mode != ACCEL_POOL_MAX && self->mode != ACCEL_POOL_AVG)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "pool2d: property “mode” has the unknown value %d", self->mode);
      return FALSE;
    }
  if (self->layout != ACCEL_CONV_LAYOUT_NCHW && self->layout != ACCEL_CONV_LAYOUT_NHWC)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "pool2d: property “layout” has the unknown value %d", self->layout);
      return FALSE;
    }
  const struct { const char *prop; int value; int min; int below; } fields[] = {
    { "window-h", self->window_h, 1, G_MAXINT }, { "window-w", self->window_w, 1, G_MAXINT },
    { "stride-h", self->stride_h, 1, G_MAXINT }, { "stride-w", self->stride_w, 1, G_MAXINT },
    { "pad-h", self->pad_h, 0, self->window_h }, { "pad-w", self->pad_w, 0, self->window_w },
  };
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    if (fields[i].value < fields[i].min || fields[i].value >= fields[i].below)
      {
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "pool2d: property “%s” is %d; it must be at least %d%s",
                     fields[i].prop, fields[i].value, fields[i].min,
                     fields[i].below != G_MAXINT ? " and less than the window" : "");
        return FALSE;
      }
  if (!accel_op_check_dtype (op, "x", pool_dtypes, G_N_ELEMENTS (pool_dtypes), error)
      || !accel_op_check_same_dtype (op, "x", "y", error)
      || !accel_op_check_rank (op, "x", 4, 4, error)
      || !accel_op_check_contiguous (op, "x", error)
      || !accel_op_check_contiguous (op, "y", error))
    return FALSE;

  gboolean nhwc = self->layout == ACCEL_CONV_LAYOUT_NHWC;
  const AccelShape *sx = accel_buffer_get_shape (self->x);
  gint64 n = accel_shape_get_dim (sx, 0);
  gint64 c = accel_shape_get_dim (sx, nhwc ? 3 : 1);
  gint64 h = accel_shape_get_dim (sx, nhwc ? 1 : 2);
  gint64 w = accel_shape_get_dim (sx, nhwc ? 2 : 3);
  gint64 room_h = h + 2 * (gint64) self->pad_h - self->window_h;
  gint64 room_w = w + 2 * (gint64) self->pad_w - self->window_w;
  if (room_h < 0 || room_w < 0)
    {
      g_autofree char *s = accel_op_describe_shape_ (self->x);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "pool2d: the %d x %d window does not fit “x” %s padded by %d x %d",
                   self->window_h, self->window_w, s, self->pad_h, self->pad_w);
      return FALSE;
    }
  gint64 p = room_h / self->stride_h + 1, q = room_w / self->stride_w + 1;
  gint64 want[4] = { n, nhwc ? p : c, nhwc ? q : p, nhwc ? c : q };
  if (n > G_MAXINT || c > G_MAXINT || h > G_MAXINT || w > G_MAXINT)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "pool2d: a dimension of “x” exceeds %d", G_MAXINT);
      return FALSE;
    }
  return accel_op_expect_dims_ (error, "pool2d", "y", self->y, want, 4, "from “x”, the window, stride and padding")
         && accel_op_check_no_alias_ (error, "pool2d", "y", self->y, "x", self->x);
}

static void
accel_pool2d_class_init (AccelPool2dClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_pool2d_set_property;
  object_class->get_property = accel_pool2d_get_property;
  object_class->dispose = accel_pool2d_dispose;
  op_class->validate = accel_pool2d_validate;

  accel_op_class_set_metadata (op_class, "pool2d",
                               "2-D max or average pooling with window, stride and padding");

  accel_op_class_install_buffer (op_class, PROP_X, "x",
                                 "Images [n, c, h, w] (nchw) or [n, h, w, c] (nhwc)",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_Y, "y",
                                 "Result [n, c, p, q] (nchw) or [n, p, q, c] (nhwc)",
                                 ACCEL_ACCESS_WRITE, TRUE);

  /**
   * AccelPool2d:mode:
   *
   * Maximum or average.
   */
  properties[PROP_MODE] =
    g_param_spec_enum ("mode", NULL, "max or avg",
                       ACCEL_TYPE_POOL_MODE, ACCEL_POOL_MAX, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelPool2d:layout:
   *
   * The layout of the images.
   */
  properties[PROP_LAYOUT] =
    g_param_spec_enum ("layout", NULL, "nchw or nhwc",
                       ACCEL_TYPE_CONV_LAYOUT, ACCEL_CONV_LAYOUT_NCHW, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelPool2d:window-h:
   *
   * The height of the window.
   */
  properties[PROP_WINDOW_H] =
    g_param_spec_int ("window-h", NULL, "Window height",
                      1, G_MAXINT, 2, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelPool2d:window-w:
   *
   * The width of the window.
   */
  properties[PROP_WINDOW_W] =
    g_param_spec_int ("window-w", NULL, "Window width",
                      1, G_MAXINT, 2, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelPool2d:stride-h:
   *
   * The vertical stride.
   */
  properties[PROP_STRIDE_H] =
    g_param_spec_int ("stride-h", NULL, "Vertical stride",
                      1, G_MAXINT, 2, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelPool2d:stride-w:
   *
   * The horizontal stride.
   */
  properties[PROP_STRIDE_W] =
    g_param_spec_int ("stride-w", NULL, "Horizontal stride",
                      1, G_MAXINT, 2, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelPool2d:pad-h:
   *
   * Padding rows above and below, less than `window-h`.
   */
  properties[PROP_PAD_H] =
    g_param_spec_int ("pad-h", NULL, "Padding above and below (less than window-h)",
                      0, G_MAXINT, 0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelPool2d:pad-w:
   *
   * Padding columns left and right, less than `window-w`.
   */
  properties[PROP_PAD_W] =
    g_param_spec_int ("pad-w", NULL, "Padding left and right (less than window-w)",
                      0, G_MAXINT, 0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelPool2d:count-include-pad:
   *
   * For average pooling: whether the divisor is the whole window, padding
   * included (as PyTorch by default), or only the image elements in it.
   */
  properties[PROP_COUNT_INCLUDE_PAD] =
    g_param_spec_boolean ("count-include-pad", NULL, "avg: divide by the whole window, padding included",
                          TRUE, ACCEL_OP_PARAM_FLAGS);

  for (guint i = PROP_MODE; i < N_PROPS; i++)
    g_object_class_install_property (object_class, i, properties[i]);
}

static void
accel_pool2d_init (AccelPool2d *self)
{
  self->mode = ACCEL_POOL_MAX;
  self->layout = ACCEL_CONV_LAYOUT_NCHW;
  self->window_h = 2;
  self->window_w = 2;
  self->stride_h = 2;
  self->stride_w = 2;
  self->count_include_pad = TRUE;
}

/**
 * accel_pool2d_new:
 * @x: (transfer none) (nullable): the images
 * @y: (transfer none) (nullable): the result
 * @mode: maximum or average
 *
 * Makes a `pool2d` op with a 2 x 2 window, stride 2, no padding and the nchw
 * layout.
 *
 * Returns: (transfer full): a new #AccelPool2d
 */
AccelOp *
accel_pool2d_new (AccelBuffer *x, AccelBuffer *y, AccelPoolMode mode)
{
  g_return_val_if_fail (x == NULL || ACCEL_IS_BUFFER (x), NULL);
  g_return_val_if_fail (y == NULL || ACCEL_IS_BUFFER (y), NULL);

  return g_object_new (ACCEL_TYPE_POOL2D, "x", x,
                       "y", y,
                       "mode", mode, NULL);
}
