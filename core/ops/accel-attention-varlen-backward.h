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
  AccelBuffer *q;
  AccelBuffer *k;
  AccelBuffer *v;
  AccelBuffer *out;
  AccelBuffer *dout;
  AccelBuffer *lse;
  AccelBuffer *cu_seqlens_q;
  AccelBuffer *cu_seqlens_k;
  AccelBuffer *dq;
  AccelBuffer *dk;
  AccelBuffer *dv;
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
