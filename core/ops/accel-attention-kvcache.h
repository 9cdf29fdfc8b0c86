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
  /* Queries `[B, Hq, Sq, D]`. */
  AccelBuffer *q; /*< read required >*/
  /* The key pages `[P, page, Hkv, D]`. */
  AccelBuffer *k_cache; /*< read required >*/
  /* The value pages `[P, page, Hkv, Dv]`. */
  AccelBuffer *v_cache; /*< read required >*/
  /* I32 `[B, max_blocks]`: logical block `n` of sequence `b` is page
   * `block_table[b, n]`. */
  AccelBuffer *block_table; /*< read required >*/
  /* I32 `[B]`: the number of cached keys of each sequence. */
  AccelBuffer *seqlens_k; /*< read required >*/
  /* The result `[B, Hq, Sq, Dv]`. */
  AccelBuffer *out; /*< write required >*/
  /* Optional log-sum-exp of each row's logits [B, Hq, Sq], f32 */
  AccelBuffer *lse; /*< write >*/
  /* Optional ALiBi slope of each query head [Hq] or [B, Hq], f32 */
  AccelBuffer *alibi_slopes; /*< read >*/
  /* Mask keys after each query's position (`L - Sq + i`). */
  gboolean causal; /*< default=FALSE >*/
  /* If >= 0, a query sees at most this many keys before its position. */
  int window_left; /*< min=-1 max=G_MAXINT default=-1 >*/
  /* If >= 0, a query sees at most this many keys after its position. */
  int window_right; /*< min=-1 max=G_MAXINT default=-1 >*/
  /* Keys `j < sinks` are exempt from the left window. */
  int sinks; /*< min=0 max=G_MAXINT default=0 >*/
  /* How many parts a kernel may split each sequence's keys into; 0 lets the
   * kernel choose. A hint: the result does not depend on it beyond rounding. */
  int num_splits; /*< min=0 max=1024 default=0 >*/
  /* The logit scale; 0 means `1 / sqrt (D)`. */
  double scale; /*< min=0.0 max=G_MAXDOUBLE default=0.0 >*/
  /* If > 0, each scaled logit `s` becomes `softcap tanh (s / softcap)`. */
  double softcap; /*< min=0.0 max=G_MAXDOUBLE default=0.0 >*/
};

ACCEL_API
AccelOp *accel_attention_kvcache_new (AccelBuffer *q,
                                      AccelBuffer *k_cache,
                                      AccelBuffer *v_cache,
                                      AccelBuffer *block_table,
                                      AccelBuffer *seqlens_k,
                                      AccelBuffer *out);

G_END_DECLS
