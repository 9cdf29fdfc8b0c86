/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-image-private.h"
#include "accel-enum-types.h"

/**
 * AccelConvertColor:
 *
 * Converts an image from one #AccelImageFormat to another, and scales it
 * when the sizes differ, in one pass: any of NV12, I420, YUY2, P010, RGBA,
 * BGRA, RGB, BGR, GRAY8 and GRAY16 to any other (or the same), shrinking
 * up to 16 times into subsampled formats (8 with area and lanczos3).
 *
 * Every destination sample is computed at its own position: destination
 * pixel `(x, y)` lies at source luma coordinate `((x + 0.5) sw / dw - 0.5,
 * (y + 0.5) sh / dh - 0.5)` (half-pixel centres, pixel centres at
 * integers); a chroma sample of a subsampled destination lies at its
 * siting on the destination's luma grid (#AccelChromaSiting). There, each
 * source channel is interpolated with `method` on its own grid, a
 * subsampled source's chroma at its siting (so chroma is upsampled by the
 * interpolation that scales); where the destination is subsampled more
 * than the source channel, its sample is instead the mean over the area
 * it covers (%ACCEL_INTERPOLATION_AREA): `[1 1] / 2` for a centred
 * siting and `[1 2 1] / 4` for a cosited one at the same size, as
 * GStreamer's videoconvert downsamples chroma. The interpolated
 * code values go through the affine map of accel_image_color_transform()
 * in binary32 (YUV and gray through R′G′B′ with their matrix and range;
 * no gamma is involved) and are rounded half up and saturated to the
 * destination's range of code values (so limited-range output may use
 * codes outside 16–235, as GStreamer's videoconvert does too). Alpha is
 * interpolated where both sides have it and is opaque (255) where only
 * the destination does. Gray images are full-range Y′.
 *
 * Op name: `convert-color`.
 */

static gboolean
accel_convert_color_validate (AccelOp *op, GError **error)
{
  AccelConvertColor *self = ACCEL_CONVERT_COLOR (op);
  AccelImageLayout ls, ld;

  return accel_image_check_ (op, "src", &self->src, NULL, &ls, error)
      && accel_image_check_ (op, "dst", &self->dst, NULL, &ld, error)
      && accel_image_check_apart_ (op, &self->src, &self->dst, error)
      && accel_image_check_scale_ (op, self->method, TRUE, &ls, &ld, error);
}

ACCEL_DEFINE_IMAGE_OP_TYPE (AccelConvertColor, accel_convert_color, "convert-color",
                            "Converts an image between pixel formats and colour spaces, scaling it if the sizes differ",
                            _accel_convert_color_params, accel_convert_color_validate, TRUE)

