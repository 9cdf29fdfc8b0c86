/* accel-image-props.c: the doc comments of the properties the image op
 * types share by their tables (accel-image.c: the source and destination
 * images; accel-image-private.h: the warps' interpolation and border),
 * one per op type, as the introspection data wants them. No code.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* AccelConvertColor */

/**
 * AccelConvertColor:src:
 *
 * The source image's bytes: a buffer of any dtype, contiguous (see
 * #AccelImage).
 */
/**
 * AccelConvertColor:src-stride:
 *
 * Bytes from one row of the source's first plane to the next; 0 for rows with
 * no padding.
 */
/**
 * AccelConvertColor:src-uv-stride:
 *
 * Bytes from one row of the source's chroma planes to the next; 0 for rows
 * with no padding. Unused for formats of one plane.
 */
/**
 * AccelConvertColor:src-uv-offset:
 *
 * The byte offset of the source's first chroma plane in its buffer; 0 for
 * right after the first plane.
 */
/**
 * AccelConvertColor:src-v-offset:
 *
 * The byte offset of the V plane of an I420 source; 0 for right after the U
 * plane.
 */
/**
 * AccelConvertColor:src-format:
 *
 * The source's pixel format.
 */
/**
 * AccelConvertColor:src-width:
 *
 * The source's width in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelConvertColor:src-height:
 *
 * The source's height in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelConvertColor:dst:
 *
 * The destination image's bytes: a buffer of any dtype, contiguous (see
 * #AccelImage).
 */
/**
 * AccelConvertColor:dst-stride:
 *
 * Bytes from one row of the destination's first plane to the next; 0 for rows
 * with no padding.
 */
/**
 * AccelConvertColor:dst-uv-stride:
 *
 * Bytes from one row of the destination's chroma planes to the next; 0 for
 * rows with no padding. Unused for formats of one plane.
 */
/**
 * AccelConvertColor:dst-uv-offset:
 *
 * The byte offset of the destination's first chroma plane in its buffer; 0
 * for right after the first plane.
 */
/**
 * AccelConvertColor:dst-v-offset:
 *
 * The byte offset of the V plane of an I420 destination; 0 for right after
 * the U plane.
 */
/**
 * AccelConvertColor:dst-format:
 *
 * The destination's pixel format.
 */
/**
 * AccelConvertColor:dst-width:
 *
 * The destination's width in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelConvertColor:dst-height:
 *
 * The destination's height in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */

/* AccelResize */

/**
 * AccelResize:src:
 *
 * The source image's bytes: a buffer of any dtype, contiguous (see
 * #AccelImage).
 */
/**
 * AccelResize:src-stride:
 *
 * Bytes from one row of the source's first plane to the next; 0 for rows with
 * no padding.
 */
/**
 * AccelResize:src-uv-stride:
 *
 * Bytes from one row of the source's chroma planes to the next; 0 for rows
 * with no padding. Unused for formats of one plane.
 */
/**
 * AccelResize:src-uv-offset:
 *
 * The byte offset of the source's first chroma plane in its buffer; 0 for
 * right after the first plane.
 */
/**
 * AccelResize:src-v-offset:
 *
 * The byte offset of the V plane of an I420 source; 0 for right after the U
 * plane.
 */
/**
 * AccelResize:src-format:
 *
 * The source's pixel format.
 */
/**
 * AccelResize:src-width:
 *
 * The source's width in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelResize:src-height:
 *
 * The source's height in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelResize:dst:
 *
 * The destination image's bytes: a buffer of any dtype, contiguous (see
 * #AccelImage).
 */
/**
 * AccelResize:dst-stride:
 *
 * Bytes from one row of the destination's first plane to the next; 0 for rows
 * with no padding.
 */
/**
 * AccelResize:dst-uv-stride:
 *
 * Bytes from one row of the destination's chroma planes to the next; 0 for
 * rows with no padding. Unused for formats of one plane.
 */
/**
 * AccelResize:dst-uv-offset:
 *
 * The byte offset of the destination's first chroma plane in its buffer; 0
 * for right after the first plane.
 */
/**
 * AccelResize:dst-v-offset:
 *
 * The byte offset of the V plane of an I420 destination; 0 for right after
 * the U plane.
 */
/**
 * AccelResize:dst-format:
 *
 * The destination's pixel format.
 */
/**
 * AccelResize:dst-width:
 *
 * The destination's width in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelResize:dst-height:
 *
 * The destination's height in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */

/* AccelFilter */

/**
 * AccelFilter:src:
 *
 * The source image's bytes: a buffer of any dtype, contiguous (see
 * #AccelImage).
 */
/**
 * AccelFilter:src-stride:
 *
 * Bytes from one row of the source's first plane to the next; 0 for rows with
 * no padding.
 */
/**
 * AccelFilter:src-uv-stride:
 *
 * Bytes from one row of the source's chroma planes to the next; 0 for rows
 * with no padding. Unused for formats of one plane.
 */
/**
 * AccelFilter:src-uv-offset:
 *
 * The byte offset of the source's first chroma plane in its buffer; 0 for
 * right after the first plane.
 */
/**
 * AccelFilter:src-v-offset:
 *
 * The byte offset of the V plane of an I420 source; 0 for right after the U
 * plane.
 */
/**
 * AccelFilter:src-format:
 *
 * The source's pixel format.
 */
/**
 * AccelFilter:src-width:
 *
 * The source's width in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelFilter:src-height:
 *
 * The source's height in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelFilter:dst:
 *
 * The destination image's bytes: a buffer of any dtype, contiguous, laid out
 * by the dst- properties; the image has the source's format and size.
 */
/**
 * AccelFilter:dst-stride:
 *
 * Bytes from one row of the destination's first plane to the next; 0 for rows
 * with no padding.
 */
/**
 * AccelFilter:dst-uv-stride:
 *
 * Bytes from one row of the destination's chroma planes to the next; 0 for
 * rows with no padding. Unused for formats of one plane.
 */
/**
 * AccelFilter:dst-uv-offset:
 *
 * The byte offset of the destination's first chroma plane in its buffer; 0
 * for right after the first plane.
 */
/**
 * AccelFilter:dst-v-offset:
 *
 * The byte offset of the V plane of an I420 destination; 0 for right after
 * the U plane.
 */

/* AccelMorphology */

/**
 * AccelMorphology:src:
 *
 * The source image's bytes: a buffer of any dtype, contiguous (see
 * #AccelImage).
 */
/**
 * AccelMorphology:src-stride:
 *
 * Bytes from one row of the source's first plane to the next; 0 for rows with
 * no padding.
 */
/**
 * AccelMorphology:src-uv-stride:
 *
 * Bytes from one row of the source's chroma planes to the next; 0 for rows
 * with no padding. Unused for formats of one plane.
 */
/**
 * AccelMorphology:src-uv-offset:
 *
 * The byte offset of the source's first chroma plane in its buffer; 0 for
 * right after the first plane.
 */
/**
 * AccelMorphology:src-v-offset:
 *
 * The byte offset of the V plane of an I420 source; 0 for right after the U
 * plane.
 */
/**
 * AccelMorphology:src-format:
 *
 * The source's pixel format.
 */
/**
 * AccelMorphology:src-width:
 *
 * The source's width in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelMorphology:src-height:
 *
 * The source's height in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelMorphology:dst:
 *
 * The destination image's bytes: a buffer of any dtype, contiguous, laid out
 * by the dst- properties; the image has the source's format and size.
 */
/**
 * AccelMorphology:dst-stride:
 *
 * Bytes from one row of the destination's first plane to the next; 0 for rows
 * with no padding.
 */
/**
 * AccelMorphology:dst-uv-stride:
 *
 * Bytes from one row of the destination's chroma planes to the next; 0 for
 * rows with no padding. Unused for formats of one plane.
 */
/**
 * AccelMorphology:dst-uv-offset:
 *
 * The byte offset of the destination's first chroma plane in its buffer; 0
 * for right after the first plane.
 */
/**
 * AccelMorphology:dst-v-offset:
 *
 * The byte offset of the V plane of an I420 destination; 0 for right after
 * the U plane.
 */

/* AccelWarpAffine */

/**
 * AccelWarpAffine:src:
 *
 * The source image's bytes: a buffer of any dtype, contiguous (see
 * #AccelImage).
 */
/**
 * AccelWarpAffine:src-stride:
 *
 * Bytes from one row of the source's first plane to the next; 0 for rows with
 * no padding.
 */
/**
 * AccelWarpAffine:src-uv-stride:
 *
 * Bytes from one row of the source's chroma planes to the next; 0 for rows
 * with no padding. Unused for formats of one plane.
 */
/**
 * AccelWarpAffine:src-uv-offset:
 *
 * The byte offset of the source's first chroma plane in its buffer; 0 for
 * right after the first plane.
 */
/**
 * AccelWarpAffine:src-v-offset:
 *
 * The byte offset of the V plane of an I420 source; 0 for right after the U
 * plane.
 */
/**
 * AccelWarpAffine:src-format:
 *
 * The source's pixel format.
 */
/**
 * AccelWarpAffine:src-width:
 *
 * The source's width in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelWarpAffine:src-height:
 *
 * The source's height in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelWarpAffine:dst:
 *
 * The destination image's bytes: a buffer of any dtype, contiguous (see
 * #AccelImage).
 */
/**
 * AccelWarpAffine:dst-stride:
 *
 * Bytes from one row of the destination's first plane to the next; 0 for rows
 * with no padding.
 */
/**
 * AccelWarpAffine:dst-uv-stride:
 *
 * Bytes from one row of the destination's chroma planes to the next; 0 for
 * rows with no padding. Unused for formats of one plane.
 */
/**
 * AccelWarpAffine:dst-uv-offset:
 *
 * The byte offset of the destination's first chroma plane in its buffer; 0
 * for right after the first plane.
 */
/**
 * AccelWarpAffine:dst-v-offset:
 *
 * The byte offset of the V plane of an I420 destination; 0 for right after
 * the U plane.
 */
/**
 * AccelWarpAffine:dst-format:
 *
 * The destination's pixel format.
 */
/**
 * AccelWarpAffine:dst-width:
 *
 * The destination's width in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelWarpAffine:dst-height:
 *
 * The destination's height in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelWarpAffine:method:
 *
 * The interpolation: nearest, bilinear or bicubic, at the mapped coordinate,
 * not clamped (taps past the edge read the border).
 */
/**
 * AccelWarpAffine:border:
 *
 * What is read outside the source.
 */
/**
 * AccelWarpAffine:border-value:
 *
 * The value read outside the source with %ACCEL_BORDER_CONSTANT, in the
 * sample's code values (10-bit values for P010).
 */
/**
 * AccelWarpAffine:m00:
 *
 * Row 0, column 0 of the inverse map: source x per destination x.
 */
/**
 * AccelWarpAffine:m01:
 *
 * Row 0, column 1 of the inverse map: source x per destination y.
 */
/**
 * AccelWarpAffine:m02:
 *
 * Row 0, column 2 of the inverse map: source x at the origin.
 */
/**
 * AccelWarpAffine:m10:
 *
 * Row 1, column 0 of the inverse map: source y per destination x.
 */
/**
 * AccelWarpAffine:m11:
 *
 * Row 1, column 1 of the inverse map: source y per destination y.
 */
/**
 * AccelWarpAffine:m12:
 *
 * Row 1, column 2 of the inverse map: source y at the origin.
 */

/* AccelWarpPerspective */

/**
 * AccelWarpPerspective:src:
 *
 * The source image's bytes: a buffer of any dtype, contiguous (see
 * #AccelImage).
 */
/**
 * AccelWarpPerspective:src-stride:
 *
 * Bytes from one row of the source's first plane to the next; 0 for rows with
 * no padding.
 */
/**
 * AccelWarpPerspective:src-uv-stride:
 *
 * Bytes from one row of the source's chroma planes to the next; 0 for rows
 * with no padding. Unused for formats of one plane.
 */
/**
 * AccelWarpPerspective:src-uv-offset:
 *
 * The byte offset of the source's first chroma plane in its buffer; 0 for
 * right after the first plane.
 */
/**
 * AccelWarpPerspective:src-v-offset:
 *
 * The byte offset of the V plane of an I420 source; 0 for right after the U
 * plane.
 */
/**
 * AccelWarpPerspective:src-format:
 *
 * The source's pixel format.
 */
/**
 * AccelWarpPerspective:src-width:
 *
 * The source's width in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelWarpPerspective:src-height:
 *
 * The source's height in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelWarpPerspective:dst:
 *
 * The destination image's bytes: a buffer of any dtype, contiguous (see
 * #AccelImage).
 */
/**
 * AccelWarpPerspective:dst-stride:
 *
 * Bytes from one row of the destination's first plane to the next; 0 for rows
 * with no padding.
 */
/**
 * AccelWarpPerspective:dst-uv-stride:
 *
 * Bytes from one row of the destination's chroma planes to the next; 0 for
 * rows with no padding. Unused for formats of one plane.
 */
/**
 * AccelWarpPerspective:dst-uv-offset:
 *
 * The byte offset of the destination's first chroma plane in its buffer; 0
 * for right after the first plane.
 */
/**
 * AccelWarpPerspective:dst-v-offset:
 *
 * The byte offset of the V plane of an I420 destination; 0 for right after
 * the U plane.
 */
/**
 * AccelWarpPerspective:dst-format:
 *
 * The destination's pixel format.
 */
/**
 * AccelWarpPerspective:dst-width:
 *
 * The destination's width in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelWarpPerspective:dst-height:
 *
 * The destination's height in pixels, 1 to %ACCEL_IMAGE_MAX_SIZE
 * (its default, 0, is refused: every image needs its size).
 */
/**
 * AccelWarpPerspective:method:
 *
 * The interpolation: nearest, bilinear or bicubic, at the mapped coordinate,
 * not clamped (taps past the edge read the border).
 */
/**
 * AccelWarpPerspective:border:
 *
 * What is read outside the source.
 */
/**
 * AccelWarpPerspective:border-value:
 *
 * The value read outside the source with %ACCEL_BORDER_CONSTANT, in the
 * sample's code values (10-bit values for P010).
 */
/**
 * AccelWarpPerspective:m00:
 *
 * Row 0, column 0 of the inverse map: source x per destination x.
 */
/**
 * AccelWarpPerspective:m01:
 *
 * Row 0, column 1 of the inverse map: source x per destination y.
 */
/**
 * AccelWarpPerspective:m02:
 *
 * Row 0, column 2 of the inverse map: source x at the origin.
 */
/**
 * AccelWarpPerspective:m10:
 *
 * Row 1, column 0 of the inverse map: source y per destination x.
 */
/**
 * AccelWarpPerspective:m11:
 *
 * Row 1, column 1 of the inverse map: source y per destination y.
 */
/**
 * AccelWarpPerspective:m12:
 *
 * Row 1, column 2 of the inverse map: source y at the origin.
 */
/**
 * AccelWarpPerspective:m20:
 *
 * Row 2, column 0 of the inverse map: the homogeneous w per destination x.
 */
/**
 * AccelWarpPerspective:m21:
 *
 * Row 2, column 1 of the inverse map: the homogeneous w per destination y.
 */
/**
 * AccelWarpPerspective:m22:
 *
 * Row 2, column 2 of the inverse map: the homogeneous w at the origin.
 */
