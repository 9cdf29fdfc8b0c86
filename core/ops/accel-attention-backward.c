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
  if (!_accel_attention_check_dense_dims (op, self->q, self->k, self->v, self->out, self->lse,
                                          self->alibi_slopes, error))
    return FALSE;
  if (!_accel_attention_check_grads (op, error))
    return FALSE;
  return _accel_op_check_results_alias (op, error);
}

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelAttentionBackward, accel_attention_backward, "attention-backward",
                                "Gradients of scaled dot-product attention with respect to q, k and v",
                                _accel_attention_backward_params, accel_attention_backward_validate,
                                _accel_attention_install_mask_params (op_class, G_STRUCT_OFFSET (AccelAttentionBackward, causal));)
