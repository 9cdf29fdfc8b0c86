/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"

/**
 * AccelGroupedGemm:
 *
 * G independent matrix products in one op, the mixture-of-experts form:
 * for each group `g` and each of its rows `t`,
 * `out[t, :] = alpha · a[t, :] · op(b[g]) + bias[g, :]`. Groups may be
 * empty. The offsets start at 0, never decrease and end at T; they are data
 * on the device and are checked where the kernel runs (a bad offset fails
 * the op with %ACCEL_ERROR_INVALID_ARGUMENT naming `group-offsets`, and
 * nothing is read out of bounds), never read back to the host first.
 *
 * Types: `a` and `b` both bf16, both f16, both fp8-e4m3, or both f32; `out`
 * bf16, f16 or f32 (f32 for f32 inputs); products accumulate in f32.
 * Contiguous buffers.
 *
 * Op name: `grouped-gemm`.
 */

static const AccelDType input_dtypes[] = {
  ACCEL_DTYPE_BF16, ACCEL_DTYPE_F16, ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_F32,
};
static const AccelDType out_dtypes[] = { ACCEL_DTYPE_BF16, ACCEL_DTYPE_F16, ACCEL_DTYPE_F32 };
static const AccelDType offset_dtypes[] = { ACCEL_DTYPE_I32 };

static gboolean
accel_grouped_gemm_validate (AccelOp *op, GError **error)
{
  AccelGroupedGemm *self = ACCEL_GROUPED_GEMM (op);
  static const char *const names[] = { "a", "b", "group-offsets", "out" };

  if (!_accel_op_check_dtypes (op, input_dtypes, G_N_ELEMENTS (input_dtypes), error, "a", "b", NULL)
      || !accel_op_check_dtype (op, "out", out_dtypes, G_N_ELEMENTS (out_dtypes), error)
      || !accel_op_check_dtype (op, "group-offsets", offset_dtypes, 1, error)
      || !accel_op_check_rank (op, "a", 2, 2, error)
      || !accel_op_check_rank (op, "b", 3, 3, error)
      || !accel_op_check_rank (op, "group-offsets", 1, 1, error))
    return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (!accel_op_check_contiguous (op, names[i], error))
      return FALSE;
  if (accel_buffer_get_dtype (self->a) == ACCEL_DTYPE_F32 && accel_buffer_get_dtype (self->out) != ACCEL_DTYPE_F32)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "grouped-gemm: “out” is %s; f32 inputs give an f32 result",
                   accel_dtype_get_name (accel_buffer_get_dtype (self->out)));
      return FALSE;
    }

  const AccelShape *sa = accel_buffer_get_shape (self->a), *sb = accel_buffer_get_shape (self->b);
  gint64 T = accel_shape_get_dim (sa, 0), K = accel_shape_get_dim (sa, 1);
  gint64 G = accel_shape_get_dim (sb, 0);
  gint64 N = accel_shape_get_dim (sb, self->transb ? 1 : 2);
  gint64 want_b[3] = { G, self->transb ? N : K, self->transb ? K : N };
  gint64 want_offsets[1] = { G + 1 }, want_out[2] = { T, N }, want_bias[2] = { G, N };
  if (!accel_op_expect_dims_ (error, "grouped-gemm", "b", self->b, want_b, 3,
                              self->transb ? "[G, N, K] (transb), K the columns of “a”" : "[G, K, N], K the columns of “a”")
      || !accel_op_expect_dims_ (error, "grouped-gemm", "group-offsets", self->group_offsets, want_offsets, 1,
                                 "one more than the groups of “b”")
      || !accel_op_expect_dims_ (error, "grouped-gemm", "out", self->out, want_out, 2, NULL))
    return FALSE;
  if (self->bias != NULL
      && (!accel_op_check_same_dtype (op, "out", "bias", error)
          || !accel_op_check_contiguous (op, "bias", error)
          || !accel_op_expect_dims_ (error, "grouped-gemm", "bias", self->bias, want_bias, 2, "one row per group")))
    return FALSE;
  if (T > G_MAXINT || K > G_MAXINT || N > G_MAXINT || G > G_MAXINT - 1)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "grouped-gemm: T=%" G_GINT64_FORMAT ", K=%" G_GINT64_FORMAT ", N=%" G_GINT64_FORMAT
                   ", G=%" G_GINT64_FORMAT ": each must be below %d", T, K, N, G, G_MAXINT);
      return FALSE;
    }
  return _accel_op_check_results_alias (op, error);
}

ACCEL_DEFINE_OP_TYPE (AccelGroupedGemm, accel_grouped_gemm, "grouped-gemm",
                      "G independent matrix products over packed rows (mixture-of-experts)",
                      _accel_grouped_gemm_params, accel_grouped_gemm_validate)
