/* accel-attention-family-private.h: what the attention op types share:
 * the mask and scale parameters and the checks of heads, slopes and
 * results. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-op-check-private.h"

G_BEGIN_DECLS

/* The mask and scale fields that `attention`, `attention-backward`,
 * `attention-varlen` and `attention-varlen-backward` lay out alike,
 * `causal` to `sinks`: one parameter table serves the four, installed at
 * each op's `causal` member. */
typedef struct {
  /* Mask keys after each query's aligned position (bottom-right aligned: query
   * `i` sees key `j` iff `j <= i + Sk - Sq`; in the varlen ops, within each
   * sequence). */
  gboolean causal; /*< default=FALSE >*/
  /* If >= 0, a query sees at most this many keys before its aligned position;
   * -1 is unbounded (in the varlen ops, within each sequence). */
  int window_left; /*< min=-1 max=G_MAXINT default=-1 >*/
  /* If >= 0, a query sees at most this many keys after its aligned position;
   * -1 is unbounded (in the varlen ops, within each sequence). */
  int window_right; /*< min=-1 max=G_MAXINT default=-1 >*/
  /* The logit scale; 0 means `1 / sqrt (D)`. */
  double scale; /*< min=0.0 max=G_MAXDOUBLE default=0.0 >*/
  /* If > 0, each scaled logit `s` becomes `softcap tanh (s / softcap)`. */
  double softcap; /*< min=0.0 max=G_MAXDOUBLE default=0.0 >*/
  /* Optional ALiBi slopes, f32 `[Hq]` or `[B, Hq]`: the logit of query `i` and
   * key `j` in head `h` gains `-slope[h] |i + Sk - Sq - j|` after scaling and
   * soft-capping (in the varlen ops, positions count within each sequence). */
  AccelBuffer *alibi_slopes; /*< read >*/
  /* Keys `j < sinks` (in the varlen ops, the leading keys of each sequence)
   * are exempt from the left window. */
  int sinks; /*< min=0 max=G_MAXINT default=0 >*/
} AccelAttentionMaskFields;

#define ACCEL_ATTENTION_MASK_FIELD_AT_(T, f) \
  (G_STRUCT_OFFSET (T, f) - G_STRUCT_OFFSET (T, causal) == G_STRUCT_OFFSET (AccelAttentionMaskFields, f))
/* Refuses to compile unless @T lays the mask fields out as
 * AccelAttentionMaskFields does. */
#define ACCEL_ATTENTION_MASK_LAYOUT_CHECK(T)                                                    \
  G_STATIC_ASSERT (ACCEL_ATTENTION_MASK_FIELD_AT_ (T, window_left)                            \
                   && ACCEL_ATTENTION_MASK_FIELD_AT_ (T, window_right)                        \
                   && ACCEL_ATTENTION_MASK_FIELD_AT_ (T, scale)                               \
                   && ACCEL_ATTENTION_MASK_FIELD_AT_ (T, softcap)                             \
                   && ACCEL_ATTENTION_MASK_FIELD_AT_ (T, alibi_slopes)                        \
                   && ACCEL_ATTENTION_MASK_FIELD_AT_ (T, sinks))

/* Installs the mask and scale parameters on @klass, whose instance struct
 * has them from its member `causal` at @causal_offset. */
void _accel_attention_install_mask_params (AccelOpClass *klass, gsize causal_offset);

/* `q` has @hq heads and the keys @hkv: grouped-query needs hq % hkv == 0. */
gboolean _accel_attention_check_heads (AccelOp *op, gint64 hq, gint64 hkv, GError **error);

/* Optional f32 ALiBi slopes, `[hq]` or `[batch, hq]`. */
gboolean _accel_attention_check_slopes (AccelOp *op, AccelBuffer *slopes, gint64 batch, gint64 hq, GError **error);

/* Optional f32 `lse` of the dims given. */
gboolean _accel_attention_check_lse (AccelOp *op, AccelBuffer *lse, const gint64 *dims, guint rank, GError **error);

/* @names (NULL-terminated) all have @rank dims, are contiguous and have the
 * dtype of the first one, which is one of @dtypes. */
gboolean _accel_attention_check_tensors (AccelOp *op,
                                         const char *const *names,
                                         guint rank,
                                         const AccelDType *dtypes,
                                         guint n_dtypes,
                                         GError **error);

/* Dense q `[B, Hq, Sq, D]`, k `[B, Hkv, Sk, D]`, v `[B, Hkv, Sk, Dv]`, out
 * `[B, Hq, Sq, Dv]`, all rank 4 already; then the optional @lse
 * `[B, Hq, Sq]` and ALiBi slopes. */
gboolean _accel_attention_check_dense_dims (AccelOp *op,
                                            AccelBuffer *q,
                                            AccelBuffer *k,
                                            AccelBuffer *v,
                                            AccelBuffer *out,
                                            AccelBuffer *lse,
                                            AccelBuffer *alibi_slopes,
                                            GError **error);

/* Packed q `[Tq, Hq, D]`, k `[Tk, Hkv, D]`, v `[Tk, Hkv, Dv]`, out
 * `[Tq, Hq, Dv]` and the two cu-seqlens `[B + 1]` of a varlen op (ranks and
 * dtypes checked already); then its optional @lse `[Hq, Tq]` and ALiBi
 * slopes. */
gboolean _accel_attention_check_varlen_dims (AccelOp *op,
                                             AccelBuffer *q,
                                             AccelBuffer *k,
                                             AccelBuffer *v,
                                             AccelBuffer *out,
                                             AccelBuffer *cu_seqlens_q,
                                             AccelBuffer *cu_seqlens_k,
                                             AccelBuffer *lse,
                                             AccelBuffer *alibi_slopes,
                                             GError **error);

/* A backward op's gradients each have the shape of what they are the
 * gradient of: dout as out, dq as q, dk as k, dv as v. */
gboolean _accel_attention_check_grads (AccelOp *op, GError **error);

G_END_DECLS
