/* accel-bench-media.c: the media groups of accel-bench-media (accel-bench
 * with these groups, running them all when none is named):
 *
 * - media-kernels: 3840×2160 NV12 to 1920×1080 RGBA (convert-color,
 *   bilinear) and a 1920×1080 RGBA Gaussian of sigma 2, in GB/s of bytes
 *   read and written, beside a `copy` op moving as many bytes on the same
 *   device, both pipelined through submit_async.
 * - media-elements: frames per second through appsrc ! accelconvertscale !
 *   appsink with host-memory frames, and through accelconvertscale !
 *   accelfilter with the frame in device memory between them (beside the
 *   two elements each with host frames, timed one after the other).
 * - media-cpu: accelconvertscale on cpu:0 beside GStreamer's own
 *   videoconvertscale (as many threads as processors) on the same frames.
 *
 * appsrc and appsink drive the pipelines, so no source or sink sets the
 * pace. The Accel GStreamer plugin is loaded from the build; where
 * GStreamer's system plugins are missing (a GPU host carrying the build),
 * appsrc and appsink are registered from libgstapp, and media-cpu says
 * that videoconvertscale is not there.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "accel-config.h"
#include "accel-bench.h"

#ifdef ACCEL_BENCH_MEDIA_GST
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>
#endif

/* Seconds per op of @op submitted @total times, up to 16 at once. */
static double
seconds_per_op (AccelDevice *device, AccelOp *op, guint total, GError **error)
{
  if (!accel_device_submit (device, op, NULL, error) || !accel_device_submit (device, op, NULL, error))
    return -1.0;
  double t = accel_bench_run_in_flight (device, op, total, 16, error);
  return t < 0 ? t : t / total;
}

static AccelBuffer *
bytes_buffer (AccelDevice *device, gsize size, GError **error)
{
  gint64 dims[1] = { (gint64) size };
  g_autoptr(AccelShape) shape = accel_shape_new (dims, 1);
  g_autoptr(AccelBuffer) buffer = accel_device_alloc (device, ACCEL_DTYPE_U8, shape, error);
  if (buffer == NULL)
    return NULL;
  g_autofree guint8 *data = g_malloc (size);
  for (gsize i = 0; i < size; i++)
    data[i] = (guint8) g_random_int ();
  if (!accel_buffer_write (buffer, data, size, error))
    return NULL;
  return g_steal_pointer (&buffer);
}

/* Reports @name: @bytes moved per op in @seconds, beside a copy moving
 * as many (half read, half written). */
static gboolean
report_against_copy (AccelBench *bench, const char *name, double seconds, gsize bytes, guint total,
                     GError **error)
{
  AccelDevice *device = accel_bench_get_device (bench);
  g_autoptr(AccelBuffer) a = bytes_buffer (device, bytes / 2, error);
  g_autoptr(AccelBuffer) b = a ? bytes_buffer (device, bytes / 2, error) : NULL;
  if (b == NULL)
    return FALSE;
  g_autoptr(AccelOp) copy = accel_copy_new (a, b);
  double copy_seconds = seconds_per_op (device, copy, total, error);
  if (copy_seconds < 0)
    return FALSE;
  accel_bench_report (bench, name, "GB/s", bytes / seconds * 1e-9, 2 * (bytes / 2) / copy_seconds * 1e-9);
  return TRUE;
}

static gboolean
run_kernels (AccelBench *bench, GError **error)
{
  AccelDevice *device = accel_bench_get_device (bench);
  guint total = accel_bench_is_quick (bench) ? 40 : 400;
  AccelImageLayout nv12, rgba_small, rgba;

  g_assert_true (accel_image_layout_init (&nv12, ACCEL_IMAGE_FORMAT_NV12, 3840, 2160, 0, 0, 0, 0, NULL));
  g_assert_true (accel_image_layout_init (&rgba_small, ACCEL_IMAGE_FORMAT_RGBA, 1920, 1080, 0, 0, 0, 0, NULL));
  rgba = rgba_small;

  accel_bench_progress (bench, "media-kernels: convert-color 4K NV12 -> 1080p RGBA");
  g_autoptr(AccelBuffer) src = bytes_buffer (device, nv12.size, error);
  g_autoptr(AccelBuffer) dst = src ? bytes_buffer (device, rgba.size, error) : NULL;
  g_autoptr(AccelBuffer) blurred = dst ? bytes_buffer (device, rgba.size, error) : NULL;
  if (blurred == NULL)
    return FALSE;
  g_autoptr(AccelOp) convert = accel_convert_color_new (src, dst);
  g_object_set (convert, "src-format", ACCEL_IMAGE_FORMAT_NV12, "src-width", 3840, "src-height", 2160,
                "dst-format", ACCEL_IMAGE_FORMAT_RGBA, "dst-width", 1920, "dst-height", 1080, NULL);
  double t = seconds_per_op (device, convert, total, error);
  if (t < 0 || !report_against_copy (bench, "media.convert-resize.kernel", t, nv12.size + rgba.size, total, error))
    return FALSE;

  accel_bench_progress (bench, "media-kernels: Gaussian sigma 2 on 1080p RGBA");
  g_autoptr(AccelOp) blur = accel_filter_new (dst, blurred, ACCEL_FILTER_GAUSSIAN);
  g_object_set (blur, "src-format", ACCEL_IMAGE_FORMAT_RGBA, "src-width", 1920, "src-height", 1080, "sigma", 2.0,
                NULL);
  t = seconds_per_op (device, blur, total, error);
  return t >= 0 && report_against_copy (bench, "media.gaussian.kernel", t, 2 * rgba.size, total, error);
}

#ifdef ACCEL_BENCH_MEDIA_GST

/* GStreamer, with the Accel plugin of this build and appsrc/appsink even
 * where GStreamer's own plugins are not installed. */
static gboolean
gst_ready (GError **error)
{
  static gsize once = 0;
  if (g_once_init_enter (&once))
    {
      g_setenv ("GST_REGISTRY_FORK", "no", FALSE);
      gst_init (NULL, NULL);
      if (gst_element_factory_find ("accelconvertscale") == NULL)
        {
          g_autoptr(GError) local = NULL;
          g_autofree char *path = g_build_filename (ACCEL_GST_PLUGIN_DIR, "libgstaccel.so", NULL);
          GstPlugin *plugin = gst_plugin_load_file (path, &local);
          if (plugin)
            gst_object_unref (plugin);
          else
            g_warning ("accel-bench-media: %s", local->message);
        }
      if (gst_element_factory_find ("appsrc") == NULL)
        gst_element_register (NULL, "appsrc", GST_RANK_NONE, GST_TYPE_APP_SRC);
      if (gst_element_factory_find ("appsink") == NULL)
        gst_element_register (NULL, "appsink", GST_RANK_NONE, GST_TYPE_APP_SINK);
      g_once_init_leave (&once, 1);
    }
  g_autoptr(GstElementFactory) f = gst_element_factory_find ("accelconvertscale");
  if (f == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_PLUGIN, "the Accel GStreamer plugin was not found in %s",
                   ACCEL_GST_PLUGIN_DIR);
      return FALSE;
    }
  return TRUE;
}

typedef struct {
  GstElement *src;
  GstBuffer *frame;
  guint n;
} Pusher;

static gpointer
push_frames (gpointer data)
{
  Pusher *p = data;
  for (guint i = 0; i < p->n; i++)
    {
      GstBuffer *b = gst_buffer_copy (p->frame);   /* shares the memory */
      GST_BUFFER_PTS (b) = i * GST_SECOND / 30;
      if (gst_app_src_push_buffer (GST_APP_SRC (p->src), b) != GST_FLOW_OK)
        break;
    }
  gst_app_src_end_of_stream (GST_APP_SRC (p->src));
  return NULL;
}

/* A random frame for @caps. */
static GstBuffer *
random_frame (GstCaps *caps)
{
  GstVideoInfo info;
  g_assert_true (gst_video_info_from_caps (&info, caps));
  GstBuffer *b = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info), NULL);
  GstMapInfo map;
  gst_buffer_map (b, &map, GST_MAP_WRITE);
  for (gsize i = 0; i < map.size; i++)
    map.data[i] = (guint8) g_random_int ();
  gst_buffer_unmap (b, &map);
  return b;
}

/* Frames per second through appsrc ! @middle ! appsink, the source frames
 * of @in_caps, the sink asking for @out_caps. */
static double
frames_per_second (const char *middle, const char *in_caps, const char *out_caps, guint n, GError **error)
{
  g_autofree char *desc = g_strdup_printf ("appsrc name=src ! %s ! appsink name=sink", middle);
  g_autoptr(GstElement) pipeline = gst_parse_launch (desc, error);
  if (pipeline == NULL)
    return -1.0;
  g_autoptr(GstElement) src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  g_autoptr(GstElement) sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  g_autoptr(GstCaps) icaps = gst_caps_from_string (in_caps);
  g_autoptr(GstCaps) ocaps = gst_caps_from_string (out_caps);
  g_object_set (src, "caps", icaps, "format", GST_FORMAT_TIME, "block", TRUE, "max-buffers", (guint64) 4, NULL);
  g_object_set (sink, "caps", ocaps, "sync", FALSE, NULL);
  Pusher p = { src, random_frame (icaps), n };

  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  GThread *thread = g_thread_new ("push", push_frames, &p);
  double t0 = 0;
  guint pulled = 0, warm = MIN (5, n / 4);
  GstSample *sample;
  while ((sample = gst_app_sink_pull_sample (GST_APP_SINK (sink))) != NULL)
    {
      if (++pulled == warm)
        t0 = accel_bench_now ();
      gst_sample_unref (sample);
    }
  double elapsed = accel_bench_now () - t0;
  g_thread_join (thread);
  gst_buffer_unref (p.frame);

  g_autoptr(GstBus) bus = gst_element_get_bus (pipeline);
  g_autoptr(GstMessage) msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  if (msg || pulled < n)
    {
      g_autoptr(GError) gerror = NULL;
      if (msg)
        gst_message_parse_error (msg, &gerror, NULL);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_FAILED, "%s: %u of %u frames came out%s%s", middle, pulled, n,
                   gerror ? ": " : "", gerror ? gerror->message : "");
      return -1.0;
    }
  return (pulled - warm) / elapsed;
}

#define NV12_4K "video/x-raw,format=NV12,width=3840,height=2160,framerate=30/1,colorimetry=bt709,chroma-site=mpeg2"
#define RGBA_1080 "video/x-raw,format=RGBA,width=1920,height=1080,framerate=30/1"

static gboolean
run_elements (AccelBench *bench, GError **error)
{
  if (!gst_ready (error))
    return FALSE;
  const char *device = accel_device_get_name (accel_bench_get_device (bench));
  guint n = accel_bench_is_quick (bench) ? 60 : 600;
  g_autofree char *convert = g_strdup_printf ("accelconvertscale device=%s", device);
  g_autofree char *chain = g_strdup_printf ("accelconvertscale device=%s ! accelfilter device=%s sigma=2.0",
                                            device, device);
  g_autofree char *blur = g_strdup_printf ("accelfilter device=%s sigma=2.0", device);

  accel_bench_progress (bench, "media-elements: accelconvertscale, host frames");
  double host = frames_per_second (convert, NV12_4K, RGBA_1080, n, error);
  if (host < 0)
    return FALSE;
  accel_bench_progress (bench, "media-elements: accelconvertscale ! accelfilter, device memory between");
  double linked = frames_per_second (chain, NV12_4K, RGBA_1080, n, error);
  double filter_host = linked < 0 ? -1 : frames_per_second (blur, RGBA_1080, RGBA_1080, n, error);
  if (filter_host < 0)
    return FALSE;
  /* The baseline for the chain: each element with host frames, one after the other. */
  accel_bench_report (bench, "media.element.convertscale-host", "frames/s", host, NAN);
  accel_bench_report (bench, "media.element.chain-device-memory", "frames/s", linked,
                      1.0 / (1.0 / host + 1.0 / filter_host));
  return TRUE;
}

static gboolean
run_cpu (AccelBench *bench, GError **error)
{
  if (!gst_ready (error))
    return FALSE;
  g_autoptr(GstElementFactory) f = gst_element_factory_find ("videoconvertscale");
  if (f == NULL)
    {
      g_printerr ("accel-bench-media: media-cpu: GStreamer's videoconvertscale is not installed here; skipped\n");
      return TRUE;
    }
  guint n = accel_bench_is_quick (bench) ? 20 : 120;
  g_autofree char *theirs = g_strdup_printf ("videoconvertscale n-threads=%u", g_get_num_processors ());

  accel_bench_progress (bench, "media-cpu: videoconvertscale");
  double gst = frames_per_second (theirs, NV12_4K, RGBA_1080, n, error);
  accel_bench_progress (bench, "media-cpu: accelconvertscale device=cpu:0");
  double accel = gst < 0 ? -1 : frames_per_second ("accelconvertscale device=cpu:0", NV12_4K, RGBA_1080, n, error);
  if (accel < 0)
    return FALSE;
  accel_bench_report (bench, "media.cpu.accelconvertscale", "frames/s", accel, gst);
  return TRUE;
}

#endif /* ACCEL_BENCH_MEDIA_GST */

const AccelBenchGroup accel_bench_media_groups[] = {
  { "media-kernels", "4K NV12 -> 1080p RGBA and a 1080p Gaussian (sigma 2) in GB/s beside a copy of as many bytes",
    run_kernels },
#ifdef ACCEL_BENCH_MEDIA_GST
  { "media-elements", "accelconvertscale frames/s (host frames) and with device memory between two elements",
    run_elements },
  { "media-cpu", "accelconvertscale on cpu:0 beside GStreamer's videoconvertscale, 4K NV12 -> 1080p RGBA", run_cpu },
#endif
  { NULL, NULL, NULL },
};
