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

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelAttentionVarlen, accel_attention_varlen, "attention-varlen",
                                "Attention over packed sequences of different lengths (cu-seqlens)",
                                _accel_attention_varlen_params, accel_attention_varlen_validate,
                                _accel_attention_install_mask_params (op_class, G_STRUCT_OFFSET (AccelAttentionVarlen, causal));)
