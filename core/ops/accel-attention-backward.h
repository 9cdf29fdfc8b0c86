/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_ATTENTION_BACKWARD (accel_attention_backward_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelAttentionBackward, accel_attention_backward, ACCEL, ATTENTION_BACKWARD, AccelOp)

struct _AccelAttentionBackward {
  AccelOp parent_instance;

  /*< public >*/
  /* Queries `[B, Hq, Sq, D]`. */
  AccelBuffer *q; /*< read required >*/
  /* Keys `[B, Hkv, Sk, D]`. */
  AccelBuffer *k; /*< read required >*/
  /* Values `[B, Hkv, Sk, Dv]`. */
  AccelBuffer *v; /*< read required >*/
  /* The forward result `[B, Hq, Sq, Dv]`. */
  AccelBuffer *out; /*< read required >*/
  /* The gradient of the loss with respect to `out`. */
  AccelBuffer *dout; /*< read required >*/
  /* The forward pass's log-sum-exp `[B, Hq, Sq]`, f32. */
  AccelBuffer *lse; /*< read required >*/
  /* The gradient with respect to `q` (written). */
  AccelBuffer *dq; /*< write required >*/
  /* The gradient with respect to `k` (written; summed over the query heads of
   * each group). */
  AccelBuffer *dk; /*< write required >*/
  /* The gradient with respect to `v` (written; likewise). */
  AccelBuffer *dv; /*< write required >*/
  gboolean causal; /*< family=AccelAttentionMaskFields >*/
  int window_left; /*< family=AccelAttentionMaskFields >*/
  int window_right; /*< family=AccelAttentionMaskFields >*/
  double scale; /*< family=AccelAttentionMaskFields >*/
  double softcap; /*< family=AccelAttentionMaskFields >*/
  AccelBuffer *alibi_slopes; /*< family=AccelAttentionMaskFields >*/
  int sinks; /*< family=AccelAttentionMaskFields >*/
};

ACCEL_API
AccelOp *accel_attention_backward_new (AccelBuffer *q, AccelBuffer *k, AccelBuffer *v,
                                       AccelBuffer *out, AccelBuffer *dout, AccelBuffer *lse,
                                       AccelBuffer *dq, AccelBuffer *dk, AccelBuffer *dv);

G_END_DECLS
