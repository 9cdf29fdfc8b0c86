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

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelAttentionVarlenBackward, accel_attention_varlen_backward,
                                "attention-varlen-backward",
                                "Gradients of attention over packed sequences (cu-seqlens) with respect to q, k and v",
                                _accel_attention_varlen_backward_params, accel_attention_varlen_backward_validate,
                                _accel_attention_install_mask_params (
                                  op_class, G_STRUCT_OFFSET (AccelAttentionVarlenBackward, causal));)
