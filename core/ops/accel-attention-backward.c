/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"

/**
 * AccelAttentionBackward:
 * @q: queries `[B, Hq, Sq, D]`
 * @k: keys `[B, Hkv, Sk, D]`
 * @v: values `[B, Hkv, Sk, Dv]`
 * @out: the forward result `[B, Hq, Sq, Dv]`
 * @dout: the gradient of the loss with respect to @out
 * @lse: the forward pass's log-sum-exp `[B, Hq, Sq]`, f32
 * @dq: the gradient with respect to @q (written)
 * @dk: the gradient with respect to @k (written; summed over the query heads of each group)
 * @dv: the gradient with respect to @v (written; likewise)
 * @causal: as #AccelAttention:causal
 * @window_left: as #AccelAttention:window-left
 * @window_right: as #AccelAttention:window-right
 * @scale: as #AccelAttention:scale
 * @softcap: as #AccelAttention:softcap
 * @alibi_slopes: (nullable): as #AccelAttention:alibi-slopes
 * @sinks: as #AccelAttention:sinks
 *
 * The gradients of `attention` (see #AccelAttention, whose parameters must
 * be the same as the forward pass's). With `P = exp (s - lse)` recomputed
 * from @lse, `dV = Pᵀ dO`, `dP = dO Vᵀ`, `dS = P ∘ (dP - rowsum (dO ∘ O))`
 * (times `1 - tanh²` under the soft cap), `dQ = scale dS K` and
 * `dK = scale dSᵀ Q`.
 *
 * Types: f32, f64, f16, bf16, the same for every buffer but @lse. All
 * buffers contiguous.
 *
 * Op name: `attention-backward`.
 */

G_DEFINE_FINAL_TYPE (AccelAttentionBackward, accel_attention_backward, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_Q,
  PROP_K,
  PROP_V,
  PROP_OUT,
  PROP_DOUT,
  PROP_LSE,
  PROP_DQ,
  PROP_DK,
  PROP_DV,
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

static const AccelDType attention_backward_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

static AccelBuffer **
buffer_field (AccelAttentionBackward *self, guint prop_id)
{
  switch (prop_id)
    {
    case PROP_Q: return &self->q;
    case PROP_K: return &self->k;
    case PROP_V: return &self->v;
    case PROP_OUT: return &self->out;
    case PROP_DOUT: return &self->dout;
    case PROP_LSE: return &self->lse;
    case PROP_DQ: return &self->dq;
    case PROP_DK: return &self->dk;
    case PROP_DV: return &self->dv;
    case PROP_ALIBI_SLOPES: return &self->alibi_slopes;
    default: return NULL;
    }
}

static void
accel_attention_backward_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelAttentionBackward *self = ACCEL_ATTENTION_BACKWARD (object);
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
accel_attention_backward_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelAttentionBackward *self = ACCEL_ATTENTION_BACKWARD (object);
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
accel_attention_backward_dispose (GObject *object)
{
  AccelAttentionBackward *self = ACCEL_ATTENTION_BACKWARD (object);

  for (guint i = PROP_Q; i <= PROP_ALIBI_SLOPES; i++)
    g_clear_object (buffer_field (self, i));

  G_OBJECT_CLASS (accel_attention_backward_parent_class)->dispose (object);
}

static gboolean
same_dims_as (AccelAttentionBackward *self, const char *name, AccelBuffer *buffer,
              const char *like_name, AccelBuffer *like, GError **error)
{
  if (accel_shape_same_dims (accel_buffer_get_shape (buffer), accel_buffer_get_shape (like)))
    return TRUE;
  g_autofree char *want = accel_op_describe_shape_ (like);
  g_autofree char *expected = g_strdup_printf ("%s (as '%s')", want, like_name);
  return accel_op_shape_error_ (error, "attention-backward", name, buffer, expected);
}

static gboolean
accel_attention_backward_check_dims (AccelAttentionBackward *self, GError **error)
{
  const AccelShape *sq = accel_buffer_get_shape (self->q);
  const AccelShape *sk = accel_buffer_get_shape (self->k);
  const AccelShape *sv = accel_buffer_get_shape (self->v);
  const AccelShape *so = accel_buffer_get_shape (self->out);
  const AccelShape *sl = accel_buffer_get_shape (self->lse);
  gint64 B = accel_shape_get_dim (sq, 0), Hq = accel_shape_get_dim (sq, 1);
  gint64 Sq = accel_shape_get_dim (sq, 2), D = accel_shape_get_dim (sq, 3);
  gint64 Hkv = accel_shape_get_dim (sk, 1), Sk = accel_shape_get_dim (sk, 2);
  gint64 Dv = accel_shape_get_dim (sv, 3);
  char expected[160];

  if (accel_shape_get_dim (sk, 0) != B || accel_shape_get_dim (sk, 3) != D)
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", Hkv, Sk, %" G_GINT64_FORMAT "] (batch and head dim of q)", B, D);
      return accel_op_shape_error_ (error, "attention-backward", "k", self->k, expected);
    }
  if (Hkv < 1 || Hq % Hkv != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "attention-backward: 'q' has %" G_GINT64_FORMAT " heads, not a multiple of the %" G_GINT64_FORMAT
                   " heads of 'k'", Hq, Hkv);
      return FALSE;
    }
  if (accel_shape_get_dim (sv, 0) != B || accel_shape_get_dim (sv, 1) != Hkv || accel_shape_get_dim (sv, 2) != Sk)
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", Dv] (as k)",
                  B, Hkv, Sk);
      return accel_op_shape_error_ (error, "attention-backward", "v", self->v, expected);
    }
  if (accel_shape_get_dim (so, 0) != B || accel_shape_get_dim (so, 1) != Hq
      || accel_shape_get_dim (so, 2) != Sq || accel_shape_get_dim (so, 3) != Dv)
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                  ", %" G_GINT64_FORMAT "]", B, Hq, Sq, Dv);
      return accel_op_shape_error_ (error, "attention-backward", "out", self->out, expected);
    }
  if (accel_shape_get_rank (sl) != 3 || accel_shape_get_dim (sl, 0) != B
      || accel_shape_get_dim (sl, 1) != Hq || accel_shape_get_dim (sl, 2) != Sq)
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
                  B, Hq, Sq);
      return accel_op_shape_error_ (error, "attention-backward", "lse", self->lse, expected);
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
          return accel_op_shape_error_ (error, "attention-backward", "alibi-slopes", self->alibi_slopes, expected);
        }
    }
  return same_dims_as (self, "dout", self->dout, "out", self->out, error)
         && same_dims_as (self, "dq", self->dq, "q", self->q, error)
         && same_dims_as (self, "dk", self->dk, "k", self->k, error)
         && same_dims_as (self, "dv", self->dv, "v", self->v, error);
}

static gboolean
accel_attention_backward_validate (AccelOp *op, GError **error)
{
  AccelAttentionBackward *self = ACCEL_ATTENTION_BACKWARD (op);
  static const char *const names[] = { "q", "k", "v", "out", "dout", "lse", "dq", "dk", "dv", "alibi-slopes" };
  static const AccelDType lse_dtypes[] = { ACCEL_DTYPE_F32 };
  const guint n_required = PROP_DV - PROP_Q + 1;

  for (guint i = 0; i < n_required; i++)
    if (!accel_op_require_ ("attention-backward", names[i], *buffer_field (self, PROP_Q + i), error))
      return FALSE;

  if (!accel_op_check_dtype (op, "q", attention_backward_dtypes, G_N_ELEMENTS (attention_backward_dtypes), error))
    return FALSE;
  for (guint i = 0; i < n_required; i++)
    {
      gboolean is_lse = PROP_Q + i == PROP_LSE;
      if (is_lse)
        {
          if (!accel_op_check_dtype (op, "lse", lse_dtypes, 1, error)
              || !accel_op_check_contiguous (op, "lse", error))
            return FALSE;
          continue;
        }
      if ((i > 0 && !accel_op_check_same_dtype (op, "q", names[i], error))
          || !accel_op_check_rank (op, names[i], 4, 4, error)
          || !accel_op_check_contiguous (op, names[i], error))
        return FALSE;
    }
  if (self->alibi_slopes != NULL
      && (!accel_op_check_dtype (op, "alibi-slopes", lse_dtypes, 1, error)
          || !accel_op_check_contiguous (op, "alibi-slopes", error)))
    return FALSE;
  if (!accel_attention_backward_check_dims (self, error))
    return FALSE;

  if (self->window_left < -1 || self->window_right < -1)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention-backward: 'window-left' (%d) and 'window-right' (%d) must be >= -1 (-1 is unbounded)",
                   self->window_left, self->window_right);
      return FALSE;
    }
  if (!isfinite (self->scale) || self->scale < 0.0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention-backward: property 'scale' is %g, expected >= 0 (0: 1/sqrt(D))", self->scale);
      return FALSE;
    }
  if (!isfinite (self->softcap) || self->softcap < 0.0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention-backward: property 'softcap' is %g, expected >= 0 (0: off)", self->softcap);
      return FALSE;
    }
  if (self->sinks < 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention-backward: property 'sinks' is %d, expected >= 0", self->sinks);
      return FALSE;
    }

  /* Gradients must not alias any input, nor each other. */
  for (guint r = PROP_DQ; r <= PROP_DV; r++)
    for (guint i = PROP_Q; i <= PROP_ALIBI_SLOPES; i++)
      {
        if (i == r)
          continue;
        AccelBuffer *a = *buffer_field (self, r), *b = *buffer_field (self, i);
        if (b != NULL && accel_op_buffers_alias_ (a, b))
          {
            g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                         "attention-backward: '%s' overlaps '%s'; gradients must not alias other buffers",
                         names[r - PROP_Q], names[i - PROP_Q]);
            return FALSE;
          }
      }
  return TRUE;
}

static void
accel_attention_backward_class_init (AccelAttentionBackwardClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_attention_backward_set_property;
  object_class->get_property = accel_attention_backward_get_property;
  object_class->dispose = accel_attention_backward_dispose;
  op_class->validate = accel_attention_backward_validate;

  accel_op_class_set_metadata (op_class, "attention-backward",
                               "Gradients of scaled dot-product attention with respect to q, k and v");
  accel_op_class_install_buffer (op_class, PROP_Q, "q", "Queries [B, Hq, Sq, D]", ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_K, "k", "Keys [B, Hkv, Sk, D]", ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_V, "v", "Values [B, Hkv, Sk, Dv]", ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_OUT, "out", "Forward result [B, Hq, Sq, Dv]",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_DOUT, "dout", "Gradient of the result [B, Hq, Sq, Dv]",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_LSE, "lse", "Forward log-sum-exp [B, Hq, Sq], f32",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_DQ, "dq", "Gradient of q [B, Hq, Sq, D]", ACCEL_ACCESS_WRITE, TRUE);
  accel_op_class_install_buffer (op_class, PROP_DK, "dk", "Gradient of k [B, Hkv, Sk, D]", ACCEL_ACCESS_WRITE, TRUE);
  accel_op_class_install_buffer (op_class, PROP_DV, "dv", "Gradient of v [B, Hkv, Sk, Dv]", ACCEL_ACCESS_WRITE, TRUE);
  accel_op_class_install_buffer (op_class, PROP_ALIBI_SLOPES, "alibi-slopes",
                                 "Optional ALiBi slope of each query head [Hq] or [B, Hq], f32 (as the forward pass)",
                                 ACCEL_ACCESS_READ, FALSE);

  /**
   * AccelAttentionBackward:causal:
   *
   * As #AccelAttention:causal.
   */
  properties[PROP_CAUSAL] =
    g_param_spec_boolean ("causal", NULL, "Causal mask, bottom-right aligned", FALSE, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttentionBackward:window-left:
   *
   * As #AccelAttention:window-left.
   */
  properties[PROP_WINDOW_LEFT] =
    g_param_spec_int ("window-left", NULL, "Keys visible before the aligned position (-1: all)",
                      -1, G_MAXINT, -1, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttentionBackward:window-right:
   *
   * As #AccelAttention:window-right.
   */
  properties[PROP_WINDOW_RIGHT] =
    g_param_spec_int ("window-right", NULL, "Keys visible after the aligned position (-1: all)",
                      -1, G_MAXINT, -1, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttentionBackward:scale:
   *
   * As #AccelAttention:scale.
   */
  properties[PROP_SCALE] =
    g_param_spec_double ("scale", NULL, "Logit scale (0: 1/sqrt(head dim))", 0.0, G_MAXDOUBLE, 0.0,
                         ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttentionBackward:softcap:
   *
   * As #AccelAttention:softcap.
   */
  properties[PROP_SOFTCAP] =
    g_param_spec_double ("softcap", NULL, "Logit soft cap c: s -> c tanh(s/c) (0: off)", 0.0, G_MAXDOUBLE, 0.0,
                         ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelAttentionBackward:sinks:
   *
   * As #AccelAttention:sinks.
   */
  properties[PROP_SINKS] =
    g_param_spec_int ("sinks", NULL, "Leading keys exempt from the left window", 0, G_MAXINT, 0,
                      ACCEL_OP_PARAM_FLAGS);

  for (guint i = PROP_CAUSAL; i < N_PROPS; i++)
    g_object_class_install_property (object_class, i, properties[i]);
}

static void
accel_attention_backward_init (AccelAttentionBackward *self)
{
  self->window_left = -1;
  self->window_right = -1;
}

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
