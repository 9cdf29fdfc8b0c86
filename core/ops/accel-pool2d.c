/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelPool2d:
 *
 * Max or average pooling over `window_h x window_w` windows moved by
 * `stride_h`, `stride_w` over the image padded by `pad_h`, `pad_w` on each
 * side; an output side is `(in + 2 pad - window) / stride + 1`. Padding must
 * be smaller than the window, so every window holds an image element. Types:
 * f32, f16 or bf16 (computed in f32), contiguous, in the #AccelConvLayout of
 * `layout`; `y` has `x`'s batch and channels.
 *
 * Op name: `pool2d`.
 */

static const AccelDType pool_dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16 };

static gboolean
accel_pool2d_validate (AccelOp *op, GError **error)
{
  AccelPool2d *self = ACCEL_POOL2D (op);

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
  if (!_accel_op_check_dtypes (op, pool_dtypes, G_N_ELEMENTS (pool_dtypes), error, "x", "y", NULL)
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

ACCEL_DEFINE_OP_TYPE (AccelPool2d, accel_pool2d, "pool2d",
                      "2-D max or average pooling with window, stride and padding",
                      _accel_pool2d_params, accel_pool2d_validate)
