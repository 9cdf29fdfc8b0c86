/* image-gst.c: convert-color and resize on cpu:0 against GStreamer's own
 * videoconvert and videoscale, run in a pipeline (appsrc ! element !
 * appsink) on the same random frames, where the two follow the same
 * conventions: colour conversion with GStreamer's full matrix and chroma
 * modes and no dithering, scaling up with its bilinear method.
 *
 * GStreamer computes 8-bit conversions in fixed point with 8 bits of
 * fraction in its matrices, so its codes may differ from the exact ones
 * by a little; the tolerance below is that error, not the test's.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>
#include "cpu-test.h"
#include "image-gst-test.h"

/* Runs @image (laid out as GStreamer lays out frames of @in_caps) through
 * `appsrc ! @element ! appsink` and returns the frame for @out_caps. */
static ItImage *
run_gst (const ItImage *image, const char *in_caps, const char *element, const char *out_caps,
         AccelImageFormat out_format)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *desc = g_strdup_printf ("appsrc name=src caps=\"%s\" ! %s ! %s ! appsink name=sink",
                                           in_caps, element, out_caps);
  g_autoptr(GstElement) pipeline = gst_parse_launch (desc, &error);
  g_assert_no_error (error);
  g_autoptr(GstElement) src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  g_autoptr(GstElement) sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");

  GstBuffer *buffer = it_gst_buffer (image);
  g_assert_cmpint (gst_element_set_state (pipeline, GST_STATE_PLAYING), !=, GST_STATE_CHANGE_FAILURE);
  g_assert_cmpint (gst_app_src_push_buffer (GST_APP_SRC (src), buffer), ==, GST_FLOW_OK);
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  g_autoptr(GstSample) sample = gst_app_sink_pull_sample (GST_APP_SINK (sink));
  g_assert_nonnull (sample);

  ItImage *out = it_image_from_sample (cpu_test_device (), sample, out_format);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  return out;
}

#define VIDEOCONVERT "videoconvert chroma-mode=full matrix-mode=full dither=none"

/* @wide, an RGBA64_LE frame (held as an RGBA image of its bytes), rounded
 * to 8 bits in the format and layout of @like. */
static ItImage *
narrow_rgba64 (const ItImage *wide, const ItImage *like)
{
  ItImage *out = it_image_copy_to ((ItImage *) like, cpu_test_device ());
  const AccelImageSamples *s = &out->layout.samples[0];
  for (int y = 0; y < like->img.height; y++)
    for (int x = 0; x < like->img.width; x++)
      for (int c = 0; c < s->channels; c++)
        {
          int rgba = s->channel[c] - ACCEL_IMAGE_CHANNEL_R;   /* R, G, B, A: 0 to 3 */
          const guint8 *at = wide->bytes + y * wide->layout.stride[0] + 8 * x + 2 * rgba;
          int v = at[0] | at[1] << 8;
          it_put (out, 0, x, y, c, (v + 128) / 257);
        }
  return out;
}

/* GStreamer's 8-bit fixed-point matrix from YUV to RGB is up to 7 codes
 * off the exact result, so YUV sources are compared with its 16-bit path:
 * it converts to RGBA64_LE and the test rounds that to 8 bits. Its 8-bit
 * chroma upsampling rounds each step, so the 8-bit sources' chroma codes
 * are multiples of 16, which its [3 1] / 4 steps keep whole; it widens
 * 8-bit codes by a shift (v << 8 where v × 257 is exact), a code off at
 * the top, up to 3 after the matrix's chroma gains. Converting to YUV it
 * is within 2. GStreamer samples chroma vertically cosited as
 * nearest, so 4:2:0 pairs use the sitings where the two agree. */
typedef struct {
  AccelImageFormat from, to;
  int tol;
  gboolean full_range_only;
} Pair;

static void
test_convert_vs_videoconvert (void)
{
  static const Pair pairs[] = {
    { ACCEL_IMAGE_FORMAT_NV12, ACCEL_IMAGE_FORMAT_RGBA, 3 },
    { ACCEL_IMAGE_FORMAT_NV12, ACCEL_IMAGE_FORMAT_BGRA, 3 },
    { ACCEL_IMAGE_FORMAT_YUY2, ACCEL_IMAGE_FORMAT_RGB, 3 },
    { ACCEL_IMAGE_FORMAT_P010, ACCEL_IMAGE_FORMAT_RGBA, 1 },
    /* GStreamer copies limited-range luma into gray unscaled. */
    { ACCEL_IMAGE_FORMAT_NV12, ACCEL_IMAGE_FORMAT_GRAY8, 0, TRUE },
    { ACCEL_IMAGE_FORMAT_RGBA, ACCEL_IMAGE_FORMAT_NV12, 2 },
    { ACCEL_IMAGE_FORMAT_BGR, ACCEL_IMAGE_FORMAT_I420, 2 },
    { ACCEL_IMAGE_FORMAT_RGB, ACCEL_IMAGE_FORMAT_YUY2, 2 },
    { ACCEL_IMAGE_FORMAT_RGBA, ACCEL_IMAGE_FORMAT_BGR, 0 },
    { ACCEL_IMAGE_FORMAT_BGRA, ACCEL_IMAGE_FORMAT_GRAY8, 2 },
    { ACCEL_IMAGE_FORMAT_GRAY8, ACCEL_IMAGE_FORMAT_RGBA, 0 },
    { ACCEL_IMAGE_FORMAT_NV12, ACCEL_IMAGE_FORMAT_I420, 0 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (pairs); i++)
    {
      const Pair *pair = &pairs[i];
      int w = 2 * g_random_int_range (8, 60) + 1, h = 2 * g_random_int_range (6, 40) + 1;
      AccelColorMatrix m = g_random_int_range (0, 3);
      AccelColorRange r = pair->full_range_only ? ACCEL_COLOR_RANGE_FULL : g_random_int_range (0, 2);
      gboolean h_only = pair->from == ACCEL_IMAGE_FORMAT_YUY2 || pair->to == ACCEL_IMAGE_FORMAT_YUY2;
      AccelChromaSiting s = g_random_int_range (0, h_only ? 3 : 2);
      g_autofree char *in_caps = it_gst_caps (pair->from, w, h, m, r, s);
      g_autofree char *out_caps = it_gst_caps (pair->to, w, h, m, r, s);
      g_autoptr(ItImage) src = it_image_new_for_caps (cpu_test_device (), pair->from, in_caps);
      g_autoptr(ItImage) got = it_image_new_for_caps (cpu_test_device (), pair->to, out_caps);
      g_autoptr(ItImage) want = NULL;
      if (src->layout.n_samples > 1 && src->layout.samples[1].bits == 8)
        {
          const AccelImageSamples *c = &src->layout.samples[1];
          for (guint p = 1; p < src->layout.n_samples; p++)
            for (int y = 0; y < c->height; y++)
              for (int x = 0; x < c->width; x++)
                for (int k = 0; k < c->channels; k++)
                  it_put (src, p, x, y, k, it_get (src, p, x, y, k) & ~15);
          it_image_upload (src);
        }
      if (src->layout.n_samples > 1 && accel_image_format_is_rgb (pair->to))
        {
          g_autofree char *wide_caps = g_strdup_printf ("video/x-raw,format=RGBA64_LE,width=%d,height=%d", w, h);
          g_autoptr(ItImage) wide = run_gst (src, in_caps, VIDEOCONVERT, wide_caps, ACCEL_IMAGE_FORMAT_RGBA);
          want = narrow_rgba64 (wide, got);
        }
      else
        want = run_gst (src, in_caps, VIDEOCONVERT, out_caps, pair->to);

      g_autoptr(AccelOp) op = accel_convert_color_new (NULL, NULL);
      it_set_src (op, src);
      it_set_dst (op, got, TRUE);
      g_object_set (op, "src-matrix", m, "dst-matrix", m, "src-range", r, "dst-range", r,
                    "src-chroma-siting", s, "dst-chroma-siting", s, NULL);
      cpu_test_submit (op);
      it_image_download (got);
      g_autofree char *what = g_strdup_printf ("%s -> %s %dx%d %s %s %s", it_format_name (pair->from),
                                               it_format_name (pair->to), w, h, (m == ACCEL_COLOR_MATRIX_BT601 ? "bt601" : m == ACCEL_COLOR_MATRIX_BT709 ? "bt709" : "bt2020"),
                                               r ? "full" : "limited", it_siting_name (s));
      int worst = it_assert_close (what, got, want, pair->tol);
      g_test_message ("%s: largest difference from videoconvert %d", what, worst);
    }
}

/* videoscale's nearest neighbour takes the sample under the destination
 * pixel's centre, as resize's nearest does; where that centre falls
 * exactly on a boundary between two samples, its fixed-point step takes
 * the lower one and resize (exact, `floor (c + 0.5)`) the upper, so those
 * rows and columns are left out. (Its bilinear method maps corners to
 * corners, not half-pixel centres: no reference for resize there.) */
static void
test_resize_vs_videoscale (void)
{
  static const struct {
    AccelImageFormat format;
    const char *method;
    AccelInterpolation accel;
    int tol;
  } cases[] = {
    { ACCEL_IMAGE_FORMAT_GRAY8, "nearest-neighbour", ACCEL_INTERPOLATION_NEAREST, 0 },
    { ACCEL_IMAGE_FORMAT_RGB, "nearest-neighbour", ACCEL_INTERPOLATION_NEAREST, 0 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases) * 3; i++)
    {
      const typeof (cases[0]) *c = &cases[i % G_N_ELEMENTS (cases)];
      int sw = g_random_int_range (5, 60), sh = g_random_int_range (5, 50);
      int dw = sw + g_random_int_range (0, 90), dh = sh + g_random_int_range (0, 70);
      g_autofree char *in_caps = it_gst_caps (c->format, sw, sh, 0, 0, 0);
      g_autofree char *out_caps = it_gst_caps (c->format, dw, dh, 0, 0, 0);
      g_autofree char *element = g_strdup_printf ("videoscale method=%s add-borders=false", c->method);
      g_autoptr(ItImage) src = it_image_new_for_caps (cpu_test_device (), c->format, in_caps);
      g_autoptr(ItImage) got = it_image_new_for_caps (cpu_test_device (), c->format, out_caps);
      g_autoptr(ItImage) want = run_gst (src, in_caps, element, out_caps, c->format);
      g_autoptr(AccelOp) op = accel_resize_new (NULL, NULL, c->accel);
      it_set_src (op, src);
      it_set_dst (op, got, TRUE);
      cpu_test_submit (op);
      it_image_download (got);
      for (int y = 0; y < dh; y++)
        for (int x = 0; x < dw; x++)
          if ((2 * x + 1) * sw % (2 * dw) == 0 || (2 * y + 1) * sh % (2 * dh) == 0)
            for (int k = 0; k < got->layout.samples[0].channels; k++)
              it_put (want, 0, x, y, k, it_get (got, 0, x, y, k));
      g_autofree char *what = g_strdup_printf ("%s %s %dx%d -> %dx%d", c->method, it_format_name (c->format),
                                               sw, sh, dw, dh);
      int worst = it_assert_close (what, got, want, c->tol);
      g_test_message ("%s: largest difference from videoscale %d", what, worst);
    }
}

int
main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/image/gst/convert", test_convert_vs_videoconvert);
  g_test_add_func ("/image/gst/resize", test_resize_vs_videoscale);
  int ret = cpu_test_run ();
  gst_deinit ();
  return ret;
}
