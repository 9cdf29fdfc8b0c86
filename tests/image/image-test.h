/* image-test.h: what the image op tests share (cpu and gpu suites, the
 * GStreamer element tests): images of random pixels with padded rows and
 * gaps between planes, their host copies, setting them on an op, reading
 * samples, and comparisons that name the first bad sample.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

typedef struct {
  AccelImage img;          /* the buffer and its geometry as set on an op (strides, offsets 0: the default) */
  AccelImageLayout layout;
  gsize size;              /* bytes of the buffer */
  guint8 *bytes;           /* what the buffer holds, as last uploaded or downloaded */
} ItImage;

/* An image on @device with random bytes everywhere (P010's low bits 0);
 * with @padded, rows longer than the pixels, gaps between planes and
 * slack at the end. */
ItImage *it_image_new (AccelDevice *device, AccelImageFormat format, int width, int height, gboolean padded);
/* The same with given strides and offsets (0: the default). */
ItImage *it_image_new_with_layout (AccelDevice *device, AccelImageFormat format, int width, int height,
                                   int stride, int uv_stride, gint64 uv_offset, gint64 v_offset, gsize size);
/* A copy of @image's geometry and bytes on @device. */
ItImage *it_image_copy_to (ItImage *image, AccelDevice *device);
void it_image_free (ItImage *image);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ItImage, it_image_free)

void it_image_upload (ItImage *image);
void it_image_download (ItImage *image);

/* Sample (@x, @y), channel @c of sample plane @plane, from the host copy. */
int it_get (const ItImage *image, guint plane, int x, int y, int c);
void it_put (ItImage *image, guint plane, int x, int y, int c, int value);

/* Sets `src`/`dst` and, with @geometry, the format and size. */
void it_set_src (AccelOp *op, const ItImage *image);
void it_set_dst (AccelOp *op, const ItImage *image, gboolean geometry);

/* Every sample of @got within @tol of @want (same format and size);
 * returns the largest difference. */
int it_assert_close (const char *what, const ItImage *got, const ItImage *want, int tol);
/* The bytes of @after outside its pixels are those of @before. */
void it_assert_padding_kept (const char *what, const ItImage *after, const guint8 *before);

const char *it_format_name (AccelImageFormat format);

/* The ten formats. */
#define IT_N_FORMATS 10
extern const AccelImageFormat it_all_formats[IT_N_FORMATS];

/* Submits @op on @device, downloads @dst and checks that only its pixels
 * changed. */
void it_run_keeping_padding (AccelDevice *device, AccelOp *op, ItImage *dst);

G_END_DECLS
