/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelMatmul:
 *
 * Matrix multiply with a fused epilogue:
 * `v = epilogue (alpha · a_scale · b_scale · row_scales[i] · col_scales[j] · (op(a) op(b))[i, j] + beta · c [+ bias]) [+ residual]`,
 * `c = c_scale · v`, and `amax = max |v|` over the whole result,
 * on row-major contiguous buffers, `op(a)` `[m, k]`, `op(b)` `[k, n]`, `c`
 * `[m, n]`; rank 3 buffers are a batch with equal batch sizes, and `bias`
 * (`[n]`, added to every row), `row-scales` and `col-scales` are shared by
 * the batch. See #AccelMatmulEpilogue. The per-row and per-column scales,
 * the fp8 result and its amax are what fp8 training and inference need;
 * the residual add saves a pass over the result.
 *
 * Types, accumulated in f32:
 * - f32, f16, bf16: all of `a`, `b` and `c` the same type; `bias` too.
 * - fp8 (e4m3, e5m2; not both e5m2): `a` `[m, k]` and `b` stored transposed
 *   `[n, k]` (#AccelMatmul:transa false, #AccelMatmul:transb true), as
 *   tensor cores read them; `c` f32, f16, bf16, e4m3 or e5m2. `bias` is bf16
 *   for an f32 or fp8 `c` (f16 also allowed for an fp8 `c`), else `c`'s type.
 *   An fp8 `c` takes no accumulation (`beta` 0) and is scaled by `c-scale`
 *   before rounding, saturating at its largest finite value for e4m3;
 *   `a-scale` and `b-scale` dequantise the inputs.
 *
 * Op name: `matmul`.
 */

static const AccelDType matmul_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16, ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_FP8_E5M2,
};
static const AccelDType fp8_dtypes[] = { ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_FP8_E5M2 };
static const AccelDType fp8_out_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16, ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_FP8_E5M2,
};

static gboolean
is_fp8 (AccelDType dtype)
{
  return dtype == ACCEL_DTYPE_FP8_E4M3 || dtype == ACCEL_DTYPE_FP8_E5M2;
}

static const char *
epilogue_nick (AccelMatmulEpilogue epilogue)
{
  GEnumValue *v = g_enum_get_value (g_type_class_peek (ACCEL_TYPE_MATMUL_EPILOGUE), epilogue);
  return v ? v->value_nick : "?";
}

static gboolean
check_types (AccelMatmul *self, GError **error)
{
  AccelOp *op = ACCEL_OP (self);
  AccelDType ta = accel_buffer_get_dtype (self->a);
  AccelDType tc = accel_buffer_get_dtype (self->c);

  if (!accel_op_check_dtype (op, "a", matmul_dtypes, G_N_ELEMENTS (matmul_dtypes), error))
    return FALSE;
  if (!is_fp8 (ta))
    return accel_op_check_same_dtype (op, "a", "b", error)
           && accel_op_check_same_dtype (op, "a", "c", error);

  if (!accel_op_check_dtype (op, "b", fp8_dtypes, G_N_ELEMENTS (fp8_dtypes), error)
      || !accel_op_check_dtype (op, "c", fp8_out_dtypes, G_N_ELEMENTS (fp8_out_dtypes), error))
    return FALSE;
  if (ta == ACCEL_DTYPE_FP8_E5M2 && accel_buffer_get_dtype (self->b) == ACCEL_DTYPE_FP8_E5M2)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "matmul: “a” and “b” are both fp8-e5m2; at most one fp8 operand may be e5m2");
      return FALSE;
    }
  if (self->transa || !self->transb)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "matmul: fp8 operands need “a” as [m, k] and “b” stored transposed as [n, k] "
                   "(transa false, transb true); got transa %s, transb %s",
                   self->transa ? "true" : "false", self->transb ? "true" : "false");
      return FALSE;
    }
  if (is_fp8 (tc) && self->beta != 0.0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "matmul: property “beta” is %g but “c” is %s; an fp8 result takes no accumulation (beta 0)",
                   self->beta, accel_dtype_get_name (tc));
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_bias (AccelMatmul *self, gint64 n, GError **error)
{
  AccelOp *op = ACCEL_OP (self);
  AccelMatmulEpilogue e = self->epilogue;
  gboolean wants = e == ACCEL_MATMUL_EPILOGUE_BIAS || e == ACCEL_MATMUL_EPILOGUE_BIAS_RELU
                   || e == ACCEL_MATMUL_EPILOGUE_BIAS_GELU || e == ACCEL_MATMUL_EPILOGUE_BIAS_GELU_ERF;

  if (wants != (self->bias != NULL))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   wants ? "matmul: epilogue %s needs the buffer property “bias”"
                         : "matmul: property “bias” is set but epilogue %s adds no bias",
                   epilogue_nick (e));
      return FALSE;
    }
  if (!wants)
    return TRUE;

  AccelDType ta = accel_buffer_get_dtype (self->a);
  AccelDType tc = accel_buffer_get_dtype (self->c);
  AccelDType tb = accel_buffer_get_dtype (self->bias);
  gboolean ok;
  const char *want;
  if (!is_fp8 (ta))
    ok = tb == tc, want = accel_dtype_get_name (tc);
  else if (tc == ACCEL_DTYPE_F16 || tc == ACCEL_DTYPE_BF16)
    ok = tb == tc, want = accel_dtype_get_name (tc);
  else if (tc == ACCEL_DTYPE_F32)
    ok = tb == ACCEL_DTYPE_BF16, want = "bf16 (for fp8 inputs and an f32 “c”)";
  else
    ok = tb == ACCEL_DTYPE_BF16 || tb == ACCEL_DTYPE_F16, want = "bf16 or f16 (for an fp8 “c”)";
  if (!ok)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "matmul: property “bias” is %s; it must be %s", accel_dtype_get_name (tb), want);
      return FALSE;
    }
  gint64 dims[1] = { n };
  return accel_op_check_contiguous (op, "bias", error)
         && accel_op_expect_dims_ (error, "matmul", "bias", self->bias, dims, 1, "one per column of “c”");
}

/* The residual, the per-row and per-column scales and the amax. */
static gboolean
check_extras (AccelMatmul *self, const AccelGemmDims *dims, GError **error)
{
  AccelOp *op = ACCEL_OP (self);
  static const AccelDType f32[] = { ACCEL_DTYPE_F32 };
  gint64 rows[1] = { dims->m }, cols[1] = { dims->n }, one[1] = { 1 };

  if (self->residual != NULL
      && (!accel_op_check_same_dtype (op, "c", "residual", error)
          || !accel_op_check_contiguous (op, "residual", error)
          || !accel_op_check_same_dims_ ("matmul", "c", self->c, "residual", self->residual, error)))
    return FALSE;
  if (self->row_scales != NULL
      && (!accel_op_check_dtype (op, "row-scales", f32, 1, error)
          || !accel_op_check_contiguous (op, "row-scales", error)
          || !accel_op_expect_dims_ (error, "matmul", "row-scales", self->row_scales, rows, 1, "one per row of “c”")))
    return FALSE;
  if (self->col_scales != NULL
      && (!accel_op_check_dtype (op, "col-scales", f32, 1, error)
          || !accel_op_check_contiguous (op, "col-scales", error)
          || !accel_op_expect_dims_ (error, "matmul", "col-scales", self->col_scales, cols, 1,
                                     "one per column of “c”")))
    return FALSE;
  return self->amax == NULL
         || (accel_op_check_dtype (op, "amax", f32, 1, error)
             && accel_op_expect_dims_ (error, "matmul", "amax", self->amax, one, 1, NULL));
}

static gboolean
accel_matmul_validate (AccelOp *op, GError **error)
{
  AccelMatmul *self = ACCEL_MATMUL (op);

  AccelGemmDims dims;
  if (!check_types (self, error)
      || !accel_gemm_dims (op, self->a, self->transa, self->b, self->transb, self->c, &dims, error))
    return FALSE;
  if (self->compute == ACCEL_GEMM_COMPUTE_TF32 && accel_buffer_get_dtype (self->a) != ACCEL_DTYPE_F32)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "matmul: property “compute” is tf32 but “a” is %s (tf32 applies to f32 only)",
                   accel_dtype_get_name (accel_buffer_get_dtype (self->a)));
      return FALSE;
    }
  if (self->c_scale != 1.0 && !is_fp8 (accel_buffer_get_dtype (self->c)))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "matmul: property “c-scale” is %g but “c” is %s; it scales fp8 results only",
                   self->c_scale, accel_dtype_get_name (accel_buffer_get_dtype (self->c)));
      return FALSE;
    }
  return check_bias (self, dims.n, error) && check_extras (self, &dims, error)
         && _accel_op_check_results_alias (op, error);
}

ACCEL_DEFINE_OP_TYPE (AccelMatmul, accel_matmul, "matmul",
                      "Matrix multiply with a fused epilogue (bias, ReLU, GELU) and fp8 scaling",
                      _accel_matmul_params, accel_matmul_validate)
