/* elements.c: accelconvertscale and accelfilter in pipelines (appsrc !
 * element ! appsink, and GstHarness from gst-check) on cpu:0: every frame
 * equal to what the same op makes on the test's own cpu:0; caps
 * negotiation (sizes, formats, passthrough); frames between two Accel
 * elements in device memory (memory:AccelBuffer); device faults posted on
 * the bus or recovered from, never a frame an op did not write.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <gst/check/gstharness.h>
#include "image-gst-test.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC (GstHarness, gst_harness_teardown)

static AccelSystem *test_system;
static AccelDevice *test_cpu;

/* The reference: @op on the test's own cpu:0. */
static void
submit (AccelOp *op)
{
  g_autoptr(GError) error = NULL;
  g_assert_true (accel_device_submit (test_cpu, op, NULL, &error));
  g_assert_no_error (error);
}

typedef struct {
  GstElement *pipeline;
  GstElement *src;
  GstElement *sink;
} Pipeline;

static void
pipeline_start (Pipeline *p, const char *in_caps, const char *middle)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *desc = g_strdup_printf ("appsrc name=src format=time caps=\"%s\" ! %s ! appsink name=sink sync=false",
                                           in_caps, middle);
  p->pipeline = gst_parse_launch (desc, &error);
  g_assert_no_error (error);
  p->src = gst_bin_get_by_name (GST_BIN (p->pipeline), "src");
  p->sink = gst_bin_get_by_name (GST_BIN (p->pipeline), "sink");
  g_assert_cmpint (gst_element_set_state (p->pipeline, GST_STATE_PLAYING), !=, GST_STATE_CHANGE_FAILURE);
}

static void
pipeline_stop (Pipeline *p)
{
  gst_element_set_state (p->pipeline, GST_STATE_NULL);
  g_clear_object (&p->src);
  g_clear_object (&p->sink);
  g_clear_object (&p->pipeline);
}

/* Pushes @image and returns the frame that comes out, or NULL when the
 * pipeline ends without one (an error, or a dropped frame at EOS). */
static GstSample *
push_pull (Pipeline *p, const ItImage *image, gboolean eos)
{
  static guint64 pts;
  GstBuffer *buffer = it_gst_buffer (image);
  GST_BUFFER_PTS (buffer) = pts;
  GST_BUFFER_DURATION (buffer) = GST_SECOND / 30;
  pts += GST_SECOND / 30;
  g_assert_cmpint (gst_app_src_push_buffer (GST_APP_SRC (p->src), buffer), ==, GST_FLOW_OK);
  if (eos)
    gst_app_src_end_of_stream (GST_APP_SRC (p->src));
  return gst_app_sink_try_pull_sample (GST_APP_SINK (p->sink), 30 * GST_SECOND);
}

/* Fails, with the pipeline's error if it has one, where a frame did not
 * come out. */
static void
assert_sample (Pipeline *p, GstSample *sample)
{
  if (sample != NULL)
    return;
  g_autoptr(GstBus) bus = gst_element_get_bus (p->pipeline);
  g_autoptr(GstMessage) msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  g_autoptr(GError) error = NULL;
  g_autofree char *debug = NULL;
  if (msg)
    gst_message_parse_error (msg, &error, &debug);
  g_error ("no frame came out: %s (%s)", error ? error->message : "no error on the bus", debug ? debug : "");
}

/* The first message of @type on the bus, within a second. */
static GstMessage *
bus_message (Pipeline *p, GstMessageType type)
{
  g_autoptr(GstBus) bus = gst_element_get_bus (p->pipeline);
  return gst_bus_timed_pop_filtered (bus, GST_SECOND, type);
}

static void
set_colorimetry (AccelOp *op, const char *side, AccelColorMatrix m, AccelColorRange r, AccelChromaSiting s)
{
  g_autofree char *matrix = g_strdup_printf ("%s-matrix", side);
  g_autofree char *range = g_strdup_printf ("%s-range", side);
  g_autofree char *siting = g_strdup_printf ("%s-chroma-siting", side);
  g_object_set (op, matrix, m, range, r, siting, s, NULL);
}

/* What accelconvertscale makes of @src (NV12 of colorimetry @m, @r, @s)
 * into @want (of the default colorimetry): convert-color, after the resize
 * steps that the element's documentation promises where the op cannot
 * shrink so far in one step. Backwards from the destination, the op reads
 * the largest image it can shrink from, and each step before makes the
 * largest its successor can shrink from. */
static void
reference_convert_scale (ItImage *src, ItImage *want, AccelColorMatrix m, AccelColorRange r, AccelChromaSiting s,
                         AccelInterpolation method)
{
  gint64 w = want->img.width, h = want->img.height;
  gint64 lim = accel_image_get_max_shrink (method, want->img.format, TRUE);
  int sizes[2][8], n = 0;
  while (src->img.width > w * lim || src->img.height > h * lim)
    {
      g_assert_cmpint (n, <, 8);
      w = sizes[0][n] = MIN (src->img.width, w * lim);
      h = sizes[1][n] = MIN (src->img.height, h * lim);
      n++;
      lim = accel_image_get_max_shrink (method, src->img.format, FALSE);
    }
  g_autoptr(GPtrArray) steps = g_ptr_array_new_with_free_func ((GDestroyNotify) it_image_free);
  ItImage *from = src;
  for (int i = n - 1; i >= 0; i--)
    {
      ItImage *to = it_image_new (test_cpu, src->img.format, sizes[0][i], sizes[1][i], FALSE);
      g_ptr_array_add (steps, to);
      g_autoptr(AccelOp) resize = accel_resize_new (NULL, NULL, method);
      it_set_src (resize, from);
      it_set_dst (resize, to, TRUE);
      submit (resize);
      from = to;
    }
  g_autoptr(AccelOp) op = accel_convert_color_new (NULL, NULL);
  it_set_src (op, from);
  it_set_dst (op, want, TRUE);
  set_colorimetry (op, "src", m, r, s);
  set_colorimetry (op, "dst", 0, 0, 0);
  g_object_set (op, "method", method, NULL);
  submit (op);
  it_image_download (want);
}

/* appsrc ! accelconvertscale ! appsink from NV12 of @sw × @sh to @dst_format
 * of @dw × @dh: two frames, each the reference's bytes. */
static void
check_convertscale (int sw, int sh, AccelImageFormat dst_format, int dw, int dh, AccelInterpolation method)
{
  AccelColorMatrix m = g_test_rand_int_range (0, 3);
  AccelColorRange r = g_test_rand_int_range (0, 2);
  AccelChromaSiting s = g_test_rand_int_range (0, 3);
  g_autofree char *in_caps = it_gst_caps (ACCEL_IMAGE_FORMAT_NV12, sw, sh, m, r, s);
  g_autofree char *out_caps = it_gst_caps (dst_format, dw, dh, 0, 0, 0);
  g_autofree char *middle = g_strdup_printf ("accelconvertscale device=cpu:0 method=%d ! %s", method, out_caps);
  g_autofree char *what = g_strdup_printf ("accelconvertscale NV12 %d x %d -> %s %d x %d, method %d", sw, sh,
                                           it_format_name (dst_format), dw, dh, method);
  Pipeline p = { 0 };
  pipeline_start (&p, in_caps, middle);

  for (int frame = 0; frame < 2; frame++)
    {
      g_autoptr(ItImage) src = it_image_new_for_caps (test_cpu, ACCEL_IMAGE_FORMAT_NV12, in_caps);
      g_autoptr(GstSample) sample = push_pull (&p, src, FALSE);
      assert_sample (&p, sample);
      g_autoptr(ItImage) got = it_image_from_sample (test_cpu, sample, dst_format);
      g_autoptr(ItImage) want = it_image_new (test_cpu, dst_format, dw, dh, TRUE);
      reference_convert_scale (src, want, m, r, s, method);
      it_assert_close (what, got, want, 0);
    }
  pipeline_stop (&p);
}

/* NV12 to RGBA at another size, up to 12 times smaller an axis. */
static void
test_convertscale_host (void)
{
  for (int round = 0; round < 3; round++)
    check_convertscale (2 * g_test_rand_int_range (20, 60) + 1, 2 * g_test_rand_int_range (10, 40) + 1,
                        ACCEL_IMAGE_FORMAT_RGBA, g_test_rand_int_range (10, 130), g_test_rand_int_range (10, 90),
                        g_test_rand_int_range (0, 5));
}

/* 13 to 67 times smaller an axis, beyond what one op takes for area and
 * lanczos3 (8) and for a subsampled destination (16): by every method, into
 * RGBA and into I420. */
static void
test_convertscale_large_shrink (void)
{
  static const AccelImageFormat formats[] = { ACCEL_IMAGE_FORMAT_RGBA, ACCEL_IMAGE_FORMAT_I420 };
  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    for (int method = 0; method < 5; method++)
      check_convertscale (2 * g_test_rand_int_range (60, 100) + 1, 2 * g_test_rand_int_range (40, 70) + 1,
                          formats[f], g_test_rand_int_range (3, 10), g_test_rand_int_range (2, 7), method);
}

/* accelfilter runs the op it is given with the parameters set on it. */
static void
test_filter_host (void)
{
  static const char *const ops[] = {
    "op=filter kind=gaussian sigma=1.7 border=replicate",
    "op=filter kind=sobel dx=1 dy=1 ksize=5 scale=0.1 delta=128",
    "op=morphology operation=close shape=ellipse ksize=5 ksize-y=3",
    "op=warp-affine m00=0.9 m01=0.2 m02=3 m10=-0.1 m11=1.1 m12=-2 method=bicubic border=reflect-101",
  };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      AccelImageFormat f = i % 2 ? ACCEL_IMAGE_FORMAT_I420 : ACCEL_IMAGE_FORMAT_RGBA;
      int w = 2 * g_test_rand_int_range (10, 50) + 1, h = 2 * g_test_rand_int_range (10, 40) + 1;
      g_autofree char *caps = it_gst_caps (f, w, h, 1, 0, 1);
      g_autofree char *middle = g_strdup_printf ("accelfilter device=cpu:0 %s", ops[i]);
      Pipeline p = { 0 };
      pipeline_start (&p, caps, middle);
      g_autoptr(ItImage) src = it_image_new_for_caps (test_cpu, f, caps);
      g_autoptr(GstSample) sample = push_pull (&p, src, FALSE);
      assert_sample (&p, sample);
      g_autoptr(ItImage) got = it_image_from_sample (test_cpu, sample, f);
      g_autoptr(ItImage) want = it_image_new (test_cpu, f, w, h, TRUE);

      /* The same op, its parameters parsed as gst-launch parses them. */
      g_auto(GStrv) words = g_strsplit (ops[i], " ", -1);
      g_autoptr(AccelOp) op = accel_op_new_by_name (strchr (words[0], '=') + 1, NULL);
      for (int k = 1; words[k]; k++)
        {
          g_auto(GStrv) kv = g_strsplit (words[k], "=", 2);
          GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (op), kv[0]);
          g_auto(GValue) v = G_VALUE_INIT;
          g_value_init (&v, G_PARAM_SPEC_VALUE_TYPE (pspec));
          g_assert_true (gst_value_deserialize (&v, kv[1]));
          g_object_set_property (G_OBJECT (op), kv[0], &v);
        }
      it_set_src (op, src);
      it_set_dst (op, want, g_object_class_find_property (G_OBJECT_GET_CLASS (op), "dst-format") != NULL);
      submit (op);
      it_image_download (want);
      it_assert_close (ops[i], got, want, 0);
      pipeline_stop (&p);
    }
}

/* A parameter the op lacks, or an op that is not an image op, stops the
 * pipeline with an error. */
static void
test_filter_bad_parameters (void)
{
  static const char *const bad[] = { "op=morphology sigma=2.0", "op=gemm" };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *caps = it_gst_caps (ACCEL_IMAGE_FORMAT_GRAY8, 17, 9, 0, 0, 0);
      g_autofree char *middle = g_strdup_printf ("accelfilter device=cpu:0 %s", bad[i]);
      Pipeline p = { 0 };
      pipeline_start (&p, caps, middle);
      g_autoptr(ItImage) src = it_image_new_for_caps (test_cpu, ACCEL_IMAGE_FORMAT_GRAY8, caps);
      g_autoptr(GstSample) sample = push_pull (&p, src, TRUE);
      g_assert_null (sample);
      g_autoptr(GstMessage) msg = bus_message (&p, GST_MESSAGE_ERROR);
      g_assert_nonnull (msg);
      g_autoptr(GError) error = NULL;
      gst_message_parse_error (msg, &error, NULL);
      g_test_message ("%s: %s", bad[i], error->message);
      g_assert_true (strstr (error->message, i == 0 ? "sigma" : "not an image op") != NULL);
      pipeline_stop (&p);
    }
}

/* Caps negotiation with GstHarness: a given width keeps the aspect; open
 * caps keep the input's, and then accelconvertscale passes frames through. */
static void
test_caps (void)
{
  g_autoptr(GstHarness) h = gst_harness_new_parse ("accelconvertscale device=cpu:0");
  gst_harness_set_src_caps_str (h, "video/x-raw,format=NV12,width=640,height=360,framerate=30/1");
  gst_harness_set_sink_caps_str (h, "video/x-raw,format=RGBA,width=320");
  gst_harness_play (h);
  g_autoptr(ItImage) src = it_image_new_for_caps (test_cpu, ACCEL_IMAGE_FORMAT_NV12,
                                                  "video/x-raw,format=NV12,width=640,height=360");
  GstBuffer *out = gst_harness_push_and_pull (h, it_gst_buffer (src));
  g_assert_nonnull (out);
  g_autoptr(GstCaps) caps = gst_pad_get_current_caps (h->sinkpad);
  GstStructure *s = gst_caps_get_structure (caps, 0);
  int w = 0, hh = 0;
  g_assert_true (gst_structure_get_int (s, "width", &w) && gst_structure_get_int (s, "height", &hh));
  g_assert_cmpint (w, ==, 320);
  g_assert_cmpint (hh, ==, 180);
  g_assert_cmpstr (gst_structure_get_string (s, "format"), ==, "RGBA");
  gst_buffer_unref (out);

  /* Nothing asked of host output: the input's caps, passed through. */
  g_autoptr(GstHarness) pass = gst_harness_new_parse ("accelconvertscale device=cpu:0");
  gst_harness_set_src_caps_str (pass, "video/x-raw,format=BGRA,width=33,height=17,framerate=30/1");
  gst_harness_set_sink_caps_str (pass, "video/x-raw");
  gst_harness_play (pass);
  g_autoptr(ItImage) img = it_image_new_for_caps (test_cpu, ACCEL_IMAGE_FORMAT_BGRA,
                                                  "video/x-raw,format=BGRA,width=33,height=17");
  GstBuffer *in = it_gst_buffer (img);
  gst_buffer_ref (in);
  GstBuffer *same = gst_harness_push_and_pull (pass, in);
  g_assert_true (same == in);
  gst_buffer_unref (same);
  gst_buffer_unref (in);
}

static GstPadProbeReturn
count_device_frames (GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER (info);
  if (gst_buffer_n_memory (buffer) == 1 && gst_memory_is_type (gst_buffer_peek_memory (buffer, 0), "AccelBuffer"))
    g_atomic_int_inc ((gint *) data);
  return GST_PAD_PROBE_OK;
}

/* Between two Accel elements frames stay in device memory; the chain's
 * result is both ops run one after the other. */
static void
test_device_memory_path (void)
{
  int w = 97, h = 61, dw = 50, dh = 31;
  g_autofree char *in_caps = it_gst_caps (ACCEL_IMAGE_FORMAT_NV12, w, h, ACCEL_COLOR_MATRIX_BT709,
                                          ACCEL_COLOR_RANGE_LIMITED, ACCEL_CHROMA_SITING_MPEG2);
  g_autofree char *middle = g_strdup_printf ("accelconvertscale name=convert device=cpu:0 ! "
                                             "video/x-raw(memory:AccelBuffer),format=RGBA,width=%d,height=%d ! "
                                             "accelfilter device=cpu:0 op=filter kind=box ksize=3 ! "
                                             "video/x-raw,format=RGBA", dw, dh);
  Pipeline p = { 0 };
  pipeline_start (&p, in_caps, middle);
  g_autoptr(GstElement) convert = gst_bin_get_by_name (GST_BIN (p.pipeline), "convert");
  g_autoptr(GstPad) link = gst_element_get_static_pad (convert, "src");
  gint device_frames = 0;
  gst_pad_add_probe (link, GST_PAD_PROBE_TYPE_BUFFER, count_device_frames, &device_frames, NULL);

  for (int frame = 0; frame < 3; frame++)
    {
      g_autoptr(ItImage) src = it_image_new_for_caps (test_cpu, ACCEL_IMAGE_FORMAT_NV12, in_caps);
      g_autoptr(GstSample) sample = push_pull (&p, src, FALSE);
      assert_sample (&p, sample);
      GstCapsFeatures *features = gst_caps_get_features (gst_sample_get_caps (sample), 0);
      g_assert_true (gst_caps_features_is_equal (features, GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY));
      g_autoptr(ItImage) got = it_image_from_sample (test_cpu, sample, ACCEL_IMAGE_FORMAT_RGBA);

      g_autoptr(ItImage) mid = it_image_new (test_cpu, ACCEL_IMAGE_FORMAT_RGBA, dw, dh, FALSE);
      g_autoptr(ItImage) want = it_image_new (test_cpu, ACCEL_IMAGE_FORMAT_RGBA, dw, dh, FALSE);
      g_autoptr(AccelOp) convert_op = accel_convert_color_new (NULL, NULL);
      it_set_src (convert_op, src);
      it_set_dst (convert_op, mid, TRUE);
      set_colorimetry (convert_op, "src", ACCEL_COLOR_MATRIX_BT709, ACCEL_COLOR_RANGE_LIMITED,
                       ACCEL_CHROMA_SITING_MPEG2);
      submit (convert_op);
      g_autoptr(AccelOp) filter_op = accel_filter_new (NULL, NULL, ACCEL_FILTER_BOX);
      it_set_src (filter_op, mid);
      it_set_dst (filter_op, want, FALSE);
      g_object_set (filter_op, "ksize", 3, NULL);
      submit (filter_op);
      it_image_download (want);
      it_assert_close ("accelconvertscale ! accelfilter", got, want, 0);
    }
  g_assert_cmpint (g_atomic_int_get (&device_frames), ==, 3);
  pipeline_stop (&p);
}

/* Makes the element's device fault (the test-only `fault` op), as a
 * sticky GPU error would: the device starts a new generation. */
static void
fault_device (GstElement *element)
{
  g_autoptr(AccelDevice) device = NULL;
  g_object_get (element, "accel-device", &device, NULL);
  g_assert_nonnull (device);
  guint before = accel_device_get_generation (device);
  g_autoptr(AccelOp) fault = accel_op_new_by_name ("fault", NULL);
  g_assert_nonnull (fault);
  g_assert_false (accel_device_submit (device, fault, NULL, NULL));
  g_assert_cmpuint (accel_device_get_generation (device), >, before);
}

static void
test_fault_error (void)
{
  g_autofree char *caps = it_gst_caps (ACCEL_IMAGE_FORMAT_RGBA, 31, 23, 0, 0, 0);
  Pipeline p = { 0 };
  pipeline_start (&p, caps, "accelfilter name=f device=cpu:0 on-fault=error kind=box");
  g_autoptr(GstElement) f = gst_bin_get_by_name (GST_BIN (p.pipeline), "f");
  g_autoptr(ItImage) src = it_image_new_for_caps (test_cpu, ACCEL_IMAGE_FORMAT_RGBA, caps);
  g_autoptr(GstSample) first = push_pull (&p, src, FALSE);
  assert_sample (&p, first);

  fault_device (f);
  g_autoptr(GstSample) second = push_pull (&p, src, TRUE);
  g_assert_null (second);
  g_autoptr(GstMessage) msg = bus_message (&p, GST_MESSAGE_ERROR);
  g_assert_nonnull (msg);
  g_autoptr(GError) error = NULL;
  g_autofree char *debug = NULL;
  gst_message_parse_error (msg, &error, &debug);
  g_test_message ("error on the bus: %s (%s)", error->message, debug);
  g_assert_true (strstr (error->message, "faulted") != NULL);
  g_assert_true (strstr (error->message, "generation") != NULL);
  pipeline_stop (&p);
}

/* A chain of two Accel elements with host input recovers: frames after
 * the fault are right. */
static void
test_fault_recover (void)
{
  int w = 41, h = 29;
  g_autofree char *caps = it_gst_caps (ACCEL_IMAGE_FORMAT_RGBA, w, h, 0, 0, 0);
  Pipeline p = { 0 };
  pipeline_start (&p, caps, "accelconvertscale name=c device=cpu:0 on-fault=recover ! "
                            "video/x-raw(memory:AccelBuffer),format=GRAY8 ! "
                            "accelfilter device=cpu:0 on-fault=recover op=morphology operation=dilate ! "
                            "video/x-raw,format=GRAY8");
  g_autoptr(GstElement) c = gst_bin_get_by_name (GST_BIN (p.pipeline), "c");

  for (int frame = 0; frame < 4; frame++)
    {
      if (frame == 2)
        fault_device (c);
      g_autoptr(ItImage) src = it_image_new_for_caps (test_cpu, ACCEL_IMAGE_FORMAT_RGBA, caps);
      g_autoptr(GstSample) sample = push_pull (&p, src, FALSE);
      assert_sample (&p, sample);
      g_autoptr(ItImage) got = it_image_from_sample (test_cpu, sample, ACCEL_IMAGE_FORMAT_GRAY8);
      g_autoptr(ItImage) gray = it_image_new (test_cpu, ACCEL_IMAGE_FORMAT_GRAY8, w, h, FALSE);
      g_autoptr(ItImage) want = it_image_new (test_cpu, ACCEL_IMAGE_FORMAT_GRAY8, w, h, FALSE);
      g_autoptr(AccelOp) convert = accel_convert_color_new (NULL, NULL);
      it_set_src (convert, src);
      it_set_dst (convert, gray, TRUE);
      g_object_set (convert, "dst-matrix", ACCEL_COLOR_MATRIX_BT601, NULL);
      submit (convert);
      g_autoptr(AccelOp) dilate = accel_morphology_new (NULL, NULL, ACCEL_MORPHOLOGY_DILATE);
      it_set_src (dilate, gray);
      it_set_dst (dilate, want, FALSE);
      submit (dilate);
      it_image_download (want);
      it_assert_close ("after a fault, recovered", got, want, 0);
    }
  g_assert_null (bus_message (&p, GST_MESSAGE_ERROR));
  pipeline_stop (&p);
}

/* A fault while a device frame is between two elements loses that frame:
 * with recover it is dropped with a warning, never pushed. */
static GstPadProbeReturn
fault_in_flight (GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  if (g_atomic_int_dec_and_test ((gint *) g_object_get_data (G_OBJECT (pad), "countdown")))
    fault_device (data);
  return GST_PAD_PROBE_OK;
}

static void
test_fault_drops_lost_frame (void)
{
  g_autofree char *caps = it_gst_caps (ACCEL_IMAGE_FORMAT_RGBA, 19, 13, 0, 0, 0);
  Pipeline p = { 0 };
  pipeline_start (&p, caps, "accelconvertscale name=c device=cpu:0 on-fault=recover ! "
                            "video/x-raw(memory:AccelBuffer),format=BGRA ! "
                            "accelfilter device=cpu:0 on-fault=recover kind=box ! video/x-raw,format=BGRA");
  g_autoptr(GstElement) c = gst_bin_get_by_name (GST_BIN (p.pipeline), "c");
  g_autoptr(GstPad) link = gst_element_get_static_pad (c, "src");
  gint countdown = 2;
  g_object_set_data (G_OBJECT (link), "countdown", &countdown);
  gst_pad_add_probe (link, GST_PAD_PROBE_TYPE_BUFFER, fault_in_flight, c, NULL);

  g_autoptr(ItImage) src = it_image_new_for_caps (test_cpu, ACCEL_IMAGE_FORMAT_RGBA, caps);
  g_autoptr(GstSample) first = push_pull (&p, src, FALSE);
  assert_sample (&p, first);
  /* The second frame's device memory is lost on its way: dropped. */
  g_autoptr(GstSample) second = push_pull (&p, src, TRUE);
  g_assert_null (second);
  g_autoptr(GstMessage) warning = bus_message (&p, GST_MESSAGE_WARNING);
  g_assert_nonnull (warning);
  g_assert_null (bus_message (&p, GST_MESSAGE_ERROR));
  pipeline_stop (&p);
}

int
main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  g_test_init (&argc, &argv, NULL);

  g_autoptr(GError) error = NULL;
  test_system = accel_system_new (&error);
  g_assert_no_error (error);
  test_cpu = accel_system_get_device (test_system, "cpu:0", &error);
  g_assert_no_error (error);

  g_test_add_func ("/gst/convertscale/host", test_convertscale_host);
  g_test_add_func ("/gst/convertscale/large-shrink", test_convertscale_large_shrink);
  g_test_add_func ("/gst/filter/host", test_filter_host);
  g_test_add_func ("/gst/filter/bad-parameters", test_filter_bad_parameters);
  g_test_add_func ("/gst/caps", test_caps);
  g_test_add_func ("/gst/device-memory", test_device_memory_path);
  g_test_add_func ("/gst/fault/error", test_fault_error);
  g_test_add_func ("/gst/fault/recover", test_fault_recover);
  g_test_add_func ("/gst/fault/drops-lost-frame", test_fault_drops_lost_frame);
  int ret = g_test_run ();

  g_clear_object (&test_cpu);
  accel_system_shutdown (test_system);
  g_clear_object (&test_system);
  gst_deinit ();
  return ret;
}
