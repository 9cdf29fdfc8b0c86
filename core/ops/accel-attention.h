/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_ATTENTION (accel_attention_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelAttention, accel_attention, ACCEL, ATTENTION, AccelOp)

struct _AccelAttention {
  AccelOp parent_instance;

  /*< public >*/
  AccelBuffer *q;
  AccelBuffer *k;
  AccelBuffer *v;
  AccelBuffer *out;
  AccelBuffer *lse;
  gboolean causal;
  int window_left;
  int window_right;
  double scale;
  double softcap;
  AccelBuffer *alibi_slopes;
  int sinks;
  double q_descale;
  double k_descale;
  double v_descale;
};

ACCEL_API
AccelOp *accel_attention_new (AccelBuffer *q, AccelBuffer *k, AccelBuffer *v, AccelBuffer *out);

G_END_DECLS
