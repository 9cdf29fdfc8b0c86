/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-attention-family-private.h"

/**
 * AccelAttentionVarlenBackward:
 *
 * The gradients of `attention-varlen` (see #AccelAttentionVarlen, whose
 * parameters must be the same as the forward pass's): each sequence's are
 * those #AccelAttentionBackward gives for it alone, packed as the inputs
 * are. Keys of a sequence without queries get zero gradients, and so do
 * the queries of a sequence without keys.
 *
 * The cu-seqlens values are checked as the forward pass's are (start at 0,
 * never decrease, end at `Tq` and `Tk`); bad ones fail the op with
 * %ACCEL_ERROR_INVALID_ARGUMENT naming the buffer and the first bad index.
 *
 * Types: f32, f64, f16, bf16, the same for every buffer but `lse` and the
 * cu-seqlens. All buffers contiguous.
 *
 * Op name: `attention-varlen-backward`.
 */

ACCEL_ATTENTION_MASK_LAYOUT_CHECK (AccelAttentionVarlenBackward);

static const AccelDType varlen_backward_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

static gboolean
accel_attention_varlen_backward_validate (AccelOp *op, GError **error)
{
  AccelAttentionVarlenBackward *self = ACCEL_ATTENTION_VARLEN_BACKWARD (op);
  static const char *const tensors[] = { "q", "k", "v", "out", "dout", "dq", "dk", "dv", NULL };
  static const char *const offsets[] = { "cu-seqlens-q", "cu-seqlens-k", NULL };
  static const AccelDType i32[] = { ACCEL_DTYPE_I32 };

  if (!_accel_attention_check_tensors (op, tensors, 3, varlen_backward_dtypes,
                                       G_N_ELEMENTS (varlen_backward_dtypes), error)
      || !_accel_attention_check_tensors (op, offsets, 1, i32, 1, error))
    return FALSE;

  if (!_accel_attention_check_varlen_dims (op, self->q, self->k, self->v, self->out, self->cu_seqlens_q,
                                           self->cu_seqlens_k, self->lse, self->alibi_slopes, error)
      || !_accel_attention_check_grads (op, error))
    return FALSE;
  return _accel_op_check_results_alias (op, error);
}

static const AccelOpParam attention_varlen_backward_params[] = {
  ACCEL_OP_BUFFER (AccelAttentionVarlenBackward, q, "q", "Packed queries `[Tq, Hq, D]`, as the forward pass's.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionVarlenBackward, k, "k", "Packed keys `[Tk, Hkv, D]`, as the forward pass's.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionVarlenBackward, v, "v", "Packed values `[Tk, Hkv, Dv]`, as the forward pass's.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionVarlenBackward, out, "out", "The forward pass's packed result `[Tq, Hq, Dv]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionVarlenBackward, dout, "dout",
                   "The gradient of the loss with respect to `out`, `[Tq, Hq, Dv]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionVarlenBackward, lse, "lse", "The forward pass's log-sum-exp `[Hq, Tq]`, f32.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionVarlenBackward, cu_seqlens_q, "cu-seqlens-q",
                   "The first query row of each sequence, then `Tq`: i32 `[B + 1]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionVarlenBackward, cu_seqlens_k, "cu-seqlens-k",
                   "The first key row of each sequence, then `Tk`: i32 `[B + 1]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionVarlenBackward, dq, "dq",
                   "Receives the gradient with respect to `q`, `[Tq, Hq, D]`.",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionVarlenBackward, dk, "dk",
                   "Receives the gradient with respect to `k`, `[Tk, Hkv, D]`, summed over the query heads of each "
                   "group.",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionVarlenBackward, dv, "dv",
                   "Receives the gradient with respect to `v`, `[Tk, Hkv, Dv]`, likewise.",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
};

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelAttentionVarlenBackward, accel_attention_varlen_backward,
                                "attention-varlen-backward",
                                "Gradients of attention over packed sequences (cu-seqlens) with respect to q, k and v",
                                attention_varlen_backward_params, accel_attention_varlen_backward_validate,
                                _accel_attention_install_mask_params (
                                  op_class, G_STRUCT_OFFSET (AccelAttentionVarlenBackward, causal));)

/**
 * accel_attention_varlen_backward_new:
 * @q: (transfer none): packed queries `[Tq, Hq, D]`
 * @k: (transfer none): packed keys `[Tk, Hkv, D]`
 * @v: (transfer none): packed values `[Tk, Hkv, Dv]`
 * @out: (transfer none): the packed forward result `[Tq, Hq, Dv]`
 * @dout: (transfer none): the gradient of the result
 * @lse: (transfer none): the forward log-sum-exp `[Hq, Tq]`, f32
 * @cu_seqlens_q: (transfer none): i32 `[B + 1]`, the first query row of each sequence, then `Tq`
 * @cu_seqlens_k: (transfer none): i32 `[B + 1]`, the first key row of each sequence, then `Tk`
 * @dq: (transfer none): receives the gradient of @q
 * @dk: (transfer none): receives the gradient of @k
 * @dv: (transfer none): receives the gradient of @v
 *
 * Makes an `attention-varlen-backward` op (not causal, no window, default
 * scale); set the mask and scale with g_object_set() to match the forward
 * pass.
 *
 * Returns: (transfer full): a new #AccelAttentionVarlenBackward
 */
AccelOp *
accel_attention_varlen_backward_new (AccelBuffer *q, AccelBuffer *k, AccelBuffer *v, AccelBuffer *out,
                                     AccelBuffer *dout, AccelBuffer *lse, AccelBuffer *cu_seqlens_q,
                                     AccelBuffer *cu_seqlens_k, AccelBuffer *dq, AccelBuffer *dk, AccelBuffer *dv)
{
  AccelBuffer *all[] = { q, k, v, out, dout, lse, cu_seqlens_q, cu_seqlens_k, dq, dk, dv };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    g_return_val_if_fail (all[i] == NULL || ACCEL_IS_BUFFER (all[i]), NULL);

  return g_object_new (ACCEL_TYPE_ATTENTION_VARLEN_BACKWARD, "q", q, "k", k, "v", v, "out", out, "dout", dout,
                       "lse", lse, "cu-seqlens-q", cu_seqlens_q, "cu-seqlens-k", cu_seqlens_k, "dq", dq, "dk", dk,
                       "dv", dv, NULL);
}
