/* accel-attention-family.c: the parameters and checks that the attention
 * op types share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-attention-family-private.h"

void
_accel_attention_install_mask_params (AccelOpClass *klass, gsize causal_offset)
{
  accel_op_class_install_params_at (klass, causal_offset, _accel_attention_mask_fields_params,
                                    G_N_ELEMENTS (_accel_attention_mask_fields_params));
}

gboolean
_accel_attention_check_heads (AccelOp *op, gint64 hq, gint64 hkv, GError **error)
{
  if (hkv >= 1 && hq % hkv == 0)
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
               "%s: “q” has %" G_GINT64_FORMAT " heads, not a multiple of the %" G_GINT64_FORMAT " heads of the keys",
               accel_op_get_type_name (op), hq, hkv);
  return FALSE;
}

static gboolean
dims_are (AccelBuffer *buffer, const gint64 *dims, guint rank)
{
  const AccelShape *shape = accel_buffer_get_shape (buffer);
  if (accel_shape_get_rank (shape) != rank)
    return FALSE;
  for (guint i = 0; i < rank; i++)
    if (accel_shape_get_dim (shape, i) != dims[i])
      return FALSE;
  return TRUE;
}

static const AccelDType f32_only[] = { ACCEL_DTYPE_F32 };

gboolean
_accel_attention_check_slopes (AccelOp *op, AccelBuffer *slopes, gint64 batch, gint64 hq, GError **error)
{
  if (slopes == NULL)
    return TRUE;
  if (!accel_op_check_dtype (op, "alibi-slopes", f32_only, 1, error)
      || !accel_op_check_contiguous (op, "alibi-slopes", error))
    return FALSE;
  const gint64 per_head[1] = { hq }, per_batch[2] = { batch, hq };
  if (dims_are (slopes, per_head, 1) || dims_are (slopes, per_batch, 2))
    return TRUE;
  char expected[96];
  g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT "] or [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]",
              hq, batch, hq);
  return accel_op_shape_error_ (error, accel_op_get_type_name (op), "alibi-slopes", slopes, expected);
}

gboolean
_accel_attention_check_lse (AccelOp *op, AccelBuffer *lse, const gint64 *dims, guint rank, GError **error)
{
  if (lse == NULL)
    return TRUE;
  if (!accel_op_check_dtype (op, "lse", f32_only, 1, error) || !accel_op_check_contiguous (op, "lse", error))
    return FALSE;
  if (dims_are (lse, dims, rank))
    return TRUE;
  g_autoptr(AccelShape) want = accel_shape_new (dims, rank);
  g_autofree char *expected = accel_shape_to_string (want);
  return accel_op_shape_error_ (error, accel_op_get_type_name (op), "lse", lse, expected);
}

gboolean
_accel_attention_check_tensors (AccelOp *op,
                                const char *const *names,
                                guint rank,
                                const AccelDType *dtypes,
                                guint n_dtypes,
                                GError **error)
{
  if (!accel_op_check_dtype (op, names[0], dtypes, n_dtypes, error))
    return FALSE;
  for (guint i = 0; names[i] != NULL; i++)
    if ((i > 0 && !accel_op_check_same_dtype (op, names[0], names[i], error))
        || !accel_op_check_rank (op, names[i], rank, rank, error)
        || !accel_op_check_contiguous (op, names[i], error))
      return FALSE;
  return TRUE;
}

gboolean
_accel_attention_check_dense_dims (AccelOp *op,
                                   AccelBuffer *q,
                                   AccelBuffer *k,
                                   AccelBuffer *v,
                                   AccelBuffer *out,
                                   AccelBuffer *lse,
                                   AccelBuffer *alibi_slopes,
                                   GError **error)
{
  const char *name = accel_op_get_type_name (op);
  const AccelShape *s_q = accel_buffer_get_shape (q);
  const AccelShape *s_k = accel_buffer_get_shape (k);
  const AccelShape *s_v = accel_buffer_get_shape (v);
  gint64 B = accel_shape_get_dim (s_q, 0), Hq = accel_shape_get_dim (s_q, 1);
  gint64 Sq = accel_shape_get_dim (s_q, 2), D = accel_shape_get_dim (s_q, 3);
  gint64 Hkv = accel_shape_get_dim (s_k, 1), Sk = accel_shape_get_dim (s_k, 2);
  gint64 Dv = accel_shape_get_dim (s_v, 3);
  char expected[160];

  if (accel_shape_get_dim (s_k, 0) != B || accel_shape_get_dim (s_k, 3) != D)
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", Hkv, Sk, %" G_GINT64_FORMAT "] (batch and head dim of q)", B, D);
      return accel_op_shape_error_ (error, name, "k", k, expected);
    }
  if (!_accel_attention_check_heads (op, Hq, Hkv, error))
    return FALSE;
  const gint64 want_v[4] = { B, Hkv, Sk, Dv };
  if (!dims_are (v, want_v, 4))
    {
      g_snprintf (expected, sizeof expected, "[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", Dv] (as k)",
                  B, Hkv, Sk);
      return accel_op_shape_error_ (error, name, "v", v, expected);
    }
  const gint64 want_out[4] = { B, Hq, Sq, Dv };
  if (!dims_are (out, want_out, 4))
    return accel_op_expect_dims_ (error, name, "out", out, want_out, 4, NULL);
  const gint64 lse_dims[3] = { B, Hq, Sq };
  return _accel_attention_check_lse (op, lse, lse_dims, 3, error)
         && _accel_attention_check_slopes (op, alibi_slopes, B, Hq, error);
}

gboolean
_accel_attention_check_varlen_dims (AccelOp *op,
                                    AccelBuffer *q,
                                    AccelBuffer *k,
                                    AccelBuffer *v,
                                    AccelBuffer *out,
                                    AccelBuffer *cu_seqlens_q,
                                    AccelBuffer *cu_seqlens_k,
                                    AccelBuffer *lse,
                                    AccelBuffer *alibi_slopes,
                                    GError **error)
{
  const char *name = accel_op_get_type_name (op);
  const AccelShape *sq = accel_buffer_get_shape (q);
  const AccelShape *sk = accel_buffer_get_shape (k);
  gint64 Tq = accel_shape_get_dim (sq, 0), Hq = accel_shape_get_dim (sq, 1), D = accel_shape_get_dim (sq, 2);
  gint64 Tk = accel_shape_get_dim (sk, 0), Hkv = accel_shape_get_dim (sk, 1);
  gint64 Dv = accel_shape_get_dim (accel_buffer_get_shape (v), 2);
  gint64 n_cu = accel_shape_get_dim (accel_buffer_get_shape (cu_seqlens_q), 0);
  char expected[160];

  if (accel_shape_get_dim (sk, 2) != D)
    {
      g_snprintf (expected, sizeof expected, "[Tk, Hkv, %" G_GINT64_FORMAT "] (head dim of q)", D);
      return accel_op_shape_error_ (error, name, "k", k, expected);
    }
  if (!_accel_attention_check_heads (op, Hq, Hkv, error))
    return FALSE;
  const gint64 want_v[3] = { Tk, Hkv, Dv }, want_out[3] = { Tq, Hq, Dv };
  if (!accel_op_expect_dims_ (error, name, "v", v, want_v, 3, "as k")
      || !accel_op_expect_dims_ (error, name, "out", out, want_out, 3, NULL))
    return FALSE;
  if (n_cu < 2)
    return accel_op_shape_error_ (error, name, "cu-seqlens-q", cu_seqlens_q, "[B + 1] with B >= 1");
  const gint64 want_cu[1] = { n_cu }, lse_dims[2] = { Hq, Tq };
  return accel_op_expect_dims_ (error, name, "cu-seqlens-k", cu_seqlens_k, want_cu, 1, "as cu-seqlens-q")
         && _accel_attention_check_lse (op, lse, lse_dims, 2, error)
         && _accel_attention_check_slopes (op, alibi_slopes, n_cu - 1, Hq, error);
}

gboolean
_accel_attention_check_grads (AccelOp *op, GError **error)
{
  const char *const pairs[][2] = { { "dout", "out" }, { "dq", "q" }, { "dk", "k" }, { "dv", "v" } };
  for (guint i = 0; i < G_N_ELEMENTS (pairs); i++)
    {
      AccelBuffer *grad = accel_op_peek_buffer (op, pairs[i][0]), *of = accel_op_peek_buffer (op, pairs[i][1]);
      if (!accel_shape_same_dims (accel_buffer_get_shape (grad), accel_buffer_get_shape (of)))
        {
          g_autofree char *want = accel_op_describe_shape_ (of);
          g_autofree char *expected = g_strdup_printf ("%s (as “%s”)", want, pairs[i][1]);
          return accel_op_shape_error_ (error, accel_op_get_type_name (op), pairs[i][0], grad, expected);
        }
    }
  return TRUE;
}
