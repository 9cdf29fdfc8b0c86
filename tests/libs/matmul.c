/* Tests of matmul: every epilogue, transposes, batches, alpha and beta,
 * f32, f16, bf16 and fp8 with per-tensor scales, against the definition
 * computed in f64 on the stored inputs; then bad input.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include "libs-test.h"

static double
gelu (double x)
{
  return 0.5 * x * (1 + tanh (0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

static double
gelu_erf (double x)
{
  return 0.5 * x * (1 + erf (x / sqrt (2.0)));
}

static gboolean
epilogue_has_bias (AccelMatmulEpilogue e)
{
  return e == ACCEL_MATMUL_EPILOGUE_BIAS || e == ACCEL_MATMUL_EPILOGUE_BIAS_RELU || e == ACCEL_MATMUL_EPILOGUE_BIAS_GELU
         || e == ACCEL_MATMUL_EPILOGUE_BIAS_GELU_ERF;
}

/* @v through the epilogue's activation (none: @v). */
static double
epilogue_activate (AccelMatmulEpilogue e, double v)
{
  if (e == ACCEL_MATMUL_EPILOGUE_RELU || e == ACCEL_MATMUL_EPILOGUE_BIAS_RELU)
    return MAX (v, 0);
  if (e == ACCEL_MATMUL_EPILOGUE_GELU || e == ACCEL_MATMUL_EPILOGUE_BIAS_GELU)
    return gelu (v);
  if (e == ACCEL_MATMUL_EPILOGUE_GELU_ERF || e == ACCEL_MATMUL_EPILOGUE_BIAS_GELU_ERF)
    return gelu_erf (v);
  return v;
}

typedef struct {
  AccelDType a_dtype, b_dtype, c_dtype, bias_dtype;
  gint64 batch, m, n, k;
  gboolean transa, transb;
  AccelMatmulEpilogue epilogue;
  double alpha, beta, a_scale, b_scale, c_scale;
} Case;

static void
run_case (const Case *t)
{
  gboolean batched = t->batch > 1;
  gint64 da[3] = { t->batch, t->transa ? t->k : t->m, t->transa ? t->m : t->k };
  gint64 db[3] = { t->batch, t->transb ? t->n : t->k, t->transb ? t->k : t->n };
  gint64 dc[3] = { t->batch, t->m, t->n }, dbias[1] = { t->n };
  gint64 na = t->batch * t->m * t->k, nb = t->batch * t->k * t->n, nc = t->batch * t->m * t->n;
  gboolean has_bias = epilogue_has_bias (t->epilogue);

  g_autofree double *a = lt_random (t->a_dtype, na, -1, 1);
  g_autofree double *b = lt_random (t->b_dtype, nb, -1, 1);
  g_autofree double *c0 = lt_random (t->c_dtype, nc, -1, 1);
  g_autofree double *bias = lt_random (t->bias_dtype, t->n, -1, 1);
  g_autoptr(AccelBuffer) ba = lt_new (t->a_dtype, da + !batched, 2 + batched, a);
  g_autoptr(AccelBuffer) bb = lt_new (t->b_dtype, db + !batched, 2 + batched, b);
  g_autoptr(AccelBuffer) bc = lt_new (t->c_dtype, dc + !batched, 2 + batched, c0);
  g_autoptr(AccelBuffer) bbias = has_bias ? lt_new (t->bias_dtype, dbias, 1, bias) : NULL;
  g_autoptr(AccelOp) op = accel_matmul_new (ba, bb, bc, t->epilogue);
  g_object_set (op, "bias", bbias, "transa", t->transa, "transb", t->transb, "alpha", t->alpha,
                "beta", t->beta, "a-scale", t->a_scale, "b-scale", t->b_scale, "c-scale", t->c_scale, NULL);

  /* f32 accumulation of k products; then one rounding to c's type. */
  double out_eps = lt_eps (t->c_dtype) * (t->c_dtype == ACCEL_DTYPE_F32 ? 1 : 1.01);
  double acc_tol = 1e-6 * sqrt ((double) t->k) * 4 * fabs (t->alpha * t->a_scale * t->b_scale) + 1e-6;
  /* fp8 on Hopper tensor cores accumulates in about 14 bits between
   * promotions to f32 (seen on the H100: 3e-4 off at k = 64 with f32
   * output): bound it by 2^-13 per unit of sum |a b| <= k. */
  gboolean fp8_in = t->a_dtype == ACCEL_DTYPE_FP8_E4M3 || t->a_dtype == ACCEL_DTYPE_FP8_E5M2;
  if (fp8_in)
    acc_tol += (double) t->k / 8192 * fabs (t->alpha * t->a_scale * t->b_scale);
  lt_submit_compare (op, out_eps * 2, acc_tol * 4 + out_eps * t->c_scale, "c", NULL);
  g_autofree double *c = lt_read (bc);
  g_autofree double *want = g_new (double, nc);
  g_autofree double *pre = g_new (double, nc);   /* before the activation */
  g_autofree double *mag = g_new (double, nc);   /* |alpha AB| + |beta C| + |bias| */
  for (gint64 p = 0; p < t->batch; p++)
    for (gint64 i = 0; i < t->m; i++)
      for (gint64 j = 0; j < t->n; j++)
        {
          double s = 0;
          for (gint64 l = 0; l < t->k; l++)
            {
              double av = t->transa ? a[p * t->m * t->k + l * t->m + i] : a[p * t->m * t->k + i * t->k + l];
              double bv = t->transb ? b[p * t->k * t->n + j * t->k + l] : b[p * t->k * t->n + l * t->n + j];
              s += av * bv;
            }
          double v = t->alpha * t->a_scale * t->b_scale * s;
          double m = fabs (v);
          if (t->beta != 0)
            {
              v += t->beta * c0[p * t->m * t->n + i * t->n + j];
              m += fabs (t->beta * c0[p * t->m * t->n + i * t->n + j]);
            }
          if (has_bias)
            {
              v += bias[j];
              m += fabs (bias[j]);
            }
          pre[p * t->m * t->n + i * t->n + j] = v;
          mag[p * t->m * t->n + i * t->n + j] = m;
          want[p * t->m * t->n + i * t->n + j] = epilogue_activate (t->epilogue, v) * t->c_scale;
        }
  /* The stored result is within half a unit of the output type, plus the
   * f32 accumulation. For a 16-bit output with an epilogue, cuBLASLt sums
   * `alpha AB`, `beta C` and the bias in the output type (seen on the H100:
   * f16, bias, beta 0.25: -0.04297 for -0.04282, 5 ulps, where `alpha AB`
   * was large and cancelled): a rounding of each term and of each partial
   * sum, bounded by eps times the sum of their magnitudes, then times the
   * activation's largest slope (1.13 for GELU). */
  double atol = acc_tol + (t->c_dtype == ACCEL_DTYPE_FP8_E4M3 ? 1.0 / 64 : 0)
                + (t->c_dtype == ACCEL_DTYPE_FP8_E5M2 ? 1.0 / 16384 : 0);
  gboolean output_sums = (t->c_dtype == ACCEL_DTYPE_F16 || t->c_dtype == ACCEL_DTYPE_BF16)
                           && t->epilogue != ACCEL_MATMUL_EPILOGUE_NONE;
  for (gint64 i = 0; i < nc; i++)
    {
      double tol = atol + out_eps * fabs (want[i]) + (output_sums ? out_eps * 1.13 * mag[i] : 0);
      if (!(fabs (c[i] - want[i]) <= tol))
        g_error ("matmul (%s, epilogue %d, %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                 ", batch %" G_GINT64_FORMAT ", beta %g): element %" G_GINT64_FORMAT " is %.9g, expected %.9g"
                 " (pre-activation %.9g of terms summing to %.3g in magnitude, tolerance %.3g)",
                 accel_dtype_get_name (t->c_dtype), t->epilogue, t->m, t->n, t->k, t->batch, t->beta, i, c[i],
                 want[i], pre[i], mag[i], tol);
    }
}

static void
test_epilogues (void)
{
  if (lt_device_for ("matmul", NULL) == NULL)
    return;
  const AccelDType dts[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16 };
  for (guint d = 0; d < G_N_ELEMENTS (dts); d++)
    for (AccelMatmulEpilogue e = ACCEL_MATMUL_EPILOGUE_NONE; e <= ACCEL_MATMUL_EPILOGUE_BIAS_GELU_ERF; e++)
      for (guint v = 0; v < 3; v++)
        {
          AccelDType dt = dts[d];
          Case t = {
            dt, dt, dt, dt,
            v == 2 ? 3 : 1, 17 + v * 8, 24 + v, 33 - v * 3,
            v == 1, v != 0, e,
            v == 1 ? -0.5 : 1.0, v == 2 ? 0.25 : 0.0, 1.0, 1.0, 1.0,
          };
          run_case (&t);
        }
}

/* The epilogues beyond cuBLASLt's: per-row and per-column scales of the
 * product, a residual added after the activation, an fp8 result with its
 * amax. */
typedef struct {
  AccelDType in, out;
  AccelMatmulEpilogue e;
  gboolean scales, residual, amax, transb;
  gint64 batch, m, n, k;
} Extras;

static void
run_extras (const Extras *t)
{
  gboolean fp8 = t->in == ACCEL_DTYPE_FP8_E4M3, fp8_out = t->out == ACCEL_DTYPE_FP8_E4M3, batched = t->batch > 1;
  gint64 m = t->m, n = t->n, k = t->k, nb = t->batch;
  gint64 da[3] = { nb, m, k }, db[3] = { nb, t->transb ? n : k, t->transb ? k : n }, dc[3] = { nb, m, n };
  gint64 dn[1] = { n }, dm[1] = { m }, d1[1] = { 1 };
  AccelDType bias_dt = fp8 ? ACCEL_DTYPE_BF16 : t->out;
  g_autofree double *a = lt_random (t->in, nb * m * k, -1, 1);
  g_autofree double *b = lt_random (t->in, nb * n * k, -1, 1);
  g_autofree double *bias = lt_random (bias_dt, n, -1, 1);
  g_autofree double *res = lt_random (t->out, nb * m * n, -1, 1);
  g_autofree double *rows = lt_random (ACCEL_DTYPE_F32, m, 0.5, 2);
  g_autofree double *cols = lt_random (ACCEL_DTYPE_F32, n, 0.5, 2);
  double c_scale = fp8_out ? 4.0 : 1.0;
  g_autoptr(AccelBuffer) ba = lt_new (t->in, da + !batched, 2 + batched, a);
  g_autoptr(AccelBuffer) bb = lt_new (t->in, db + !batched, 2 + batched, b);
  g_autoptr(AccelBuffer) bc = lt_alloc (t->out, dc + !batched, 2 + batched);
  g_autoptr(AccelBuffer) bbias = lt_new (bias_dt, dn, 1, bias);
  g_autoptr(AccelBuffer) bres = t->residual ? lt_new (t->out, dc + !batched, 2 + batched, res) : NULL;
  g_autoptr(AccelBuffer) brows = t->scales ? lt_new (ACCEL_DTYPE_F32, dm, 1, rows) : NULL;
  g_autoptr(AccelBuffer) bcols = t->scales ? lt_new (ACCEL_DTYPE_F32, dn, 1, cols) : NULL;
  g_autoptr(AccelBuffer) bamax = t->amax ? lt_alloc (ACCEL_DTYPE_F32, d1, 1) : NULL;
  gboolean has_bias = epilogue_has_bias (t->e);
  g_autoptr(AccelOp) op = accel_matmul_new (ba, bb, bc, t->e);
  g_object_set (op, "bias", has_bias ? bbias : NULL, "transb", t->transb, "residual", bres, "row-scales", brows,
                "col-scales", bcols, "amax", bamax, "c-scale", c_scale, NULL);

  g_autofree double *want = g_new (double, nb * m * n);
  double amax = 0, acc = 1e-6 * sqrt ((double) k) * 16 + (fp8 ? k / 8192.0 * 4 : 0);
  for (gint64 p = 0; p < nb; p++)
    for (gint64 i = 0; i < m; i++)
      for (gint64 j = 0; j < n; j++)
        {
          double s = 0;
          for (gint64 l = 0; l < k; l++)
            s += a[(p * m + i) * k + l] * (t->transb ? b[(p * n + j) * k + l] : b[(p * k + l) * n + j]);
          double v = s * (t->scales ? rows[i] * cols[j] : 1) + (has_bias ? bias[j] : 0);
          v = epilogue_activate (t->e, v);
          v += t->residual ? res[(p * m + i) * n + j] : 0;
          amax = MAX (amax, fabs (v));
          want[(p * m + i) * n + j] = v * c_scale;
        }
  double out_tol = fp8_out ? 1.0 / 16 : 2 * lt_eps (t->out);
  lt_submit_compare (op, out_tol, acc * 4, "c", t->amax ? "amax" : NULL, NULL);
  g_autofree double *got = lt_read (bc);
  lt_assert_close ("matmul extras", got, want, nb * m * n, out_tol, acc * 4 * c_scale);
  if (t->amax)
    {
      g_autofree double *got_amax = lt_read (bamax);
      lt_assert_close ("matmul amax", got_amax, &amax, 1, 1e-5, acc * 4);
    }
}

static void
test_extras (void)
{
  if (lt_device_for ("matmul", NULL) == NULL)
    return;
  const Extras cases[] = {
    { ACCEL_DTYPE_BF16, ACCEL_DTYPE_BF16, ACCEL_MATMUL_EPILOGUE_BIAS_GELU, FALSE, TRUE, TRUE, FALSE, 1, 19, 48, 64 },
    { ACCEL_DTYPE_F16, ACCEL_DTYPE_F16, ACCEL_MATMUL_EPILOGUE_BIAS_GELU_ERF, TRUE, TRUE, TRUE, FALSE, 1, 20, 48, 64 },
    { ACCEL_DTYPE_F32, ACCEL_DTYPE_F32, ACCEL_MATMUL_EPILOGUE_RELU, TRUE, FALSE, TRUE, FALSE, 1, 21, 48, 64 },
    { ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_FP8_E4M3, ACCEL_MATMUL_EPILOGUE_BIAS, TRUE, FALSE, TRUE, TRUE, 1, 22, 48, 64 },
    /* b [n, k], a residual, no amax: what the fused Hopper kernel takes, with
     * each activation, odd m, a batch; then the same beside an amax. */
    { ACCEL_DTYPE_BF16, ACCEL_DTYPE_BF16, ACCEL_MATMUL_EPILOGUE_BIAS_GELU, FALSE, TRUE, FALSE, TRUE, 1, 131, 264, 128 },
    { ACCEL_DTYPE_BF16, ACCEL_DTYPE_BF16, ACCEL_MATMUL_EPILOGUE_GELU_ERF, TRUE, TRUE, FALSE, TRUE, 2, 67, 136, 72 },
    { ACCEL_DTYPE_F16, ACCEL_DTYPE_F16, ACCEL_MATMUL_EPILOGUE_BIAS_RELU, TRUE, TRUE, FALSE, TRUE, 1, 300, 40, 256 },
    { ACCEL_DTYPE_F16, ACCEL_DTYPE_F16, ACCEL_MATMUL_EPILOGUE_NONE, FALSE, TRUE, FALSE, TRUE, 3, 5, 8, 16 },
    { ACCEL_DTYPE_BF16, ACCEL_DTYPE_BF16, ACCEL_MATMUL_EPILOGUE_BIAS, FALSE, TRUE, TRUE, TRUE, 1, 33, 72, 40 },
    /* k and n not multiples of 8, fp8 with scales alone. */
    { ACCEL_DTYPE_BF16, ACCEL_DTYPE_BF16, ACCEL_MATMUL_EPILOGUE_BIAS_GELU, TRUE, TRUE, FALSE, TRUE, 1, 9, 30, 27 },
    { ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_BF16, ACCEL_MATMUL_EPILOGUE_GELU, TRUE, FALSE, FALSE, TRUE, 1, 70, 96, 128 },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    run_extras (&cases[c]);
}

static void
test_fp8 (void)
{
  if (lt_device_for ("matmul", NULL) == NULL)
    return;
  const Case cases[] = {
    { ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_F32, ACCEL_DTYPE_BF16,
      1, 32, 48, 64, FALSE, TRUE, ACCEL_MATMUL_EPILOGUE_BIAS, 1.0, 0.5, 0.5, 2.0, 1.0 },
    { ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_FP8_E5M2, ACCEL_DTYPE_BF16, ACCEL_DTYPE_BF16,
      2, 16, 32, 32, FALSE, TRUE, ACCEL_MATMUL_EPILOGUE_RELU, 1.0, 0.0, 1.0, 1.0, 1.0 },
    { ACCEL_DTYPE_FP8_E5M2, ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_F16, ACCEL_DTYPE_F16,
      1, 48, 16, 32, FALSE, TRUE, ACCEL_MATMUL_EPILOGUE_BIAS_GELU, 0.75, 0.0, 1.0, 1.0, 1.0 },
    { ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_BF16,
      1, 16, 16, 32, FALSE, TRUE, ACCEL_MATMUL_EPILOGUE_BIAS_RELU, 1.0, 0.0, 1.0, 1.0, 4.0 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    run_case (&cases[i]);

  /* Saturation of an e4m3 result at 448: 16 x 1 x 100 each. */
  gint64 d16[2] = { 16, 16 };
  double ones[256];
  for (guint i = 0; i < 256; i++)
    ones[i] = 1;
  g_autoptr(AccelBuffer) ba = lt_new (ACCEL_DTYPE_FP8_E4M3, d16, 2, ones);
  g_autoptr(AccelBuffer) bb = lt_new (ACCEL_DTYPE_FP8_E4M3, d16, 2, ones);
  g_autoptr(AccelBuffer) bc = lt_new (ACCEL_DTYPE_FP8_E4M3, d16, 2, NULL);
  g_autoptr(AccelOp) op = accel_matmul_new (ba, bb, bc, ACCEL_MATMUL_EPILOGUE_NONE);
  g_object_set (op, "transb", TRUE, "c-scale", 100.0, NULL);
  lt_submit (op);
  g_autofree double *c = lt_read (bc);
  for (guint i = 0; i < 256; i++)
    g_assert_cmpfloat (c[i], ==, 448.0);
}

static void
test_bad_input (void)
{
  if (lt_device_for ("matmul", "scan", NULL) == NULL)
    return;
  gint64 d23[2] = { 2, 3 }, d34[2] = { 3, 4 }, d24[2] = { 2, 4 }, d43[2] = { 4, 3 }, d4[1] = { 4 };
  g_autoptr(AccelBuffer) a = lt_new (ACCEL_DTYPE_F32, d23, 2, NULL);
  g_autoptr(AccelBuffer) b = lt_new (ACCEL_DTYPE_F32, d34, 2, NULL);
  g_autoptr(AccelBuffer) c = lt_new (ACCEL_DTYPE_F32, d24, 2, NULL);
  g_autoptr(AccelBuffer) bias = lt_new (ACCEL_DTYPE_F32, d4, 1, NULL);
  {
    g_autoptr(AccelOp) op = accel_matmul_new (a, b, c, ACCEL_MATMUL_EPILOGUE_BIAS_RELU);
    lt_expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "bias");
    g_object_set (op, "bias", bias, NULL);
    lt_submit (op);
    g_object_set (op, "epilogue", ACCEL_MATMUL_EPILOGUE_RELU, NULL);
    lt_expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "bias");
  }
  {
    g_autoptr(AccelBuffer) bias16 = lt_new (ACCEL_DTYPE_BF16, d4, 1, NULL);
    g_autoptr(AccelOp) op = accel_matmul_new (a, b, c, ACCEL_MATMUL_EPILOGUE_BIAS);
    g_object_set (op, "bias", bias16, NULL);
    lt_expect_error (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, "bias");
  }
  {
    g_autoptr(AccelOp) op = accel_matmul_new (a, c, c, ACCEL_MATMUL_EPILOGUE_NONE);
    lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, "“b”");
  }
  {
    g_autoptr(AccelOp) op = accel_matmul_new (a, b, c, ACCEL_MATMUL_EPILOGUE_NONE);
    g_object_set (op, "c-scale", 2.0, NULL);
    lt_expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "c-scale");
  }
  {
    g_autoptr(AccelBuffer) a64 = lt_new (ACCEL_DTYPE_F64, d23, 2, NULL);
    g_autoptr(AccelOp) op = accel_matmul_new (a64, b, c, ACCEL_MATMUL_EPILOGUE_NONE);
    lt_expect_error (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, NULL);
  }
  {
    /* fp8 needs b stored transposed, and at most one e5m2 operand. */
    g_autoptr(AccelBuffer) a8 = lt_new (ACCEL_DTYPE_FP8_E5M2, d23, 2, NULL);
    g_autoptr(AccelBuffer) b8 = lt_new (ACCEL_DTYPE_FP8_E4M3, d34, 2, NULL);
    g_autoptr(AccelBuffer) b8t = lt_new (ACCEL_DTYPE_FP8_E5M2, d43, 2, NULL);
    g_autoptr(AccelOp) op = accel_matmul_new (a8, b8, c, ACCEL_MATMUL_EPILOGUE_NONE);
    lt_expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "transb");
    g_autoptr(AccelOp) op2 = accel_matmul_new (a8, b8t, c, ACCEL_MATMUL_EPILOGUE_NONE);
    g_object_set (op2, "transb", TRUE, NULL);
    lt_expect_error (op2, ACCEL_ERROR_DTYPE_UNSUPPORTED, "e5m2");
  }
}

const LtTest lt_tests[] = {
  { "/libs/matmul/epilogues", test_epilogues },
  { "/libs/matmul/extras", test_extras },
  { "/libs/matmul/fp8", test_fp8 },
  { "/libs/matmul/bad-input", test_bad_input },
  { NULL, NULL },
};
