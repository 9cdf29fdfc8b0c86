/* gstacceltransform.h: GstAccelTransform, the base of the Accel elements:
 * one image op per frame on an Accel device, frames in host memory or in
 * device memory (memory:AccelBuffer), device faults reported or recovered.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>
#include <accel.h>

G_BEGIN_DECLS

/**
 * GstAccelOnFault:
 * @GST_ACCEL_ON_FAULT_ERROR: post an error on the bus and stop
 * @GST_ACCEL_ON_FAULT_RECOVER: go on in the device's new generation: the
 *   frame is run again where it came from host memory, and dropped (with a
 *   warning on the bus) where its device memory was lost
 *
 * What an Accel element does when its device faults.
 */
typedef enum {
  GST_ACCEL_ON_FAULT_ERROR,
  GST_ACCEL_ON_FAULT_RECOVER,
} GstAccelOnFault;

#define GST_TYPE_ACCEL_ON_FAULT (gst_accel_on_fault_get_type ())
GType gst_accel_on_fault_get_type (void);

/* The formats the elements take, as caps. */
#define GST_ACCEL_FORMATS "{ NV12, I420, YUY2, P010_10LE, RGBA, BGRA, RGB, BGR, GRAY8, GRAY16_LE }"

#define GST_ACCEL_CAPS                                                                             \
  GST_VIDEO_CAPS_MAKE_WITH_FEATURES ("memory:AccelBuffer", GST_ACCEL_FORMATS) "; "                  \
  GST_VIDEO_CAPS_MAKE (GST_ACCEL_FORMATS)

#define GST_TYPE_ACCEL_TRANSFORM (gst_accel_transform_get_type ())
G_DECLARE_DERIVABLE_TYPE (GstAccelTransform, gst_accel_transform, GST, ACCEL_TRANSFORM, GstBaseTransform)

/**
 * GstAccelTransformClass:
 * @parent_class: the parent class
 * @make_op: makes the op that turns frames of @in into frames of @out;
 *   the base class sets its `src` and `dst` images (buffers, formats,
 *   sizes, strides, offsets) for each frame
 *
 * The class of the Accel elements.
 */
struct _GstAccelTransformClass {
  GstBaseTransformClass parent_class;

  AccelOp *(*make_op) (GstAccelTransform *self, const GstVideoInfo *in, const GstVideoInfo *out, GError **error);

  /*< private >*/
  gpointer padding[4];
};

AccelDevice *gst_accel_transform_get_device (GstAccelTransform *self);

/* For make_op: a step that runs before the op, from the frame (or the
 * step before) into a frame of @info on the device, by @op (an image op
 * whose `src` and `dst` images the base class sets, as for the op; the
 * step takes it). Steps run in the order added; the op reads the last. */
void gst_accel_transform_add_step (GstAccelTransform *self, AccelOp *op, const GstVideoInfo *info);

/* Both features (memory:AccelBuffer first) of every structure of @caps,
 * within the elements' formats, then @filter (nullable) first. Takes
 * @caps. */
GstCaps *gst_accel_caps_finish (GstCaps *caps, GstCaps *filter);

gboolean gst_accel_image_format (GstVideoFormat format, AccelImageFormat *out);
void gst_accel_colorimetry (const GstVideoInfo *info,
                            AccelColorMatrix *matrix,
                            AccelColorRange *range,
                            AccelChromaSiting *siting);

G_END_DECLS
