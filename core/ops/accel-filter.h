/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-image.h"

G_BEGIN_DECLS

/**
 * ACCEL_FILTER_MAX_KSIZE:
 *
 * The largest kernel side `filter` and `morphology` take.
 */
#define ACCEL_FILTER_MAX_KSIZE 255

#define ACCEL_TYPE_FILTER (accel_filter_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelFilter, accel_filter, ACCEL, FILTER, AccelOp)

struct _AccelFilter {
  AccelOp parent_instance;

  /*< public >*/
  /* The source image's buffer. */
  AccelImage src; /*< image >*/
  /* The destination image's buffer. */
  AccelImage dst; /*< image >*/
  /* What to compute. */
  AccelFilterKind kind; /*< default=ACCEL_FILTER_GAUSSIAN >*/
  /* The Gaussian's standard deviation along rows, in pixels. */
  double sigma; /*< min=0.0 max=100.0 default=1.0 >*/
  /* The Gaussian's standard deviation down columns; 0 for `sigma`. */
  double sigma_y; /*< min=0.0 max=100.0 default=0.0 >*/
  /* The kernel width; 0 for `2 ceil (3 sigma) + 1` (Gaussian) or 3. */
  int ksize; /*< min=0 max=ACCEL_FILTER_MAX_KSIZE default=0 >*/
  /* The kernel height; 0 for the width. */
  int ksize_y; /*< min=0 max=ACCEL_FILTER_MAX_KSIZE default=0 >*/
  /* The order of the horizontal derivative (Sobel, Scharr). */
  int dx; /*< min=0 max=2 default=1 >*/
  /* The order of the vertical derivative (Sobel, Scharr). */
  int dy; /*< min=0 max=2 default=0 >*/
  /* The user's kernel: a `[kw]` f32 row kernel for ACCEL_FILTER_SEPARABLE, a
   * `[kh, kw]` f32 2-D kernel for ACCEL_FILTER_KERNEL; unused by the other
   * kinds. */
  AccelBuffer *kernel; /*< read >*/
  /* The user's `[kh]` f32 column kernel for ACCEL_FILTER_SEPARABLE. */
  AccelBuffer *kernel_y; /*< read >*/
  /* What is read outside the image. */
  AccelBorderMode border; /*< default=ACCEL_BORDER_REFLECT_101 >*/
  /* The value read outside the image with ACCEL_BORDER_CONSTANT, in code
   * values of the sample. */
  double border_value; /*< min=-1e9 max=1e9 default=0.0 >*/
  /* A factor applied to each sum. */
  double scale; /*< min=-1e9 max=1e9 default=1.0 >*/
  /* A value added to each scaled sum. */
  double delta; /*< min=-1e9 max=1e9 default=0.0 >*/
};

ACCEL_API
AccelOp *accel_filter_new (AccelBuffer *src, AccelBuffer *dst, AccelFilterKind kind);
ACCEL_API
gboolean accel_filter_get_separable_kernel (AccelFilter *self,
                                            float *kx,
                                            guint *nx,
                                            float *ky,
                                            guint *ny);

G_END_DECLS
