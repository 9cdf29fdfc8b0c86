/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include "image-test.h"

/* An image of @geometry (its buffer unset), in a new buffer of at least
 * @size bytes. */
static ItImage *
image_alloc (AccelDevice *device, const AccelImage *geometry, gsize size)
{
  g_autoptr(GError) error = NULL;
  ItImage *image = g_new0 (ItImage, 1);
  image->img = *geometry;
  g_assert_true (accel_image_get_layout (&image->img, &image->layout, &error));
  g_assert_no_error (error);
  image->size = MAX (size, (gsize) image->layout.size);
  image->bytes = g_malloc (image->size);
  for (gsize i = 0; i < image->size; i++)
    image->bytes[i] = (guint8) g_random_int_range (0, 256);
  /* Samples with bits below their value (P010) keep those bits 0. */
  for (guint p = 0; p < image->layout.n_samples; p++)
    {
      const AccelImageSamples *s = &image->layout.samples[p];
      for (int y = 0; s->shift && y < s->height; y++)
        for (int x = 0; x < s->width; x++)
          for (int c = 0; c < s->channels; c++)
            it_put (image, p, x, y, c, it_get (image, p, x, y, c));
    }
  gint64 dims[1] = { (gint64) image->size };
  g_autoptr(AccelShape) shape = accel_shape_new (dims, 1);
  image->img.buffer = accel_device_alloc (device, ACCEL_DTYPE_U8, shape, &error);
  g_assert_no_error (error);
  it_image_upload (image);
  return image;
}

ItImage *
it_image_new_with_layout (AccelDevice *device, AccelImageFormat format, int width, int height, int stride,
                          int uv_stride, gint64 uv_offset, gint64 v_offset, gsize size)
{
  AccelImage geometry = { NULL, format, width, height, stride, uv_stride, uv_offset, v_offset };
  return image_alloc (device, &geometry, size);
}

ItImage *
it_image_new (AccelDevice *device, AccelImageFormat format, int width, int height, gboolean padded)
{
  if (!padded)
    return it_image_new_with_layout (device, format, width, height, 0, 0, 0, 0, 0);

  AccelImageLayout tight;
  g_autoptr(GError) error = NULL;
  accel_image_layout_init (&tight, format, width, height, 0, 0, 0, 0, &error);
  g_assert_no_error (error);
  /* 16-bit samples stay on even bytes. */
  int align = tight.samples[0].depth;
  int stride = (int) tight.row_bytes[0] + align * g_random_int_range (1, 8);
  int uv_stride = tight.n_planes > 1 ? (int) tight.row_bytes[1] + align * g_random_int_range (1, 8) : 0;
  gint64 uv_offset = 0, v_offset = 0;
  if (tight.n_planes > 1)
    uv_offset = (gint64) stride * tight.rows[0] + align * g_random_int_range (0, 20);
  if (tight.n_planes > 2)
    v_offset = uv_offset + (gint64) uv_stride * tight.rows[1] + align * g_random_int_range (0, 20);
  return it_image_new_with_layout (device, format, width, height, stride, uv_stride, uv_offset, v_offset, 0);
}

ItImage *
it_image_copy_to (ItImage *image, AccelDevice *device)
{
  AccelImage geometry = image->img;
  geometry.buffer = NULL;
  ItImage *copy = image_alloc (device, &geometry, image->size);
  memcpy (copy->bytes, image->bytes, image->size);
  it_image_upload (copy);
  return copy;
}

void
it_image_free (ItImage *image)
{
  g_clear_object (&image->img.buffer);
  g_free (image->bytes);
  g_free (image);
}

void
it_image_upload (ItImage *image)
{
  g_autoptr(GError) error = NULL;
  g_assert_true (accel_buffer_write (image->img.buffer, image->bytes, image->size, &error));
  g_assert_no_error (error);
}

void
it_image_download (ItImage *image)
{
  g_autoptr(GError) error = NULL;
  g_assert_true (accel_buffer_read (image->img.buffer, image->bytes, image->size, &error));
  g_assert_no_error (error);
}

static guint8 *
sample_at (const ItImage *image, guint plane, int x, int y, int c)
{
  const AccelImageSamples *s = &image->layout.samples[plane];
  g_assert_true (plane < image->layout.n_samples && x >= 0 && x < s->width && y >= 0 && y < s->height
                 && c >= 0 && c < s->channels);
  return image->bytes + s->offset + (gint64) y * s->stride + (gint64) x * s->pixel_step + c * s->channel_step;
}

int
it_get (const ItImage *image, guint plane, int x, int y, int c)
{
  const AccelImageSamples *s = &image->layout.samples[plane];
  const guint8 *at = sample_at (image, plane, x, y, c);
  return s->depth == 1 ? at[0] : (at[0] | (at[1] << 8)) >> s->shift;
}

void
it_put (ItImage *image, guint plane, int x, int y, int c, int value)
{
  const AccelImageSamples *s = &image->layout.samples[plane];
  guint8 *at = sample_at (image, plane, x, y, c);
  g_assert_true (value >= 0 && value < (1 << s->bits));
  if (s->depth == 1)
    at[0] = (guint8) value;
  else
    {
      guint w = (guint) value << s->shift;
      at[0] = (guint8) w;
      at[1] = (guint8) (w >> 8);
    }
}

static void
set_image (AccelOp *op, const char *side, const ItImage *image, gboolean geometry)
{
  g_autofree char *stride = g_strdup_printf ("%s-stride", side);
  g_autofree char *uv_stride = g_strdup_printf ("%s-uv-stride", side);
  g_autofree char *uv_offset = g_strdup_printf ("%s-uv-offset", side);
  g_autofree char *v_offset = g_strdup_printf ("%s-v-offset", side);
  g_object_set (op, side, image->img.buffer, stride, image->img.stride, uv_stride, image->img.uv_stride,
                uv_offset, image->img.uv_offset, v_offset, image->img.v_offset, NULL);
  if (geometry)
    {
      g_autofree char *format = g_strdup_printf ("%s-format", side);
      g_autofree char *width = g_strdup_printf ("%s-width", side);
      g_autofree char *height = g_strdup_printf ("%s-height", side);
      g_object_set (op, format, image->img.format, width, image->img.width, height, image->img.height, NULL);
    }
}

void
it_set_src (AccelOp *op, const ItImage *image)
{
  set_image (op, "src", image, TRUE);
}

void
it_set_dst (AccelOp *op, const ItImage *image, gboolean geometry)
{
  set_image (op, "dst", image, geometry);
}

int
it_assert_close (const char *what, const ItImage *got, const ItImage *want, int tol)
{
  g_assert_cmpint (got->img.format, ==, want->img.format);
  g_assert_cmpint (got->img.width, ==, want->img.width);
  g_assert_cmpint (got->img.height, ==, want->img.height);
  int worst = 0;
  for (guint p = 0; p < got->layout.n_samples; p++)
    {
      const AccelImageSamples *s = &got->layout.samples[p];
      for (int y = 0; y < s->height; y++)
        for (int x = 0; x < s->width; x++)
          for (int c = 0; c < s->channels; c++)
            {
              int a = it_get (got, p, x, y, c), b = it_get (want, p, x, y, c);
              int d = ABS (a - b);
              if (d > tol)
                g_error ("%s: %s %d×%d, plane %u, sample (%d, %d) channel %d: got %d, want %d (tolerance %d)",
                         what, it_format_name (got->img.format), got->img.width, got->img.height, p, x, y, c, a, b, tol);
              worst = MAX (worst, d);
            }
    }
  return worst;
}

void
it_assert_padding_kept (const char *what, const ItImage *after, const guint8 *before)
{
  g_autofree guint8 *pixel = g_malloc0 (after->size);
  for (guint p = 0; p < after->layout.n_samples; p++)
    {
      const AccelImageSamples *s = &after->layout.samples[p];
      for (int y = 0; y < s->height; y++)
        for (int x = 0; x < s->width; x++)
          for (int c = 0; c < s->channels; c++)
            for (int b = 0; b < s->depth; b++)
              pixel[s->offset + (gint64) y * s->stride + (gint64) x * s->pixel_step + c * s->channel_step + b] = 1;
    }
  for (gsize i = 0; i < after->size; i++)
    if (!pixel[i] && after->bytes[i] != before[i])
      g_error ("%s: byte %" G_GSIZE_FORMAT " outside the pixels changed from %u to %u", what, i, before[i],
               after->bytes[i]);
}

const char *
it_format_name (AccelImageFormat format)
{
  GEnumClass *klass = g_type_class_ref (ACCEL_TYPE_IMAGE_FORMAT);
  const char *nick = g_enum_get_value (klass, format)->value_nick;
  g_type_class_unref (klass);
  return nick;
}

const AccelImageFormat it_all_formats[IT_N_FORMATS] = {
  ACCEL_IMAGE_FORMAT_RGBA, ACCEL_IMAGE_FORMAT_BGRA, ACCEL_IMAGE_FORMAT_RGB, ACCEL_IMAGE_FORMAT_BGR,
  ACCEL_IMAGE_FORMAT_GRAY8, ACCEL_IMAGE_FORMAT_GRAY16, ACCEL_IMAGE_FORMAT_NV12, ACCEL_IMAGE_FORMAT_I420,
  ACCEL_IMAGE_FORMAT_YUY2, ACCEL_IMAGE_FORMAT_P010,
};

void
it_run_keeping_padding (AccelDevice *device, AccelOp *op, ItImage *dst)
{
  g_autoptr(GError) error = NULL;
  g_autofree guint8 *before = g_memdup2 (dst->bytes, dst->size);
  g_assert_true (accel_device_submit (device, op, NULL, &error));
  g_assert_no_error (error);
  it_image_download (dst);
  it_assert_padding_kept (accel_op_get_type_name (op), dst, before);
}
