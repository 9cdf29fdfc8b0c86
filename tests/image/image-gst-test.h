/* image-gst-test.h: the GStreamer side of the image tests: caps of an
 * image, frames laid out as GStreamer lays them out, and GstBuffers made
 * from images and back.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>
#include "image-test.h"

G_BEGIN_DECLS

const char *it_gst_format_name (AccelImageFormat format);
const char *it_siting_name (AccelChromaSiting siting);

/* Caps of a frame (framerate 0/1); YUV and gray sides name their
 * colorimetry (gray: full range) and, for YUV, the chroma siting. */
char *it_gst_caps (AccelImageFormat format, int width, int height, AccelColorMatrix matrix,
                   AccelColorRange range, AccelChromaSiting siting);

/* A random frame on @device laid out as GStreamer lays out @caps. */
ItImage *it_image_new_for_caps (AccelDevice *device, AccelImageFormat format, const char *caps);

/* A GstBuffer holding a copy of @image's bytes, with a video meta. */
GstBuffer *it_gst_buffer (const ItImage *image);

/* An image on @device of @format holding the frame of @sample. */
ItImage *it_image_from_sample (AccelDevice *device, GstSample *sample, AccelImageFormat format);

G_END_DECLS
