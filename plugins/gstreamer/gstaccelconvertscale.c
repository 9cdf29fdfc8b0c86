/* gstaccelconvertscale.c: accelconvertscale, colour conversion and
 * scaling in one element on an Accel device, negotiated as
 * videoconvertscale negotiates: any of the formats and sizes on either
 * side, the input's where downstream leaves them open.
 *
 *   gst-launch-1.0 videotestsrc ! video/x-raw,format=NV12,width=3840,height=2160 \
 *     ! accelconvertscale device=cuda:0 ! video/x-raw,format=RGBA,width=1920,height=1080 ! fakesink
 *
 * Same format and colorimetry: resize, plane by plane; otherwise
 * convert-color, which scales as it converts. Where that op cannot shrink
 * as far as asked in one step (accel_image_get_max_shrink(): area and
 * lanczos3 8 times an axis, a conversion into subsampled chroma 16), the
 * frame is first shrunk in its own format by resize steps, with the same
 * method, each within what resize takes: backwards from the destination,
 * the op reads the largest size it can take and each step before makes
 * the largest its successor can take, so that the fewest and the gentlest
 * steps go first. (videoconvertscale has no limit; this keeps that
 * promise.)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gstaccelconvertscale.h"

struct _GstAccelConvertScale {
  GstAccelTransform parent_instance;
  AccelInterpolation method;
};

G_DEFINE_FINAL_TYPE (GstAccelConvertScale, gst_accel_convert_scale, GST_TYPE_ACCEL_TRANSFORM)
GST_ELEMENT_REGISTER_DEFINE (accelconvertscale, "accelconvertscale", GST_RANK_NONE, GST_TYPE_ACCEL_CONVERT_SCALE);

/* Anything the element can make: every format, size and colorimetry, in
 * host or device memory. */
static GstCaps *
gst_accel_convert_scale_transform_caps (GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
                                        GstCaps *filter)
{
  GstCaps *open = gst_caps_new_empty ();
  for (guint i = 0; i < gst_caps_get_size (caps); i++)
    {
      GstStructure *s = gst_structure_copy (gst_caps_get_structure (caps, i));
      gst_structure_remove_fields (s, "format", "colorimetry", "chroma-site", NULL);
      gst_structure_set (s, "width", GST_TYPE_INT_RANGE, 1, ACCEL_IMAGE_MAX_SIZE, "height", GST_TYPE_INT_RANGE, 1,
                         ACCEL_IMAGE_MAX_SIZE, NULL);
      if (gst_structure_has_field (s, "pixel-aspect-ratio"))
        gst_structure_set (s, "pixel-aspect-ratio", GST_TYPE_FRACTION_RANGE, 1, G_MAXINT, G_MAXINT, 1, NULL);
      gst_caps_append_structure (open, s);
    }
  return gst_accel_caps_finish (open, filter);
}

/* The resize steps before an op that shrinks at most @limit times an axis
 * (see the top of this file). */
static void
add_shrink_steps (GstAccelConvertScale *self, const GstVideoInfo *in, AccelImageFormat format, int out_width,
                  int out_height, int limit, AccelInterpolation method)
{
  gint64 in_w = GST_VIDEO_INFO_WIDTH (in), in_h = GST_VIDEO_INFO_HEIGHT (in);
  gint64 w = out_width, h = out_height, lim = limit;
  int step_limit = accel_image_get_max_shrink (method, format, FALSE);
  gint64 sizes[2][8];
  guint n = 0;
  while ((in_w > w * lim || in_h > h * lim) && n < G_N_ELEMENTS (sizes[0]))
    {
      w = sizes[0][n] = MIN (in_w, w * lim);
      h = sizes[1][n] = MIN (in_h, h * lim);
      n++;
      lim = step_limit;
    }
  for (guint i = n; i-- > 0;)
    {
      GstVideoInfo info;
      gst_video_info_set_format (&info, GST_VIDEO_INFO_FORMAT (in), (guint) sizes[0][i], (guint) sizes[1][i]);
      info.colorimetry = in->colorimetry;
      info.chroma_site = in->chroma_site;
      GST_DEBUG_OBJECT (self, "shrinking to %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT " first", sizes[0][i],
                        sizes[1][i]);
      gst_accel_transform_add_step (GST_ACCEL_TRANSFORM (self), accel_resize_new (NULL, NULL, method), &info);
    }
}

static AccelOp *
gst_accel_convert_scale_make_op (GstAccelTransform *trans, const GstVideoInfo *in, const GstVideoInfo *out,
                                 GError **error)
{
  GstAccelConvertScale *self = GST_ACCEL_CONVERT_SCALE (trans);
  AccelColorMatrix im, om;
  AccelColorRange ir, or;
  AccelChromaSiting is, os;
  AccelImageFormat inf, outf;

  if (!gst_accel_image_format (GST_VIDEO_INFO_FORMAT (in), &inf)
      || !gst_accel_image_format (GST_VIDEO_INFO_FORMAT (out), &outf))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED, "unsupported format");
      return NULL;
    }
  gst_accel_colorimetry (in, &im, &ir, &is);
  gst_accel_colorimetry (out, &om, &or, &os);
  gboolean same_size = GST_VIDEO_INFO_WIDTH (in) == GST_VIDEO_INFO_WIDTH (out)
                    && GST_VIDEO_INFO_HEIGHT (in) == GST_VIDEO_INFO_HEIGHT (out);
  /* The same size is a copy: nearest makes it exact whatever the method. */
  AccelInterpolation method = same_size ? ACCEL_INTERPOLATION_NEAREST : self->method;
  gboolean yuv = !accel_image_format_is_rgb (inf);
  gboolean convert = !(inf == outf && (!yuv || (im == om && ir == or && is == os)));
  add_shrink_steps (self, in, inf, GST_VIDEO_INFO_WIDTH (out), GST_VIDEO_INFO_HEIGHT (out),
                    accel_image_get_max_shrink (method, outf, convert), method);
  if (!convert)
    return accel_resize_new (NULL, NULL, method);

  AccelOp *op = accel_convert_color_new (NULL, NULL);
  g_object_set (op, "src-matrix", im, "src-range", ir, "src-chroma-siting", is, "dst-matrix", om, "dst-range", or,
                "dst-chroma-siting", os, "method", self->method, NULL);
  return op;
}

static const AccelPropertyField convert_scale_fields[] = {
  ACCEL_FIELD_ENUM_NICK (GstAccelConvertScale, method, "method", "Method",
                         "How to interpolate when scaling and for chroma", accel_interpolation_get_type,
                         ACCEL_INTERPOLATION_BILINEAR,
                         G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY),
};

static void
gst_accel_convert_scale_class_init (GstAccelConvertScaleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  accel_object_class_install_fields (object_class, convert_scale_fields, G_N_ELEMENTS (convert_scale_fields));

  gst_element_class_set_static_metadata (element_class, "Accel colour converter and scaler",
                                         "Filter/Converter/Video/Scaler/Hardware",
                                         "Converts and scales video on an Accel device (CPU or GPU)",
                                         "Accel contributors");
  trans_class->transform_caps = gst_accel_convert_scale_transform_caps;
  GST_ACCEL_TRANSFORM_CLASS (klass)->make_op = gst_accel_convert_scale_make_op;
}

static void
gst_accel_convert_scale_init (GstAccelConvertScale *self)
{
  self->method = ACCEL_INTERPOLATION_BILINEAR;
}
