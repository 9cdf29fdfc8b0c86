/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-buffer.h"
#include "accel-image-enums.h"

G_BEGIN_DECLS

/**
 * ACCEL_IMAGE_MAX_SIZE:
 *
 * The largest width or height of an image op's images.
 */
#define ACCEL_IMAGE_MAX_SIZE 65536

/**
 * ACCEL_IMAGE_MAX_PLANES:
 *
 * The most memory planes (and sample planes) an #AccelImageFormat has.
 */
#define ACCEL_IMAGE_MAX_PLANES 3

/**
 * AccelImage:
 * @buffer: the bytes of the image (any dtype, contiguous)
 * @format: the pixel format
 * @width: the width in pixels
 * @height: the height in pixels
 * @stride: bytes from one row of the first plane to the next; 0 for rows
 *   that follow each other with no padding
 * @uv_stride: bytes from one row of the chroma plane(s) to the next; 0 for
 *   no padding
 * @uv_offset: the byte offset of the first chroma plane in @buffer; 0 for
 *   right after the first plane (@stride × @height)
 * @v_offset: the byte offset of the V plane of I420; 0 for right after the
 *   U plane
 *
 * One image of an image op: a buffer and where its pixels are. The image
 * ops keep one for their source (properties `src`, `src-format`,
 * `src-width`, `src-height`, `src-stride`, `src-uv-stride`,
 * `src-uv-offset`, `src-v-offset`) and one for their destination (the same
 * with `dst`). Every plane starts at its offset in @buffer and must lie
 * within it.
 */
typedef struct {
  AccelBuffer *buffer;
  AccelImageFormat format;
  int width;
  int height;
  int stride;
  int uv_stride;
  gint64 uv_offset;
  gint64 v_offset;
} AccelImage;

/**
 * AccelImageChannel:
 * @ACCEL_IMAGE_CHANNEL_Y: luma (Y′), also of gray images
 * @ACCEL_IMAGE_CHANNEL_U: Cb
 * @ACCEL_IMAGE_CHANNEL_V: Cr
 * @ACCEL_IMAGE_CHANNEL_R: red
 * @ACCEL_IMAGE_CHANNEL_G: green
 * @ACCEL_IMAGE_CHANNEL_B: blue
 * @ACCEL_IMAGE_CHANNEL_A: alpha
 *
 * What one channel of an #AccelImageSamples holds.
 */
typedef enum {
  ACCEL_IMAGE_CHANNEL_Y,
  ACCEL_IMAGE_CHANNEL_U,
  ACCEL_IMAGE_CHANNEL_V,
  ACCEL_IMAGE_CHANNEL_R,
  ACCEL_IMAGE_CHANNEL_G,
  ACCEL_IMAGE_CHANNEL_B,
  ACCEL_IMAGE_CHANNEL_A,
} AccelImageChannel;

/**
 * AccelImageSamples:
 * @offset: the byte offset in the buffer of the first channel of the
 *   first sample
 * @stride: bytes from one row to the next
 * @width: samples per row
 * @height: rows
 * @channels: interleaved channels per sample (1 to 4)
 * @pixel_step: bytes from one sample to the next in a row
 * @channel_step: bytes from one channel of a sample to the next
 * @depth: bytes per channel value: 1, or 2 (little-endian)
 * @bits: the significant bits of a value (8, 10 or 16)
 * @shift: how far the value is shifted up in its word (6 for P010)
 * @sub_x: horizontal subsampling against the image's width (1 or 2)
 * @sub_y: vertical subsampling against the image's height (1 or 2)
 * @channel: what each channel holds
 *
 * One grid of samples of an image, which the image ops process as a
 * whole: all of RGBA, the Y plane of NV12, the interleaved U and V of
 * NV12, the Y of YUY2 (every other byte)…
 */
typedef struct {
  gint64 offset;
  gint64 stride;
  int width;
  int height;
  int channels;
  int pixel_step;
  int channel_step;
  int depth;
  int bits;
  int shift;
  int sub_x;
  int sub_y;
  AccelImageChannel channel[4];
} AccelImageSamples;

/**
 * AccelImageLayout:
 * @format: the pixel format
 * @width: the width in pixels
 * @height: the height in pixels
 * @n_planes: memory planes
 * @offset: the byte offset of each plane
 * @stride: the row stride of each plane, in bytes
 * @row_bytes: the bytes of pixels in a row of each plane
 * @rows: the rows of each plane
 * @size: the bytes from offset 0 to the end of the furthest plane
 * @n_samples: sample planes
 * @samples: the sample planes
 *
 * Where everything of an image is, worked out from an #AccelImage (or the
 * equivalent numbers) by accel_image_layout_init().
 */
typedef struct {
  AccelImageFormat format;
  int width;
  int height;
  guint n_planes;
  gint64 offset[ACCEL_IMAGE_MAX_PLANES];
  gint64 stride[ACCEL_IMAGE_MAX_PLANES];
  gint64 row_bytes[ACCEL_IMAGE_MAX_PLANES];
  gint64 rows[ACCEL_IMAGE_MAX_PLANES];
  gint64 size;
  guint n_samples;
  AccelImageSamples samples[ACCEL_IMAGE_MAX_PLANES];
} AccelImageLayout;

ACCEL_API
gboolean accel_image_format_is_rgb (AccelImageFormat format);
ACCEL_API
gboolean accel_image_format_has_alpha (AccelImageFormat format);
ACCEL_API
guint accel_image_format_get_n_planes (AccelImageFormat format);
ACCEL_API
int accel_image_get_max_shrink (AccelInterpolation method, AccelImageFormat dst_format, gboolean convert);

ACCEL_API
gboolean accel_image_layout_init (AccelImageLayout *layout,
                                  AccelImageFormat format,
                                  int width,
                                  int height,
                                  int stride,
                                  int uv_stride,
                                  gint64 uv_offset,
                                  gint64 v_offset,
                                  GError **error);
ACCEL_API
gboolean accel_image_get_layout (const AccelImage *image, AccelImageLayout *layout, GError **error);

ACCEL_API
void accel_image_color_transform (AccelImageFormat src_format,
                                  AccelColorMatrix src_matrix,
                                  AccelColorRange src_range,
                                  AccelImageFormat dst_format,
                                  AccelColorMatrix dst_matrix,
                                  AccelColorRange dst_range,
                                  float transform[12]);

G_END_DECLS
