/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"

/**
 * AccelAttentionVarlen:
 * @q: packed queries `[Tq, Hq, D]`
 * @k: packed keys `[Tk, Hkv, D]`
 * @v: packed values `[Tk, Hkv, Dv]`
 * @out: the packed result `[Tq, Hq, Dv]`
 * @lse: (nullable): if set, the log-sum-exp of each row's final logits `[Hq, Tq]`, f32
 * @cu_seqlens_q: the query row where each sequence starts, and `Tq` last: i32 `[B + 1]`
 * @cu_seqlens_k: the key row where each sequence starts, and `Tk` last: i32 `[B + 1]`
 * @causal: as #AccelAttention:causal, per sequence
 * @window_left: as #AccelAttention:window-left
 * @window_right: as #AccelAttention:window-right
 * @scale: as #AccelAttention:scale
 * @softcap: as #AccelAttention:softcap
 * @alibi_slopes: (nullable): as #AccelAttention:alibi-slopes, f32 `[Hq]` or `[B, Hq]`
 * @sinks: as #AccelAttention:sinks
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
 * Types: f32, f64, f16, bf16 (the same for @q, @k, @v, @out). All buffers
 * contiguous.
 *
 * Op name: `attention-varlen`.
 */

G_DEFINE_FINAL_TYPE (AccelAttentionVarlen, accel_attention_varlen, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_Q,
  PROP_K,
  PROP_V,
  PROP_OUT,
  PROP_LSE,
  PROP_CU_SEQLENS_Q,
  PROP_CU_SEQLENS_K,
  PROP_ALIBI_SLOPES,
  PROP_CAUSAL,
  PROP_WINDOW_LEFT,
  PROP_WINDOW_RIGHT,
  PROP_SCALE,
  PROP_SOFTCAP,
  PROP_SINKS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const AccelDType varlen_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

static AccelBuffer **
buffer_field (AccelAttentionVarlen *self, guint prop_id)
{
  switch (prop_id)
    {
    case PROP_Q: return &self->q;
    case PROP_K: return &self->k;
    case PROP_V: return &self->v;
    case PROP_OUT: return &self->out;
    case PROP_LSE: return &self->lse;
    case PROP_CU_SEQLENS_Q: return &self->cu_seqlens_q;
    case PROP_CU_SEQLENS_K: return &self->cu_seqlens_k;
    case PROP_ALIBI_SLOPES: return &self->alibi_slopes;
    default: return NULL;
    }
}

static void
accel_attention_varlen_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelAttentionVarlen *self = ACCEL_ATTENTION_VARLEN (object);
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
    case PROP_SCALE:
      accel_op_set_double_ (object, &self->scale, value, pspec);
      break;
    case PROP_SOFTCAP:
      accel_op_set_double_ (object, &self->softcap, value, pspec);
      break;
    case PROP_SINKS:
      accel_op_set_int_ (object, &self->sinks, value, pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_attention_varlen_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelAttentionVarlen *self = ACCEL_ATTENTION_VARLEN (object);
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
    case PROP_SCALE:
      g_value_set_double (value, self->scale);
      break;
    case PROP_SOFTCAP:
      g_value_set_double (value, self->softcap);
      break;
    case PROP_SINKS:
      g_value_set_int (value, self->sinks);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_attention_varlen_dispose (GObject *object)
{
  AccelAttentionVarlen *self = ACCEL_ATTENTION_VARLEN (object);

  for (guint i = PROP_Q; i <= PROP_ALIBI_SLOPES; i++)
    g_clear_object (buffer_field (self, i));

  G_OBJECT_CLASS (accel_attention_varlen_parent_class)->dispose (object);
}

static gboolean
dims_are (AccelBuffer *buffer, guint rank, const gint64 *dims)
{
  const AccelShape *shape = accel_buffer_get_shape (buffer);

  if (accel_shape_get_rank (shape) != rank)
    return FALSE;
  for (guint i = 0; i < rank; i++)
    if (accel_shape_get_dim (shape, i) != dims[i])
      return FALSE;
  return TRUE;
}

static gboolean
accel_attention_varlen_check_dims (AccelAttentionVarlen *self, GError **error)
{
  const AccelShape *sq = accel_buffer_get_shape (self->q);
  const AccelShape *sk = accel_buffer_get_shape (self->k);
  const AccelShape *sv = accel_buffer_get_shape (self->v);
  gint64 Tq = accel_shape_get_dim (sq, 0), Hq = accel_shape_get_dim (sq, 1), D = accel_shape_get_dim (sq, 2);
  gint64 Tk = accel_shape_get_dim (sk, 0), Hkv = accel_shape_get_dim (sk, 1);
  gint64 Dv = accel_shape_get_dim (sv, 2);
  gint64 n_cu = accel_shape_get_dim (accel_buffer_get_shape (self->cu_seqlens_q), 0);
  gint64 B = n_cu - 1;
  char expected[160];

  if (accel_shape_get_dim (sk, 2) != D)
    {
      g_snprintf (expected, sizeof expected, "[Tk, Hkv, %" G_GINT64_FORMAT "] (head dim of q)", D);
      return accel_op_shape_error_ (error, "attention-varlen", "k", self->k, expected);
    }
  if (Hkv < 1 || Hq % Hkv != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "attention-varlen: “q” has %" G_GINT64_FORMAT " heads, not a multiple of the %" G_GINT64_FORMAT
                   " heads of “k”", Hq, Hkv);
      return FALSE;
    }
  if (accel_shape_get_dim (sv, 0) != Tk || accel_shape_get_dim (sv, 1) != Hkv)
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", Dv] (as k)", Tk, Hkv);
      return accel_op_shape_error_ (error, "attention-varlen", "v", self->v, expected);
    }
  const gint64 want_out[3] = { Tq, Hq, Dv };
  if (!dims_are (self->out, 3, want_out))
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                  Tq, Hq, Dv);
      return accel_op_shape_error_ (error, "attention-varlen", "out", self->out, expected);
    }
  if (n_cu < 2)
    {
      g_snprintf (expected, sizeof expected, "[B + 1] with B >= 1");
      return accel_op_shape_error_ (error, "attention-varlen", "cu-seqlens-q", self->cu_seqlens_q, expected);
    }
  const gint64 want_cu[1] = { n_cu };
  if (!dims_are (self->cu_seqlens_k, 1, want_cu))
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT "] (as cu-seqlens-q)", n_cu);
      return accel_op_shape_error_ (error, "attention-varlen", "cu-seqlens-k", self->cu_seqlens_k, expected);
    }
  const gint64 want_lse[2] = { Hq, Tq };
  if (self->lse != NULL && !dims_are (self->lse, 2, want_lse))
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]", Hq, Tq);
      return accel_op_shape_error_ (error, "attention-varlen", "lse", self->lse, expected);
    }
  const gint64 want_slopes1[1] = { Hq }, want_slopes2[2] = { B, Hq };
  if (self->alibi_slopes != NULL && !dims_are (self->alibi_slopes, 1, want_slopes1)
      && !dims_are (self->alibi_slopes, 2, want_slopes2))
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT "] or [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                  Hq, B, Hq);
      return accel_op_shape_error_ (error, "attention-varlen", "alibi-slopes", self->alibi_slopes, expected);
    }
  return TRUE;
}

static gboolean
accel_attention_varlen_validate (AccelOp *op, GError **error)
{
  AccelAttentionVarlen *self = ACCEL_ATTENTION_VARLEN (op);
  static const char *const names[] = { "q", "k", "v", "out" };
  static const AccelDType i32[] = { ACCEL_DTYPE_I32 };
  static const AccelDType f32[] = { ACCEL_DTYPE_F32 };

  if (!accel_op_require_ ("attention-varlen", "q", self->q, error)
      || !accel_op_require_ ("attention-varlen", "k", self->k, error)
      || !accel_op_require_ ("attention-varlen", "v", self->v, error)
      || !accel_op_require_ ("attention-varlen", "out", self->out, error)
      || !accel_op_require_ ("attention-varlen", "cu-seqlens-q", self->cu_seqlens_q, error)
      || !accel_op_require_ ("attention-varlen", "cu-seqlens-k", self->cu_seqlens_k, error))
    return FALSE;

  if (!accel_op_check_dtype (op, "q", varlen_dtypes, G_N_ELEMENTS (varlen_dtypes), error))
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if ((i > 0 && !accel_op_check_same_dtype (op, "q", names[i], error))
        || !accel_op_check_rank (op, names[i], 3, 3, error)
        || !accel_op_check_contiguous (op, names[i], error))
      return FALSE;
  if (!accel_op_check_dtype (op, "cu-seqlens-q", i32, 1, error)
      || !accel_op_check_rank (op, "cu-seqlens-q", 1, 1, error)
      || !accel_op_check_contiguous (op, "cu-seqlens-q", error)
      || !accel_op_check_dtype (op, "cu-seqlens-k", i32, 1, error)
      || !accel_op_check_contiguous (op, "cu-seqlens-k", error))
    return FALSE;
  if (self->lse != NULL
      && (!accel_op_check_dtype (op, "lse", f32, 1, error) || !accel_op_check_contiguous (op, "lse", error)))
    return FALSE;
  if (self->alibi_slopes != NULL
      && (!accel_op_check_dtype (op, "alibi-slopes", f32, 1, error)
          || !accel_op_check_contiguous (op, "alibi-slopes", error)))
    return FALSE;
  if (!accel_attention_varlen_check_dims (self, error))
    return FALSE;

  if (self->window_left < -1 || self->window_right < -1)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention-varlen: “window-left” (%d) and “window-right” (%d) must be >= -1 (-1 is unbounded)",
                   self->window_left, self->window_right);
      return FALSE;
    }
  if (!isfinite (self->scale) || self->scale < 0.0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention-varlen: property “scale” is %g, expected >= 0 (0: 1/sqrt(D))", self->scale);
      return FALSE;
    }
  if (!isfinite (self->softcap) || self->softcap < 0.0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention-varlen: property “softcap” is %g, expected >= 0 (0: off)", self->softcap);
      return FALSE;
    }
  if (self->sinks < 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention-varlen: property “sinks” is %d, expected >= 0", self->sinks);
      return FALSE;
    }

  /* Results must not alias any input (nor each other). */
  static const guint results[] = { PROP_OUT, PROP_LSE };
  static const char *const all_names[] = {
    NULL, "q", "k", "v", "out", "lse", "cu-seqlens-q", "cu-seqlens-k", "alibi-slopes",
  };
  for (guint r = 0; r < G_N_ELEMENTS (results); r++)
    for (guint i = PROP_Q; i <= PROP_ALIBI_SLOPES; i++)
      {
        AccelBuffer *a = *buffer_field (self, results[r]), *b = *buffer_field (self, i);
        if (i == results[r] || a == NULL || b == NULL)
          continue;
        if (accel_op_buffers_alias_ (a, b))
          {
            g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                         "attention-varlen: “%s” overlaps “%s”; results must not alias other buffers",
                         all_names[results[r]], all_names[i]);
            return FALSE;
          }
      }
  return TRUE;
}

static void
accel_attention_varlen_class_init (AccelAttentionVarlenClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_attention_varlen_set_property;
  object_class->get_property = accel_attention_varlen_get_property;
  object_class->dispose = accel_attention_varlen_dispose;
  op_class->validate = accel_attention_varlen_validate;

  accel_op_class_set_metadata (op_class, "attention-varlen",
                               "Attention over packed sequences of different lengths (cu-seqlens)");
  accel_op_class_install_buffer (op_class, PROP_Q, "q", "Packed queries [Tq, Hq, D]", ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_K, "k", "Packed keys [Tk, Hkv, D]", ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_V, "v", "Packed values [Tk, Hkv, Dv]", ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_OUT, "out", "Packed result [Tq, Hq, Dv]", ACCEL_ACCESS_WRITE, TRUE);
  accel_op_class_install_buffer (op_class, PROP_LSE, "lse",
                                 "Optional log-sum-exp of each row's logits [Hq, Tq], f32",
                                 ACCEL_ACCESS_WRITE, FALSE);
  accel_op_class_install_buffer (op_class, PROP_CU_SEQLENS_Q, "cu-seqlens-q",
                                 "First query row of each sequence, then Tq [B + 1], i32",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_CU_SEQLENS_K, "cu-seqlens-k",
                                 "First key row of each sequence, then Tk [B + 1], i32",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_ALIBI_SLOPES, "alibi-slopes",
                                 "Optional ALiBi slope of each query head [Hq] or [B, Hq], f32",
                                 ACCEL_ACCESS_READ, FALSE);

  /**
   * AccelAttentionVarlen:causal:
   *
   * As #AccelAttention:causal, within each sequence.
   */
  properties[PROP_CAUSAL] =
    g_param_spec_boolean ("causal", NULL, "Causal mask, bottom-right aligned per sequence",
                          FALSE, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttentionVarlen:window-left:
   *
   * As #AccelAttention:window-left.
   */
  properties[PROP_WINDOW_LEFT] =
    g_param_spec_int ("window-left", NULL, "Keys visible before the aligned position (-1: all)",
                      -1, G_MAXINT, -1, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttentionVarlen:window-right:
   *
   * As #AccelAttention:window-right.
   */
  properties[PROP_WINDOW_RIGHT] =
    g_param_spec_int ("window-right", NULL, "Keys visible after the aligned position (-1: all)",
                      -1, G_MAXINT, -1, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttentionVarlen:scale:
   *
   * As #AccelAttention:scale.
   */
  properties[PROP_SCALE] =
    g_param_spec_double ("scale", NULL, "Logit scale (0: 1/sqrt(head dim))",
                         0.0, G_MAXDOUBLE, 0.0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttentionVarlen:softcap:
   *
   * As #AccelAttention:softcap.
   */
  properties[PROP_SOFTCAP] =
    g_param_spec_double ("softcap", NULL, "Logit soft cap c: s -> c tanh(s/c) (0: off)",
                         0.0, G_MAXDOUBLE, 0.0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttentionVarlen:sinks:
   *
   * As #AccelAttention:sinks: the first `sinks` keys of each sequence are
   * exempt from the left window.
   */
  properties[PROP_SINKS] =
    g_param_spec_int ("sinks", NULL, "Leading keys of each sequence exempt from the left window",
                      0, G_MAXINT, 0, ACCEL_OP_PARAM_FLAGS);

  for (guint i = PROP_CAUSAL; i < N_PROPS; i++)
    g_object_class_install_property (object_class, i, properties[i]);
}

static void
accel_attention_varlen_init (AccelAttentionVarlen *self)
{
  self->window_left = -1;
  self->window_right = -1;
}

/**
 * accel_attention_varlen_new:
 * @q: (transfer none): packed queries `[Tq, Hq, D]`
 * @k: (transfer none): packed keys `[Tk, Hkv, D]`
 * @v: (transfer none): packed values `[Tk, Hkv, Dv]`
 * @out: (transfer none): the packed result `[Tq, Hq, Dv]`
 * @cu_seqlens_q: (transfer none): i32 `[B + 1]`, the first query row of each sequence, then `Tq`
 * @cu_seqlens_k: (transfer none): i32 `[B + 1]`, the first key row of each sequence, then `Tk`
 *
 * Makes an `attention-varlen` op (not causal, no window, default scale, no
 * lse); set the other properties with g_object_set().
 *
 * Returns: (transfer full): a new #AccelAttentionVarlen
 */
AccelOp *
accel_attention_varlen_new (AccelBuffer *q, AccelBuffer *k, AccelBuffer *v, AccelBuffer *out,
                            AccelBuffer *cu_seqlens_q, AccelBuffer *cu_seqlens_k)
{
  AccelBuffer *all[] = { q, k, v, out, cu_seqlens_q, cu_seqlens_k };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    g_return_val_if_fail (all[i] == NULL || ACCEL_IS_BUFFER (all[i]), NULL);

  return g_object_new (ACCEL_TYPE_ATTENTION_VARLEN, "q", q, "k", k, "v", v, "out", out,
                       "cu-seqlens-q", cu_seqlens_q, "cu-seqlens-k", cu_seqlens_k, NULL);
}
