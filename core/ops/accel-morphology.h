/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-image.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_MORPHOLOGY (accel_morphology_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelMorphology, accel_morphology, ACCEL, MORPHOLOGY, AccelOp)

struct _AccelMorphology {
  AccelOp parent_instance;

  /*< public >*/
  /* The source image's buffer. */
  AccelImage src; /*< image >*/
  /* The destination image's buffer. */
  AccelImage dst; /*< image >*/
  /* Erode, dilate, open or close. */
  AccelMorphologyOp operation; /*< default=ACCEL_MORPHOLOGY_ERODE >*/
  /* Structuring element: rect or ellipse */
  AccelMorphologyShape shape; /*< default=ACCEL_MORPHOLOGY_RECT >*/
  /* The structuring element's width. */
  int ksize; /*< min=1 max=ACCEL_FILTER_MAX_KSIZE default=3 >*/
  /* The structuring element's height; 0 for its width. */
  int ksize_y; /*< min=0 max=ACCEL_FILTER_MAX_KSIZE default=0 >*/
};

ACCEL_API
AccelOp *accel_morphology_new (AccelBuffer *src, AccelBuffer *dst, AccelMorphologyOp operation);
ACCEL_API
guint accel_morphology_get_element (AccelMorphology *self, guint8 *mask, int *width, int *height);

G_END_DECLS
