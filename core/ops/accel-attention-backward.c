/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-attention-family-private.h"

/**
 * AccelAttentionBackward:
 *
 * The gradients of `attention` (see #AccelAttention, whose parameters must
 * be the same as the forward pass's). With `P = exp (s - lse)` recomputed
 * from `lse`, `dV = Pᵀ dO`, `dP = dO Vᵀ`, `dS = P ∘ (dP - rowsum (dO ∘ O))`
 * (times `1 - tanh²` under the soft cap), `dQ = scale dS K` and
 * `dK = scale dSᵀ Q`.
 *
 * Types: f32, f64, f16, bf16, the same for every buffer but `lse`. All
 * buffers contiguous.
 *
 * Op name: `attention-backward`.
 */

ACCEL_ATTENTION_MASK_LAYOUT_CHECK (AccelAttentionBackward);

static const AccelDType attention_backward_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

static gboolean
accel_attention_backward_validate (AccelOp *op, GError **error)
{
  AccelAttentionBackward *self = ACCEL_ATTENTION_BACKWARD (op);
  static const char *const tensors[] = { "q", "k", "v", "out", "dout", "dq", "dk", "dv", NULL };

  if (!_accel_attention_check_tensors (op, tensors, 4, attention_backward_dtypes,
                                       G_N_ELEMENTS (attention_backward_dtypes), error))
    return FALSE;
  gint64 B, Hq, Sq;
  if (!_accel_attention_check_dense_dims (op, self->q, self->k, self->v, self->out, &B, &Hq, &Sq, error))
    return FALSE;
  const gint64 lse_dims[3] = { B, Hq, Sq };
  if (!_accel_attention_check_lse (op, self->lse, lse_dims, 3, error)
      || !_accel_attention_check_slopes (op, self->alibi_slopes, B, Hq, error))
    return FALSE;
  if (!_accel_attention_check_grads (op, error))
    return FALSE;
  return _accel_op_check_results_alias (op, error);
}

static const AccelOpParam attention_backward_params[] = {
  ACCEL_OP_BUFFER (AccelAttentionBackward, q, "q", "Queries `[B, Hq, Sq, D]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionBackward, k, "k", "Keys `[B, Hkv, Sk, D]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionBackward, v, "v", "Values `[B, Hkv, Sk, Dv]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionBackward, out, "out", "The forward result `[B, Hq, Sq, Dv]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionBackward, dout, "dout", "The gradient of the loss with respect to `out`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionBackward, lse, "lse", "The forward pass's log-sum-exp `[B, Hq, Sq]`, f32.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionBackward, dq, "dq", "The gradient with respect to `q` (written).",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionBackward, dk, "dk",
                   "The gradient with respect to `k` (written; summed over the query heads of each group).",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionBackward, dv, "dv", "The gradient with respect to `v` (written; likewise).",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
};

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelAttentionBackward, accel_attention_backward, "attention-backward",
                                "Gradients of scaled dot-product attention with respect to q, k and v",
                                attention_backward_params, accel_attention_backward_validate,
                                _accel_attention_install_mask_params (op_class, G_STRUCT_OFFSET (AccelAttentionBackward, causal));)

/**
 * accel_attention_backward_new:
 * @q: (transfer none): queries `[B, Hq, Sq, D]`
 * @k: (transfer none): keys `[B, Hkv, Sk, D]`
 * @v: (transfer none): values `[B, Hkv, Sk, Dv]`
 * @out: (transfer none): the forward result `[B, Hq, Sq, Dv]`
 * @dout: (transfer none): the gradient of the result
 * @lse: (transfer none): the forward log-sum-exp `[B, Hq, Sq]`, f32
 * @dq: (transfer none): receives the gradient of @q
 * @dk: (transfer none): receives the gradient of @k
 * @dv: (transfer none): receives the gradient of @v
 *
 * Makes an `attention-backward` op (not causal, no window, default scale);
 * set the mask and scale with g_object_set() to match the forward pass.
 *
 * Returns: (transfer full): a new #AccelAttentionBackward
 */
AccelOp *
accel_attention_backward_new (AccelBuffer *q, AccelBuffer *k, AccelBuffer *v,
                              AccelBuffer *out, AccelBuffer *dout, AccelBuffer *lse,
                              AccelBuffer *dq, AccelBuffer *dk, AccelBuffer *dv)
{
  AccelBuffer *all[] = { q, k, v, out, dout, lse, dq, dk, dv };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    g_return_val_if_fail (all[i] == NULL || ACCEL_IS_BUFFER (all[i]), NULL);

  return g_object_new (ACCEL_TYPE_ATTENTION_BACKWARD, "q", q, "k", k, "v", v, "out", out, "dout", dout,
                       "lse", lse, "dq", dq, "dk", dk, "dv", dv, NULL);
}
