/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-types.h"

G_BEGIN_DECLS

/**
 * AccelImageFormat:
 * @ACCEL_IMAGE_FORMAT_RGBA: packed 8-bit R, G, B, A
 * @ACCEL_IMAGE_FORMAT_BGRA: packed 8-bit B, G, R, A
 * @ACCEL_IMAGE_FORMAT_RGB: packed 8-bit R, G, B
 * @ACCEL_IMAGE_FORMAT_BGR: packed 8-bit B, G, R
 * @ACCEL_IMAGE_FORMAT_GRAY8: 8-bit luma (Y′, full range)
 * @ACCEL_IMAGE_FORMAT_GRAY16: 16-bit little-endian luma (Y′, full range)
 * @ACCEL_IMAGE_FORMAT_NV12: 8-bit Y plane, then one plane of interleaved
 *   U, V subsampled 2×2 (4:2:0)
 * @ACCEL_IMAGE_FORMAT_I420: 8-bit Y, U and V planes, U and V subsampled
 *   2×2 (4:2:0)
 * @ACCEL_IMAGE_FORMAT_YUY2: packed 8-bit Y0 U Y1 V, U and V subsampled
 *   horizontally (4:2:2)
 * @ACCEL_IMAGE_FORMAT_P010: as NV12 with 10-bit samples in the high bits
 *   of little-endian 16-bit words (GStreamer's `P010_10LE`)
 *
 * Pixel formats of the image ops, named and laid out as GStreamer's video
 * formats of the same names (`GRAY16_LE`, `P010_10LE`). Subsampled planes
 * are `ceil (width / 2)` samples wide (and, for 4:2:0, `ceil (height / 2)`
 * rows high).
 */
typedef enum {
  ACCEL_IMAGE_FORMAT_RGBA,
  ACCEL_IMAGE_FORMAT_BGRA,
  ACCEL_IMAGE_FORMAT_RGB,
  ACCEL_IMAGE_FORMAT_BGR,
  ACCEL_IMAGE_FORMAT_GRAY8,
  ACCEL_IMAGE_FORMAT_GRAY16,
  ACCEL_IMAGE_FORMAT_NV12,
  ACCEL_IMAGE_FORMAT_I420,
  ACCEL_IMAGE_FORMAT_YUY2,
  ACCEL_IMAGE_FORMAT_P010,
} AccelImageFormat;

/**
 * AccelColorMatrix:
 * @ACCEL_COLOR_MATRIX_BT601: ITU-R BT.601 (Kr 0.299, Kb 0.114)
 * @ACCEL_COLOR_MATRIX_BT709: ITU-R BT.709 (Kr 0.2126, Kb 0.0722)
 * @ACCEL_COLOR_MATRIX_BT2020: ITU-R BT.2020 non-constant luminance
 *   (Kr 0.2627, Kb 0.0593)
 *
 * The Y′CbCr matrix of a YUV or gray image.
 */
typedef enum {
  ACCEL_COLOR_MATRIX_BT601,
  ACCEL_COLOR_MATRIX_BT709,
  ACCEL_COLOR_MATRIX_BT2020,
} AccelColorMatrix;

/**
 * AccelColorRange:
 * @ACCEL_COLOR_RANGE_LIMITED: Y′ from 16 to 235 and Cb, Cr from 16 to 240
 *   (scaled by 4 for 10 bits), as GStreamer's `16_235`
 * @ACCEL_COLOR_RANGE_FULL: every code value (Cb, Cr centred on half the
 *   code range), as GStreamer's `0_255`
 *
 * The quantisation range of a YUV image. RGB and gray images are always
 * full range.
 */
typedef enum {
  ACCEL_COLOR_RANGE_LIMITED,
  ACCEL_COLOR_RANGE_FULL,
} AccelColorRange;

/**
 * AccelChromaSiting:
 * @ACCEL_CHROMA_SITING_MPEG2: chroma sites horizontally on the even luma
 *   columns and vertically halfway between luma rows (GStreamer's `mpeg2`,
 *   H.264's type 0)
 * @ACCEL_CHROMA_SITING_JPEG: chroma sites halfway between luma samples
 *   both ways (GStreamer's `jpeg`, type 1)
 * @ACCEL_CHROMA_SITING_COSITED: chroma sites on the even luma columns and
 *   rows (GStreamer's `cosited`, type 2)
 *
 * Where the samples of a subsampled chroma plane lie on the luma grid,
 * as GStreamer's #GstVideoChromaSite flags define it: chroma sample `j`
 * of an axis subsampled by 2 is at luma coordinate `2 j` when cosited on
 * that axis and `2 j + 0.5` otherwise (pixel centres at integers).
 */
typedef enum {
  ACCEL_CHROMA_SITING_MPEG2,
  ACCEL_CHROMA_SITING_JPEG,
  ACCEL_CHROMA_SITING_COSITED,
} AccelChromaSiting;

/**
 * AccelInterpolation:
 * @ACCEL_INTERPOLATION_NEAREST: the sample whose centre is nearest
 *   (`floor (c + 0.5)`, as OpenCV's INTER_NEAREST_EXACT and PyTorch's
 *   `nearest-exact`)
 * @ACCEL_INTERPOLATION_BILINEAR: linear in each axis between the two
 *   nearest samples, the coordinate clamped to the image (OpenCV's
 *   INTER_LINEAR, PyTorch's `bilinear` with `align_corners=False` and no
 *   antialiasing)
 * @ACCEL_INTERPOLATION_BICUBIC: Keys' cubic with a = -0.75 over 4 samples
 *   per axis, edge samples repeated (OpenCV's INTER_CUBIC, PyTorch's
 *   `bicubic`)
 * @ACCEL_INTERPOLATION_AREA: the mean of the source area a destination
 *   pixel covers, partly covered samples weighted by their coverage (a box
 *   filter as wide as the scale factor; when growing, narrower than a
 *   sample, so pixels repeat), edge samples repeated past the edges
 * @ACCEL_INTERPOLATION_LANCZOS3: `sinc (x) sinc (x / 3)` over 6 samples per
 *   axis, widened by the scale factor when shrinking (as Pillow's LANCZOS),
 *   weights normalised to sum 1, edge samples repeated
 *
 * How the image ops sample between pixels.
 */
typedef enum {
  ACCEL_INTERPOLATION_NEAREST,
  ACCEL_INTERPOLATION_BILINEAR,
  ACCEL_INTERPOLATION_BICUBIC,
  ACCEL_INTERPOLATION_AREA,
  ACCEL_INTERPOLATION_LANCZOS3,
} AccelInterpolation;

/**
 * AccelBorderMode:
 * @ACCEL_BORDER_REPLICATE: the nearest edge pixel (`aaa|abcd|ddd`)
 * @ACCEL_BORDER_REFLECT_101: mirrored without repeating the edge
 *   (`dcb|abcd|cba`, OpenCV's BORDER_REFLECT_101)
 * @ACCEL_BORDER_CONSTANT: a constant value (`vvv|abcd|vvv`)
 *
 * What the filters and warps read outside the image.
 */
typedef enum {
  ACCEL_BORDER_REPLICATE,
  ACCEL_BORDER_REFLECT_101,
  ACCEL_BORDER_CONSTANT,
} AccelBorderMode;

/**
 * AccelFilterKind:
 * @ACCEL_FILTER_GAUSSIAN: a Gaussian of standard deviation `sigma`
 * @ACCEL_FILTER_BOX: the mean over a `ksize` × `ksize-y` box
 * @ACCEL_FILTER_SOBEL: Sobel derivative of order `dx`, `dy`
 * @ACCEL_FILTER_SCHARR: Scharr 3×3 first derivative (`dx` or `dy` is 1)
 * @ACCEL_FILTER_SEPARABLE: the user's row kernel `kernel` then column
 *   kernel `kernel-y`
 * @ACCEL_FILTER_KERNEL: the user's 2-D kernel `kernel`
 *
 * What `filter` computes.
 */
typedef enum {
  ACCEL_FILTER_GAUSSIAN,
  ACCEL_FILTER_BOX,
  ACCEL_FILTER_SOBEL,
  ACCEL_FILTER_SCHARR,
  ACCEL_FILTER_SEPARABLE,
  ACCEL_FILTER_KERNEL,
} AccelFilterKind;

/**
 * AccelMorphologyOp:
 * @ACCEL_MORPHOLOGY_ERODE: the minimum under the element
 * @ACCEL_MORPHOLOGY_DILATE: the maximum under the element
 * @ACCEL_MORPHOLOGY_OPEN: erode, then dilate
 * @ACCEL_MORPHOLOGY_CLOSE: dilate, then erode
 *
 * What `morphology` computes.
 */
typedef enum {
  ACCEL_MORPHOLOGY_ERODE,
  ACCEL_MORPHOLOGY_DILATE,
  ACCEL_MORPHOLOGY_OPEN,
  ACCEL_MORPHOLOGY_CLOSE,
} AccelMorphologyOp;

/**
 * AccelMorphologyShape:
 * @ACCEL_MORPHOLOGY_RECT: every pixel of the `ksize` × `ksize-y` box
 * @ACCEL_MORPHOLOGY_ELLIPSE: the ellipse inscribed in the box, as
 *   OpenCV's `getStructuringElement (MORPH_ELLIPSE)`
 *
 * The structuring element of `morphology`.
 */
typedef enum {
  ACCEL_MORPHOLOGY_RECT,
  ACCEL_MORPHOLOGY_ELLIPSE,
} AccelMorphologyShape;

G_END_DECLS
