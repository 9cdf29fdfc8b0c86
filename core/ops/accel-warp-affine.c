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

static const AccelOpParam warp_affine_params[] = {
  ACCEL_IMAGE_WARP_XY_ROWS (AccelWarpAffine),
  ACCEL_IMAGE_WARP_PARAMS (AccelWarpAffine),
};

ACCEL_DEFINE_IMAGE_WARP_TYPE (AccelWarpAffine, accel_warp_affine, "warp-affine",
                              "Warps an image by an inverse affine map, with border modes",
                              warp_affine_params)

