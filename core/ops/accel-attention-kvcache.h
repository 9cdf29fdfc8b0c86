/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_ATTENTION_KVCACHE (accel_attention_kvcache_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelAttentionKvcache, accel_attention_kvcache, ACCEL, ATTENTION_KVCACHE, AccelOp)

struct _AccelAttentionKvcache {
  AccelOp parent_instance;

  /*< public >*/
  AccelBuffer *q;
  AccelBuffer *k_cache;
  AccelBuffer *v_cache;
  AccelBuffer *block_table;
  AccelBuffer *seqlens_k;
  AccelBuffer *out;
  AccelBuffer *lse;
  AccelBuffer *alibi_slopes;
  gboolean causal;
  int window_left;
  int window_right;
  int sinks;
  int num_splits;
  double scale;
  double softcap;
};

ACCEL_API
AccelOp *accel_attention_kvcache_new (AccelBuffer *q,
                                      AccelBuffer *k_cache,
                                      AccelBuffer *v_cache,
                                      AccelBuffer *block_table,
                                      AccelBuffer *seqlens_k,
                                      AccelBuffer *out);

G_END_DECLS
