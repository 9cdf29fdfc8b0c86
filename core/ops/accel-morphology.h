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
  AccelImage src;
  AccelImage dst;
  AccelMorphologyOp operation;
  AccelMorphologyShape shape;
  int ksize;
  int ksize_y;
};

ACCEL_API
AccelOp *accel_morphology_new (AccelBuffer *src, AccelBuffer *dst, AccelMorphologyOp operation);
ACCEL_API
guint accel_morphology_get_element (AccelMorphology *self, guint8 *mask, int *width, int *height);

G_END_DECLS
