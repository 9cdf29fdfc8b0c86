/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-image-private.h"
#include "accel-enum-types.h"

/**
 * AccelResize:
 *
 * Resizes an image, each sample plane on its own (planar YUV: the Y plane
 * and each chroma plane at its own size; packed formats: all channels of
 * a pixel alike, alpha included).
 *
 * Destination sample `x` of a plane `n` samples wide made from one `m`
 * samples wide lies at source coordinate `(x + 0.5) m / n - 0.5` (pixel
 * centres at integers: OpenCV's INTER_LINEAR and PyTorch's
 * `align_corners=False`), and likewise down the rows. The two axes are
 * separable: the weights of #AccelInterpolation along each axis multiply.
 * Sums are formed in binary32, rounded half up and saturated to the
 * sample's range; P010 samples are computed on their 10-bit values.
 * Bilinear and bicubic do not widen their kernels when shrinking (as
 * OpenCV and PyTorch without antialiasing); area and lanczos3 do, up to
 * 8 times per axis.
 *
 * Op name: `resize`.
 */

static gboolean
accel_resize_validate (AccelOp *op, GError **error)
{
  AccelResize *self = ACCEL_RESIZE (op);
  AccelImageLayout ls, ld;

  return accel_image_check_same_format_ (op, &self->src, &self->dst, error)
      && accel_image_check_ (op, "src", &self->src, NULL, &ls, error)
      && accel_image_check_ (op, "dst", &self->dst, NULL, &ld, error)
      && accel_image_check_apart_ (op, &self->src, &self->dst, error)
      && accel_image_check_scale_ (op, self->method, FALSE, &ls, &ld, error);
}

ACCEL_DEFINE_IMAGE_OP_TYPE (AccelResize, accel_resize, "resize",
                            "Resizes an image, plane by plane, with half-pixel centres",
                            _accel_resize_params, accel_resize_validate, TRUE)

