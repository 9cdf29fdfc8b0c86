/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"

/**
 * AccelAttention:
 * @q: queries `[B, Hq, Sq, D]`
 * @k: keys `[B, Hkv, Sk, D]`
 * @v: values `[B, Hkv, Sk, Dv]`
 * @out: the result `[B, Hq, Sq, Dv]`
 * @lse: (nullable): if set, the log-sum-exp of each row's final logits `[B, Hq, Sq]`, f32
 * @causal: mask keys after the query (bottom-right aligned)
 * @window_left: if >= 0, how many keys before the aligned position a query sees
 * @window_right: if >= 0, how many keys after the aligned position a query sees
 * @scale: the logit scale; 0 means `1 / sqrt (D)`
 * @softcap: if > 0, each scaled logit `s` becomes `softcap tanh (s / softcap)`
 * @alibi_slopes: (nullable): ALiBi slopes, f32 `[Hq]` or `[B, Hq]`: logit `(i, j)` of head
 *   `h` gains `-slope[h] |i + Sk - Sq - j|` after scaling and soft-capping
 * @sinks: keys `j < sinks` are exempt from the left window
 * @q_descale: the per-tensor scale of fp8 @q (1.0 for other types)
 * @k_descale: the per-tensor scale of fp8 @k (1.0 for other types)
 * @v_descale: the per-tensor scale of fp8 @v (1.0 for other types)
 *
 * Reference scaled dot-product attention, `out = softmax (scale q kᵀ + mask) v`
 * per batch and head. Grouped-query heads: query head `h` reads key/value
 * head `h / (Hq / Hkv)`, with `Hq % Hkv == 0`.
 *
 * The mask is aligned to the bottom right: with `d = Sk - Sq`, query `i` sees
 * key `j` iff `j <= i + d` when @causal, `j >= i + d - window_left` when
 * @window_left >= 0, and `j <= i + d + window_right` when @window_right >= 0.
 * Keys `j < sinks` ignore the left window (the causal mask and the right
 * window still apply to them). A row that sees no key gets zeros and an lse
 * of -inf.
 *
 * Types: f32, f64, f16, bf16 (the same for @q, @k, @v, @out); accumulation in
 * f32 (f64 for f64). Forward fp8: @q, @k and @v all fp8-e4m3 with @out bf16
 * or f16; then logit `= scale q_descale k_descale (q . k)` and
 * `out = v_descale (P v)`. All buffers contiguous.
 *
 * Op name: `attention`.
 */

G_DEFINE_FINAL_TYPE (AccelAttention, accel_attention, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_Q,
  PROP_K,
  PROP_V,
  PROP_OUT,
  PROP_LSE,
  PROP_ALIBI_SLOPES,
  PROP_CAUSAL,
  PROP_WINDOW_LEFT,
  PROP_WINDOW_RIGHT,
  PROP_SCALE,
  PROP_SOFTCAP,
  PROP_SINKS,
  PROP_Q_DESCALE,
  PROP_K_DESCALE,
  PROP_V_DESCALE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const AccelDType attention_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16, ACCEL_DTYPE_FP8_E4M3,
};

static void
accel_attention_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelAttention *self = ACCEL_ATTENTION (object);

  switch (prop_id)
    {
    case PROP_Q:
      accel_op_set_buffer_ (object, &self->q, value, pspec);
      break;
    case PROP_K:
      accel_op_set_buffer_ (object, &self->k, value, pspec);
      break;
    case PROP_V:
      accel_op_set_buffer_ (object, &self->v, value, pspec);
      break;
    case PROP_OUT:
      accel_op_set_buffer_ (object, &self->out, value, pspec);
      break;
    case PROP_LSE:
      accel_op_set_buffer_ (object, &self->lse, value, pspec);
      break;
    case PROP_ALIBI_SLOPES:
      accel_op_set_buffer_ (object, &self->alibi_slopes, value, pspec);
      break;
    case PROP_CAUSAL:
      accel_op_set_boolean_ (object, &self->causal, value, pspec);
      break;
    case PROP_WINDOW_LEFT:
      accel_op_set_int_ (object, &self->window_left, value, pspec);
      break;
    case PROP_WINDOW_RIGHT:
      accel_op_set_int_ (object, &self->window_right, value, pspec);
      break;
    case PROP_SCALE:
      accel_op_set_double_ (object, &self->scale, value, pspec);
      break;
    case PROP_SOFTCAP:
      accel_op_set_double_ (object, &self->softcap, value, pspec);
      break;
    case PROP_SINKS:
      accel_op_set_int_ (object, &self->sinks, value, pspec);
      break;
    case PROP_Q_DESCALE:
      accel_op_set_double_ (object, &self->q_descale, value, pspec);
      break;
    case PROP_K_DESCALE:
      accel_op_set_double_ (object, &self->k_descale, value, pspec);
      break;
    case PROP_V_DESCALE:
      accel_op_set_double_ (object, &self->v_descale, value, pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_attention_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelAttention *self = ACCEL_ATTENTION (object);

  switch (prop_id)
    {
    case PROP_Q:
      g_value_set_object (value, self->q);
      break;
    case PROP_K:
      g_value_set_object (value, self->k);
      break;
    case PROP_V:
      g_value_set_object (value, self->v);
      break;
    case PROP_OUT:
      g_value_set_object (value, self->out);
      break;
    case PROP_LSE:
      g_value_set_object (value, self->lse);
      break;
    case PROP_ALIBI_SLOPES:
      g_value_set_object (value, self->alibi_slopes);
      break;
    case PROP_CAUSAL:
      g_value_set_boolean (value, self->causal);
      break;
    case PROP_WINDOW_LEFT:
      g_value_set_int (value, self->window_left);
      break;
    case PROP_WINDOW_RIGHT:
      g_value_set_int (value, self->window_right);
      break;
    case PROP_SCALE:
      g_value_set_double (value, self->scale);
      break;
    case PROP_SOFTCAP:
      g_value_set_double (value, self->softcap);
      break;
    case PROP_SINKS:
      g_value_set_int (value, self->sinks);
      break;
    case PROP_Q_DESCALE:
      g_value_set_double (value, self->q_descale);
      break;
    case PROP_K_DESCALE:
      g_value_set_double (value, self->k_descale);
      break;
    case PROP_V_DESCALE:
      g_value_set_double (value, self->v_descale);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_attention_dispose (GObject *object)
{
  AccelAttention *self = ACCEL_ATTENTION (object);

  g_clear_object (&self->q);
  g_clear_object (&self->k);
  g_clear_object (&self->v);
  g_clear_object (&self->out);
  g_clear_object (&self->lse);
  g_clear_object (&self->alibi_slopes);

  G_OBJECT_CLASS (accel_attention_parent_class)->dispose (object);
}

static gboolean
accel_attention_check_dims (AccelAttention *self, GError **error)
{
  const AccelShape *sq = accel_buffer_get_shape (self->q);
  const AccelShape *sk = accel_buffer_get_shape (self->k);
  const AccelShape *sv = accel_buffer_get_shape (self->v);
  const AccelShape *so = accel_buffer_get_shape (self->out);
  gint64 B = accel_shape_get_dim (sq, 0), Hq = accel_shape_get_dim (sq, 1);
  gint64 Sq = accel_shape_get_dim (sq, 2), D = accel_shape_get_dim (sq, 3);
  gint64 Hkv = accel_shape_get_dim (sk, 1), Sk = accel_shape_get_dim (sk, 2);
  gint64 Dv = accel_shape_get_dim (sv, 3);
  char expected[160];

  if (accel_shape_get_dim (sk, 0) != B || accel_shape_get_dim (sk, 3) != D)
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", Hkv, Sk, %" G_GINT64_FORMAT "] (batch and head dim of q)", B, D);
      return accel_op_shape_error_ (error, "attention", "k", self->k, expected);
    }
  if (Hkv < 1 || Hq % Hkv != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "attention: “q” has %" G_GINT64_FORMAT " heads, not a multiple of the %" G_GINT64_FORMAT
                   " heads of “k”", Hq, Hkv);
      return FALSE;
    }
  if (accel_shape_get_dim (sv, 0) != B || accel_shape_get_dim (sv, 1) != Hkv || accel_shape_get_dim (sv, 2) != Sk)
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", Dv] (as k)",
                  B, Hkv, Sk);
      return accel_op_shape_error_ (error, "attention", "v", self->v, expected);
    }
  if (accel_shape_get_dim (so, 0) != B || accel_shape_get_dim (so, 1) != Hq
      || accel_shape_get_dim (so, 2) != Sq || accel_shape_get_dim (so, 3) != Dv)
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                  ", %" G_GINT64_FORMAT "]", B, Hq, Sq, Dv);
      return accel_op_shape_error_ (error, "attention", "out", self->out, expected);
    }
  if (self->lse != NULL)
    {
      const AccelShape *sl = accel_buffer_get_shape (self->lse);
      if (accel_shape_get_rank (sl) != 3 || accel_shape_get_dim (sl, 0) != B
          || accel_shape_get_dim (sl, 1) != Hq || accel_shape_get_dim (sl, 2) != Sq)
        {
          g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                      B, Hq, Sq);
          return accel_op_shape_error_ (error, "attention", "lse", self->lse, expected);
        }
    }
  if (self->alibi_slopes != NULL)
    {
      const AccelShape *sa = accel_buffer_get_shape (self->alibi_slopes);
      guint rank = accel_shape_get_rank (sa);
      if (!(rank == 1 && accel_shape_get_dim (sa, 0) == Hq)
          && !(rank == 2 && accel_shape_get_dim (sa, 0) == B && accel_shape_get_dim (sa, 1) == Hq))
        {
          g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT "] or [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                      Hq, B, Hq);
          return accel_op_shape_error_ (error, "attention", "alibi-slopes", self->alibi_slopes, expected);
        }
    }
  return TRUE;
}

static gboolean
accel_attention_validate (AccelOp *op, GError **error)
{
  AccelAttention *self = ACCEL_ATTENTION (op);
  static const char *const names[] = { "q", "k", "v", "out" };

  if (!accel_op_require_ ("attention", "q", self->q, error)
      || !accel_op_require_ ("attention", "k", self->k, error)
      || !accel_op_require_ ("attention", "v", self->v, error)
      || !accel_op_require_ ("attention", "out", self->out, error))
    return FALSE;

  if (!accel_op_check_dtype (op, "q", attention_dtypes, G_N_ELEMENTS (attention_dtypes), error))
    return FALSE;
  gboolean fp8 = accel_buffer_get_dtype (self->q) == ACCEL_DTYPE_FP8_E4M3;
  if (fp8)
    {
      /* fp8 inputs give a 16-bit float result. */
      static const AccelDType fp8_out_dtypes[] = { ACCEL_DTYPE_BF16, ACCEL_DTYPE_F16 };
      if (!accel_op_check_dtype (op, "out", fp8_out_dtypes, G_N_ELEMENTS (fp8_out_dtypes), error))
        return FALSE;
    }
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      if ((i > 0 && !(fp8 && i == 3) && !accel_op_check_same_dtype (op, "q", names[i], error))
          || !accel_op_check_rank (op, names[i], 4, 4, error)
          || !accel_op_check_contiguous (op, names[i], error))
        return FALSE;
    }
  if (self->lse != NULL)
    {
      static const AccelDType lse_dtypes[] = { ACCEL_DTYPE_F32 };
      if (!accel_op_check_dtype (op, "lse", lse_dtypes, 1, error)
          || !accel_op_check_contiguous (op, "lse", error))
        return FALSE;
    }
  if (self->alibi_slopes != NULL)
    {
      static const AccelDType slope_dtypes[] = { ACCEL_DTYPE_F32 };
      if (!accel_op_check_dtype (op, "alibi-slopes", slope_dtypes, 1, error)
          || !accel_op_check_contiguous (op, "alibi-slopes", error))
        return FALSE;
    }
  if (!accel_attention_check_dims (self, error))
    return FALSE;

  if (self->window_left < -1 || self->window_right < -1)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention: “window-left” (%d) and “window-right” (%d) must be >= -1 (-1 is unbounded)",
                   self->window_left, self->window_right);
      return FALSE;
    }
  if (!isfinite (self->scale) || self->scale < 0.0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention: property “scale” is %g, expected >= 0 (0: 1/sqrt(D))", self->scale);
      return FALSE;
    }
  if (!isfinite (self->softcap) || self->softcap < 0.0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention: property “softcap” is %g, expected >= 0 (0: off)", self->softcap);
      return FALSE;
    }
  if (self->sinks < 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention: property “sinks” is %d, expected >= 0", self->sinks);
      return FALSE;
    }
  static const char *const descale_names[] = { "q-descale", "k-descale", "v-descale" };
  const double descales[] = { self->q_descale, self->k_descale, self->v_descale };
  for (guint i = 0; i < G_N_ELEMENTS (descales); i++)
    {
      if (!isfinite (descales[i]) || descales[i] <= 0.0)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "attention: property “%s” is %g, expected finite and > 0", descale_names[i], descales[i]);
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

  AccelBuffer *inputs[] = { self->q, self->k, self->v };
  for (guint i = 0; i < G_N_ELEMENTS (inputs); i++)
    if (accel_op_buffers_alias_ (self->out, inputs[i])
        || (self->lse != NULL && accel_op_buffers_alias_ (self->lse, inputs[i])))
      {
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "attention: “%s” overlaps “%s”; results must not alias inputs",
                     accel_op_buffers_alias_ (self->out, inputs[i]) ? "out" : "lse", names[i]);
        return FALSE;
      }
  if (self->alibi_slopes != NULL
      && (accel_op_buffers_alias_ (self->out, self->alibi_slopes)
          || (self->lse != NULL && accel_op_buffers_alias_ (self->lse, self->alibi_slopes))))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention: “%s” overlaps “alibi-slopes”; results must not alias inputs",
                   accel_op_buffers_alias_ (self->out, self->alibi_slopes) ? "out" : "lse");
      return FALSE;
    }
  return TRUE;
}

static void
accel_attention_class_init (AccelAttentionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_attention_set_property;
  object_class->get_property = accel_attention_get_property;
  object_class->dispose = accel_attention_dispose;
  op_class->validate = accel_attention_validate;

  accel_op_class_set_metadata (op_class, "attention",
                               "Scaled dot-product attention (causal, sliding window, sinks, grouped-query, softcap, ALiBi, fp8)");
  accel_op_class_install_buffer (op_class, PROP_Q, "q", "Queries [B, Hq, Sq, D]",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_K, "k", "Keys [B, Hkv, Sk, D]",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_V, "v", "Values [B, Hkv, Sk, Dv]",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_OUT, "out", "Result [B, Hq, Sq, Dv]",
                                 ACCEL_ACCESS_WRITE, TRUE);
  accel_op_class_install_buffer (op_class, PROP_LSE, "lse",
                                 "Optional log-sum-exp of each row's logits [B, Hq, Sq], f32",
                                 ACCEL_ACCESS_WRITE, FALSE);
  accel_op_class_install_buffer (op_class, PROP_ALIBI_SLOPES, "alibi-slopes",
                                 "Optional ALiBi slope of each query head [Hq] or [B, Hq], f32",
                                 ACCEL_ACCESS_READ, FALSE);

  /**
   * AccelAttention:causal:
   *
   * Mask keys after each query's aligned position (bottom-right aligned:
   * query `i` sees key `j` iff `j <= i + Sk - Sq`).
   */
  properties[PROP_CAUSAL] =
    g_param_spec_boolean ("causal", NULL, "Causal mask, bottom-right aligned",
                          FALSE, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttention:window-left:
   *
   * If >= 0, a query sees at most this many keys before its aligned
   * position; -1 is unbounded.
   */
  properties[PROP_WINDOW_LEFT] =
    g_param_spec_int ("window-left", NULL, "Keys visible before the aligned position (-1: all)",
                      -1, G_MAXINT, -1, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttention:window-right:
   *
   * If >= 0, a query sees at most this many keys after its aligned
   * position; -1 is unbounded.
   */
  properties[PROP_WINDOW_RIGHT] =
    g_param_spec_int ("window-right", NULL, "Keys visible after the aligned position (-1: all)",
                      -1, G_MAXINT, -1, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttention:scale:
   *
   * The logit scale; 0 means `1 / sqrt (D)`.
   */
  properties[PROP_SCALE] =
    g_param_spec_double ("scale", NULL, "Logit scale (0: 1/sqrt(head dim))",
                         0.0, G_MAXDOUBLE, 0.0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttention:softcap:
   *
   * If > 0, each scaled logit `s` becomes `softcap tanh (s / softcap)`.
   */
  properties[PROP_SOFTCAP] =
    g_param_spec_double ("softcap", NULL, "Logit soft cap c: s -> c tanh(s/c) (0: off)",
                         0.0, G_MAXDOUBLE, 0.0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttention:sinks:
   *
   * Keys `j < sinks` are exempt from #AccelAttention:window-left (attention
   * sinks, as in StreamingLLM); the causal mask and the right window still
   * apply to them. Without a left window it changes nothing.
   */
  properties[PROP_SINKS] =
    g_param_spec_int ("sinks", NULL, "Leading keys exempt from the left window",
                      0, G_MAXINT, 0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttention:q-descale:
   *
   * The per-tensor scale of fp8 #AccelAttention:q: the logits are multiplied
   * by `q_descale k_descale`. Finite and > 0; must be 1.0 unless the inputs
   * are fp8-e4m3.
   */
  properties[PROP_Q_DESCALE] =
    g_param_spec_double ("q-descale", NULL, "Per-tensor scale of fp8 q (1.0 otherwise)",
                         0.0, G_MAXDOUBLE, 1.0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttention:k-descale:
   *
   * The per-tensor scale of fp8 #AccelAttention:k, as #AccelAttention:q-descale.
   */
  properties[PROP_K_DESCALE] =
    g_param_spec_double ("k-descale", NULL, "Per-tensor scale of fp8 k (1.0 otherwise)",
                         0.0, G_MAXDOUBLE, 1.0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttention:v-descale:
   *
   * The per-tensor scale of fp8 #AccelAttention:v: the result is
   * `v_descale (P v)`. Finite and > 0; must be 1.0 unless the inputs are
   * fp8-e4m3.
   */
  properties[PROP_V_DESCALE] =
    g_param_spec_double ("v-descale", NULL, "Per-tensor scale of fp8 v (1.0 otherwise)",
                         0.0, G_MAXDOUBLE, 1.0, ACCEL_OP_PARAM_FLAGS);

  for (guint i = PROP_CAUSAL; i < N_PROPS; i++)
    g_object_class_install_property (object_class, i, properties[i]);
}

static void
accel_attention_init (AccelAttention *self)
{
  self->window_left = -1;
  self->window_right = -1;
  self->q_descale = 1.0;
  self->k_descale = 1.0;
  self->v_descale = 1.0;
}

/**
 * accel_attention_new:
 * @q: (transfer none): queries `[B, Hq, Sq, D]`
 * @k: (transfer none): keys `[B, Hkv, Sk, D]`
 * @v: (transfer none): values `[B, Hkv, Sk, Dv]`
 * @out: (transfer none): the result `[B, Hq, Sq, Dv]`
 *
 * Makes an `attention` op (not causal, no window, default scale, no lse);
 * set the other properties with g_object_set().
 *
 * Returns: (transfer full): a new #AccelAttention
 */
AccelOp *
accel_attention_new (AccelBuffer *q, AccelBuffer *k, AccelBuffer *v, AccelBuffer *out)
{
  g_return_val_if_fail (q == NULL || ACCEL_IS_BUFFER (q), NULL);
  g_return_val_if_fail (k == NULL || ACCEL_IS_BUFFER (k), NULL);
  g_return_val_if_fail (v == NULL || ACCEL_IS_BUFFER (v), NULL);
  g_return_val_if_fail (out == NULL || ACCEL_IS_BUFFER (out), NULL);

  return g_object_new (ACCEL_TYPE_ATTENTION, "q", q, "k", k, "v", v, "out", out, NULL);
}
