/* accel-image-private.h: what the image op types (convert-color, resize,
 * filter, warp-affine, warp-perspective, morphology) share: the parameter
 * tables of their source and destination images and the checks of an
 * image against its buffer. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-op-impl-private.h"

G_BEGIN_DECLS

/* Refuses @buffer unset, naming @property (the base checks the table's
 * required buffers first; this covers what only some kinds require). */
static inline gboolean
accel_image_require_ (AccelOp *op, const char *property, AccelBuffer *buffer, GError **error)
{
  if (buffer != NULL)
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "%s: buffer property “%s” is not set",
               accel_op_get_type_name (op), property);
  return FALSE;
}

/* Installs `src`, `src-format`, … `src-v-offset` on @klass for the
 * #AccelImage at @offset in its instances. */
void accel_image_install_src_ (AccelOpClass *klass, gsize offset);

/* Installs `dst` and its layout (`dst-stride`, `dst-uv-stride`,
 * `dst-uv-offset`, `dst-v-offset`), and with @geometry also `dst-format`,
 * `dst-width` and `dst-height` (ops whose destination has the source's
 * format and size go without). */
void accel_image_install_dst_ (AccelOpClass *klass, gsize offset, gboolean geometry);

/* As ACCEL_DEFINE_OP_TYPE(), for an image op type whose instance struct
 * has the #AccelImage members `src` and `dst`: class_init installs their
 * properties (the destination's geometry with @dst_geometry) before
 * @params. */
#define ACCEL_DEFINE_IMAGE_OP_TYPE(TN, t_n, op_name, description, params, validate_func, dst_geometry) \
  G_DEFINE_FINAL_TYPE (TN, t_n, ACCEL_TYPE_OP)                                                    \
  static void                                                                                     \
  t_n##_class_init (TN##Class *klass)                                                             \
  {                                                                                               \
    AccelOpClass *op_class = ACCEL_OP_CLASS (klass);                                              \
    op_class->validate = (validate_func);                                                         \
    accel_op_class_set_metadata (op_class, (op_name), (description));                             \
    accel_image_install_src_ (op_class, G_STRUCT_OFFSET (TN, src));                              \
    accel_image_install_dst_ (op_class, G_STRUCT_OFFSET (TN, dst), (dst_geometry));               \
    accel_op_class_install_params (op_class, (params), G_N_ELEMENTS (params));                    \
  }                                                                                               \
  static void                                                                                     \
  t_n##_init (TN *self)                                                                           \
  {                                                                                               \
  }

/* Checks @image, whose properties start with @prefix ("src" or "dst"),
 * against its buffer and fills @layout. With @geometry_from set, the
 * format and size are taken from it instead of @image (ops installed
 * without a destination geometry). */
gboolean accel_image_check_ (AccelOp *op,
                             const char *prefix,
                             const AccelImage *image,
                             const AccelImage *geometry_from,
                             AccelImageLayout *layout,
                             GError **error);

/* Refuses a destination that overlaps the source. */
gboolean accel_image_check_apart_ (AccelOp *op, const AccelImage *src, const AccelImage *dst, GError **error);

/* Refuses a destination format other than the source's. */
gboolean accel_image_check_same_format_ (AccelOp *op, const AccelImage *src, const AccelImage *dst, GError **error);

/* Refuses a shrink beyond what the taps of @method hold on either axis
 * (for convert-color, @convert, also of the chroma it subsamples). */
gboolean accel_image_check_scale_ (AccelOp *op,
                                   AccelInterpolation method,
                                   gboolean convert,
                                   const AccelImageLayout *src,
                                   const AccelImageLayout *dst,
                                   GError **error);

/* The parameters warp-affine and warp-perspective share, for @Type's
 * `method`, `border` and `border_value` fields. */
#define ACCEL_IMAGE_WARP_PARAMS(Type)                                                                      \
  ACCEL_OP_ENUM (Type, method, "method",                                                                    \
                 "The interpolation: nearest, bilinear or bicubic, at the mapped coordinate, not clamped "   \
                 "(taps past the edge read the border).", accel_interpolation_get_type,                     \
                 ACCEL_INTERPOLATION_BILINEAR),                                                             \
  ACCEL_OP_ENUM (Type, border, "border", "What is read outside the source.", accel_border_mode_get_type,    \
                 ACCEL_BORDER_CONSTANT),                                                                    \
  ACCEL_OP_DOUBLE (Type, border_value, "border-value",                                                      \
                   "The value read outside the source with ACCEL_BORDER_CONSTANT, in the sample's code "     \
                   "values (10-bit values for P010).", -1e9, 1e9, 0.0, 0)

/* The first two rows of a warp's inverse map, @Type's `matrix[0]` to
 * `matrix[5]` (m00 … m12): the whole of warp-affine's, the x and y rows of
 * warp-perspective's. */
#define ACCEL_IMAGE_WARP_XY_ROWS(Type)                                                                     \
  ACCEL_OP_DOUBLE (Type, matrix[0], "m00",                                                                  \
                   "Row 0, column 0 of the inverse map: source x per destination x.", -1e9, 1e9, 1.0, 0),   \
  ACCEL_OP_DOUBLE (Type, matrix[1], "m01",                                                                  \
                   "Row 0, column 1 of the inverse map: source x per destination y.", -1e9, 1e9, 0.0, 0),   \
  ACCEL_OP_DOUBLE (Type, matrix[2], "m02",                                                                  \
                   "Row 0, column 2 of the inverse map: source x at the origin.", -1e9, 1e9, 0.0, 0),       \
  ACCEL_OP_DOUBLE (Type, matrix[3], "m10",                                                                  \
                   "Row 1, column 0 of the inverse map: source y per destination x.", -1e9, 1e9, 0.0, 0),   \
  ACCEL_OP_DOUBLE (Type, matrix[4], "m11",                                                                  \
                   "Row 1, column 1 of the inverse map: source y per destination y.", -1e9, 1e9, 1.0, 0),   \
  ACCEL_OP_DOUBLE (Type, matrix[5], "m12",                                                                  \
                   "Row 1, column 2 of the inverse map: source y at the origin.", -1e9, 1e9, 0.0, 0)

/* Checks a warp's images, method, border value and matrix of @n entries. */
gboolean accel_image_check_warp_ (AccelOp *op,
                                  const AccelImage *src,
                                  const AccelImage *dst,
                                  AccelInterpolation method,
                                  double border_value,
                                  const double *matrix,
                                  guint n,
                                  GError **error);

/* As ACCEL_DEFINE_IMAGE_OP_TYPE(), for a warp (warp-affine,
 * warp-perspective) whose instance struct has `src`, `dst`, `matrix`,
 * `method` and `border_value`: also defines its validate, which is
 * accel_image_check_warp_() of those. */
#define ACCEL_DEFINE_IMAGE_WARP_TYPE(TN, t_n, op_name, description, params)                            \
  static gboolean                                                                                       \
  t_n##_validate (AccelOp *op, GError **error)                                                          \
  {                                                                                                     \
    TN *self = (TN *) op;                                                                               \
    return accel_image_check_warp_ (op, &self->src, &self->dst, self->method, self->border_value,      \
                                    self->matrix, G_N_ELEMENTS (self->matrix), error);                 \
  }                                                                                                     \
  ACCEL_DEFINE_IMAGE_OP_TYPE (TN, t_n, op_name, description, params, t_n##_validate, TRUE)

G_END_DECLS
