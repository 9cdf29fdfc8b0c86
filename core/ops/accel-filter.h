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
  AccelImage src;
  AccelImage dst;
  AccelFilterKind kind;
  double sigma;
  double sigma_y;
  int ksize;
  int ksize_y;
  int dx;
  int dy;
  AccelBuffer *kernel;
  AccelBuffer *kernel_y;
  AccelBorderMode border;
  double border_value;
  double scale;
  double delta;
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
