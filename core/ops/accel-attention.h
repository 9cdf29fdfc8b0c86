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
  /* Queries `[B, Hq, Sq, D]`. */
  AccelBuffer *q; /*< read required >*/
  /* Keys `[B, Hkv, Sk, D]`. */
  AccelBuffer *k; /*< read required >*/
  /* Values `[B, Hkv, Sk, Dv]`. */
  AccelBuffer *v; /*< read required >*/
  /* The result `[B, Hq, Sq, Dv]`. */
  AccelBuffer *out; /*< write required >*/
  /* If set, the log-sum-exp of each row's final logits `[B, Hq, Sq]`, f32. */
  AccelBuffer *lse; /*< write >*/
  gboolean causal; /*< family=AccelAttentionMaskFields >*/
  int window_left; /*< family=AccelAttentionMaskFields >*/
  int window_right; /*< family=AccelAttentionMaskFields >*/
  double scale; /*< family=AccelAttentionMaskFields >*/
  double softcap; /*< family=AccelAttentionMaskFields >*/
  AccelBuffer *alibi_slopes; /*< family=AccelAttentionMaskFields >*/
  int sinks; /*< family=AccelAttentionMaskFields >*/
  /* The per-tensor scale of fp8 `q`: the logits are multiplied by `q_descale
   * k_descale`. Finite and > 0; must be 1.0 unless the inputs are fp8-e4m3. */
  double q_descale; /*< min=0.0 max=G_MAXDOUBLE default=1.0 >*/
  /* The per-tensor scale of fp8 `k`, as `q-descale`. */
  double k_descale; /*< min=0.0 max=G_MAXDOUBLE default=1.0 >*/
  /* The per-tensor scale of fp8 `v`: the result is `v_descale (P v)`. Finite
   * and > 0; must be 1.0 unless the inputs are fp8-e4m3. */
  double v_descale; /*< min=0.0 max=G_MAXDOUBLE default=1.0 >*/
};

ACCEL_API
AccelOp *accel_attention_new (AccelBuffer *q, AccelBuffer *k, AccelBuffer *v, AccelBuffer *out);

G_END_DECLS
