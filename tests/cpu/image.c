/* image.c: convert-color, resize and the warps on cpu:0 against closed
 * forms: constant colours through the textbook Y′CbCr equations for every
 * pair of formats, exact plane copies, ramps (which bilinear sampling and
 * warps reproduce exactly), block means, replication; and bad input.
 * Images are random, odd-sized, with padded rows and gaps between planes
 * whose bytes must survive. (image-filter.c has filter and morphology,
 * image-gst.c the comparisons with GStreamer.)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "cpu-test.h"
#include "image-test.h"


static void
submit (AccelOp *op)
{
  cpu_test_submit (op);
}

/* Textbook Y′CbCr (ITU-R BT.601/709/2020) in binary64. */

typedef struct {
  double kr, kb;
} Matrix;

static Matrix
matrix_of (AccelColorMatrix m)
{
  switch (m)
    {
    case ACCEL_COLOR_MATRIX_BT601: return (Matrix) { 0.299, 0.114 };
    case ACCEL_COLOR_MATRIX_BT709: return (Matrix) { 0.2126, 0.0722 };
    default: return (Matrix) { 0.2627, 0.0593 };
    }
}

static int
bits_of (AccelImageFormat f)
{
  return f == ACCEL_IMAGE_FORMAT_GRAY16 ? 16 : f == ACCEL_IMAGE_FORMAT_P010 ? 10 : 8;
}

static gboolean
is_gray (AccelImageFormat f)
{
  return f == ACCEL_IMAGE_FORMAT_GRAY8 || f == ACCEL_IMAGE_FORMAT_GRAY16;
}

/* code values (Y, U, V) or (R, G, B) -> R′G′B′ */
static void
reference_to_rgb (AccelImageFormat f, AccelColorMatrix mat, AccelColorRange range, const double in[3], double rgb[3])
{
  if (accel_image_format_is_rgb (f))
    {
      for (int i = 0; i < 3; i++)
        rgb[i] = in[i] / 255.0;
      return;
    }
  int b = bits_of (f);
  double full = ldexp (1.0, b) - 1;
  if (is_gray (f))
    {
      rgb[0] = rgb[1] = rgb[2] = in[0] / full;
      return;
    }
  gboolean lim = range == ACCEL_COLOR_RANGE_LIMITED;
  double y = (in[0] - (lim ? ldexp (16, b - 8) : 0)) / (lim ? ldexp (219, b - 8) : full);
  double pb = (in[1] - ldexp (1, b - 1)) / (lim ? ldexp (224, b - 8) : full);
  double pr = (in[2] - ldexp (1, b - 1)) / (lim ? ldexp (224, b - 8) : full);
  Matrix m = matrix_of (mat);
  rgb[0] = y + 2 * (1 - m.kr) * pr;
  rgb[2] = y + 2 * (1 - m.kb) * pb;
  rgb[1] = (y - m.kr * rgb[0] - m.kb * rgb[2]) / (1 - m.kr - m.kb);
}

/* R′G′B′ -> code values, before rounding */
static void
reference_from_rgb (AccelImageFormat f, AccelColorMatrix mat, AccelColorRange range, const double rgb[3], double out[3])
{
  if (accel_image_format_is_rgb (f))
    {
      for (int i = 0; i < 3; i++)
        out[i] = 255.0 * rgb[i];
      return;
    }
  int b = bits_of (f);
  double full = ldexp (1.0, b) - 1;
  Matrix m = matrix_of (mat);
  double y = m.kr * rgb[0] + (1 - m.kr - m.kb) * rgb[1] + m.kb * rgb[2];
  if (is_gray (f))
    {
      out[0] = full * y;
      out[1] = out[2] = 0;
      return;
    }
  gboolean lim = range == ACCEL_COLOR_RANGE_LIMITED;
  out[0] = (lim ? ldexp (16, b - 8) : 0) + (lim ? ldexp (219, b - 8) : full) * y;
  out[1] = ldexp (1, b - 1) + (lim ? ldexp (224, b - 8) : full) * (rgb[2] - y) / (2 * (1 - m.kb));
  out[2] = ldexp (1, b - 1) + (lim ? ldexp (224, b - 8) : full) * (rgb[0] - y) / (2 * (1 - m.kr));
}

static int
round_code (double v, int bits)
{
  double maxv = ldexp (1.0, bits) - 1;
  return (int) floor (CLAMP (v, 0.0, maxv) + 0.5);
}

/* Which of (Y, U, V) or (R, G, B) a channel is, or 3 for alpha. */
static int
component (AccelImageChannel c)
{
  switch (c)
    {
    case ACCEL_IMAGE_CHANNEL_Y: case ACCEL_IMAGE_CHANNEL_R: return 0;
    case ACCEL_IMAGE_CHANNEL_U: case ACCEL_IMAGE_CHANNEL_G: return 1;
    case ACCEL_IMAGE_CHANNEL_V: case ACCEL_IMAGE_CHANNEL_B: return 2;
    default: return 3;
    }
}

static void
fill_constant (ItImage *image, const int value[4])
{
  for (guint p = 0; p < image->layout.n_samples; p++)
    {
      const AccelImageSamples *s = &image->layout.samples[p];
      for (int y = 0; y < s->height; y++)
        for (int x = 0; x < s->width; x++)
          for (int c = 0; c < s->channels; c++)
            it_put (image, p, x, y, c, value[component (s->channel[c])]);
    }
  it_image_upload (image);
}

static void
assert_constant (const char *what, const ItImage *image, const int value[4], int tol)
{
  for (guint p = 0; p < image->layout.n_samples; p++)
    {
      const AccelImageSamples *s = &image->layout.samples[p];
      for (int y = 0; y < s->height; y++)
        for (int x = 0; x < s->width; x++)
          for (int c = 0; c < s->channels; c++)
            {
              int want = value[component (s->channel[c])], got = it_get (image, p, x, y, c);
              if (ABS (got - want) > tol)
                g_error ("%s: plane %u (%d, %d) channel %d: got %d, want %d", what, p, x, y, c, got, want);
            }
    }
}

/* Every pair of formats, same size and scaled, on constant colours with a
 * random matrix, range, siting and method on each side. */
static void
test_convert_constant (void)
{
  AccelDevice *dev = cpu_test_device ();

  for (guint i = 0; i < IT_N_FORMATS; i++)
    for (guint j = 0; j < IT_N_FORMATS; j++)
      for (int scaled = 0; scaled < 2; scaled++)
        {
          AccelImageFormat sf = it_all_formats[i], df = it_all_formats[j];
          int sw = 9, sh = 7, dw = scaled ? 5 : sw, dh = scaled ? 12 : sh;
          AccelColorMatrix sm = g_random_int_range (0, 3), dm = g_random_int_range (0, 3);
          AccelColorRange sr = g_random_int_range (0, 2), dr = g_random_int_range (0, 2);
          int method = g_random_int_range (0, 5);
          g_autoptr(ItImage) src = it_image_new (dev, sf, sw, sh, TRUE);
          g_autoptr(ItImage) dst = it_image_new (dev, df, dw, dh, TRUE);
          int smax = (1 << bits_of (sf)) - 1;
          int in[4] = { g_random_int_range (0, smax + 1), g_random_int_range (0, smax + 1),
                        g_random_int_range (0, smax + 1), g_random_int_range (0, 256) };
          fill_constant (src, in);

          double vin[3] = { in[0], in[1], in[2] }, rgb[3], vout[3];
          reference_to_rgb (sf, sm, sr, vin, rgb);
          reference_from_rgb (df, dm, dr, rgb, vout);
          int want[4];
          for (int k = 0; k < 3; k++)
            want[k] = round_code (vout[k], bits_of (df));
          want[3] = accel_image_format_has_alpha (sf) ? in[3] : 255;

          g_autoptr(AccelOp) op = accel_convert_color_new (NULL, NULL);
          it_set_src (op, src);
          it_set_dst (op, dst, TRUE);
          g_object_set (op, "src-matrix", sm, "src-range", sr, "dst-matrix", dm, "dst-range", dr,
                        "src-chroma-siting", g_random_int_range (0, 3), "dst-chroma-siting", g_random_int_range (0, 3),
                        "method", method, NULL);
          it_run_keeping_padding (cpu_test_device (), op, dst);
          g_autofree char *what = g_strdup_printf ("convert %s %dx%d -> %s %dx%d, matrix %d/%d range %d/%d method %d",
                                                   it_format_name (sf), sw, sh, it_format_name (df), dw, dh,
                                                   sm, dm, sr, dr, method);
          assert_constant (what, dst, want, 1);
        }
}

/* Between NV12, I420 and P010 of one size, matrix, range and siting, the
 * samples are copied (P010 to 8 bits: divided by 4, rounded half up). */
static void
test_convert_planar_copy (void)
{
  AccelDevice *dev = cpu_test_device ();
  const AccelImageFormat yuv[] = { ACCEL_IMAGE_FORMAT_NV12, ACCEL_IMAGE_FORMAT_I420, ACCEL_IMAGE_FORMAT_P010 };

  for (guint i = 0; i < G_N_ELEMENTS (yuv); i++)
    for (guint j = 0; j < G_N_ELEMENTS (yuv); j++)
      {
        int w = 2 * g_random_int_range (3, 40) + 1, h = 2 * g_random_int_range (3, 30) + 1;
        g_autoptr(ItImage) src = it_image_new (dev, yuv[i], w, h, TRUE);
        g_autoptr(ItImage) dst = it_image_new (dev, yuv[j], w, h, TRUE);
        g_autoptr(AccelOp) op = accel_convert_color_new (NULL, NULL);
        AccelChromaSiting siting = g_random_int_range (0, 3);
        int range = g_random_int_range (0, 2);
        it_set_src (op, src);
        it_set_dst (op, dst, TRUE);
        g_object_set (op, "src-chroma-siting", siting, "dst-chroma-siting", siting, "src-range", range,
                      "dst-range", range, NULL);
        it_run_keeping_padding (cpu_test_device (), op, dst);

        int sb = bits_of (yuv[i]), db = bits_of (yuv[j]);
        for (int y = 0; y < h; y++)
          for (int x = 0; x < w; x++)
            for (int k = 0; k < 3; k++)
              {
                /* Y in plane 0; U, V in plane 1 (NV12, P010) or planes 1, 2 (I420). */
                guint sp = k == 0 ? 0 : yuv[i] == ACCEL_IMAGE_FORMAT_I420 ? (guint) k : 1;
                guint dp = k == 0 ? 0 : yuv[j] == ACCEL_IMAGE_FORMAT_I420 ? (guint) k : 1;
                int sc = k == 0 || yuv[i] == ACCEL_IMAGE_FORMAT_I420 ? 0 : k - 1;
                int dc = k == 0 || yuv[j] == ACCEL_IMAGE_FORMAT_I420 ? 0 : k - 1;
                int xs = k ? x / 2 : x, ys = k ? y / 2 : y;
                if (k && (x % 2 || y % 2))
                  continue;
                int v = it_get (src, sp, xs, ys, sc);
                /* Limited range scales by powers of 2; full range by the ratio of code ranges. */
                double r = range == ACCEL_COLOR_RANGE_LIMITED ? ldexp (1, db - sb)
                                                              : (ldexp (1, db) - 1) / (ldexp (1, sb) - 1);
                double mid = k == 0 ? 0 : ldexp (1, sb - 1);
                int want = round_code ((k == 0 ? 0 : ldexp (1, db - 1)) + (v - mid) * r, db);
                int got = it_get (dst, dp, xs, ys, dc);
                if (got != want)
                  g_error ("%s -> %s %dx%d siting %d: component %d at (%d, %d): got %d, want %d",
                           it_format_name (yuv[i]), it_format_name (yuv[j]), w, h, siting, k, xs, ys, got, want);
              }
      }
}

/* resize */

static void
test_resize_constant (void)
{
  AccelDevice *dev = cpu_test_device ();

  for (guint i = 0; i < IT_N_FORMATS; i++)
    for (int method = 0; method < 5; method++)
      {
        AccelImageFormat f = it_all_formats[i];
        int sw = g_random_int_range (1, 40), sh = g_random_int_range (1, 30);
        int fx = g_random_int_range (2, 24), fy = g_random_int_range (2, 24);
        int dw = MAX (1, sw * fx / 8), dh = MAX (1, sh * fy / 8);
        g_autoptr(ItImage) src = it_image_new (dev, f, sw, sh, TRUE);
        g_autoptr(ItImage) dst = it_image_new (dev, f, dw, dh, TRUE);
        int maxv = (1 << bits_of (f)) - 1;
        int v[4] = { g_random_int_range (0, maxv + 1), g_random_int_range (0, maxv + 1),
                     g_random_int_range (0, maxv + 1), g_random_int_range (0, maxv + 1) };
        fill_constant (src, v);
        g_autoptr(AccelOp) op = accel_resize_new (NULL, NULL, method);
        it_set_src (op, src);
        it_set_dst (op, dst, TRUE);
        it_run_keeping_padding (cpu_test_device (), op, dst);
        g_autofree char *what = g_strdup_printf ("resize %s %dx%d -> %dx%d method %d", it_format_name (f),
                                                 sw, sh, dw, dh, method);
        assert_constant (what, dst, v, 0);
      }
}

/* The same size is the identity for every method and format. */
static void
test_resize_identity (void)
{
  AccelDevice *dev = cpu_test_device ();

  for (guint i = 0; i < IT_N_FORMATS; i++)
    for (int method = 0; method < 5; method++)
      {
        int w = g_random_int_range (1, 50), h = g_random_int_range (1, 40);
        g_autoptr(ItImage) src = it_image_new (dev, it_all_formats[i], w, h, TRUE);
        g_autoptr(ItImage) dst = it_image_new (dev, it_all_formats[i], w, h, TRUE);
        g_autoptr(AccelOp) op = accel_resize_new (NULL, NULL, method);
        it_set_src (op, src);
        it_set_dst (op, dst, TRUE);
        it_run_keeping_padding (cpu_test_device (), op, dst);
        it_assert_close ("resize to the same size", dst, src, 0);
      }
}

/* A GRAY16 image of @w × @h on @dev holding the ramp a + b x + c y, uploaded. */
static ItImage *
ramp_image (AccelDevice *dev, int w, int h, int a, int b, int c)
{
  ItImage *image = it_image_new (dev, ACCEL_IMAGE_FORMAT_GRAY16, w, h, TRUE);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      it_put (image, 0, x, y, 0, a + b * x + c * y);
  it_image_upload (image);
  return image;
}

/* A linear ramp is reproduced exactly by bilinear sampling at the
 * half-pixel source coordinate, clamped to the image. */
static void
test_resize_ramp (void)
{
  AccelDevice *dev = cpu_test_device ();

  for (int round = 0; round < 8; round++)
    {
      int sw = g_random_int_range (2, 120), sh = g_random_int_range (2, 90);
      int dw = g_random_int_range (1, 200), dh = g_random_int_range (1, 150);
      /* Whole slopes, so that the ramp as stored is exactly linear. */
      int a = g_random_int_range (1000, 2000), b = g_random_int_range (-4, 200), c = g_random_int_range (-4, 200);
      g_autoptr(ItImage) src = ramp_image (dev, sw, sh, a, b, c);
      g_autoptr(ItImage) dst = it_image_new (dev, ACCEL_IMAGE_FORMAT_GRAY16, dw, dh, TRUE);

      g_autoptr(AccelOp) op = accel_resize_new (NULL, NULL, ACCEL_INTERPOLATION_BILINEAR);
      it_set_src (op, src);
      it_set_dst (op, dst, TRUE);
      it_run_keeping_padding (cpu_test_device (), op, dst);
      for (int y = 0; y < dh; y++)
        for (int x = 0; x < dw; x++)
          {
            double cx = CLAMP ((x + 0.5) * sw / dw - 0.5, 0.0, sw - 1.0);
            double cy = CLAMP ((y + 0.5) * sh / dh - 0.5, 0.0, sh - 1.0);
            double want = a + b * cx + c * cy;
            int got = it_get (dst, 0, x, y, 0);
            if (fabs (got - want) > 1.0)
              g_error ("bilinear ramp %dx%d -> %dx%d at (%d, %d): got %d, want %.3f", sw, sh, dw, dh, x, y, got,
                       want);
          }
    }
}

/* Shrinking by a whole factor with area takes block means (bilinear too
 * by 2); growing by a whole factor with nearest or area repeats pixels. */
static void
test_resize_whole_factors (void)
{
  AccelDevice *dev = cpu_test_device ();
  const AccelImageFormat formats[] = { ACCEL_IMAGE_FORMAT_GRAY8, ACCEL_IMAGE_FORMAT_RGBA, ACCEL_IMAGE_FORMAT_RGB,
                                       ACCEL_IMAGE_FORMAT_GRAY16 };

  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    for (int k = 2; k <= 4; k++)
      {
        int dw = g_random_int_range (1, 30), dh = g_random_int_range (1, 20);
        g_autoptr(ItImage) big = it_image_new (dev, formats[i], dw * k, dh * k, TRUE);
        g_autoptr(ItImage) small = it_image_new (dev, formats[i], dw, dh, TRUE);
        int ch = big->layout.samples[0].channels;

        for (int method = ACCEL_INTERPOLATION_BILINEAR; method <= ACCEL_INTERPOLATION_AREA; method++)
          {
            if (method == ACCEL_INTERPOLATION_BICUBIC || (method == ACCEL_INTERPOLATION_BILINEAR && k != 2))
              continue;
            g_autoptr(AccelOp) op = accel_resize_new (NULL, NULL, method);
            it_set_src (op, big);
            it_set_dst (op, small, TRUE);
            it_run_keeping_padding (cpu_test_device (), op, small);
            for (int y = 0; y < dh; y++)
              for (int x = 0; x < dw; x++)
                for (int c = 0; c < ch; c++)
                  {
                    double sum = 0;
                    for (int j = 0; j < k; j++)
                      for (int i2 = 0; i2 < k; i2++)
                        sum += it_get (big, 0, x * k + i2, y * k + j, c);
                    double mean = sum / (k * k);
                    int got = it_get (small, 0, x, y, c);
                    /* Weights of 1/3 are not exact in binary32: a mean at .5 may round either way. */
                    if (fabs (got - floor (mean + 0.5)) > (k == 3 ? 1 : 0))
                      g_error ("%s shrink by %d, method %d, (%d, %d) channel %d: got %d, block mean %.3f",
                               it_format_name (formats[i]), k, method, x, y, c, got, mean);
                  }
          }

        for (int method = ACCEL_INTERPOLATION_NEAREST; method <= ACCEL_INTERPOLATION_AREA;
             method += ACCEL_INTERPOLATION_AREA)
          {
            g_autoptr(AccelOp) op = accel_resize_new (NULL, NULL, method);
            it_set_src (op, small);
            it_set_dst (op, big, TRUE);
            it_run_keeping_padding (cpu_test_device (), op, big);
            for (int y = 0; y < dh * k; y++)
              for (int x = 0; x < dw * k; x++)
                for (int c = 0; c < ch; c++)
                  g_assert_cmpint (it_get (big, 0, x, y, c), ==, it_get (small, 0, x / k, y / k, c));
          }
      }
}

/* Planar YUV resizes each plane as the gray image it is. */
static void
test_resize_planes (void)
{
  AccelDevice *dev = cpu_test_device ();

  for (int method = 0; method < 5; method++)
    {
      int sw = g_random_int_range (3, 60), sh = g_random_int_range (3, 50);
      int dw = g_random_int_range (MAX (1, sw / 4), 2 * sw), dh = g_random_int_range (MAX (1, sh / 4), 2 * sh);
      g_autoptr(ItImage) src = it_image_new (dev, ACCEL_IMAGE_FORMAT_I420, sw, sh, TRUE);
      g_autoptr(ItImage) dst = it_image_new (dev, ACCEL_IMAGE_FORMAT_I420, dw, dh, TRUE);
      g_autoptr(AccelOp) op = accel_resize_new (NULL, NULL, method);
      it_set_src (op, src);
      it_set_dst (op, dst, TRUE);
      it_run_keeping_padding (cpu_test_device (), op, dst);

      for (guint p = 0; p < 3; p++)
        {
          const AccelImageSamples *a = &src->layout.samples[p], *b = &dst->layout.samples[p];
          g_autoptr(ItImage) gs = it_image_new (dev, ACCEL_IMAGE_FORMAT_GRAY8, a->width, a->height, FALSE);
          g_autoptr(ItImage) gd = it_image_new (dev, ACCEL_IMAGE_FORMAT_GRAY8, b->width, b->height, FALSE);
          for (int y = 0; y < a->height; y++)
            for (int x = 0; x < a->width; x++)
              it_put (gs, 0, x, y, 0, it_get (src, p, x, y, 0));
          it_image_upload (gs);
          g_autoptr(AccelOp) gop = accel_resize_new (NULL, NULL, method);
          it_set_src (gop, gs);
          it_set_dst (gop, gd, TRUE);
          submit (gop);
          it_image_download (gd);
          for (int y = 0; y < b->height; y++)
            for (int x = 0; x < b->width; x++)
              g_assert_cmpint (it_get (dst, p, x, y, 0), ==, it_get (gd, 0, x, y, 0));
        }
    }
}

/* warps */

static void
set_matrix (AccelOp *op, const double *m, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *name = g_strdup_printf ("m%u%u", i / 3, i % 3);
      g_object_set (op, name, m[i], NULL);
    }
}

/* The identity map copies; a whole-pixel shift moves pixels and fills
 * the rest with the border. */
static void
test_warp_shift (void)
{
  AccelDevice *dev = cpu_test_device ();

  for (guint i = 0; i < IT_N_FORMATS; i++)
    for (int method = 0; method < 3; method++)
      for (int perspective = 0; perspective < 2; perspective++)
        {
          AccelImageFormat f = it_all_formats[i];
          int w = g_random_int_range (4, 40), h = g_random_int_range (4, 30);
          /* Even shifts keep subsampled planes on whole samples. */
          int dx = 2 * g_random_int_range (-3, 4), dy = 2 * g_random_int_range (-3, 4);
          int maxv = (1 << bits_of (f)) - 1;
          int border_value = g_random_int_range (0, maxv + 1);
          g_autoptr(ItImage) src = it_image_new (dev, f, w, h, TRUE);
          g_autoptr(ItImage) dst = it_image_new (dev, f, w, h, TRUE);
          double m[9] = { 1, 0, dx, 0, 1, dy, 0, 0, 1 };
          if (perspective)
            for (int k = 0; k < 9; k++)
              m[k] *= 2.5;   /* the same map, scaled */
          g_autoptr(AccelOp) op = perspective ? accel_warp_perspective_new (NULL, NULL)
                                              : accel_warp_affine_new (NULL, NULL);
          it_set_src (op, src);
          it_set_dst (op, dst, TRUE);
          set_matrix (op, m, perspective ? 9 : 6);
          g_object_set (op, "method", method, "border", ACCEL_BORDER_CONSTANT, "border-value", (double) border_value,
                        NULL);
          it_run_keeping_padding (cpu_test_device (), op, dst);
          for (guint p = 0; p < dst->layout.n_samples; p++)
            {
              const AccelImageSamples *s = &dst->layout.samples[p];
              int sdx = dx / s->sub_x, sdy = dy / s->sub_y;
              for (int y = 0; y < s->height; y++)
                for (int x = 0; x < s->width; x++)
                  for (int c = 0; c < s->channels; c++)
                    {
                      int sx = x + sdx, sy = y + sdy;
                      gboolean in = sx >= 0 && sx < s->width && sy >= 0 && sy < s->height;
                      int want = in ? it_get (src, p, sx, sy, c) : border_value;
                      int got = it_get (dst, p, x, y, c);
                      if (got != want)
                        g_error ("%s warp (%s, method %d) shift %d,%d plane %u (%d, %d): got %d, want %d",
                                 it_format_name (f), perspective ? "perspective" : "affine", method, dx, dy, p, x,
                                 y, got, want);
                    }
            }
        }
}

/* Bilinear sampling reproduces a linear ramp at any point whose taps are
 * inside the image, whatever the map. */
static void
test_warp_ramp (void)
{
  AccelDevice *dev = cpu_test_device ();

  for (int round = 0; round < 12; round++)
    {
      gboolean perspective = round % 2;
      int w = g_random_int_range (20, 90), h = g_random_int_range (20, 70);
      int a = g_random_int_range (2000, 3000), b = g_random_int_range (-10, 200), c = g_random_int_range (-10, 200);
      g_autoptr(ItImage) src = ramp_image (dev, w, h, a, b, c);
      g_autoptr(ItImage) dst = it_image_new (dev, ACCEL_IMAGE_FORMAT_GRAY16, w, h, TRUE);

      double angle = g_random_double_range (-0.6, 0.6), scale = g_random_double_range (0.7, 1.3);
      double m[9] = { scale * cos (angle), -scale * sin (angle), g_random_double_range (-5, 5),
                      scale * sin (angle), scale * cos (angle), g_random_double_range (-5, 5),
                      perspective ? g_random_double_range (-0.002, 0.002) : 0,
                      perspective ? g_random_double_range (-0.002, 0.002) : 0, 1 };
      g_autoptr(AccelOp) op = perspective ? accel_warp_perspective_new (NULL, NULL)
                                          : accel_warp_affine_new (NULL, NULL);
      it_set_src (op, src);
      it_set_dst (op, dst, TRUE);
      set_matrix (op, m, perspective ? 9 : 6);
      g_object_set (op, "method", ACCEL_INTERPOLATION_BILINEAR, "border", g_random_int_range (0, 3), NULL);
      it_run_keeping_padding (cpu_test_device (), op, dst);
      int checked = 0;
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          {
            double q = m[6] * x + m[7] * y + m[8];
            double sx = (m[0] * x + m[1] * y + m[2]) / q, sy = (m[3] * x + m[4] * y + m[5]) / q;
            if (sx < 0.01 || sx > w - 1.01 || sy < 0.01 || sy > h - 1.01)
              continue;
            double want = a + b * sx + c * sy;
            int got = it_get (dst, 0, x, y, 0);
            if (fabs (got - want) > 1.0)
              g_error ("warp ramp at (%d, %d) -> (%.3f, %.3f): got %d, want %.3f", x, y, sx, sy, got, want);
            checked++;
          }
      g_assert_cmpint (checked, >, w * h / 16);
    }
}

/* bad input */

static void
expect_error (AccelOp *op, AccelError code, const char *needle)
{
  g_autoptr(GError) error = NULL;
  g_assert_false (accel_device_submit (cpu_test_device (), op, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, (gint) code);
  if (strstr (error->message, needle) == NULL)
    g_error ("expected “%s” in: %s", needle, error->message);
}

static void
test_bad_input (void)
{
  AccelDevice *dev = cpu_test_device ();
  g_autoptr(ItImage) nv12 = it_image_new (dev, ACCEL_IMAGE_FORMAT_NV12, 33, 17, FALSE);
  g_autoptr(ItImage) rgba = it_image_new (dev, ACCEL_IMAGE_FORMAT_RGBA, 33, 17, FALSE);
  g_autoptr(ItImage) p010 = it_image_new (dev, ACCEL_IMAGE_FORMAT_P010, 33, 17, FALSE);

  {
    g_autoptr(AccelOp) op = accel_convert_color_new (NULL, NULL);
    it_set_src (op, nv12);
    it_set_dst (op, rgba, TRUE);
    g_object_set (op, "src-stride", 32, NULL);
    expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "src-stride");
    g_object_set (op, "src-stride", 0, "src-width", 0, NULL);
    expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "src-width");
    g_object_set (op, "src-width", 33, "dst-height", 18, NULL);
    expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, "dst");
    g_object_set (op, "dst-height", 17, "src-uv-offset", (gint64) 100, NULL);
    expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "src-uv-offset");
    g_object_set (op, "src-uv-offset", (gint64) 0, "dst", nv12->img.buffer, "dst-format", ACCEL_IMAGE_FORMAT_NV12, NULL);
    expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "overlaps");
    g_object_set (op, "dst", rgba->img.buffer, "dst-format", 99, NULL);
    expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "dst-format");
    g_object_set (op, "dst-format", ACCEL_IMAGE_FORMAT_RGBA, NULL);
    submit (op);
  }
  {
    g_autoptr(AccelOp) op = accel_convert_color_new (NULL, NULL);
    it_set_src (op, p010);
    it_set_dst (op, rgba, TRUE);
    g_object_set (op, "src-stride", 67, NULL);
    expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "multiple of 2");
  }
  {
    g_autoptr(AccelOp) op = accel_resize_new (NULL, NULL, ACCEL_INTERPOLATION_AREA);
    it_set_src (op, nv12);
    it_set_dst (op, rgba, TRUE);
    expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "convert-color");
    g_object_set (op, "src-format", ACCEL_IMAGE_FORMAT_RGBA, "src", rgba->img.buffer, "dst", nv12->img.buffer,
                  "dst-width", 2, "dst-height", 2, NULL);
    expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "shrinking");
    g_object_set (op, "method", 17, NULL);
    expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "method");
  }
  {
    g_autoptr(AccelOp) op = accel_warp_perspective_new (NULL, NULL);
    it_set_src (op, rgba);
    it_set_dst (op, rgba, TRUE);
    expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "overlaps");
    g_object_set (op, "dst", nv12->img.buffer, "dst-width", 8, "dst-height", 8, "m21", NAN, NULL);
    expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "m21");
    g_object_set (op, "m21", 0.0, "method", ACCEL_INTERPOLATION_AREA, NULL);
    expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "method");
  }
  {
    /* Not set at all. */
    g_autoptr(AccelOp) op = accel_resize_new (NULL, NULL, ACCEL_INTERPOLATION_NEAREST);
    expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "src");
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/image/convert/constant", test_convert_constant);
  g_test_add_func ("/image/convert/planar-copy", test_convert_planar_copy);
  g_test_add_func ("/image/resize/constant", test_resize_constant);
  g_test_add_func ("/image/resize/identity", test_resize_identity);
  g_test_add_func ("/image/resize/ramp", test_resize_ramp);
  g_test_add_func ("/image/resize/whole-factors", test_resize_whole_factors);
  g_test_add_func ("/image/resize/planes", test_resize_planes);
  g_test_add_func ("/image/warp/shift", test_warp_shift);
  g_test_add_func ("/image/warp/ramp", test_warp_ramp);
  g_test_add_func ("/image/bad-input", test_bad_input);
  return cpu_test_run ();
}
