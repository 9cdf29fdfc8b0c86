/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelQuantMatmul:
 *
 * Weight-only quantised matrix product, the LLM decode case:
 * `out = a · wᵀ + bias` with `w[n, k] = (q[n, k] − zero[n, g]) · scale[n, g]`,
 * `g = k / group_size`, computed in f32 and rounded once to `out`'s dtype.
 * The zero point is `zeros` where given, else 8 for int4 (codes 0 to 15,
 * symmetric around 8) and 0 for int8; fp8 weights take a scale only. This
 * is the layout of GPTQ/AWQ-style int4 checkpoints with the zero points
 * unpacked to `scales`' type.
 *
 * K must be a multiple of `group-size`, and `group-size` a multiple of 32
 * (64 and 128 are the usual ones; K itself gives one scale per row).
 * Contiguous buffers.
 *
 * Op name: `quant-matmul`.
 */

static const AccelDType act_dtypes[] = { ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16 };
static const AccelDType scale_dtypes[] = { ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16, ACCEL_DTYPE_F32 };

static gboolean
accel_quant_matmul_validate (AccelOp *op, GError **error)
{
  AccelQuantMatmul *self = ACCEL_QUANT_MATMUL (op);
  static const char *const names[] = { "a", "b", "scales", "out" };
  static const AccelDType int4_dtypes[] = { ACCEL_DTYPE_U8 }, int8_dtypes[] = { ACCEL_DTYPE_I8 };
  static const AccelDType fp8_dtypes[] = { ACCEL_DTYPE_FP8_E4M3 };
  const AccelDType *b_dtypes = self->format == ACCEL_QUANT_FORMAT_INT4 ? int4_dtypes
                               : self->format == ACCEL_QUANT_FORMAT_INT8 ? int8_dtypes : fp8_dtypes;

  if (!_accel_op_check_dtypes (op, act_dtypes, G_N_ELEMENTS (act_dtypes), error, "a", "out", NULL)
      || !accel_op_check_dtype (op, "b", b_dtypes, 1, error)
      || !accel_op_check_dtype (op, "scales", scale_dtypes, G_N_ELEMENTS (scale_dtypes), error))
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (!accel_op_check_rank (op, names[i], 2, 2, error) || !accel_op_check_contiguous (op, names[i], error))
      return FALSE;

  const AccelShape *sa = accel_buffer_get_shape (self->a), *sb = accel_buffer_get_shape (self->b);
  gint64 M = accel_shape_get_dim (sa, 0), K = accel_shape_get_dim (sa, 1), N = accel_shape_get_dim (sb, 0);
  if (self->group_size % 32 != 0 || K % self->group_size != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "quant-matmul: property “group-size” is %d; it must be a multiple of 32 that divides K = %"
                   G_GINT64_FORMAT " (the columns of “a”)", self->group_size, K);
      return FALSE;
    }
  gint64 want_b[2] = { N, self->format == ACCEL_QUANT_FORMAT_INT4 ? K / 2 : K };
  gint64 want_scales[2] = { N, K / self->group_size }, want_out[2] = { M, N }, want_bias[1] = { N };
  if (!accel_op_expect_dims_ (error, "quant-matmul", "b", self->b, want_b, 2,
                              self->format == ACCEL_QUANT_FORMAT_INT4 ? "two int4 codes per byte along K"
                                                                      : "one weight per column of “a”")
      || !accel_op_expect_dims_ (error, "quant-matmul", "scales", self->scales, want_scales, 2,
                                 "one per group of “group-size” weights along K")
      || !accel_op_expect_dims_ (error, "quant-matmul", "out", self->out, want_out, 2, NULL))
    return FALSE;
  if (self->zeros != NULL)
    {
      if (self->format == ACCEL_QUANT_FORMAT_FP8_E4M3)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "quant-matmul: property “zeros” is set, but fp8 weights take no zero point");
          return FALSE;
        }
      if (!accel_op_check_same_dtype (op, "scales", "zeros", error)
          || !accel_op_check_contiguous (op, "zeros", error)
          || !accel_op_expect_dims_ (error, "quant-matmul", "zeros", self->zeros, want_scales, 2, "as “scales”"))
        return FALSE;
    }
  if (self->bias != NULL
      && (!accel_op_check_same_dtype (op, "a", "bias", error)
          || !accel_op_check_contiguous (op, "bias", error)
          || !accel_op_expect_dims_ (error, "quant-matmul", "bias", self->bias, want_bias, 1, "one per row of “b”")))
    return FALSE;
  if (M > G_MAXINT || N > G_MAXINT || K > G_MAXINT)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "quant-matmul: M=%" G_GINT64_FORMAT ", N=%" G_GINT64_FORMAT ", K=%" G_GINT64_FORMAT
                   ": each must be at most %d", M, N, K, G_MAXINT);
      return FALSE;
    }
  return _accel_op_check_results_alias (op, error);
}

ACCEL_DEFINE_OP_TYPE (AccelQuantMatmul, accel_quant_matmul, "quant-matmul",
                      "Weight-only quantised matmul: f16/bf16 activations, int4/int8/fp8 weights with group scales",
                      _accel_quant_matmul_params, accel_quant_matmul_validate)
