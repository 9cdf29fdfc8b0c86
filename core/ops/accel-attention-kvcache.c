/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include "accel-attention-family-private.h"

/**
 * AccelAttentionKvcache:
 *
 * Attention over a paged key/value cache: decode (`Sq` = 1) and chunked
 * prefill. Sequence `b` has `L = seqlens_k[b]` cached keys; logical key
 * row `r` lives in page `block_table[b, r / page]` at row `r % page`. The
 * queries are the last `Sq` tokens of the sequence, already in the cache:
 * query `i` sits at position `L - Sq + i`, and the mask, bias and scale
 * are those of #AccelAttention with `Sk = L`.
 *
 * Where the op runs, `seqlens_k[b]` must lie in `[0, max_blocks * page]`
 * and every block-table entry in use (`n < ceil (L / page)`) in `[0, P)`;
 * otherwise it fails with %ACCEL_ERROR_INVALID_ARGUMENT naming the
 * sequence and block.
 *
 * Types: f32, f64, f16, bf16 (the same for `q`, the caches and `out`). All
 * buffers contiguous. See docs/attention-variants.md.
 *
 * Op name: `attention-kvcache`.
 */

static const AccelDType kvcache_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

static gboolean
accel_attention_kvcache_validate (AccelOp *op, GError **error)
{
  AccelAttentionKvcache *self = ACCEL_ATTENTION_KVCACHE (op);
  static const char *const tensors[] = { "q", "k-cache", "v-cache", "out", NULL };
  static const char *const table[] = { "block-table", NULL }, *const lens[] = { "seqlens-k", NULL };
  static const AccelDType i32[] = { ACCEL_DTYPE_I32 };

  if (!_accel_attention_check_tensors (op, tensors, 4, kvcache_dtypes, G_N_ELEMENTS (kvcache_dtypes), error)
      || !_accel_attention_check_tensors (op, table, 2, i32, 1, error)
      || !_accel_attention_check_tensors (op, lens, 1, i32, 1, error))
    return FALSE;

  const AccelShape *sq = accel_buffer_get_shape (self->q);
  const AccelShape *sk = accel_buffer_get_shape (self->k_cache);
  gint64 B = accel_shape_get_dim (sq, 0), Hq = accel_shape_get_dim (sq, 1);
  gint64 Sq = accel_shape_get_dim (sq, 2), D = accel_shape_get_dim (sq, 3);
  gint64 P = accel_shape_get_dim (sk, 0), page = accel_shape_get_dim (sk, 1), Hkv = accel_shape_get_dim (sk, 2);
  gint64 Dv = accel_shape_get_dim (accel_buffer_get_shape (self->v_cache), 3);
  gint64 max_blocks = accel_shape_get_dim (accel_buffer_get_shape (self->block_table), 1);

  if (accel_shape_get_dim (sk, 3) != D || page < 1)
    {
      char expected[96];
      g_snprintf (expected, sizeof expected, "[P, page >= 1, Hkv, %" G_GINT64_FORMAT "] (the head dim of q)", D);
      return accel_op_shape_error_ (error, "attention-kvcache", "k-cache", self->k_cache, expected);
    }
  const gint64 want_v[4] = { P, page, Hkv, Dv }, want_out[4] = { B, Hq, Sq, Dv };
  const gint64 want_table[2] = { B, max_blocks }, want_lens[1] = { B }, lse_dims[3] = { B, Hq, Sq };
  if (!_accel_attention_check_heads (op, Hq, Hkv, error)
      || !accel_op_expect_dims_ (error, "attention-kvcache", "v-cache", self->v_cache, want_v, 4, "as k-cache")
      || !accel_op_expect_dims_ (error, "attention-kvcache", "out", self->out, want_out, 4, NULL)
      || !accel_op_expect_dims_ (error, "attention-kvcache", "block-table", self->block_table, want_table, 2,
                                 "one row of pages per sequence")
      || !accel_op_expect_dims_ (error, "attention-kvcache", "seqlens-k", self->seqlens_k, want_lens, 1, NULL)
      || !_accel_attention_check_lse (op, self->lse, lse_dims, 3, error)
      || !_accel_attention_check_slopes (op, self->alibi_slopes, B, Hq, error))
    return FALSE;
  return _accel_op_check_results_alias (op, error);
}

ACCEL_DEFINE_OP_TYPE (AccelAttentionKvcache, accel_attention_kvcache, "attention-kvcache",
                      "Attention over a paged key/value cache (decode, chunked prefill)",
                      _accel_attention_kvcache_params, accel_attention_kvcache_validate)
