/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-image-private.h"
#include "accel-enum-types.h"

/**
 * AccelWarpAffine:
 *
 * Warps an image by an affine map given inverted: destination pixel
 * `(x, y)` takes the source at `(m00 x + m01 y + m02, m10 x + m11 y +
 * m12)`, pixel centres at integers (OpenCV's warpAffine with
 * WARP_INVERSE_MAP, but with coordinates in binary32 rather than 1/32
 * pixel steps). Interpolation as #AccelInterpolation without clamping the
 * coordinate: taps outside the source read `border` (bilinear and bicubic
 * near the edge blend with it); a source point beyond 10^7 pixels out, or
 * not a number, takes `border-value` whatever `border` is. Sums in binary32, rounded half up and
 * saturated.
 *
 * Each sample plane is warped on its own, alpha alike; a subsampled plane
 * maps its coordinates through the image's grid with pixel centres
 * aligned (`X = s (x + 0.5) - 0.5` for subsampling `s`), so chroma follows
 * luma.
 *
 * Op name: `warp-affine`.
 */

static gboolean
accel_warp_affine_validate (AccelOp *op, GError **error)
{
  AccelWarpAffine *self = ACCEL_WARP_AFFINE (op);

  return accel_image_check_warp_ (op, &self->src, &self->dst, self->method, self->border_value,
                                  self->matrix, G_N_ELEMENTS (self->matrix), error);
}

static const AccelOpParam warp_affine_params[] = {
  ACCEL_OP_DOUBLE (AccelWarpAffine, matrix[0], "m00",
                   "Row 0, column 0 of the inverse map: source x per destination x.", -1e9, 1e9, 1.0, 0),
  ACCEL_OP_DOUBLE (AccelWarpAffine, matrix[1], "m01",
                   "Row 0, column 1 of the inverse map: source x per destination y.", -1e9, 1e9, 0.0, 0),
  ACCEL_OP_DOUBLE (AccelWarpAffine, matrix[2], "m02",
                   "Row 0, column 2 of the inverse map: source x at the origin.", -1e9, 1e9, 0.0, 0),
  ACCEL_OP_DOUBLE (AccelWarpAffine, matrix[3], "m10",
                   "Row 1, column 0 of the inverse map: source y per destination x.", -1e9, 1e9, 0.0, 0),
  ACCEL_OP_DOUBLE (AccelWarpAffine, matrix[4], "m11",
                   "Row 1, column 1 of the inverse map: source y per destination y.", -1e9, 1e9, 1.0, 0),
  ACCEL_OP_DOUBLE (AccelWarpAffine, matrix[5], "m12",
                   "Row 1, column 2 of the inverse map: source y at the origin.", -1e9, 1e9, 0.0, 0),
  ACCEL_IMAGE_WARP_PARAMS (AccelWarpAffine),
};

ACCEL_DEFINE_IMAGE_OP_TYPE (AccelWarpAffine, accel_warp_affine, "warp-affine",
                            "Warps an image by an inverse affine map, with border modes",
                            warp_affine_params, accel_warp_affine_validate, TRUE)

