/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-attention-family-private.h"

/**
 * AccelAttention:
 *
 * Reference scaled dot-product attention, `out = softmax (scale q kᵀ + mask) v`
 * per batch and head. Grouped-query heads: query head `h` reads key/value
 * head `h / (Hq / Hkv)`, with `Hq % Hkv == 0`.
 *
 * The mask is aligned to the bottom right (as FlashAttention; PyTorch's
 * `scaled_dot_product_attention (is_causal=True)` aligns to the top left,
 * the same when `Sq == Sk`): with `d = Sk - Sq`, query `i` sees
 * key `j` iff `j <= i + d` when `causal`, `j >= i + d - window_left` when
 * `window-left` >= 0, and `j <= i + d + window_right` when `window-right` >= 0.
 * Keys `j < sinks` ignore the left window (the causal mask and the right
 * window still apply to them). A row that sees no key gets zeros and an lse
 * of -inf.
 *
 * Types: f32, f64, f16, bf16 (the same for `q`, `k`, `v`, `out`); accumulation in
 * f32 (f64 for f64). Forward fp8: `q`, `k` and `v` all fp8-e4m3 with `out` bf16
 * or f16; then logit `= scale q_descale k_descale (q . k)` and
 * `out = v_descale (P v)`. All buffers contiguous.
 *
 * Op name: `attention`.
 */

ACCEL_ATTENTION_MASK_LAYOUT_CHECK (AccelAttention);

static const AccelDType attention_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16, ACCEL_DTYPE_FP8_E4M3,
};

static gboolean
accel_attention_validate (AccelOp *op, GError **error)
{
  AccelAttention *self = ACCEL_ATTENTION (op);
  static const char *const inputs[] = { "q", "k", "v", NULL };
  static const AccelDType fp8_out_dtypes[] = { ACCEL_DTYPE_BF16, ACCEL_DTYPE_F16 };

  if (!_accel_attention_check_tensors (op, inputs, 4, attention_dtypes, G_N_ELEMENTS (attention_dtypes), error)
      || !accel_op_check_rank (op, "out", 4, 4, error)
      || !accel_op_check_contiguous (op, "out", error))
    return FALSE;
  /* fp8 inputs give a 16-bit float result. */
  gboolean fp8 = accel_buffer_get_dtype (self->q) == ACCEL_DTYPE_FP8_E4M3;
  if (fp8 ? !accel_op_check_dtype (op, "out", fp8_out_dtypes, G_N_ELEMENTS (fp8_out_dtypes), error)
          : !accel_op_check_same_dtype (op, "q", "out", error))
    return FALSE;

  if (!_accel_attention_check_dense_dims (op, self->q, self->k, self->v, self->out, self->lse,
                                          self->alibi_slopes, error))
    return FALSE;

  static const char *const descale_names[] = { "q-descale", "k-descale", "v-descale" };
  const double descales[] = { self->q_descale, self->k_descale, self->v_descale };
  for (guint i = 0; i < G_N_ELEMENTS (descales); i++)
    {
      if (descales[i] <= 0.0)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "attention: property “%s” is %g, expected > 0", descale_names[i], descales[i]);
          return FALSE;
        }
      if (!fp8 && descales[i] != 1.0)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "attention: property “%s” is %g, but only fp8-e4m3 inputs take a descale (expected 1.0 for %s)",
                       descale_names[i], descales[i], accel_dtype_get_name (accel_buffer_get_dtype (self->q)));
          return FALSE;
        }
    }
  return _accel_op_check_results_alias (op, error);
}

ACCEL_DEFINE_OP_TYPE_WITH_CODE (AccelAttention, accel_attention, "attention",
                                "Scaled dot-product attention (causal, sliding window, sinks, grouped-query, softcap, ALiBi, fp8)",
                                _accel_attention_params, accel_attention_validate,
                                _accel_attention_install_mask_params (op_class, G_STRUCT_OFFSET (AccelAttention, causal));)
