/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-image-private.h"
#include "accel-enum-types.h"

/**
 * AccelFilter:
 *
 * Filters an image with a linear kernel: each sample plane on its own and
 * each channel alike, alpha included (planar YUV: every plane at its own
 * size, the kernel in that plane's samples).
 *
 * The result at `(x, y)` is the correlation `sum k[j][i] src[y + j - ay][x
 * + i - ax]` with the anchor `(ax, ay) = (kw / 2, kh / 2)` (integer
 * division, OpenCV's default), times `scale` plus `delta`, rounded half up
 * and saturated to the sample's range (P010 samples are filtered as their
 * 10-bit values). Separable kinds apply the row kernel, then the column
 * kernel, summing in binary32. Kernels:
 *
 * - Gaussian: `exp (-(i - a)² / 2 sigma²)` normalised to sum 1 (kernel
 *   size odd).
 * - box: `1 / ksize` along each axis.
 * - Sobel of order `d` and size `k` (3, 5 or 7): the binomial smoothing of
 *   `k - d` taps convolved `d` times with `[-1, 1]`, as OpenCV's
 *   getDerivKernels; the other axis is the binomial of `k` taps.
 * - Scharr: `[-1, 0, 1]` and `[3, 10, 3]`.
 *
 * Derivatives of unsigned images clip below zero: use `scale` and `delta`
 * (say 0.5 and 128) to keep both signs. The destination has the source's
 * format and size; only its layout (`dst`, its strides and its
 * plane offsets) is its own.
 *
 * Op name: `filter`.
 */

static const AccelDType kernel_dtypes[] = { ACCEL_DTYPE_F32 };

static int
gaussian_size (double sigma)
{
  return 2 * (int) ceil (3.0 * sigma) + 1;
}

static gboolean
check_user_kernel (AccelOp *op, const char *property, AccelBuffer *buffer, guint rank, GError **error)
{
  if (!accel_image_require_ (op, property, buffer, error)
      || !accel_op_check_dtype (op, property, kernel_dtypes, 1, error)
      || !accel_op_check_rank (op, property, rank, rank, error)
      || !accel_op_check_contiguous (op, property, error))
    return FALSE;
  const AccelShape *shape = accel_buffer_get_shape (buffer);
  for (guint i = 0; i < rank; i++)
    if (accel_shape_get_dim (shape, i) < 1 || accel_shape_get_dim (shape, i) > ACCEL_FILTER_MAX_KSIZE)
      {
        g_autofree char *expected = g_strdup_printf ("sides of 1 to %d", ACCEL_FILTER_MAX_KSIZE);
        return accel_op_shape_error_ (error, "filter", property, buffer, expected);
      }
  return TRUE;
}

static gboolean
filter_error (GError **error, const char *format, ...) G_GNUC_PRINTF (2, 3);

static gboolean
filter_error (GError **error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "filter: %s", message);
  return FALSE;
}

static gboolean
check_kind (AccelFilter *self, GError **error)
{
  AccelOp *op = ACCEL_OP (self);

  switch (self->kind)
    {
    case ACCEL_FILTER_GAUSSIAN:
      if (!(self->sigma > 0.0))
        return filter_error (error, "“sigma” (%g) must be above 0 for a Gaussian", self->sigma);
      for (int axis = 0; axis < 2; axis++)
        {
          double sigma = axis == 0 || self->sigma_y == 0.0 ? self->sigma : self->sigma_y;
          int k = axis == 0 ? self->ksize : self->ksize_y ? self->ksize_y : self->ksize;
          const char *name = axis == 0 ? "ksize" : self->ksize_y ? "ksize-y" : "ksize";
          if (k == 0 && gaussian_size (sigma) > ACCEL_FILTER_MAX_KSIZE)
            return filter_error (error, "a Gaussian of “sigma” %g needs %d taps, more than %d", sigma,
                                 gaussian_size (sigma), ACCEL_FILTER_MAX_KSIZE);
          if (k != 0 && k % 2 == 0)
            return filter_error (error, "“%s” (%d) must be odd for a Gaussian", name, k);
        }
      return TRUE;
    case ACCEL_FILTER_BOX:
      return TRUE;
    case ACCEL_FILTER_SOBEL:
      {
        int k = self->ksize ? self->ksize : 3;
        if (k != 3 && k != 5 && k != 7)
          return filter_error (error, "“ksize” (%d) must be 3, 5 or 7 for Sobel", self->ksize);
        if (self->ksize_y != 0 && self->ksize_y != k)
          return filter_error (error, "“ksize-y” (%d) must be 0 or “ksize” for Sobel", self->ksize_y);
        if (self->dx + self->dy < 1 || self->dx >= k || self->dy >= k)
          return filter_error (error, "“dx” (%d) and “dy” (%d) must add up to at least 1 for Sobel", self->dx,
                               self->dy);
        return TRUE;
      }
    case ACCEL_FILTER_SCHARR:
      if (self->dx + self->dy != 1)
        return filter_error (error, "“dx” (%d) and “dy” (%d) must be 1 and 0 or 0 and 1 for Scharr", self->dx,
                             self->dy);
      return TRUE;
    case ACCEL_FILTER_SEPARABLE:
      return check_user_kernel (op, "kernel", self->kernel, 1, error)
          && check_user_kernel (op, "kernel-y", self->kernel_y, 1, error);
    case ACCEL_FILTER_KERNEL:
      return check_user_kernel (op, "kernel", self->kernel, 2, error);
    default:
      return filter_error (error, "“kind” (%d) is not a filter kind", (int) self->kind);
    }
}

static gboolean
accel_filter_validate (AccelOp *op, GError **error)
{
  AccelFilter *self = ACCEL_FILTER (op);
  AccelImageLayout ls, ld;

  if (!accel_image_check_ (op, "src", &self->src, NULL, &ls, error)
      || !accel_image_check_ (op, "dst", &self->dst, &self->src, &ld, error)
      || !accel_image_check_apart_ (op, &self->src, &self->dst, error)
      || !check_kind (self, error))
    return FALSE;
  if (!isfinite (self->scale) || !isfinite (self->delta) || !isfinite (self->border_value))
    return filter_error (error, "“scale” (%g), “delta” (%g) and “border-value” (%g) must be finite",
                         self->scale, self->delta, self->border_value);
  return TRUE;
}

ACCEL_DEFINE_IMAGE_OP_TYPE (AccelFilter, accel_filter, "filter",
                            "Filters an image: Gaussian, box, Sobel, Scharr or a user kernel, with border modes",
                            _accel_filter_params, accel_filter_validate, FALSE)


/* The binomial smoothing of @k taps convolved @order times with [-1, 1]. */
static void
sobel_taps (int k, int order, float *out)
{
  double taps[ACCEL_FILTER_MAX_KSIZE] = { 1.0 };
  int n = 1;

  for (int step = 0; step < k - 1; step++)
    {
      gboolean diff = step >= k - 1 - order;
      taps[n] = 0.0;
      for (int i = n; i > 0; i--)
        taps[i] = diff ? taps[i - 1] - taps[i] : taps[i] + taps[i - 1];
      taps[0] = diff ? -taps[0] : taps[0];
      n++;
    }
  for (int i = 0; i < k; i++)
    out[i] = (float) taps[i];
}

static void
gaussian_taps (double sigma, int k, float *out)
{
  double taps[ACCEL_FILTER_MAX_KSIZE], sum = 0.0;
  for (int i = 0; i < k; i++)
    {
      double x = i - (k - 1) / 2;
      taps[i] = exp (-x * x / (2.0 * sigma * sigma));
      sum += taps[i];
    }
  for (int i = 0; i < k; i++)
    out[i] = (float) (taps[i] / sum);
}

/**
 * accel_filter_get_separable_kernel: (skip)
 * @self: a validated `filter` op
 * @kx: (out caller-allocates): the row kernel, room for
 *   %ACCEL_FILTER_MAX_KSIZE values
 * @nx: (out): its length
 * @ky: (out caller-allocates): the column kernel, room for
 *   %ACCEL_FILTER_MAX_KSIZE values
 * @ny: (out): its length
 *
 * The row and column kernels of a Gaussian, box, Sobel or Scharr filter,
 * as kernels compute them.
 *
 * Returns: %TRUE, or %FALSE for the user kernels (their values are in
 *   the #AccelFilter:kernel buffers)
 */
gboolean
accel_filter_get_separable_kernel (AccelFilter *self, float *kx, guint *nx, float *ky, guint *ny)
{
  g_return_val_if_fail (ACCEL_IS_FILTER (self), FALSE);
  g_return_val_if_fail (kx != NULL && nx != NULL && ky != NULL && ny != NULL, FALSE);

  switch (self->kind)
    {
    case ACCEL_FILTER_GAUSSIAN:
      {
        double sy = self->sigma_y > 0.0 ? self->sigma_y : self->sigma;
        int kw = self->ksize ? self->ksize : gaussian_size (self->sigma);
        int kh = self->ksize_y ? self->ksize_y : self->ksize ? self->ksize : gaussian_size (sy);
        kw = CLAMP (kw, 1, ACCEL_FILTER_MAX_KSIZE);
        kh = CLAMP (kh, 1, ACCEL_FILTER_MAX_KSIZE);
        gaussian_taps (self->sigma, kw, kx);
        gaussian_taps (sy, kh, ky);
        *nx = kw, *ny = kh;
        return TRUE;
      }
    case ACCEL_FILTER_BOX:
      {
        int kw = self->ksize ? self->ksize : 3;
        int kh = self->ksize_y ? self->ksize_y : kw;
        for (int i = 0; i < kw; i++)
          kx[i] = 1.0f / (float) kw;
        for (int i = 0; i < kh; i++)
          ky[i] = 1.0f / (float) kh;
        *nx = kw, *ny = kh;
        return TRUE;
      }
    case ACCEL_FILTER_SOBEL:
      {
        int k = self->ksize ? self->ksize : 3;
        k = k == 5 || k == 7 ? k : 3;
        sobel_taps (k, CLAMP (self->dx, 0, k - 1), kx);
        sobel_taps (k, CLAMP (self->dy, 0, k - 1), ky);
        *nx = *ny = k;
        return TRUE;
      }
    case ACCEL_FILTER_SCHARR:
      {
        static const float deriv[3] = { -1.0f, 0.0f, 1.0f }, smooth[3] = { 3.0f, 10.0f, 3.0f };
        memcpy (kx, self->dx ? deriv : smooth, sizeof deriv);
        memcpy (ky, self->dx ? smooth : deriv, sizeof deriv);
        *nx = *ny = 3;
        return TRUE;
      }
    default:
      return FALSE;
    }
}
