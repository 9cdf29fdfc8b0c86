/* accel-image-plan.h: how a resize or convert-color op samples its
 * source, worked out once for every backend's kernel: for each
 * destination sample plane, the source sample planes it reads with their
 * axis maps (accel-image-sampling.h), which source channel each colour
 * component is, and what each destination channel takes.
 *
 * For kernels (plain C, not part of the introspected API). Include it
 * directly: `#include <accel-image-plan.h>`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#ifndef __GI_SCANNER__

#include "accel.h"
#include "accel-image-sampling.h"

G_BEGIN_DECLS

/* What a destination channel takes: a row of the colour transform (0 to
 * 2), the source's alpha, or full opacity. */
enum {
  ACCEL_IMAGE_TAKE_ALPHA = 3,
  ACCEL_IMAGE_TAKE_OPAQUE = 4,
};

typedef struct {
  int n_sources;
  int source[ACCEL_IMAGE_MAX_PLANES];      /* a source sample plane */
  AccelImageAxis ax[ACCEL_IMAGE_MAX_PLANES];
  AccelImageAxis ay[ACCEL_IMAGE_MAX_PLANES];
  /* Y/R, U/G, V/B and alpha: an index into the sources and a channel of
   * it, or -1 where the source has none. */
  int comp_source[4];
  int comp_channel[4];
  int take[4];                             /* per destination channel */
} AccelImageTarget;

typedef struct {
  AccelImageLayout src;
  AccelImageLayout dst;
  gboolean convert;                        /* FALSE: each plane from its own */
  float transform[12];
  AccelImageTarget targets[ACCEL_IMAGE_MAX_PLANES];   /* one per destination sample plane */
} AccelImagePlan;

ACCEL_API
void accel_image_plan_resize (AccelResize *op, AccelImagePlan *plan);
ACCEL_API
void accel_image_plan_convert (AccelConvertColor *op, AccelImagePlan *plan);
ACCEL_API
void accel_image_plan_of (AccelOp *op, AccelImagePlan *plan, AccelBuffer **src, AccelBuffer **dst);

G_END_DECLS

#endif /* __GI_SCANNER__ */
