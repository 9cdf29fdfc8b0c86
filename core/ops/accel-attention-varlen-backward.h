/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_ATTENTION_VARLEN_BACKWARD (accel_attention_varlen_backward_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelAttentionVarlenBackward, accel_attention_varlen_backward, ACCEL, ATTENTION_VARLEN_BACKWARD,
                      AccelOp)

struct _AccelAttentionVarlenBackward {
  AccelOp parent_instance;

  /*< public >*/
  /* Packed queries `[Tq, Hq, D]`, as the forward pass's. */
  AccelBuffer *q; /*< read required >*/
  /* Packed keys `[Tk, Hkv, D]`, as the forward pass's. */
  AccelBuffer *k; /*< read required >*/
  /* Packed values `[Tk, Hkv, Dv]`, as the forward pass's. */
  AccelBuffer *v; /*< read required >*/
  /* The forward pass's packed result `[Tq, Hq, Dv]`. */
  AccelBuffer *out; /*< read required >*/
  /* The gradient of the loss with respect to `out`, `[Tq, Hq, Dv]`. */
  AccelBuffer *dout; /*< read required >*/
  /* The forward pass's log-sum-exp `[Hq, Tq]`, f32. */
  AccelBuffer *lse; /*< read required >*/
  /* The first query row of each sequence, then `Tq`: i32 `[B + 1]`. */
  AccelBuffer *cu_seqlens_q; /*< read required >*/
  /* The first key row of each sequence, then `Tk`: i32 `[B + 1]`. */
  AccelBuffer *cu_seqlens_k; /*< read required >*/
  /* Receives the gradient with respect to `q`, `[Tq, Hq, D]`. */
  AccelBuffer *dq; /*< write required >*/
  /* Receives the gradient with respect to `k`, `[Tk, Hkv, D]`, summed over the
   * query heads of each group. */
  AccelBuffer *dk; /*< write required >*/
  /* Receives the gradient with respect to `v`, `[Tk, Hkv, Dv]`, likewise. */
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
AccelOp *accel_attention_varlen_backward_new (AccelBuffer *q, AccelBuffer *k, AccelBuffer *v, AccelBuffer *out,
                                              AccelBuffer *dout, AccelBuffer *lse, AccelBuffer *cu_seqlens_q,
                                              AccelBuffer *cu_seqlens_k, AccelBuffer *dq, AccelBuffer *dk,
                                              AccelBuffer *dv);

G_END_DECLS
