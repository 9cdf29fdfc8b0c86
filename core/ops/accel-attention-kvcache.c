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

static const AccelOpParam attention_kvcache_params[] = {
  ACCEL_OP_BUFFER (AccelAttentionKvcache, q, "q", "Queries `[B, Hq, Sq, D]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionKvcache, k_cache, "k-cache", "The key pages `[P, page, Hkv, D]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionKvcache, v_cache, "v-cache", "The value pages `[P, page, Hkv, Dv]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionKvcache, block_table, "block-table",
                   "I32 `[B, max_blocks]`: logical block `n` of sequence `b` is page `block_table[b, n]`.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionKvcache, seqlens_k, "seqlens-k",
                   "I32 `[B]`: the number of cached keys of each sequence.",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionKvcache, out, "out", "The result `[B, Hq, Sq, Dv]`.",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelAttentionKvcache, lse, "lse", "Optional log-sum-exp of each row's logits [B, Hq, Sq], f32",
                   ACCEL_ACCESS_WRITE, 0),
  ACCEL_OP_BUFFER (AccelAttentionKvcache, alibi_slopes, "alibi-slopes", "Optional ALiBi slope of each query head [Hq] or [B, Hq], f32",
                   ACCEL_ACCESS_READ, 0),
  ACCEL_OP_BOOLEAN (AccelAttentionKvcache, causal, "causal", "Mask keys after each query's position (`L - Sq + i`).",
                     FALSE),
  ACCEL_OP_INT (AccelAttentionKvcache, window_left, "window-left",
                "If >= 0, a query sees at most this many keys before its position.",
                -1, G_MAXINT, -1),
  ACCEL_OP_INT (AccelAttentionKvcache, window_right, "window-right",
                "If >= 0, a query sees at most this many keys after its position.",
                -1, G_MAXINT, -1),
  ACCEL_OP_INT (AccelAttentionKvcache, sinks, "sinks", "Keys `j < sinks` are exempt from the left window.",
                0, G_MAXINT, 0),
  ACCEL_OP_INT (AccelAttentionKvcache, num_splits, "num-splits",
                "How many parts a kernel may split each sequence's keys into; 0 lets the kernel choose. A hint: the "
                "result does not depend on it beyond rounding.",
                0, 1024, 0),
  ACCEL_OP_DOUBLE (AccelAttentionKvcache, scale, "scale", "The logit scale; 0 means `1 / sqrt (D)`.",
                   0.0, G_MAXDOUBLE, 0.0, 0),
  ACCEL_OP_DOUBLE (AccelAttentionKvcache, softcap, "softcap",
                   "If > 0, each scaled logit `s` becomes `softcap tanh (s / softcap)`.",
                   0.0, G_MAXDOUBLE, 0.0, 0),
};

ACCEL_DEFINE_OP_TYPE (AccelAttentionKvcache, accel_attention_kvcache, "attention-kvcache",
                      "Attention over a paged key/value cache (decode, chunked prefill)",
                      attention_kvcache_params, accel_attention_kvcache_validate)

/**
 * accel_attention_kvcache_new:
 * @q: (transfer none): queries `[B, Hq, Sq, D]`
 * @k_cache: (transfer none): key pages `[P, page, Hkv, D]`
 * @v_cache: (transfer none): value pages `[P, page, Hkv, Dv]`
 * @block_table: (transfer none): i32 `[B, max_blocks]`
 * @seqlens_k: (transfer none): i32 `[B]`
 * @out: (transfer none): the result `[B, Hq, Sq, Dv]`
 *
 * Makes an `attention-kvcache` op (not causal, no window, default scale);
 * set the other properties with g_object_set().
 *
 * Returns: (transfer full): a new #AccelAttentionKvcache
 */
AccelOp *
accel_attention_kvcache_new (AccelBuffer *q,
                             AccelBuffer *k_cache,
                             AccelBuffer *v_cache,
                             AccelBuffer *block_table,
                             AccelBuffer *seqlens_k,
                             AccelBuffer *out)
{
  return g_object_new (ACCEL_TYPE_ATTENTION_KVCACHE, "q", q, "k-cache", k_cache, "v-cache", v_cache,
                       "block-table", block_table, "seqlens-k", seqlens_k, "out", out, NULL);
}
