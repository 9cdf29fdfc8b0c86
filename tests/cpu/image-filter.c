/* image-filter.c: filter and morphology on cpu:0 against closed forms
 * (constants stay constant, an impulse draws the kernel, Sobel and Scharr
 * of a ramp are its slope times the kernel's moment) and against direct
 * binary64 sums and minima/maxima written here from the definitions, with
 * every border mode, on random, odd-sized images of every format with
 * padded rows and plane gaps whose bytes must survive.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "cpu-test.h"
#include "image-test.h"


/* A second image of @src's format and size, with its own padding. */
static ItImage *
image_like (const ItImage *src)
{
  return it_image_new (cpu_test_device (), src->img.format, src->img.width, src->img.height, TRUE);
}

static AccelBuffer *
f32_buffer (const float *values, gint64 d0, gint64 d1)
{
  gint64 dims[2] = { d0, d1 };
  AccelBuffer *b = cpu_test_alloc (ACCEL_DTYPE_F32, dims, d1 ? 2 : 1);
  g_autoptr(GError) error = NULL;
  g_assert_true (accel_buffer_write (b, (const guint8 *) values, (gsize) (d0 * MAX (d1, 1)) * sizeof (float), &error));
  g_assert_no_error (error);
  return b;
}

/* Border index by reflection and clamping, written out. */
static int
border_at (int i, int n, AccelBorderMode mode)
{
  if (i >= 0 && i < n)
    return i;
  if (mode == ACCEL_BORDER_CONSTANT)
    return -1;
  if (mode == ACCEL_BORDER_REPLICATE || n == 1)
    return i < 0 ? 0 : n - 1;
  while (i < 0 || i >= n)
    i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

/* Kernels from their definitions, in binary64. */

static double
binomial (int n, int k)
{
  double r = 1;
  for (int i = 1; i <= k; i++)
    r = r * (n - k + i) / i;
  return r;
}

/* Sobel's 1-D kernel of size @k and derivative @order: the smoothing
 * binomial of k - order taps differenced @order times. */
static void
sobel_1d (int k, int order, double *out)
{
  double t[16] = { 0 };
  for (int i = 0; i < k - order; i++)
    t[i] = binomial (k - order - 1, i);
  for (int d = 0; d < order; d++)
    for (int i = k - 1; i >= 0; i--)
      t[i] = (i > 0 ? t[i - 1] : 0) - t[i];
  memcpy (out, t, sizeof (double) * k);
}

static void
gaussian_1d (double sigma, int k, double *out)
{
  double sum = 0;
  for (int i = 0; i < k; i++)
    sum += out[i] = exp (-pow (i - (k - 1) / 2, 2) / (2 * sigma * sigma));
  for (int i = 0; i < k; i++)
    out[i] /= sum;
}

typedef struct {
  AccelFilterKind kind;
  int kw, kh;
  double k2[15 * 15];      /* [kh][kw] */
  float user[15 * 15];     /* what the op gets for the user kinds */
  float user_y[15];
  double sigma;
  int ksize, dx, dy;
  AccelBorderMode border;
  double border_value, scale, delta;
} Kernel;

/* A random kernel of a random kind, and its 2-D weights. */
static void
kernel_random (Kernel *k, int maxv)
{
  memset (k, 0, sizeof *k);
  k->kind = g_random_int_range (0, 6);
  k->border = g_random_int_range (0, 3);
  k->border_value = g_random_int_range (0, maxv + 1);
  k->scale = 1.0;
  double kx[15], ky[15];
  switch (k->kind)
    {
    case ACCEL_FILTER_GAUSSIAN:
      k->sigma = g_random_double_range (0.4, 2.2);
      k->kw = k->kh = 2 * (int) ceil (3 * k->sigma) + 1;
      gaussian_1d (k->sigma, k->kw, kx);
      gaussian_1d (k->sigma, k->kh, ky);
      break;
    case ACCEL_FILTER_BOX:
      k->ksize = k->kw = k->kh = g_random_int_range (1, 8);
      for (int i = 0; i < k->kw; i++)
        kx[i] = ky[i] = 1.0 / k->kw;
      break;
    case ACCEL_FILTER_SOBEL:
    case ACCEL_FILTER_SCHARR:
      k->ksize = k->kind == ACCEL_FILTER_SCHARR ? 3 : 3 + 2 * g_random_int_range (0, 3);
      k->kw = k->kh = k->ksize;
      k->dx = g_random_int_range (0, 2);
      k->dy = k->kind == ACCEL_FILTER_SCHARR ? 1 - k->dx : g_random_int_range (k->dx ? 0 : 1, 3);
      if (k->kind == ACCEL_FILTER_SOBEL)
        {
          sobel_1d (k->ksize, k->dx, kx);
          sobel_1d (k->ksize, k->dy, ky);
        }
      else
        {
          const double d[3] = { -1, 0, 1 }, s[3] = { 3, 10, 3 };
          memcpy (kx, k->dx ? d : s, sizeof d);
          memcpy (ky, k->dx ? s : d, sizeof d);
        }
      /* Keep both signs: mid-range plus a scaled derivative. */
      k->scale = 1.0 / (4 << k->ksize);
      k->delta = maxv / 2;
      break;
    case ACCEL_FILTER_SEPARABLE:
      k->kw = g_random_int_range (1, 8), k->kh = g_random_int_range (1, 8);
      for (int i = 0; i < k->kw; i++)
        kx[i] = k->user[i] = (float) g_random_double_range (-0.1, 0.5);
      for (int i = 0; i < k->kh; i++)
        ky[i] = k->user_y[i] = (float) g_random_double_range (-0.1, 0.5);
      k->delta = g_random_double_range (-10, 10);
      break;
    default:
      k->kw = g_random_int_range (1, 8), k->kh = g_random_int_range (1, 6);
      for (int i = 0; i < k->kw * k->kh; i++)
        k->k2[i] = k->user[i] = (float) g_random_double_range (-0.05, 0.15);
      k->delta = g_random_double_range (-10, 10);
      return;
    }
  for (int j = 0; j < k->kh; j++)
    for (int i = 0; i < k->kw; i++)
      k->k2[j * k->kw + i] = ky[j] * kx[i];
}

static AccelOp *
kernel_op (const Kernel *k, const ItImage *src, const ItImage *dst)
{
  AccelOp *op = accel_filter_new (NULL, NULL, k->kind);
  it_set_src (op, src);
  it_set_dst (op, dst, FALSE);
  g_object_set (op, "border", k->border, "border-value", k->border_value, "scale", k->scale, "delta", k->delta,
                "sigma", k->sigma > 0 ? k->sigma : 1.0, "ksize", k->ksize, "dx", k->dx, "dy", k->dy, NULL);
  if (k->kind == ACCEL_FILTER_SEPARABLE)
    {
      g_autoptr(AccelBuffer) kx = f32_buffer (k->user, k->kw, 0);
      g_autoptr(AccelBuffer) ky = f32_buffer (k->user_y, k->kh, 0);
      g_object_set (op, "kernel", kx, "kernel-y", ky, NULL);
    }
  else if (k->kind == ACCEL_FILTER_KERNEL)
    {
      g_autoptr(AccelBuffer) k2 = f32_buffer (k->user, k->kh, k->kw);
      g_object_set (op, "kernel", k2, NULL);
    }
  return op;
}

/* The filter's definition summed in binary64: every sample plane of
 * @src, each channel, the kernel anchored at its centre. */
static void
check_against_direct_sum (const char *what, const Kernel *k, const ItImage *src, const ItImage *dst)
{
  for (guint p = 0; p < src->layout.n_samples; p++)
    {
      const AccelImageSamples *s = &src->layout.samples[p];
      double maxv = ldexp (1, s->bits) - 1;
      for (int y = 0; y < s->height; y++)
        for (int x = 0; x < s->width; x++)
          for (int c = 0; c < s->channels; c++)
            {
              double sum = 0;
              for (int j = 0; j < k->kh; j++)
                for (int i = 0; i < k->kw; i++)
                  {
                    int sx = border_at (x + i - k->kw / 2, s->width, k->border);
                    int sy = border_at (y + j - k->kh / 2, s->height, k->border);
                    double v = sx < 0 || sy < 0 ? k->border_value : it_get (src, p, sx, sy, c);
                    sum += k->k2[j * k->kw + i] * v;
                  }
              double want = CLAMP (sum * k->scale + k->delta, 0, maxv);
              int got = it_get (dst, p, x, y, c);
              if (fabs (got - want) > 1.0)
                g_error ("%s: kind %d %dx%d border %d, plane %u (%d, %d) channel %d: got %d, want %.3f", what,
                         k->kind, k->kw, k->kh, k->border, p, x, y, c, got, want);
            }
    }
}

static void
test_filter_direct (void)
{
  for (int round = 0; round < 60; round++)
    {
      AccelImageFormat f = it_all_formats[round % IT_N_FORMATS];
      g_autoptr(ItImage) src = it_image_new (cpu_test_device (), f, g_random_int_range (1, 40),
                                             g_random_int_range (1, 30), TRUE);
      g_autoptr(ItImage) dst = image_like (src);
      Kernel k;
      kernel_random (&k, (1 << src->layout.samples[0].bits) - 1);
      g_autoptr(AccelOp) op = kernel_op (&k, src, dst);
      it_run_keeping_padding (cpu_test_device (), op, dst);
      check_against_direct_sum (it_format_name (f), &k, src, dst);
    }
}

/* A kernel whose weights sum to 1 keeps a constant image constant, with
 * any border (the constant border holding the same value). */
static void
test_filter_constant (void)
{
  for (guint i = 0; i < IT_N_FORMATS; i++)
    for (int kind = ACCEL_FILTER_GAUSSIAN; kind <= ACCEL_FILTER_BOX; kind++)
      for (int border = 0; border < 3; border++)
        {
          g_autoptr(ItImage) src = it_image_new (cpu_test_device (), it_all_formats[i], g_random_int_range (1, 50),
                                                 g_random_int_range (1, 40), TRUE);
          g_autoptr(ItImage) dst = image_like (src);
          int v = g_random_int_range (0, 1 << src->layout.samples[0].bits);
          for (guint p = 0; p < src->layout.n_samples; p++)
            for (int y = 0; y < src->layout.samples[p].height; y++)
              for (int x = 0; x < src->layout.samples[p].width; x++)
                for (int c = 0; c < src->layout.samples[p].channels; c++)
                  it_put (src, p, x, y, c, v);
          it_image_upload (src);
          g_autoptr(AccelOp) op = accel_filter_new (NULL, NULL, kind);
          it_set_src (op, src);
          it_set_dst (op, dst, FALSE);
          g_object_set (op, "border", border, "border-value", (double) v, "sigma", g_random_double_range (0.3, 6),
                        "ksize", kind == ACCEL_FILTER_BOX ? g_random_int_range (1, 12) : 0, NULL);
          it_run_keeping_padding (cpu_test_device (), op, dst);
          for (guint p = 0; p < dst->layout.n_samples; p++)
            for (int y = 0; y < dst->layout.samples[p].height; y++)
              for (int x = 0; x < dst->layout.samples[p].width; x++)
                for (int c = 0; c < dst->layout.samples[p].channels; c++)
                  g_assert_cmpint (it_get (dst, p, x, y, c), ==, v);
        }
}

/* An impulse on black draws the kernel, mirrored (the filter is a
 * correlation): a Gaussian of the given sigma, or the user's weights. */
static void
test_filter_impulse (void)
{
  for (int round = 0; round < 12; round++)
    {
      int w = 41, h = 37, x0 = g_random_int_range (12, 29), y0 = g_random_int_range (12, 25), amp = 60000;
      g_autoptr(ItImage) src = it_image_new (cpu_test_device (), ACCEL_IMAGE_FORMAT_GRAY16, w, h, TRUE);
      g_autoptr(ItImage) dst = image_like (src);
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          it_put (src, 0, x, y, 0, x == x0 && y == y0 ? amp : 0);
      it_image_upload (src);

      Kernel k = { .kind = round % 2 ? ACCEL_FILTER_GAUSSIAN : ACCEL_FILTER_KERNEL, .scale = 1.0,
                   .border = ACCEL_BORDER_CONSTANT };
      double gx[15], gy[15];
      if (k.kind == ACCEL_FILTER_GAUSSIAN)
        {
          k.sigma = g_random_double_range (0.5, 2.3);
          k.kw = k.kh = 2 * (int) ceil (3 * k.sigma) + 1;
          gaussian_1d (k.sigma, k.kw, gx);
          gaussian_1d (k.sigma, k.kh, gy);
        }
      else
        {
          k.kw = g_random_int_range (1, 10), k.kh = g_random_int_range (1, 10);
          for (int i = 0; i < k.kw * k.kh; i++)
            k.user[i] = (float) g_random_double_range (0.0, 1.0);
        }
      g_autoptr(AccelOp) op = kernel_op (&k, src, dst);
      it_run_keeping_padding (cpu_test_device (), op, dst);
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          {
            int i = x0 - x + k.kw / 2, j = y0 - y + k.kh / 2;
            gboolean on = i >= 0 && i < k.kw && j >= 0 && j < k.kh;
            double weight = !on ? 0 : k.kind == ACCEL_FILTER_GAUSSIAN ? gx[i] * gy[j] : k.user[j * k.kw + i];
            double want = amp * weight;
            int got = it_get (dst, 0, x, y, 0);
            if (fabs (got - want) > 1.0)
              g_error ("impulse, kind %d %dx%d, at (%d, %d): got %d, want %.3f", k.kind, k.kw, k.kh, x, y, got,
                       want);
          }
    }
}

/* Sobel of order (1, 0) or (0, 1) and size k on a ramp of slope b is
 * b 2^(k-2) 2^(k-1) inside; a second or mixed derivative is 0. Scharr's
 * first derivative is 32 b. */
static void
test_filter_derivative_ramp (void)
{
  for (int round = 0; round < 16; round++)
    {
      int w = 33, h = 29, b = g_random_int_range (-6, 7), c = g_random_int_range (-6, 7);
      gboolean scharr = round % 4 == 3;
      int k = scharr ? 3 : 3 + 2 * (round % 3);
      int dx = g_random_int_range (0, 2), dy = scharr ? 1 - dx : g_random_int_range (dx ? 0 : 1, 3);
      g_autoptr(ItImage) src = it_image_new (cpu_test_device (), ACCEL_IMAGE_FORMAT_GRAY16, w, h, TRUE);
      g_autoptr(ItImage) dst = image_like (src);
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          it_put (src, 0, x, y, 0, 1000 + b * x + c * y);
      it_image_upload (src);
      g_autoptr(AccelOp) op = accel_filter_new (NULL, NULL, scharr ? ACCEL_FILTER_SCHARR : ACCEL_FILTER_SOBEL);
      it_set_src (op, src);
      it_set_dst (op, dst, FALSE);
      g_object_set (op, "ksize", k, "dx", dx, "dy", dy, "delta", 30000.0, "border", g_random_int_range (0, 3), NULL);
      it_run_keeping_padding (cpu_test_device (), op, dst);

      double gain = scharr ? 32 : ldexp (1, 2 * k - 3);
      double want = 30000 + (dx + dy != 1 ? 0 : dx ? b * gain : c * gain);
      for (int y = k / 2; y < h - k / 2; y++)
        for (int x = k / 2; x < w - k / 2; x++)
          if (it_get (dst, 0, x, y, 0) != (int) want)
            g_error ("%s %d (%d, %d) of ramp %d, %d at (%d, %d): got %d, want %.0f", scharr ? "scharr" : "sobel", k,
                     dx, dy, b, c, x, y, it_get (dst, 0, x, y, 0), want);
    }
}

/* morphology */

/* OpenCV's getStructuringElement, written out. */
static void
element (AccelMorphologyShape shape, int kw, int kh, guint8 *mask)
{
  int r = kh / 2, c = kw / 2;
  for (int j = 0; j < kh; j++)
    for (int i = 0; i < kw; i++)
      {
        gboolean on = TRUE;
        if (shape == ACCEL_MORPHOLOGY_ELLIPSE)
          {
            int dy = j - r;
            /* OpenCV's: a flat ellipse (r = 0) is its centre pixel alone. */
            double f = r ? (double) (r * r - dy * dy) / (r * r) : 0.0;
            int dx = abs (dy) <= r ? (int) rint (c * sqrt (f)) : -1;
            on = dx >= 0 && i >= c - dx && i <= c + dx;
          }
        mask[j * kw + i] = on;
      }
}

static void
min_max (const ItImage *in, ItImage *out, const guint8 *mask, int kw, int kh, gboolean dilate)
{
  for (guint p = 0; p < in->layout.n_samples; p++)
    {
      const AccelImageSamples *s = &in->layout.samples[p];
      for (int y = 0; y < s->height; y++)
        for (int x = 0; x < s->width; x++)
          for (int c = 0; c < s->channels; c++)
            {
              int m = dilate ? -1 : G_MAXINT;
              for (int j = 0; j < kh; j++)
                for (int i = 0; i < kw; i++)
                  {
                    int sx = x + i - kw / 2, sy = y + j - kh / 2;
                    if (!mask[j * kw + i] || sx < 0 || sy < 0 || sx >= s->width || sy >= s->height)
                      continue;
                    int v = it_get (in, p, sx, sy, c);
                    m = dilate ? MAX (m, v) : MIN (m, v);
                  }
              it_put (out, p, x, y, c, m);
            }
    }
}

static void
test_morphology_direct (void)
{
  for (int round = 0; round < 40; round++)
    {
      AccelImageFormat f = it_all_formats[round % IT_N_FORMATS];
      g_autoptr(ItImage) src = it_image_new (cpu_test_device (), f, g_random_int_range (1, 40),
                                             g_random_int_range (1, 30), TRUE);
      g_autoptr(ItImage) dst = image_like (src);
      g_autoptr(ItImage) want = image_like (src);
      g_autoptr(ItImage) mid = image_like (src);
      AccelMorphologyOp operation = g_random_int_range (0, 4);
      AccelMorphologyShape shape = g_random_int_range (0, 2);
      int kw = g_random_int_range (1, 10), kh = g_random_int_range (1, 10);
      guint8 mask[100], lib_mask[100];
      int lw, lh;

      g_autoptr(AccelOp) op = accel_morphology_new (NULL, NULL, operation);
      it_set_src (op, src);
      it_set_dst (op, dst, FALSE);
      g_object_set (op, "shape", shape, "ksize", kw, "ksize-y", kh, NULL);
      it_run_keeping_padding (cpu_test_device (), op, dst);

      element (shape, kw, kh, mask);
      accel_morphology_get_element (ACCEL_MORPHOLOGY (op), lib_mask, &lw, &lh);
      g_assert_cmpint (lw, ==, kw);
      g_assert_cmpint (lh, ==, kh);
      g_assert_cmpmem (lib_mask, kw * kh, mask, kw * kh);

      gboolean first_dilate = operation == ACCEL_MORPHOLOGY_DILATE || operation == ACCEL_MORPHOLOGY_CLOSE;
      min_max (src, operation <= ACCEL_MORPHOLOGY_DILATE ? want : mid, mask, kw, kh, first_dilate);
      if (operation > ACCEL_MORPHOLOGY_DILATE)
        min_max (mid, want, mask, kw, kh, !first_dilate);
      g_autofree char *what = g_strdup_printf ("morphology %d shape %d %dx%d of %s", operation, shape, kw, kh,
                                               it_format_name (f));
      it_assert_close (what, dst, want, 0);
    }
}

static void
expect_error (AccelOp *op, const char *needle)
{
  g_autoptr(GError) error = NULL;
  g_assert_false (accel_device_submit (cpu_test_device (), op, NULL, &error));
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT);
  if (strstr (error->message, needle) == NULL)
    g_error ("expected “%s” in: %s", needle, error->message);
}

static void
test_filter_bad_input (void)
{
  g_autoptr(ItImage) src = it_image_new (cpu_test_device (), ACCEL_IMAGE_FORMAT_RGBA, 20, 10, FALSE);
  g_autoptr(ItImage) dst = image_like (src);
  g_autoptr(AccelOp) op = accel_filter_new (NULL, NULL, ACCEL_FILTER_GAUSSIAN);
  it_set_src (op, src);
  it_set_dst (op, dst, FALSE);
  g_object_set (op, "sigma", 0.0, NULL);
  expect_error (op, "sigma");
  g_object_set (op, "sigma", 90.0, NULL);
  expect_error (op, "taps");
  g_object_set (op, "sigma", 1.0, "ksize", 4, NULL);
  expect_error (op, "ksize");
  g_object_set (op, "kind", ACCEL_FILTER_SOBEL, "ksize", 9, NULL);
  expect_error (op, "ksize");
  g_object_set (op, "ksize", 3, "dx", 0, "dy", 0, NULL);
  expect_error (op, "dx");
  g_object_set (op, "kind", ACCEL_FILTER_SCHARR, "dx", 1, "dy", 1, NULL);
  expect_error (op, "dy");
  g_object_set (op, "kind", ACCEL_FILTER_KERNEL, NULL);
  expect_error (op, "kernel");
  g_object_set (op, "kind", ACCEL_FILTER_BOX, "scale", INFINITY, NULL);
  expect_error (op, "scale");
  g_object_set (op, "scale", 1.0, "dst-stride", 79, NULL);
  expect_error (op, "dst-stride");

  g_autoptr(AccelOp) morph = accel_morphology_new (src->img.buffer, dst->img.buffer, ACCEL_MORPHOLOGY_OPEN);
  it_set_src (morph, src);
  g_object_set (morph, "ksize", 0, NULL);
  expect_error (morph, "ksize");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/image/filter/direct", test_filter_direct);
  g_test_add_func ("/image/filter/constant", test_filter_constant);
  g_test_add_func ("/image/filter/impulse", test_filter_impulse);
  g_test_add_func ("/image/filter/derivative-ramp", test_filter_derivative_ramp);
  g_test_add_func ("/image/filter/bad-input", test_filter_bad_input);
  g_test_add_func ("/image/morphology/direct", test_morphology_direct);
  return cpu_test_run ();
}
