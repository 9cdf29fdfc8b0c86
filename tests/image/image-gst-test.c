/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include "image-gst-test.h"

const char *
it_gst_format_name (AccelImageFormat f)
{
  switch (f)
    {
    case ACCEL_IMAGE_FORMAT_RGBA: return "RGBA";
    case ACCEL_IMAGE_FORMAT_BGRA: return "BGRA";
    case ACCEL_IMAGE_FORMAT_RGB: return "RGB";
    case ACCEL_IMAGE_FORMAT_BGR: return "BGR";
    case ACCEL_IMAGE_FORMAT_GRAY8: return "GRAY8";
    case ACCEL_IMAGE_FORMAT_GRAY16: return "GRAY16_LE";
    case ACCEL_IMAGE_FORMAT_NV12: return "NV12";
    case ACCEL_IMAGE_FORMAT_I420: return "I420";
    case ACCEL_IMAGE_FORMAT_YUY2: return "YUY2";
    default: return "P010_10LE";
    }
}

const char *
it_siting_name (AccelChromaSiting s)
{
  return s == ACCEL_CHROMA_SITING_MPEG2 ? "mpeg2" : s == ACCEL_CHROMA_SITING_JPEG ? "jpeg" : "cosited";
}

char *
it_gst_caps (AccelImageFormat f, int w, int h, AccelColorMatrix m, AccelColorRange r, AccelChromaSiting s)
{
  if (accel_image_format_is_rgb (f))
    return g_strdup_printf ("video/x-raw,format=%s,width=%d,height=%d,framerate=0/1", it_gst_format_name (f), w, h);
  gboolean gray = f == ACCEL_IMAGE_FORMAT_GRAY8 || f == ACCEL_IMAGE_FORMAT_GRAY16;
  /* range:matrix:transfer:primaries; transfer and primaries play no part. */
  return g_strdup_printf ("video/x-raw,format=%s,width=%d,height=%d,framerate=0/1,colorimetry=%d:%d:5:1%s%s",
                          it_gst_format_name (f), w, h,
                          r == ACCEL_COLOR_RANGE_FULL || gray ? GST_VIDEO_COLOR_RANGE_0_255 : GST_VIDEO_COLOR_RANGE_16_235,
                          m == ACCEL_COLOR_MATRIX_BT601 ? GST_VIDEO_COLOR_MATRIX_BT601
                          : m == ACCEL_COLOR_MATRIX_BT709 ? GST_VIDEO_COLOR_MATRIX_BT709
                          : GST_VIDEO_COLOR_MATRIX_BT2020,
                          gray ? "" : ",chroma-site=", gray ? "" : it_siting_name (s));
}

static ItImage *
image_for_info (AccelDevice *device, AccelImageFormat f, const GstVideoInfo *info, gsize size)
{
  return it_image_new_with_layout (device, f, GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info),
                                   GST_VIDEO_INFO_PLANE_STRIDE (info, 0), GST_VIDEO_INFO_PLANE_STRIDE (info, 1),
                                   GST_VIDEO_INFO_PLANE_OFFSET (info, 1), GST_VIDEO_INFO_PLANE_OFFSET (info, 2),
                                   size);
}

ItImage *
it_image_new_for_caps (AccelDevice *device, AccelImageFormat f, const char *caps_string)
{
  GstVideoInfo info;
  g_autoptr(GstCaps) caps = gst_caps_from_string (caps_string);
  g_assert_true (gst_video_info_from_caps (&info, caps));
  return image_for_info (device, f, &info, GST_VIDEO_INFO_SIZE (&info));
}

GstBuffer *
it_gst_buffer (const ItImage *image)
{
  GstBuffer *buffer = gst_buffer_new_memdup (image->bytes, image->size);
  gsize offset[GST_VIDEO_MAX_PLANES] = { 0 };
  int stride[GST_VIDEO_MAX_PLANES] = { 0 };
  GstVideoFormat format = gst_video_format_from_string (it_gst_format_name (image->img.format));
  for (guint p = 0; p < image->layout.n_planes; p++)
    {
      offset[p] = image->layout.offset[p];
      stride[p] = (int) image->layout.stride[p];
    }
  gst_buffer_add_video_meta_full (buffer, GST_VIDEO_FRAME_FLAG_NONE, format, image->img.width, image->img.height,
                                  image->layout.n_planes, offset, stride);
  return buffer;
}

ItImage *
it_image_from_sample (AccelDevice *device, GstSample *sample, AccelImageFormat f)
{
  GstVideoInfo info;
  GstBuffer *buffer = gst_sample_get_buffer (sample);
  g_assert_true (gst_video_info_from_caps (&info, gst_sample_get_caps (sample)));
  GstVideoMeta *meta = gst_buffer_get_video_meta (buffer);
  if (meta)
    for (guint p = 0; p < meta->n_planes; p++)
      {
        info.offset[p] = meta->offset[p];
        info.stride[p] = meta->stride[p];
      }
  ItImage *image = image_for_info (device, f, &info, gst_buffer_get_size (buffer));
  GstMapInfo map;
  g_assert_true (gst_buffer_map (buffer, &map, GST_MAP_READ));
  g_assert_cmpuint (map.size, >=, image->layout.size);
  memcpy (image->bytes, map.data, MIN (map.size, image->size));
  gst_buffer_unmap (buffer, &map);
  it_image_upload (image);
  return image;
}
