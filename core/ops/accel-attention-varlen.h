/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_ATTENTION_VARLEN (accel_attention_varlen_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelAttentionVarlen, accel_attention_varlen, ACCEL, ATTENTION_VARLEN, AccelOp)

struct _AccelAttentionVarlen {
  AccelOp parent_instance;

  /*< public >*/
  /* Packed queries `[Tq, Hq, D]`. */
  AccelBuffer *q; /*< read required >*/
  /* Packed keys `[Tk, Hkv, D]`. */
  AccelBuffer *k; /*< read required >*/
  /* Packed values `[Tk, Hkv, Dv]`. */
  AccelBuffer *v; /*< read required >*/
  /* The packed result `[Tq, Hq, Dv]`. */
  AccelBuffer *out; /*< write required >*/
  /* If set, the log-sum-exp of each row's final logits `[Hq, Tq]`, f32. */
  AccelBuffer *lse; /*< write >*/
  /* The query row where each sequence starts, and `Tq` last: i32 `[B + 1]`. */
  AccelBuffer *cu_seqlens_q; /*< read required >*/
  /* The key row where each sequence starts, and `Tk` last: i32 `[B + 1]`. */
  AccelBuffer *cu_seqlens_k; /*< read required >*/
  gboolean causal; /*< family=AccelAttentionMaskFields >*/
  int window_left; /*< family=AccelAttentionMaskFields >*/
  int window_right; /*< family=AccelAttentionMaskFields >*/
  double scale; /*< family=AccelAttentionMaskFields >*/
  double softcap; /*< family=AccelAttentionMaskFields >*/
  AccelBuffer *alibi_slopes; /*< family=AccelAttentionMaskFields >*/
  int sinks; /*< family=AccelAttentionMaskFields >*/
};

ACCEL_API
AccelOp *accel_attention_varlen_new (AccelBuffer *q, AccelBuffer *k, AccelBuffer *v, AccelBuffer *out,
                                     AccelBuffer *cu_seqlens_q, AccelBuffer *cu_seqlens_k);

G_END_DECLS
