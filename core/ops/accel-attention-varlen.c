/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-attention-family-private.h"

/**
 * AccelAttentionVarlen:
 *
 * Attention over a batch of sequences of different lengths packed one after
 * the other. Sequence `b` owns query rows `cu_seqlens_q[b] ..
 * cu_seqlens_q[b+1] - 1` and key rows `cu_seqlens_k[b] .. cu_seqlens_k[b+1] - 1`,
 * and is computed as #AccelAttention would with `Sq` and `Sk` its lengths
 * (the mask bottom-right aligned within the sequence).
 *
 * The cu-seqlens values must start at 0, never decrease and end at `Tq`
 * (`Tk`); the kernel checks them and fails with %ACCEL_ERROR_INVALID_ARGUMENT
 * naming the buffer and the first bad index.
 *
 * Types: f32, f64, f16, bf16 (the same for `q`, `k`, `v`, `out`). All buffers
 * contiguous.
 *
 * Op name: `attention-varlen`.
 */

ACCEL_ATTENTION_MASK_LAYOUT_CHECK (AccelAttentionVarlen);

static const AccelDType varlen_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

static gboolean
accel_attention_varlen_validate (AccelOp *op, GError **error)
{
  AccelAttentionVarlen *self = ACCEL_ATTENTION_VARLEN (op);
  static const char *const tensors[] = { "q", "k", "v", "out", NULL };
  static const char *const offsets[] = { "cu-seqlens-q", "cu-seqlens-k", NULL };
  static const AccelDType i32[] = { ACCEL_DTYPE_I32 };

  if (!_accel_attention_check_tensors (op, tensors, 3, varlen_dtypes, G_N_ELEMENTS (varlen_dtypes), error)
      || !_accel_attention_check_tensors (op, offsets, 1, i32, 1, error))
    return FALSE;

  if (!_accel_attention_check_varlen_dims (op, self->q, self->k, self->v, self->out, self->cu_seqlens_q,
                                           self->cu_seqlens_k, self->lse, self->alibi_slopes, error))
    return FALSE;
  return _accel_op_check_results_alias (op, error);
}

static const AccelOpParam attention_varlen_params[] = {
  ACCEL_OP_BUFFER (AccelAttentionVarlen, q, "q", "Packed queries `[Tq, Hq, D]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionVarlen, k, "k", "Packed keys `[Tk, Hkv, D]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionVarlen, v, "v", "Packed values `[Tk, Hkv, Dv]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionVarlen, out, "out", "The packed result `[Tq, Hq, Dv]`.",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionVarlen, lse, "lse",
                   "If set, the log-sum-exp of each row's final logits `[Hq, Tq]`, f32.",
                   ACCEL_ACCESS_WRITE, 0),
  ACCEL_OP_BUFFER (AccelAttentionVarlen, cu_seqlens_q, "cu-seqlens-q",
                   "The query row where each sequence starts, and `Tq` last: i32 `[B + 1]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionVarlen, cu_seqlens_k, "cu-seqlens-k",
                   "The key row where each sequence starts, and `Tk` last: i32 `[B + 1]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
};

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelAttentionVarlen, accel_attention_varlen, "attention-varlen",
                                "Attention over packed sequences of different lengths (cu-seqlens)",
                                attention_varlen_params, accel_attention_varlen_validate,
                                _accel_attention_install_mask_params (op_class, G_STRUCT_OFFSET (AccelAttentionVarlen, causal));)

/**
 * accel_attention_varlen_new:
 * @q: (transfer none): packed queries `[Tq, Hq, D]`
 * @k: (transfer none): packed keys `[Tk, Hkv, D]`
 * @v: (transfer none): packed values `[Tk, Hkv, Dv]`
 * @out: (transfer none): the packed result `[Tq, Hq, Dv]`
 * @cu_seqlens_q: (transfer none): i32 `[B + 1]`, the first query row of each sequence, then `Tq`
 * @cu_seqlens_k: (transfer none): i32 `[B + 1]`, the first key row of each sequence, then `Tk`
 *
 * Makes an `attention-varlen` op (not causal, no window, default scale, no
 * lse); set the other properties with g_object_set().
 *
 * Returns: (transfer full): a new #AccelAttentionVarlen
 */
AccelOp *
accel_attention_varlen_new (AccelBuffer *q, AccelBuffer *k, AccelBuffer *v, AccelBuffer *out,
                            AccelBuffer *cu_seqlens_q, AccelBuffer *cu_seqlens_k)
{
  AccelBuffer *all[] = { q, k, v, out, cu_seqlens_q, cu_seqlens_k };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    g_return_val_if_fail (all[i] == NULL || ACCEL_IS_BUFFER (all[i]), NULL);

  return g_object_new (ACCEL_TYPE_ATTENTION_VARLEN, "q", q, "k", k, "v", v, "out", out,
                       "cu-seqlens-q", cu_seqlens_q, "cu-seqlens-k", cu_seqlens_k, NULL);
}
