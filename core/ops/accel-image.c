/* accel-image.c: the pixel formats of the image ops, where an image's
 * planes and samples are, its colour transforms, and the parameter tables
 * and checks the image op types share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-image-private.h"
#include "accel-image-sampling.h"
#include "accel-enum-types.h"

/* One sample plane of a format: which memory plane, where in a pixel. */
typedef struct {
  guint8 plane;
  guint8 byte_offset;     /* of channel 0 within a sample */
  guint8 channels;
  guint8 pixel_step;
  guint8 channel_step;
  guint8 sub_x, sub_y;
  AccelImageChannel channel[4];
} SampleInfo;

typedef struct {
  guint8 n_planes;
  guint8 n_samples;
  gboolean rgb;
  gboolean alpha;
  guint8 depth;
  guint8 bits;
  guint8 shift;
  SampleInfo samples[ACCEL_IMAGE_MAX_PLANES];
} FormatInfo;

#define Y_ ACCEL_IMAGE_CHANNEL_Y
#define U_ ACCEL_IMAGE_CHANNEL_U
#define V_ ACCEL_IMAGE_CHANNEL_V
#define R_ ACCEL_IMAGE_CHANNEL_R
#define G_ ACCEL_IMAGE_CHANNEL_G
#define B_ ACCEL_IMAGE_CHANNEL_B
#define A_ ACCEL_IMAGE_CHANNEL_A

static const FormatInfo formats[] = {
  [ACCEL_IMAGE_FORMAT_RGBA] = { 1, 1, TRUE, TRUE, 1, 8, 0, { { 0, 0, 4, 4, 1, 1, 1, { R_, G_, B_, A_ } } } },
  [ACCEL_IMAGE_FORMAT_BGRA] = { 1, 1, TRUE, TRUE, 1, 8, 0, { { 0, 0, 4, 4, 1, 1, 1, { B_, G_, R_, A_ } } } },
  [ACCEL_IMAGE_FORMAT_RGB] = { 1, 1, TRUE, FALSE, 1, 8, 0, { { 0, 0, 3, 3, 1, 1, 1, { R_, G_, B_ } } } },
  [ACCEL_IMAGE_FORMAT_BGR] = { 1, 1, TRUE, FALSE, 1, 8, 0, { { 0, 0, 3, 3, 1, 1, 1, { B_, G_, R_ } } } },
  [ACCEL_IMAGE_FORMAT_GRAY8] = { 1, 1, FALSE, FALSE, 1, 8, 0, { { 0, 0, 1, 1, 1, 1, 1, { Y_ } } } },
  [ACCEL_IMAGE_FORMAT_GRAY16] = { 1, 1, FALSE, FALSE, 2, 16, 0, { { 0, 0, 1, 2, 2, 1, 1, { Y_ } } } },
  [ACCEL_IMAGE_FORMAT_NV12] = { 2, 2, FALSE, FALSE, 1, 8, 0,
                                { { 0, 0, 1, 1, 1, 1, 1, { Y_ } }, { 1, 0, 2, 2, 1, 2, 2, { U_, V_ } } } },
  [ACCEL_IMAGE_FORMAT_I420] = { 3, 3, FALSE, FALSE, 1, 8, 0,
                                { { 0, 0, 1, 1, 1, 1, 1, { Y_ } }, { 1, 0, 1, 1, 1, 2, 2, { U_ } },
                                  { 2, 0, 1, 1, 1, 2, 2, { V_ } } } },
  [ACCEL_IMAGE_FORMAT_YUY2] = { 1, 2, FALSE, FALSE, 1, 8, 0,
                                { { 0, 0, 1, 2, 1, 1, 1, { Y_ } }, { 0, 1, 2, 4, 2, 2, 1, { U_, V_ } } } },
  [ACCEL_IMAGE_FORMAT_P010] = { 2, 2, FALSE, FALSE, 2, 10, 6,
                                { { 0, 0, 1, 2, 2, 1, 1, { Y_ } }, { 1, 0, 2, 4, 2, 2, 2, { U_, V_ } } } },
};

#undef Y_
#undef U_
#undef V_
#undef R_
#undef G_
#undef B_
#undef A_

static const FormatInfo *
format_info (AccelImageFormat format)
{
  return (guint) format < G_N_ELEMENTS (formats) ? &formats[format] : NULL;
}

/**
 * accel_image_format_is_rgb:
 * @format: a pixel format
 *
 * Whether a format is one of the RGB family (RGBA, BGRA, RGB, BGR).
 *
 * Returns: whether @format holds R, G, B (and maybe A) rather than Y′ (and
 *   maybe Cb, Cr)
 */
gboolean
accel_image_format_is_rgb (AccelImageFormat format)
{
  const FormatInfo *info = format_info (format);
  g_return_val_if_fail (info != NULL, FALSE);
  return info->rgb;
}

/**
 * accel_image_format_has_alpha:
 * @format: a pixel format
 *
 * Whether a format carries alpha (RGBA and BGRA).
 *
 * Returns: whether @format has an alpha channel
 */
gboolean
accel_image_format_has_alpha (AccelImageFormat format)
{
  const FormatInfo *info = format_info (format);
  g_return_val_if_fail (info != NULL, FALSE);
  return info->alpha;
}

/**
 * accel_image_format_get_n_planes:
 * @format: a pixel format
 *
 * How many memory planes a format has.
 *
 * Returns: how many memory planes @format has (1 to 3)
 */
guint
accel_image_format_get_n_planes (AccelImageFormat format)
{
  const FormatInfo *info = format_info (format);
  g_return_val_if_fail (info != NULL, 0);
  return info->n_planes;
}

/* The property names of an image's fields in messages: "src-stride", or
 * "stride" without a prefix. */
static char *
field_name (const char *prefix, const char *field)
{
  return prefix ? g_strdup_printf ("%s-%s", prefix, field) : g_strdup (field);
}

static gboolean
layout_init (AccelImageLayout *layout, AccelImageFormat format, int width, int height,
             int stride, int uv_stride, gint64 uv_offset, gint64 v_offset,
             const char *op, const char *prefix, const char *geometry_prefix, GError **error)
{
  const FormatInfo *info = format_info (format);
  const char *who = op ? op : "image";

  memset (layout, 0, sizeof *layout);
  if (info == NULL)
    {
      g_autofree char *name = field_name (geometry_prefix, "format");
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “%s” (%d) is not an image format", who, name, (int) format);
      return FALSE;
    }
  if (width < 1 || width > ACCEL_IMAGE_MAX_SIZE || height < 1 || height > ACCEL_IMAGE_MAX_SIZE)
    {
      g_autofree char *w = field_name (geometry_prefix, "width");
      g_autofree char *h = field_name (geometry_prefix, "height");
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “%s” × “%s” is %d × %d; each must be 1 to %d", who, w, h, width, height,
                   ACCEL_IMAGE_MAX_SIZE);
      return FALSE;
    }

  layout->format = format;
  layout->width = width;
  layout->height = height;
  layout->n_planes = info->n_planes;
  layout->n_samples = info->n_samples;

  for (guint s = 0; s < info->n_samples; s++)
    {
      const SampleInfo *si = &info->samples[s];
      AccelImageSamples *out = &layout->samples[s];
      out->width = (width + si->sub_x - 1) / si->sub_x;
      out->height = (height + si->sub_y - 1) / si->sub_y;
      out->channels = si->channels;
      out->pixel_step = si->pixel_step;
      out->channel_step = si->channel_step;
      out->depth = info->depth;
      out->bits = info->bits;
      out->shift = info->shift;
      out->sub_x = si->sub_x;
      out->sub_y = si->sub_y;
      memcpy (out->channel, si->channel, sizeof out->channel);
      gint64 bytes = (gint64) out->width * si->pixel_step;
      layout->row_bytes[si->plane] = MAX (layout->row_bytes[si->plane], bytes);
      layout->rows[si->plane] = MAX (layout->rows[si->plane], out->height);
    }

  const int strides[ACCEL_IMAGE_MAX_PLANES] = { stride, uv_stride, uv_stride };
  const gint64 offsets[ACCEL_IMAGE_MAX_PLANES] = { 0, uv_offset, v_offset };
  static const char *const stride_names[] = { "stride", "uv-stride", "uv-stride" };
  static const char *const offset_names[] = { NULL, "uv-offset", "v-offset" };

  for (guint p = 0; p < info->n_planes; p++)
    {
      if (strides[p] < 0 || (strides[p] > 0 && strides[p] < layout->row_bytes[p]))
        {
          g_autofree char *name = field_name (prefix, stride_names[p]);
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "%s: “%s” (%d) is less than the %" G_GINT64_FORMAT " bytes of a row of a %d-pixel-wide image",
                       who, name, strides[p], layout->row_bytes[p], width);
          return FALSE;
        }
      layout->stride[p] = strides[p] > 0 ? strides[p] : layout->row_bytes[p];
      if (layout->stride[p] % info->depth != 0 || offsets[p] % info->depth != 0)
        {
          g_autofree char *name = field_name (prefix, offsets[p] % info->depth ? offset_names[p] : stride_names[p]);
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "%s: “%s” (%" G_GINT64_FORMAT ") must be a multiple of %d: the samples are %d-byte words",
                       who, name, offsets[p] % info->depth ? offsets[p] : layout->stride[p], info->depth, info->depth);
          return FALSE;
        }
      if (offsets[p] < 0 || offsets[p] > G_MAXINT64 / 4)
        {
          g_autofree char *name = field_name (prefix, offset_names[p]);
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "%s: “%s” (%" G_GINT64_FORMAT ") is out of range", who, name, offsets[p]);
          return FALSE;
        }
      /* 0 places a plane right after the one before it. */
      layout->offset[p] = p == 0 ? 0
                        : offsets[p] > 0 ? offsets[p]
                        : layout->offset[p - 1] + layout->stride[p - 1] * layout->rows[p - 1];
      gint64 end = layout->offset[p] + layout->stride[p] * (layout->rows[p] - 1) + layout->row_bytes[p];
      layout->size = MAX (layout->size, end);
    }

  /* Planes must not share bytes, or what one plane's kernel writes would
   * land in another. */
  for (guint p = 1; p < info->n_planes; p++)
    for (guint q = 0; q < p; q++)
      {
        gint64 p0 = layout->offset[p], p1 = p0 + layout->stride[p] * (layout->rows[p] - 1) + layout->row_bytes[p];
        gint64 q0 = layout->offset[q], q1 = q0 + layout->stride[q] * (layout->rows[q] - 1) + layout->row_bytes[q];
        if (p0 < q1 && q0 < p1)
          {
            g_autofree char *name = field_name (prefix, offset_names[p]);
            g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                         "%s: “%s” (%" G_GINT64_FORMAT ") puts plane %u over plane %u (bytes %" G_GINT64_FORMAT
                         " to %" G_GINT64_FORMAT ")", who, name, layout->offset[p], p, q, q0, q1);
            return FALSE;
          }
      }

  for (guint s = 0; s < info->n_samples; s++)
    {
      const SampleInfo *si = &info->samples[s];
      layout->samples[s].offset = layout->offset[si->plane] + si->byte_offset;
      layout->samples[s].stride = layout->stride[si->plane];
    }
  return TRUE;
}

/**
 * accel_image_layout_init: (skip)
 * @layout: (out caller-allocates): the layout
 * @format: the pixel format
 * @width: the width in pixels
 * @height: the height in pixels
 * @stride: the row stride of the first plane in bytes, or 0 for none
 *   beyond the pixels
 * @uv_stride: the row stride of the chroma planes, or 0
 * @uv_offset: the byte offset of the first chroma plane, or 0 for right
 *   after the first plane
 * @v_offset: the byte offset of I420's V plane, or 0 for right after U
 * @error: return location for a #GError
 *
 * Works out where the planes and samples of an image are, as the image
 * ops do for the #AccelImage of each of their images.
 *
 * Returns: %TRUE, or %FALSE with %ACCEL_ERROR_INVALID_ARGUMENT for a size,
 *   stride or offset that does not make an image
 */
gboolean
accel_image_layout_init (AccelImageLayout *layout,
                         AccelImageFormat format,
                         int width,
                         int height,
                         int stride,
                         int uv_stride,
                         gint64 uv_offset,
                         gint64 v_offset,
                         GError **error)
{
  g_return_val_if_fail (layout != NULL, FALSE);
  return layout_init (layout, format, width, height, stride, uv_stride, uv_offset, v_offset, NULL, NULL, NULL, error);
}

/**
 * accel_image_get_layout: (skip)
 * @image: an image
 * @layout: (out caller-allocates): its layout
 * @error: return location for a #GError
 *
 * accel_image_layout_init() for the fields of @image.
 *
 * Returns: %TRUE, or %FALSE with %ACCEL_ERROR_INVALID_ARGUMENT
 */
gboolean
accel_image_get_layout (const AccelImage *image, AccelImageLayout *layout, GError **error)
{
  g_return_val_if_fail (image != NULL, FALSE);
  g_return_val_if_fail (layout != NULL, FALSE);
  return layout_init (layout, image->format, image->width, image->height, image->stride, image->uv_stride,
                      image->uv_offset, image->v_offset, NULL, NULL, NULL, error);
}

/* Colour transforms. Each side's code values are mapped to normalised
 * R′G′B′ in [0, 1] (through Y′CbCr for YUV and gray sides) by a 4×4 affine
 * matrix; the transform is the destination's inverse times the source's. */

typedef double Affine[4][4];

static void
affine_mul (Affine out, Affine a, Affine b)
{
  Affine t;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      {
        double s = 0.0;
        for (int k = 0; k < 4; k++)
          s += a[i][k] * b[k][j];
        t[i][j] = s;
      }
  memcpy (out, t, sizeof t);
}

static void
matrix_coefficients (AccelColorMatrix matrix, double *kr, double *kb)
{
  switch (matrix)
    {
    case ACCEL_COLOR_MATRIX_BT601: *kr = 0.299, *kb = 0.114; break;
    case ACCEL_COLOR_MATRIX_BT2020: *kr = 0.2627, *kb = 0.0593; break;
    default: *kr = 0.2126, *kb = 0.0722; break;
    }
}

/* Offsets and scales of Y′ and of Cb, Cr in code values, GStreamer's
 * gst_video_color_range_offsets(). */
static void
range_of (const FormatInfo *info, AccelColorRange range, double *oy, double *sy, double *oc, double *sc)
{
  int bits = info->bits;
  double full = (double) ((1u << bits) - 1);
  *oc = (double) (1u << (bits - 1));
  if (range == ACCEL_COLOR_RANGE_LIMITED && !(info->n_samples == 1 && !info->rgb))
    {
      *oy = (double) (16u << (bits - 8));
      *sy = (double) (219u << (bits - 8));
      *sc = (double) (224u << (bits - 8));
    }
  else
    {
      *oy = 0.0;
      *sy = full;
      *sc = full;
    }
}

/* code values -> normalised R′G′B′ */
static void
to_rgb (Affine m, const FormatInfo *info, AccelColorMatrix matrix, AccelColorRange range)
{
  memset (m, 0, sizeof (Affine));
  m[3][3] = 1.0;
  if (info->rgb)
    {
      for (int i = 0; i < 3; i++)
        m[i][i] = 1.0 / 255.0;
      return;
    }
  double oy, sy, oc, sc, kr, kb;
  range_of (info, range, &oy, &sy, &oc, &sc);
  matrix_coefficients (matrix, &kr, &kb);
  double kg = 1.0 - kr - kb;
  gboolean gray = info->n_samples == 1;
  /* Y′CbCr normalised: y = (Y - oy) / sy, cb = (U - oc) / sc, cr likewise. */
  Affine n = { { 1.0 / sy, 0, 0, -oy / sy },
               { 0, gray ? 0 : 1.0 / sc, 0, gray ? 0 : -oc / sc },
               { 0, 0, gray ? 0 : 1.0 / sc, gray ? 0 : -oc / sc },
               { 0, 0, 0, 1 } };
  Affine rgb = { { 1, 0, 2 * (1 - kr), 0 },
                 { 1, -2 * kb * (1 - kb) / kg, -2 * kr * (1 - kr) / kg, 0 },
                 { 1, 2 * (1 - kb), 0, 0 },
                 { 0, 0, 0, 1 } };
  affine_mul (m, rgb, n);
}

/* normalised R′G′B′ -> code values */
static void
from_rgb (Affine m, const FormatInfo *info, AccelColorMatrix matrix, AccelColorRange range)
{
  memset (m, 0, sizeof (Affine));
  m[3][3] = 1.0;
  if (info->rgb)
    {
      for (int i = 0; i < 3; i++)
        m[i][i] = 255.0;
      return;
    }
  double oy, sy, oc, sc, kr, kb;
  range_of (info, range, &oy, &sy, &oc, &sc);
  matrix_coefficients (matrix, &kr, &kb);
  double kg = 1.0 - kr - kb;
  Affine ycc = { { kr, kg, kb, 0 },
                 { -kr / (2 * (1 - kb)), -kg / (2 * (1 - kb)), (1 - kb) / (2 * (1 - kb)), 0 },
                 { (1 - kr) / (2 * (1 - kr)), -kg / (2 * (1 - kr)), -kb / (2 * (1 - kr)), 0 },
                 { 0, 0, 0, 1 } };
  Affine q = { { sy, 0, 0, oy }, { 0, sc, 0, oc }, { 0, 0, sc, oc }, { 0, 0, 0, 1 } };
  affine_mul (m, q, ycc);
}

/**
 * accel_image_color_transform: (skip)
 * @src_format: the source's format
 * @src_matrix: its Y′CbCr matrix (unused for RGB)
 * @src_range: its range (unused for RGB and gray)
 * @dst_format: the destination's format
 * @dst_matrix: its Y′CbCr matrix (for gray, the luma weights of R′G′B′)
 * @dst_range: its range
 * @transform: (out caller-allocates) (array fixed-size=12): a 3×4 affine
 *   matrix, row-major
 *
 * The affine map from the code values of a source pixel to those of the
 * destination pixel before rounding: `(Y, U, V)` or `(R, G, B)` in, in the
 * same order out (gray reads as `(Y, 0, 0)` and writes the first row),
 * each value in its own format's units (0 to 1023 for P010 samples).
 * YUV and gray sides go through R′G′B′ with their matrix and range;
 * alpha is not part of it.
 */
void
accel_image_color_transform (AccelImageFormat src_format,
                             AccelColorMatrix src_matrix,
                             AccelColorRange src_range,
                             AccelImageFormat dst_format,
                             AccelColorMatrix dst_matrix,
                             AccelColorRange dst_range,
                             float transform[12])
{
  const FormatInfo *si = format_info (src_format);
  const FormatInfo *di = format_info (dst_format);
  g_return_if_fail (si != NULL && di != NULL && transform != NULL);

  Affine a, b, m;
  to_rgb (a, si, src_matrix, src_range);
  from_rgb (b, di, dst_matrix, dst_range);
  affine_mul (m, b, a);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      {
        double v = m[i][j];
        /* What is 0 or 1 but for rounding in the chain stays exact. */
        if (fabs (v) < 1e-12)
          v = 0.0;
        else if (fabs (v - 1.0) < 1e-12)
          v = 1.0;
        transform[i * 4 + j] = (float) v;
      }
}

/* The parameter tables, one per side. Both are written against
 * AccelImage and installed at each op's member. */

#define IMAGE_PARAMS(side, what, access)                                                                    \
  ACCEL_OP_BUFFER (AccelImage, buffer, side,                                                                \
                   "The " what " image's bytes: a buffer of any dtype, contiguous (see AccelImage).",         \
                   access, ACCEL_OP_PARAM_REQUIRED),                                                        \
  ACCEL_OP_INT (AccelImage, stride, side "-stride",                                                         \
                "Bytes from one row of the " what "'s first plane to the next; 0 for rows with no padding.",  \
                0, G_MAXINT, 0),                                                                            \
  ACCEL_OP_INT (AccelImage, uv_stride, side "-uv-stride",                                                   \
                "Bytes from one row of the " what "'s chroma planes to the next; 0 for rows with no "        \
                "padding. Unused for formats of one plane.", 0, G_MAXINT, 0),                               \
  ACCEL_OP_INT64 (AccelImage, uv_offset, side "-uv-offset",                                                 \
                  "The byte offset of the " what "'s first chroma plane in its buffer; 0 for right after "   \
                  "the first plane.", 0, G_MAXINT64 / 4, 0),                                                \
  ACCEL_OP_INT64 (AccelImage, v_offset, side "-v-offset",                                                   \
                  "The byte offset of the V plane of an I420 " what "; 0 for right after the U plane.",      \
                  0, G_MAXINT64 / 4, 0),                                                                    \
  ACCEL_OP_ENUM (AccelImage, format, side "-format", "The " what "'s pixel format.",                        \
                 accel_image_format_get_type, ACCEL_IMAGE_FORMAT_RGBA),                                     \
  ACCEL_OP_INT (AccelImage, width, side "-width",                                                           \
                "The " what "'s width in pixels, 1 to ACCEL_IMAGE_MAX_SIZE (its default, 0, is refused: "   \
                "every image needs its size).", 0, ACCEL_IMAGE_MAX_SIZE, 0),                                \
  ACCEL_OP_INT (AccelImage, height, side "-height",                                                         \
                "The " what "'s height in pixels, 1 to ACCEL_IMAGE_MAX_SIZE (its default, 0, is refused: "  \
                "every image needs its size).", 0, ACCEL_IMAGE_MAX_SIZE, 0)

static const AccelOpParam src_params[] = { IMAGE_PARAMS ("src", "source", ACCEL_ACCESS_READ) };
static const AccelOpParam dst_params[] = { IMAGE_PARAMS ("dst", "destination", ACCEL_ACCESS_WRITE) };

/* The entries of the layout only: buffer, strides and offsets. */
#define N_LAYOUT_PARAMS 5

#undef IMAGE_PARAMS

void
accel_image_install_src_ (AccelOpClass *klass, gsize offset)
{
  accel_op_class_install_params_at (klass, offset, src_params, G_N_ELEMENTS (src_params));
}

void
accel_image_install_dst_ (AccelOpClass *klass, gsize offset, gboolean geometry)
{
  accel_op_class_install_params_at (klass, offset, dst_params,
                                    geometry ? G_N_ELEMENTS (dst_params) : N_LAYOUT_PARAMS);
}

gboolean
accel_image_check_ (AccelOp *op,
                    const char *prefix,
                    const AccelImage *image,
                    const AccelImage *geometry_from,
                    AccelImageLayout *layout,
                    GError **error)
{
  const char *name = accel_op_get_type_name (op);
  const AccelImage *g = geometry_from ? geometry_from : image;

  if (!accel_image_require_ (op, prefix, image->buffer, error)
      || !accel_op_check_contiguous (op, prefix, error))
    return FALSE;
  if (!layout_init (layout, g->format, g->width, g->height, image->stride, image->uv_stride,
                    image->uv_offset, image->v_offset, name, prefix, geometry_from ? "src" : prefix, error))
    return FALSE;
  if (accel_buffer_get_offset (image->buffer) % layout->samples[0].depth != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “%s” starts at byte %" G_GSIZE_FORMAT " of its memory; %d-byte samples need it aligned",
                   name, prefix, accel_buffer_get_offset (image->buffer), layout->samples[0].depth);
      return FALSE;
    }
  gsize size = accel_buffer_get_size (image->buffer);
  if ((guint64) layout->size > size)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "%s: “%s” holds %" G_GSIZE_FORMAT " bytes but a %d × %d %s image there needs %" G_GINT64_FORMAT,
                   name, prefix, size, g->width, g->height,
                   g_enum_get_value (g_type_class_peek (ACCEL_TYPE_IMAGE_FORMAT), g->format)->value_nick,
                   layout->size);
      return FALSE;
    }
  return TRUE;
}

gboolean
accel_image_check_apart_ (AccelOp *op, const AccelImage *src, const AccelImage *dst, GError **error)
{
  if (!accel_op_buffers_alias_ (src->buffer, dst->buffer))
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "%s: “dst” overlaps “src”; the result must not alias the source", accel_op_get_type_name (op));
  return FALSE;
}

gboolean
accel_image_check_same_format_ (AccelOp *op, const AccelImage *src, const AccelImage *dst, GError **error)
{
  if (src->format == dst->format)
    return TRUE;
  GEnumClass *formats_class = g_type_class_peek (ACCEL_TYPE_IMAGE_FORMAT);
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "%s: “dst-format” is %s but “src-format” is %s; convert-color changes formats",
               accel_op_get_type_name (op), g_enum_get_value (formats_class, dst->format)->value_nick,
               g_enum_get_value (formats_class, src->format)->value_nick);
  return FALSE;
}

/**
 * accel_image_get_max_shrink:
 * @method: how the op interpolates
 * @dst_format: the destination's pixel format
 * @convert: whether the op converts colour (`convert-color`) rather than
 *   scaling within one format (`resize`)
 *
 * How many times an image op shrinks each axis at most in one step: area
 * and lanczos3 widen their taps by the shrink, up to 8 times; a conversion
 * into subsampled chroma takes each chroma sample from the area of twice
 * as many finer ones (16 times). A larger
 * shrink takes several ops, each within this (as `accelconvertscale` does).
 *
 * Returns: the largest ratio of source to destination size on an axis, or
 *   %G_MAXINT where there is no such limit
 */
int
accel_image_get_max_shrink (AccelInterpolation method, AccelImageFormat dst_format, gboolean convert)
{
  const FormatInfo *info = format_info (dst_format);
  g_return_val_if_fail (info != NULL, ACCEL_IMAGE_MAX_SHRINK);
  int limit = G_MAXINT;
  if (method == ACCEL_INTERPOLATION_AREA || method == ACCEL_INTERPOLATION_LANCZOS3)
    limit = ACCEL_IMAGE_MAX_SHRINK;
  for (guint s = 0; convert && s < info->n_samples; s++)
    if (info->samples[s].sub_x > 1 || info->samples[s].sub_y > 1)
      limit = MIN (limit, 2 * ACCEL_IMAGE_MAX_SHRINK);
  return limit;
}

gboolean
accel_image_check_scale_ (AccelOp *op,
                          AccelInterpolation method,
                          gboolean convert,
                          const AccelImageLayout *src,
                          const AccelImageLayout *dst,
                          GError **error)
{
  int limit = accel_image_get_max_shrink (method, dst->format, convert);
  if (src->width > (gint64) dst->width * limit || src->height > (gint64) dst->height * limit)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: shrinking %d × %d to %d × %d is more than %d times on an axis, the most this “method” "
                   "and destination take in one step", accel_op_get_type_name (op), src->width, src->height,
                   dst->width, dst->height, limit);
      return FALSE;
    }
  return TRUE;
}

gboolean
accel_image_check_warp_ (AccelOp *op,
                         const AccelImage *src,
                         const AccelImage *dst,
                         AccelInterpolation method,
                         double border_value,
                         const double *matrix,
                         guint n,
                         GError **error)
{
  const char *name = accel_op_get_type_name (op);
  AccelImageLayout ls, ld;

  if (!accel_image_check_same_format_ (op, src, dst, error)
      || !accel_image_check_ (op, "src", src, NULL, &ls, error)
      || !accel_image_check_ (op, "dst", dst, NULL, &ld, error)
      || !accel_image_check_apart_ (op, src, dst, error))
    return FALSE;
  if (method != ACCEL_INTERPOLATION_NEAREST && method != ACCEL_INTERPOLATION_BILINEAR
      && method != ACCEL_INTERPOLATION_BICUBIC)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “method” must be nearest, bilinear or bicubic", name);
      return FALSE;
    }
  if (!isfinite (border_value))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: “border-value” (%g) must be finite", name, border_value);
      return FALSE;
    }
  for (guint i = 0; i < n; i++)
    if (!isfinite (matrix[i]))
      {
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "%s: “m%u%u” (%g) must be finite", name, i / 3, i % 3, matrix[i]);
        return FALSE;
      }
  return TRUE;
}
