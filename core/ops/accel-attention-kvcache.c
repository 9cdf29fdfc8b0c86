/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include "accel-op-impl-private.h"

/**
 * AccelAttentionKvcache:
 * @q: queries `[B, Hq, Sq, D]`
 * @k_cache: the key pages `[P, page, Hkv, D]`
 * @v_cache: the value pages `[P, page, Hkv, Dv]`
 * @block_table: i32 `[B, max_blocks]`: logical block `n` of sequence `b`
 *   is page `block_table[b, n]`
 * @seqlens_k: i32 `[B]`: the number of cached keys of each sequence
 * @out: the result `[B, Hq, Sq, Dv]`
 * @lse: (nullable): the log-sum-exp of each row's logits `[B, Hq, Sq]`, f32
 * @alibi_slopes: (nullable): f32 `[Hq]` or `[B, Hq]`, as #AccelAttention:alibi-slopes
 * @causal: as #AccelAttention:causal
 * @window_left: as #AccelAttention:window-left
 * @window_right: as #AccelAttention:window-right
 * @sinks: as #AccelAttention:sinks
 * @num_splits: how many parts a kernel may split each sequence's keys
 *   into (0: the kernel chooses); a hint, results do not depend on it
 * @scale: as #AccelAttention:scale
 * @softcap: as #AccelAttention:softcap
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
 * Types: f32, f64, f16, bf16 (the same for @q, the caches and @out). All
 * buffers contiguous. See docs/attention-variants.md.
 *
 * Op name: `attention-kvcache`.
 */

G_DEFINE_FINAL_TYPE (AccelAttentionKvcache, accel_attention_kvcache, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_Q,
  PROP_K_CACHE,
  PROP_V_CACHE,
  PROP_BLOCK_TABLE,
  PROP_SEQLENS_K,
  PROP_OUT,
  PROP_LSE,
  PROP_ALIBI_SLOPES,
  PROP_CAUSAL,
  PROP_WINDOW_LEFT,
  PROP_WINDOW_RIGHT,
  PROP_SINKS,
  PROP_NUM_SPLITS,
  PROP_SCALE,
  PROP_SOFTCAP,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const AccelDType kvcache_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

static AccelBuffer **
buffer_field (AccelAttentionKvcache *self, guint prop_id)
{
  switch (prop_id)
    {
    case PROP_Q: return &self->q;
    case PROP_K_CACHE: return &self->k_cache;
    case PROP_V_CACHE: return &self->v_cache;
    case PROP_BLOCK_TABLE: return &self->block_table;
    case PROP_SEQLENS_K: return &self->seqlens_k;
    case PROP_OUT: return &self->out;
    case PROP_LSE: return &self->lse;
    case PROP_ALIBI_SLOPES: return &self->alibi_slopes;
    default: return NULL;
    }
}

static void
accel_attention_kvcache_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelAttentionKvcache *self = ACCEL_ATTENTION_KVCACHE (object);
  AccelBuffer **field = buffer_field (self, prop_id);

  if (field != NULL)
    {
      accel_op_set_buffer_ (object, field, value, pspec);
      return;
    }
  switch (prop_id)
    {
    case PROP_CAUSAL:
      accel_op_set_boolean_ (object, &self->causal, value, pspec);
      break;
    case PROP_WINDOW_LEFT:
      accel_op_set_int_ (object, &self->window_left, value, pspec);
      break;
    case PROP_WINDOW_RIGHT:
      accel_op_set_int_ (object, &self->window_right, value, pspec);
      break;
    case PROP_SINKS:
      accel_op_set_int_ (object, &self->sinks, value, pspec);
      break;
    case PROP_NUM_SPLITS:
      accel_op_set_int_ (object, &self->num_splits, value, pspec);
      break;
    case PROP_SCALE:
      accel_op_set_double_ (object, &self->scale, value, pspec);
      break;
    case PROP_SOFTCAP:
      accel_op_set_double_ (object, &self->softcap, value, pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_attention_kvcache_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelAttentionKvcache *self = ACCEL_ATTENTION_KVCACHE (object);
  AccelBuffer **field = buffer_field (self, prop_id);

  if (field != NULL)
    {
      g_value_set_object (value, *field);
      return;
    }
  switch (prop_id)
    {
    case PROP_CAUSAL:
      g_value_set_boolean (value, self->causal);
      break;
    case PROP_WINDOW_LEFT:
      g_value_set_int (value, self->window_left);
      break;
    case PROP_WINDOW_RIGHT:
      g_value_set_int (value, self->window_right);
      break;
    case PROP_SINKS:
      g_value_set_int (value, self->sinks);
      break;
    case PROP_NUM_SPLITS:
      g_value_set_int (value, self->num_splits);
      break;
    case PROP_SCALE:
      g_value_set_double (value, self->scale);
      break;
    case PROP_SOFTCAP:
      g_value_set_double (value, self->softcap);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_attention_kvcache_dispose (GObject *object)
{
  AccelAttentionKvcache *self = ACCEL_ATTENTION_KVCACHE (object);

  for (guint i = PROP_Q; i <= PROP_ALIBI_SLOPES; i++)
    g_clear_object (buffer_field (self, i));

  G_OBJECT_CLASS (accel_attention_kvcache_parent_class)->dispose (object);
}

static gboolean
dims_are (AccelBuffer *buffer, guint rank, const gint64 *want)
{
  const AccelShape *s = accel_buffer_get_shape (buffer);
  if (accel_shape_get_rank (s) != rank)
    return FALSE;
  for (guint i = 0; i < rank; i++)
    if (want[i] >= 0 && accel_shape_get_dim (s, i) != want[i])
      return FALSE;
  return TRUE;
}

static gboolean
accel_attention_kvcache_check_dims (AccelAttentionKvcache *self, GError **error)
{
  const AccelShape *sq = accel_buffer_get_shape (self->q);
  const AccelShape *sk = accel_buffer_get_shape (self->k_cache);
  const AccelShape *sv = accel_buffer_get_shape (self->v_cache);
  gint64 B = accel_shape_get_dim (sq, 0), Hq = accel_shape_get_dim (sq, 1);
  gint64 Sq = accel_shape_get_dim (sq, 2), D = accel_shape_get_dim (sq, 3);
  gint64 P = accel_shape_get_dim (sk, 0), page = accel_shape_get_dim (sk, 1), Hkv = accel_shape_get_dim (sk, 2);
  gint64 Dv = accel_shape_get_dim (sv, 3);
  char expected[192];

  if (accel_shape_get_dim (sk, 3) != D || page < 1)
    {
      g_snprintf (expected, sizeof expected, "[P, page >= 1, Hkv, %" G_GINT64_FORMAT "] (the head dim of q)", D);
      return accel_op_shape_error_ (error, "attention-kvcache", "k-cache", self->k_cache, expected);
    }
  if (Hkv < 1 || Hq % Hkv != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "attention-kvcache: “q” has %" G_GINT64_FORMAT " heads, not a multiple of the %" G_GINT64_FORMAT
                   " heads of “k-cache”", Hq, Hkv);
      return FALSE;
    }
  if (accel_shape_get_dim (sv, 0) != P || accel_shape_get_dim (sv, 1) != page || accel_shape_get_dim (sv, 2) != Hkv)
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                  ", Dv] (as k-cache)", P, page, Hkv);
      return accel_op_shape_error_ (error, "attention-kvcache", "v-cache", self->v_cache, expected);
    }
  const gint64 want_out[4] = { B, Hq, Sq, Dv };
  if (!dims_are (self->out, 4, want_out))
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                  ", %" G_GINT64_FORMAT "]", B, Hq, Sq, Dv);
      return accel_op_shape_error_ (error, "attention-kvcache", "out", self->out, expected);
    }
  const gint64 want_table[2] = { B, -1 };
  if (!dims_are (self->block_table, 2, want_table))
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", max_blocks]", B);
      return accel_op_shape_error_ (error, "attention-kvcache", "block-table", self->block_table, expected);
    }
  const gint64 want_lens[1] = { B };
  if (!dims_are (self->seqlens_k, 1, want_lens))
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT "]", B);
      return accel_op_shape_error_ (error, "attention-kvcache", "seqlens-k", self->seqlens_k, expected);
    }
  const gint64 want_lse[3] = { B, Hq, Sq };
  if (self->lse != NULL && !dims_are (self->lse, 3, want_lse))
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                  B, Hq, Sq);
      return accel_op_shape_error_ (error, "attention-kvcache", "lse", self->lse, expected);
    }
  const gint64 want_slopes1[1] = { Hq }, want_slopes2[2] = { B, Hq };
  if (self->alibi_slopes != NULL && !dims_are (self->alibi_slopes, 1, want_slopes1)
      && !dims_are (self->alibi_slopes, 2, want_slopes2))
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT "] or [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                  Hq, B, Hq);
      return accel_op_shape_error_ (error, "attention-kvcache", "alibi-slopes", self->alibi_slopes, expected);
    }
  return TRUE;
}

static gboolean
accel_attention_kvcache_validate (AccelOp *op, GError **error)
{
  AccelAttentionKvcache *self = ACCEL_ATTENTION_KVCACHE (op);
  static const char *const names[] = { "q", "k-cache", "v-cache", "out" };
  static const AccelDType i32[] = { ACCEL_DTYPE_I32 };
  static const AccelDType f32[] = { ACCEL_DTYPE_F32 };

  if (!accel_op_require_ ("attention-kvcache", "q", self->q, error)
      || !accel_op_require_ ("attention-kvcache", "k-cache", self->k_cache, error)
      || !accel_op_require_ ("attention-kvcache", "v-cache", self->v_cache, error)
      || !accel_op_require_ ("attention-kvcache", "block-table", self->block_table, error)
      || !accel_op_require_ ("attention-kvcache", "seqlens-k", self->seqlens_k, error)
      || !accel_op_require_ ("attention-kvcache", "out", self->out, error))
    return FALSE;

  if (!accel_op_check_dtype (op, "q", kvcache_dtypes, G_N_ELEMENTS (kvcache_dtypes), error))
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if ((i > 0 && !accel_op_check_same_dtype (op, "q", names[i], error))
        || !accel_op_check_rank (op, names[i], 4, 4, error)
        || !accel_op_check_contiguous (op, names[i], error))
      return FALSE;
  if (!accel_op_check_dtype (op, "block-table", i32, 1, error)
      || !accel_op_check_contiguous (op, "block-table", error)
      || !accel_op_check_dtype (op, "seqlens-k", i32, 1, error)
      || !accel_op_check_contiguous (op, "seqlens-k", error))
    return FALSE;
  if (self->lse != NULL
      && (!accel_op_check_dtype (op, "lse", f32, 1, error) || !accel_op_check_contiguous (op, "lse", error)))
    return FALSE;
  if (self->alibi_slopes != NULL
      && (!accel_op_check_dtype (op, "alibi-slopes", f32, 1, error)
          || !accel_op_check_contiguous (op, "alibi-slopes", error)))
    return FALSE;
  if (!accel_attention_kvcache_check_dims (self, error))
    return FALSE;

  if (self->window_left < -1 || self->window_right < -1)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention-kvcache: “window-left” (%d) and “window-right” (%d) must be >= -1 (-1 is unbounded)",
                   self->window_left, self->window_right);
      return FALSE;
    }
  if (!isfinite (self->scale) || self->scale < 0.0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention-kvcache: property “scale” is %g, expected >= 0 (0: 1/sqrt(D))", self->scale);
      return FALSE;
    }
  if (!isfinite (self->softcap) || self->softcap < 0.0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention-kvcache: property “softcap” is %g, expected >= 0 (0: off)", self->softcap);
      return FALSE;
    }
  if (self->sinks < 0 || self->num_splits < 0)
    {
      gboolean bad_sinks = self->sinks < 0;
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention-kvcache: property “%s” is %d, expected >= 0", bad_sinks ? "sinks" : "num-splits",
                   bad_sinks ? self->sinks : self->num_splits);
      return FALSE;
    }

  AccelBuffer *inputs[] = {
    self->q, self->k_cache, self->v_cache, self->block_table, self->seqlens_k, self->alibi_slopes,
  };
  static const char *const input_names[] = { "q", "k-cache", "v-cache", "block-table", "seqlens-k", "alibi-slopes" };
  for (guint i = 0; i < G_N_ELEMENTS (inputs); i++)
    if (inputs[i] != NULL
        && (accel_op_buffers_alias_ (self->out, inputs[i])
            || (self->lse != NULL && accel_op_buffers_alias_ (self->lse, inputs[i]))))
      {
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "attention-kvcache: “%s” overlaps “%s”; results must not alias inputs",
                     accel_op_buffers_alias_ (self->out, inputs[i]) ? "out" : "lse", input_names[i]);
        return FALSE;
      }
  return TRUE;
}

static void
accel_attention_kvcache_class_init (AccelAttentionKvcacheClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_attention_kvcache_set_property;
  object_class->get_property = accel_attention_kvcache_get_property;
  object_class->dispose = accel_attention_kvcache_dispose;
  op_class->validate = accel_attention_kvcache_validate;

  accel_op_class_set_metadata (op_class, "attention-kvcache",
                               "Attention over a paged key/value cache (decode, chunked prefill)");
  accel_op_class_install_buffer (op_class, PROP_Q, "q", "Queries [B, Hq, Sq, D]", ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_K_CACHE, "k-cache", "Key pages [P, page, Hkv, D]",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_V_CACHE, "v-cache", "Value pages [P, page, Hkv, Dv]",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_BLOCK_TABLE, "block-table",
                                 "Page of each logical block of each sequence [B, max_blocks], i32",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_SEQLENS_K, "seqlens-k", "Cached keys of each sequence [B], i32",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_OUT, "out", "Result [B, Hq, Sq, Dv]", ACCEL_ACCESS_WRITE, TRUE);
  accel_op_class_install_buffer (op_class, PROP_LSE, "lse",
                                 "Optional log-sum-exp of each row's logits [B, Hq, Sq], f32",
                                 ACCEL_ACCESS_WRITE, FALSE);
  accel_op_class_install_buffer (op_class, PROP_ALIBI_SLOPES, "alibi-slopes",
                                 "Optional ALiBi slope of each query head [Hq] or [B, Hq], f32",
                                 ACCEL_ACCESS_READ, FALSE);

  /**
   * AccelAttentionKvcache:causal:
   *
   * Mask keys after each query's position (`L - Sq + i`).
   */
  properties[PROP_CAUSAL] =
    g_param_spec_boolean ("causal", NULL, "Causal mask", FALSE, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttentionKvcache:window-left:
   *
   * If >= 0, a query sees at most this many keys before its position.
   */
  properties[PROP_WINDOW_LEFT] =
    g_param_spec_int ("window-left", NULL, "Keys visible before the position (-1: all)",
                      -1, G_MAXINT, -1, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttentionKvcache:window-right:
   *
   * If >= 0, a query sees at most this many keys after its position.
   */
  properties[PROP_WINDOW_RIGHT] =
    g_param_spec_int ("window-right", NULL, "Keys visible after the position (-1: all)",
                      -1, G_MAXINT, -1, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttentionKvcache:sinks:
   *
   * Keys `j < sinks` are exempt from the left window.
   */
  properties[PROP_SINKS] =
    g_param_spec_int ("sinks", NULL, "Leading keys exempt from the left window",
                      0, G_MAXINT, 0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttentionKvcache:num-splits:
   *
   * How many parts a kernel may split each sequence's keys into; 0 lets
   * the kernel choose. A hint: the result does not depend on it beyond
   * rounding.
   */
  properties[PROP_NUM_SPLITS] =
    g_param_spec_int ("num-splits", NULL, "Split-KV parts (0: the kernel chooses)",
                      0, 1024, 0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttentionKvcache:scale:
   *
   * The logit scale; 0 means `1 / sqrt (D)`.
   */
  properties[PROP_SCALE] =
    g_param_spec_double ("scale", NULL, "Logit scale (0: 1/sqrt(head dim))",
                         0.0, G_MAXDOUBLE, 0.0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttentionKvcache:softcap:
   *
   * If > 0, each scaled logit `s` becomes `softcap tanh (s / softcap)`.
   */
  properties[PROP_SOFTCAP] =
    g_param_spec_double ("softcap", NULL, "Logit soft cap c: s -> c tanh(s/c) (0: off)",
                         0.0, G_MAXDOUBLE, 0.0, ACCEL_OP_PARAM_FLAGS);

  for (guint i = PROP_CAUSAL; i < N_PROPS; i++)
    g_object_class_install_property (object_class, i, properties[i]);
}

static void
accel_attention_kvcache_init (AccelAttentionKvcache *self)
{
  self->window_left = -1;
  self->window_right = -1;
}

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
  g_return_val_if_fail (q == NULL || ACCEL_IS_BUFFER (q), NULL);
  g_return_val_if_fail (k_cache == NULL || ACCEL_IS_BUFFER (k_cache), NULL);
  g_return_val_if_fail (v_cache == NULL || ACCEL_IS_BUFFER (v_cache), NULL);
  g_return_val_if_fail (block_table == NULL || ACCEL_IS_BUFFER (block_table), NULL);
  g_return_val_if_fail (seqlens_k == NULL || ACCEL_IS_BUFFER (seqlens_k), NULL);
  g_return_val_if_fail (out == NULL || ACCEL_IS_BUFFER (out), NULL);

  return g_object_new (ACCEL_TYPE_ATTENTION_KVCACHE, "q", q, "k-cache", k_cache, "v-cache", v_cache,
                       "block-table", block_table, "seqlens-k", seqlens_k, "out", out, NULL);
}
