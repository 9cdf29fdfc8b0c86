/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-image-private.h"
#include "accel-enum-types.h"

/**
 * AccelWarpPerspective:
 *
 * Warps an image by a homography given inverted: destination pixel
 * `(x, y)` takes the source at `((m00 x + m01 y + m02) / w, (m10 x + m11 y
 * + m12) / w)` with `w = m20 x + m21 y + m22`; where `w` is not above 0
 * the point lies behind the camera and the pixel takes `border-value`
 * (whatever `border` is). Otherwise as #AccelWarpAffine: pixel centres at integers,
 * binary32 coordinates and sums, taps outside the source read `border`,
 * rounded half up and saturated, each sample plane on its own with pixel
 * centres aligned.
 *
 * Op name: `warp-perspective`.
 */

static const AccelOpParam warp_perspective_params[] = {
  ACCEL_IMAGE_WARP_XY_ROWS (AccelWarpPerspective),
  ACCEL_OP_DOUBLE (AccelWarpPerspective, matrix[6], "m20",
                   "Row 2, column 0 of the inverse map: the homogeneous w per destination x.", -1e9, 1e9, 0.0, 0),
  ACCEL_OP_DOUBLE (AccelWarpPerspective, matrix[7], "m21",
                   "Row 2, column 1 of the inverse map: the homogeneous w per destination y.", -1e9, 1e9, 0.0, 0),
  ACCEL_OP_DOUBLE (AccelWarpPerspective, matrix[8], "m22",
                   "Row 2, column 2 of the inverse map: the homogeneous w at the origin.", -1e9, 1e9, 1.0, 0),
  ACCEL_IMAGE_WARP_PARAMS (AccelWarpPerspective),
};

ACCEL_DEFINE_IMAGE_WARP_TYPE (AccelWarpPerspective, accel_warp_perspective, "warp-perspective",
                              "Warps an image by an inverse homography, with border modes",
                              warp_perspective_params)

