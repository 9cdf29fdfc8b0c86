/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_SOFTMAX (accel_softmax_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelSoftmax, accel_softmax, ACCEL, SOFTMAX, AccelOp)

struct _AccelSoftmax {
  AccelOp parent_instance;

  /*< public >*/
  /* Input: f32, f64, f16 or bf16, contiguous */
  AccelBuffer *src; /*< read required >*/
  /* Result, same shape and dtype as src (may be src) */
  AccelBuffer *dst; /*< write required >*/
};

ACCEL_API
AccelOp *accel_softmax_new (AccelBuffer *src, AccelBuffer *dst);

G_END_DECLS
