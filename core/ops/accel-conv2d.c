/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelConv2d:
 *
 * Forward 2-D convolution, `y[n, k, p, q] = bias[k] + Σ x[n, c, p·sh − ph + r·dh,
 * q·sw − pw + s·dw] w[k, c', r, s]`, summed over the filter taps `r`, `s` and
 * the channels `c` of filter `k`'s group (`c'` is `c` within the group), with
 * zeros outside the image.
 *
 * Cross-correlation (no filter flip, as cuDNN and PyTorch) in two dimensions
 * with stride, zero padding, dilation and groups (#AccelConv2dParams). Types:
 * f32, f16 or bf16, the same for every buffer, accumulated in f32. Contiguous
 * buffers in the #AccelConvLayout of `params`.
 *
 * Op name: `conv2d`.
 */

static const AccelDType conv_dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16 };

/* The output length of one axis, or -1 where the dilated window does not
 * fit the padded input. */
static gint64
conv_out_len (gint64 in, gint64 window, int stride, int pad, int dilation)
{
  gint64 span = (gint64) dilation * (window - 1) + 1;
  gint64 room = in + 2 * (gint64) pad - span;
  return room < 0 ? -1 : room / stride + 1;
}

/* Dims in the layout's order from logical (n, c, h, w). */
static void
layout_dims (AccelConvLayout layout, gint64 n, gint64 c, gint64 h, gint64 w, gint64 out[4])
{
  out[0] = n;
  if (layout == ACCEL_CONV_LAYOUT_NHWC)
    {
      out[1] = h;
      out[2] = w;
      out[3] = c;
    }
  else
    {
      out[1] = c;
      out[2] = h;
      out[3] = w;
    }
}

gboolean
_accel_conv2d_check_geometry (AccelOp *op,
                              const AccelConv2dParams *p,
                              const char *x_name,
                              AccelBuffer *x,
                              const char *w_name,
                              AccelBuffer *w,
                              const char *y_name,
                              AccelBuffer *y,
                              AccelConv2dRole result,
                              GError **error)
{
  const char *name = accel_op_get_type_name (op);
  const char *names[3] = { x_name, w_name, y_name };

  if (!_accel_op_check_dtypes (op, conv_dtypes, G_N_ELEMENTS (conv_dtypes), error, x_name, w_name, y_name, NULL))
    return FALSE;
  for (guint i = 0; i < 3; i++)
    if (!accel_op_check_rank (op, names[i], 4, 4, error)
        || !accel_op_check_contiguous (op, names[i], error))
      return FALSE;

  gboolean nhwc = p->layout == ACCEL_CONV_LAYOUT_NHWC;
  const AccelShape *sx = accel_buffer_get_shape (x);
  const AccelShape *sw = accel_buffer_get_shape (w);
  gint64 n = accel_shape_get_dim (sx, 0);
  gint64 c = accel_shape_get_dim (sx, nhwc ? 3 : 1);
  gint64 h = accel_shape_get_dim (sx, nhwc ? 1 : 2);
  gint64 wd = accel_shape_get_dim (sx, nhwc ? 2 : 3);
  gint64 k = accel_shape_get_dim (sw, 0);
  gint64 r = accel_shape_get_dim (sw, nhwc ? 1 : 2);
  gint64 s = accel_shape_get_dim (sw, nhwc ? 2 : 3);

  /* The result is judged against the inputs, never the other way round:
   * a wrong `dw` or `dx` is named, not the `dy` it fails to match. */
  const AccelShape *sy = accel_buffer_get_shape (y);
  if (result == ACCEL_CONV2D_ROLE_W && accel_shape_get_dim (sy, nhwc ? 3 : 1) != k)
    {
      g_autofree char *why = g_strdup_printf ("one filter per channel of “%s”", y_name);
      gint64 want[4];
      layout_dims (p->layout, accel_shape_get_dim (sy, nhwc ? 3 : 1), c / MAX (p->groups, 1), r, s, want);
      return accel_op_expect_dims_ (error, name, w_name, w, want, 4, why);
    }
  if (result == ACCEL_CONV2D_ROLE_X)
    {
      gint64 want_c = accel_shape_get_dim (sw, nhwc ? 3 : 1) * p->groups;
      if (n != accel_shape_get_dim (sy, 0) || c != want_c)
        {
          g_autofree char *want = g_strdup_printf ("%" G_GINT64_FORMAT " images (as “%s”) of %" G_GINT64_FORMAT
                                                   " channels (“%s” in %d groups)",
                                                   accel_shape_get_dim (sy, 0), y_name, want_c, w_name, p->groups);
          return accel_op_shape_error_ (error, name, x_name, x, want);
        }
    }
  if (c % p->groups != 0 || k % p->groups != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: property “groups” is %d but “%s” has %" G_GINT64_FORMAT " channels and “%s” %"
                   G_GINT64_FORMAT " filters; both must be multiples of it",
                   name, p->groups, x_name, c, w_name, k);
      return FALSE;
    }
  gint64 want_w[4];
  layout_dims (p->layout, k, c / p->groups, r, s, want_w);
  g_autofree char *why_w = g_strdup_printf ("“%s” has %" G_GINT64_FORMAT " channels in %d groups",
                                            x_name, c, p->groups);
  if (!accel_op_expect_dims_ (error, name, w_name, w, want_w, 4, why_w))
    return FALSE;

  gint64 ph = conv_out_len (h, r, p->stride_h, p->pad_h, p->dilation_h);
  gint64 pw = conv_out_len (wd, s, p->stride_w, p->pad_w, p->dilation_w);
  if (ph < 1 || pw < 1)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "%s: the %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT " filter “%s” (dilation %d x %d) does not fit the "
                   "%" G_GINT64_FORMAT " x %" G_GINT64_FORMAT " image “%s” padded by %d x %d",
                   name, r, s, w_name, p->dilation_h, p->dilation_w, h, wd, x_name, p->pad_h, p->pad_w);
      return FALSE;
    }
  gint64 want_y[4];
  layout_dims (p->layout, n, k, ph, pw, want_y);
  if (result != ACCEL_CONV2D_ROLE_Y)
    {
      g_autoptr(AccelShape) want = accel_shape_new (want_y, 4);
      if (!accel_shape_same_dims (sy, want))
        {
          const char *res_name = result == ACCEL_CONV2D_ROLE_W ? w_name : x_name;
          AccelBuffer *res = result == ACCEL_CONV2D_ROLE_W ? w : x;
          g_autofree char *ys = accel_shape_to_string (sy), *gives = accel_shape_to_string (want);
          g_autofree char *why = g_strdup_printf ("one whose convolution gives “%s” %s, not %s", y_name, ys, gives);
          return accel_op_shape_error_ (error, name, res_name, res, why);
        }
    }
  else if (!accel_op_expect_dims_ (error, name, y_name, y, want_y, 4,
                                   "from the image, filter, stride, padding and dilation"))
    return FALSE;

  gint64 all[] = { n, c, h, wd, k, r, s };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    if (all[i] > G_MAXINT)
      {
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "%s: a dimension of %" G_GINT64_FORMAT " exceeds %d", name, all[i], G_MAXINT);
        return FALSE;
      }
  return TRUE;
}

static gboolean
accel_conv2d_validate (AccelOp *op, GError **error)
{
  AccelConv2d *self = ACCEL_CONV2D (op);

  if (!_accel_conv2d_check_geometry (op, &self->params, "x", self->x, "w", self->w, "y", self->y,
                                     ACCEL_CONV2D_ROLE_Y, error))
    return FALSE;
  if (self->bias != NULL)
    {
      gint64 k[1] = { accel_shape_get_dim (accel_buffer_get_shape (self->w), 0) };
      if (!accel_op_check_same_dtype (op, "x", "bias", error)
          || !accel_op_check_contiguous (op, "bias", error)
          || !accel_op_expect_dims_ (error, "conv2d", "bias", self->bias, k, 1, "one per filter of “w”"))
        return FALSE;
    }
  return accel_op_check_no_alias_ (error, "conv2d", "y", self->y, "x", self->x)
         && accel_op_check_no_alias_ (error, "conv2d", "y", self->y, "w", self->w)
         && accel_op_check_no_alias_ (error, "conv2d", "y", self->y, "bias", self->bias);
}

/* The geometry of conv2d and its backward ops, installed at each op's
 * `params` member. */
static const AccelOpParam geometry_params[] = {
  ACCEL_OP_ENUM (AccelConv2dParams, layout, "layout", "The layout of the images and filters: nchw or nhwc.",
                 accel_conv_layout_get_type, ACCEL_CONV_LAYOUT_NCHW),
  ACCEL_OP_INT (AccelConv2dParams, stride_h, "stride-h", "The vertical stride.",
                1, G_MAXINT, 1),
  ACCEL_OP_INT (AccelConv2dParams, stride_w, "stride-w", "The horizontal stride.",
                1, G_MAXINT, 1),
  ACCEL_OP_INT (AccelConv2dParams, pad_h, "pad-h", "Rows of zeros added above and below the input.",
                0, G_MAXINT, 0),
  ACCEL_OP_INT (AccelConv2dParams, pad_w, "pad-w", "Columns of zeros added left and right of the input.",
                0, G_MAXINT, 0),
  ACCEL_OP_INT (AccelConv2dParams, dilation_h, "dilation-h", "The vertical spacing of filter taps (1: dense).",
                1, G_MAXINT, 1),
  ACCEL_OP_INT (AccelConv2dParams, dilation_w, "dilation-w", "The horizontal spacing of filter taps (1: dense).",
                1, G_MAXINT, 1),
  ACCEL_OP_INT (AccelConv2dParams, groups, "groups",
                "The number of groups: input channels and filters are split into this many groups, each convolved on "
                "its own (depthwise: groups = channels).",
                1, G_MAXINT, 1),
};

void
_accel_conv2d_install_geometry (AccelOpClass *klass, gsize params_offset)
{
  accel_op_class_install_params_at (klass, params_offset, geometry_params, G_N_ELEMENTS (geometry_params));
}

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelConv2d, accel_conv2d, "conv2d",
                                "2-D convolution (cross-correlation) with stride, padding, dilation, groups and bias",
                                _accel_conv2d_params, accel_conv2d_validate,
                                _accel_conv2d_install_geometry (op_class, G_STRUCT_OFFSET (AccelConv2d, params)))
