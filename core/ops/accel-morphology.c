/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-image-private.h"
#include "accel-enum-types.h"

/**
 * AccelMorphology:
 *
 * Erodes (minimum), dilates (maximum), opens (erodes, then dilates) or
 * closes (dilates, then erodes) an image under a structuring element
 * anchored at `(ksize / 2, ksize-y / 2)` (integer division): the result
 * at `(x, y)` is the minimum or maximum of `src[y + j - ay][x + i - ax]`
 * over the element's pixels `(i, j)`. Pixels outside the image take no
 * part (OpenCV's default border for morphology). Each sample plane on
 * its own and each channel alike, alpha included; exact, no rounding.
 * The destination has the source's format and size; only its layout
 * (`dst`, its strides and its plane offsets) is its own.
 *
 * Op name: `morphology`.
 */

static gboolean
accel_morphology_validate (AccelOp *op, GError **error)
{
  AccelMorphology *self = ACCEL_MORPHOLOGY (op);
  AccelImageLayout ls, ld;

  return accel_image_check_ (op, "src", &self->src, NULL, &ls, error)
      && accel_image_check_ (op, "dst", &self->dst, &self->src, &ld, error)
      && accel_image_check_apart_ (op, &self->src, &self->dst, error);
}

ACCEL_DEFINE_IMAGE_OP_TYPE (AccelMorphology, accel_morphology, "morphology",
                            "Erodes, dilates, opens or closes an image with a rectangular or elliptic element",
                            _accel_morphology_params, accel_morphology_validate, FALSE)


/**
 * accel_morphology_get_element: (skip)
 * @self: a validated `morphology` op
 * @mask: (out caller-allocates) (nullable): room for `ksize × ksize-y`
 *   bytes, row-major; each is 1 where the element has a pixel
 * @width: (out): the element's width
 * @height: (out): the element's height
 *
 * The structuring element, as kernels use it. The ellipse is OpenCV's:
 * row `j` spans `c ± round (c sqrt (1 - (j - r)² / r²))` around the
 * centre column `c = ksize / 2`, with `r = ksize-y / 2`.
 *
 * Returns: how many pixels the element has
 */
guint
accel_morphology_get_element (AccelMorphology *self, guint8 *mask, int *width, int *height)
{
  g_return_val_if_fail (ACCEL_IS_MORPHOLOGY (self), 0);
  g_return_val_if_fail (width != NULL && height != NULL, 0);

  int kw = CLAMP (self->ksize, 1, ACCEL_FILTER_MAX_KSIZE);
  int kh = self->ksize_y > 0 ? MIN (self->ksize_y, ACCEL_FILTER_MAX_KSIZE) : kw;
  int r = kh / 2, c = kw / 2;
  double inv_r2 = r ? 1.0 / ((double) r * r) : 0.0;
  guint count = 0;

  *width = kw;
  *height = kh;
  for (int j = 0; j < kh; j++)
    {
      int j1 = 0, j2 = kw;
      if (self->shape == ACCEL_MORPHOLOGY_ELLIPSE)
        {
          int dy = j - r;
          j1 = j2 = 0;
          if (abs (dy) <= r)
            {
              int dx = (int) rint (c * sqrt (((double) r * r - (double) dy * dy) * inv_r2));
              j1 = MAX (c - dx, 0);
              j2 = MIN (c + dx + 1, kw);
            }
        }
      for (int i = 0; i < kw; i++)
        {
          gboolean on = i >= j1 && i < j2;
          if (mask)
            mask[j * kw + i] = on;
          count += on;
        }
    }
  return count;
}
