/* Tests of grouped-gemm and quant-matmul against their definitions
 * computed in f64 on the stored inputs, on fresh random data: odd group
 * sizes, empty groups, every dtype pair, transposed weights, int4 / int8 /
 * fp8 weights with and without zero points; sizes on both sides of what
 * the cuda kernels' tensor-core paths take; then bad input, including bad
 * offsets that live in device memory.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include "libs-test.h"

/* Random group sizes summing to @rows, some of them empty. */
static double *
random_offsets (gint64 groups, gint64 rows)
{
  double *offsets = g_new0 (double, groups + 1);
  g_autofree double *cuts = g_new (double, groups - 1);
  for (gint64 g = 0; g < groups - 1; g++)
    cuts[g] = g_test_rand_bit () && g_test_rand_bit () ? 0 : g_test_rand_int_range (0, (int) rows + 1);
  for (gint64 g = 0; g < groups - 1; g++)     /* sort the cuts */
    for (gint64 h = g + 1; h < groups - 1; h++)
      if (cuts[h] < cuts[g])
        {
          double x = cuts[g];
          cuts[g] = cuts[h], cuts[h] = x;
        }
  for (gint64 g = 1; g < groups; g++)
    offsets[g] = cuts[g - 1];
  offsets[groups] = rows;
  return offsets;
}

static void
run_grouped (AccelDType in_dt, AccelDType out_dt, gint64 groups, gint64 rows, gint64 k, gint64 n,
             gboolean transb, gboolean with_bias)
{
  gint64 da[2] = { rows, k }, db[3] = { groups, transb ? n : k, transb ? k : n }, doff[1] = { groups + 1 };
  gint64 dout[2] = { rows, n }, dbias[2] = { groups, n };
  g_autofree double *a = lt_random (in_dt, rows * k, -1, 1);
  g_autofree double *b = lt_random (in_dt, groups * k * n, -1, 1);
  g_autofree double *bias = lt_random (out_dt, groups * n, -1, 1);
  g_autofree double *offsets = random_offsets (groups, rows);
  double alpha = g_test_rand_double_range (0.5, 2);
  g_autoptr(AccelBuffer) ba = lt_new (in_dt, da, 2, a);
  g_autoptr(AccelBuffer) bb = lt_new (in_dt, db, 3, b);
  g_autoptr(AccelBuffer) boff = lt_new (ACCEL_DTYPE_I32, doff, 1, offsets);
  g_autofree double *garbage = lt_random (out_dt, rows * n, -9, 9);
  g_autoptr(AccelBuffer) bout = lt_new (out_dt, dout, 2, garbage);   /* to be overwritten */
  g_autoptr(AccelBuffer) bbias = with_bias ? lt_new (out_dt, dbias, 2, bias) : NULL;
  g_autoptr(AccelOp) op = accel_grouped_gemm_new (ba, bb, boff, bout);
  g_object_set (op, "transb", transb, "alpha", alpha, "bias", bbias, NULL);

  double acc = 1e-6 * sqrt ((double) k) * 4 * alpha + (in_dt == ACCEL_DTYPE_FP8_E4M3 ? k / 8192.0 * alpha : 0);
  lt_submit_compare (op, 2 * lt_eps (out_dt), acc * 4, "out", NULL);
  g_autofree double *got = lt_read (bout);
  g_autofree double *want = g_new (double, rows * n);
  for (gint64 g = 0; g < groups; g++)
    for (gint64 t = (gint64) offsets[g]; t < (gint64) offsets[g + 1]; t++)
      for (gint64 j = 0; j < n; j++)
        {
          double s = 0;
          for (gint64 l = 0; l < k; l++)
            s += a[t * k + l] * (transb ? b[(g * n + j) * k + l] : b[(g * k + l) * n + j]);
          want[t * n + j] = alpha * s + (with_bias ? bias[g * n + j] : 0);
        }
  lt_assert_close ("grouped-gemm", got, want, rows * n, lt_eps (out_dt), acc * 2);
}

static void
test_grouped_gemm (void)
{
  if (lt_device_for ("grouped-gemm", NULL) == NULL)
    return;
  const struct { AccelDType in, out; } pairs[] = {
    { ACCEL_DTYPE_BF16, ACCEL_DTYPE_BF16 }, { ACCEL_DTYPE_F16, ACCEL_DTYPE_F16 },
    { ACCEL_DTYPE_BF16, ACCEL_DTYPE_F32 }, { ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_BF16 },
    { ACCEL_DTYPE_F32, ACCEL_DTYPE_F32 },
  };
  for (guint p = 0; p < G_N_ELEMENTS (pairs); p++)
    for (guint v = 0; v < 3; v++)
      {
        gint64 groups = v == 0 ? 1 : v == 1 ? 7 : 13;
        gint64 rows = v == 0 ? 5 : v == 1 ? 67 : 129;
        gint64 k = 16 * (v + 1) + (pairs[p].in == ACCEL_DTYPE_F32 ? 3 : 0);
        gint64 n = 24 + 8 * v;
        run_grouped (pairs[p].in, pairs[p].out, groups, rows, k, n, v != 0, v == 1);
      }
}

/* Sizes the tensor-core paths take (K and N whole 16-byte rows, 16-byte
 * aligned buffers) beside sizes left to the general kernels, many groups
 * (random_offsets leaves some empty), b either way, with and without bias. */
static void
test_grouped_gemm_sizes (void)
{
  if (lt_device_for ("grouped-gemm", NULL) == NULL)
    return;
  const struct {
    AccelDType in, out;
    gint64 groups, rows, k, n;
    gboolean transb, bias;
  } cases[] = {
    { ACCEL_DTYPE_BF16, ACCEL_DTYPE_BF16, 37, 1000, 256, 264, TRUE, TRUE },
    { ACCEL_DTYPE_BF16, ACCEL_DTYPE_BF16, 6, 333, 192, 136, FALSE, FALSE },
    { ACCEL_DTYPE_F16, ACCEL_DTYPE_F16, 5, 300, 128, 136, FALSE, TRUE },
    { ACCEL_DTYPE_F16, ACCEL_DTYPE_F16, 11, 257, 64, 72, TRUE, FALSE },
    { ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_BF16, 9, 517, 256, 128, TRUE, TRUE },
    { ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_F16, 3, 70, 48, 40, FALSE, TRUE },
    { ACCEL_DTYPE_BF16, ACCEL_DTYPE_BF16, 4, 77, 20, 26, TRUE, FALSE },   /* K, N not whole 16-byte rows */
    { ACCEL_DTYPE_F16, ACCEL_DTYPE_F32, 2, 40, 8, 9, FALSE, TRUE },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    run_grouped (cases[c].in, cases[c].out, cases[c].groups, cases[c].rows, cases[c].k, cases[c].n,
                 cases[c].transb, cases[c].bias);
}

/* Codes, scales and zero points drawn as a quantiser would leave them. */
static void
run_quant (AccelQuantFormat format, AccelDType act_dt, AccelDType scale_dt, gint64 m, gint64 k, gint64 n,
           int group, gboolean with_zeros, gboolean with_bias)
{
  gint64 groups = k / group;
  gint64 da[2] = { m, k }, dout[2] = { m, n }, ds[2] = { n, groups }, dbias[1] = { n };
  gint64 db[2] = { n, format == ACCEL_QUANT_FORMAT_INT4 ? k / 2 : k };
  AccelDType b_dt = format == ACCEL_QUANT_FORMAT_INT4 ? ACCEL_DTYPE_U8
                    : format == ACCEL_QUANT_FORMAT_INT8 ? ACCEL_DTYPE_I8 : ACCEL_DTYPE_FP8_E4M3;
  g_autofree double *a = lt_random (act_dt, m * k, -1, 1);
  g_autofree double *scales = lt_random (scale_dt, n * groups, 0.01, 0.1);
  g_autofree double *zeros = g_new (double, n * groups);
  for (gint64 i = 0; i < n * groups; i++)
    zeros[i] = lt_round (scale_dt, format == ACCEL_QUANT_FORMAT_INT4 ? g_test_rand_int_range (5, 11)
                                                                     : g_test_rand_int_range (-3, 4));
  g_autofree double *bias = lt_random (act_dt, n, -1, 1);
  g_autofree double *codes = g_new (double, db[0] * db[1]);
  g_autofree double *q = g_new (double, n * k);   /* the code of each weight */
  for (gint64 r = 0; r < n; r++)
    for (gint64 c = 0; c < k; c++)
      {
        if (format == ACCEL_QUANT_FORMAT_INT4)
          q[r * k + c] = g_test_rand_int_range (0, 16);
        else if (format == ACCEL_QUANT_FORMAT_INT8)
          q[r * k + c] = g_test_rand_int_range (-128, 128);
        else
          q[r * k + c] = lt_round (ACCEL_DTYPE_FP8_E4M3, g_test_rand_double_range (-8, 8));
      }
  for (gint64 r = 0; r < n; r++)
    for (gint64 c = 0; c < db[1]; c++)
      codes[r * db[1] + c] = format == ACCEL_QUANT_FORMAT_INT4
                             ? q[r * k + 2 * c] + 16 * q[r * k + 2 * c + 1] : q[r * k + c];

  g_autoptr(AccelBuffer) ba = lt_new (act_dt, da, 2, a);
  g_autoptr(AccelBuffer) bb = lt_new (b_dt, db, 2, codes);
  g_autoptr(AccelBuffer) bs = lt_new (scale_dt, ds, 2, scales);
  g_autoptr(AccelBuffer) bz = with_zeros ? lt_new (scale_dt, ds, 2, zeros) : NULL;
  g_autoptr(AccelBuffer) bbias = with_bias ? lt_new (act_dt, dbias, 1, bias) : NULL;
  g_autoptr(AccelBuffer) bout = lt_new (act_dt, dout, 2, NULL);
  g_autoptr(AccelOp) op = accel_quant_matmul_new (ba, bb, bs, bout, format, group);
  g_object_set (op, "zeros", bz, "bias", bbias, NULL);

  g_autofree double *want = g_new (double, m * n);
  g_autofree double *mag = g_new (double, m * n);
  for (gint64 i = 0; i < m; i++)
    for (gint64 j = 0; j < n; j++)
      {
        double s = 0, sm = 0;
        for (gint64 l = 0; l < k; l++)
          {
            gint64 g = j * groups + l / group;
            double zero = with_zeros ? zeros[g] : format == ACCEL_QUANT_FORMAT_INT4 ? 8 : 0;
            double w = (q[j * k + l] - zero) * scales[g];
            s += a[i * k + l] * w;
            sm += fabs (a[i * k + l] * w);
          }
        want[i * n + j] = s + (with_bias ? bias[j] : 0);
        mag[i * n + j] = sm;
      }
  lt_submit_compare (op, 2 * lt_eps (act_dt), 1e-3, "out", NULL);
  g_autofree double *got = lt_read (bout);
  for (gint64 i = 0; i < m * n; i++)
    {
      /* One rounding to the output type, plus f32 sums of k products. */
      double tol = lt_eps (act_dt) * fabs (want[i]) + 4e-6 * sqrt ((double) k) * mag[i] + 1e-6;
      if (!(fabs (got[i] - want[i]) <= tol))
        g_error ("quant-matmul (format %d, %s, m %" G_GINT64_FORMAT ", k %" G_GINT64_FORMAT ", n %" G_GINT64_FORMAT
                 ", group %d): element %" G_GINT64_FORMAT " is %.8g, expected %.8g (tolerance %.3g)",
                 format, accel_dtype_get_name (act_dt), m, k, n, group, i, got[i], want[i], tol);
    }
}

static void
test_quant_matmul (void)
{
  if (lt_device_for ("quant-matmul", NULL) == NULL)
    return;
  const AccelQuantFormat formats[] = { ACCEL_QUANT_FORMAT_INT4, ACCEL_QUANT_FORMAT_INT8, ACCEL_QUANT_FORMAT_FP8_E4M3 };
  for (guint f = 0; f < G_N_ELEMENTS (formats); f++)
    for (guint v = 0; v < 4; v++)
      {
        gint64 m = v == 0 ? 1 : v == 1 ? 3 : v == 2 ? 16 : 33;
        gint64 k = v == 3 ? 384 : 256, n = 40 + 8 * v + (v == 1);
        int group = v == 2 ? 64 : v == 3 ? 384 : 128;
        AccelDType act = v % 2 ? ACCEL_DTYPE_BF16 : ACCEL_DTYPE_F16;
        AccelDType scale = v == 1 ? ACCEL_DTYPE_F32 : act;
        run_quant (formats[f], act, scale, m, k, n, group,
                   formats[f] != ACCEL_QUANT_FORMAT_FP8_E4M3 && v >= 2, v != 0);
      }
}

/* M beyond 16 (the activations then go through shared memory), N not a
 * multiple of the kernels' tiles, group sizes of 32 to 256 (each picks
 * another run length of codes per lane), zero points and bias on both
 * paths, every format with both activation types, and K long enough that
 * the rings of codes wrap. */
static void
test_quant_matmul_shapes (void)
{
  if (lt_device_for ("quant-matmul", NULL) == NULL)
    return;
  const struct {
    AccelQuantFormat format;
    AccelDType act, scale;
    gint64 m, k, n;
    int group;
    gboolean zeros, bias;
  } cases[] = {
    { ACCEL_QUANT_FORMAT_INT4, ACCEL_DTYPE_BF16, ACCEL_DTYPE_BF16, 64, 512, 200, 128, FALSE, TRUE },
    { ACCEL_QUANT_FORMAT_INT4, ACCEL_DTYPE_F16, ACCEL_DTYPE_F32, 130, 256, 136, 64, TRUE, FALSE },
    { ACCEL_QUANT_FORMAT_INT4, ACCEL_DTYPE_F16, ACCEL_DTYPE_F16, 5, 1024, 520, 256, TRUE, TRUE },
    { ACCEL_QUANT_FORMAT_INT4, ACCEL_DTYPE_BF16, ACCEL_DTYPE_F32, 12, 96, 24, 32, FALSE, FALSE },
    { ACCEL_QUANT_FORMAT_INT8, ACCEL_DTYPE_BF16, ACCEL_DTYPE_BF16, 17, 512, 264, 32, TRUE, TRUE },
    { ACCEL_QUANT_FORMAT_INT8, ACCEL_DTYPE_F16, ACCEL_DTYPE_F16, 100, 256, 72, 64, FALSE, FALSE },
    { ACCEL_QUANT_FORMAT_INT8, ACCEL_DTYPE_BF16, ACCEL_DTYPE_F32, 2, 384, 48, 128, TRUE, FALSE },
    { ACCEL_QUANT_FORMAT_FP8_E4M3, ACCEL_DTYPE_BF16, ACCEL_DTYPE_F32, 40, 384, 130, 128, FALSE, TRUE },
    { ACCEL_QUANT_FORMAT_FP8_E4M3, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16, 129, 256, 40, 32, FALSE, FALSE },
    { ACCEL_QUANT_FORMAT_FP8_E4M3, ACCEL_DTYPE_F16, ACCEL_DTYPE_F16, 9, 128, 16, 64, FALSE, TRUE },
    /* Long K: each warp's share is more chunks than its ring holds. */
    { ACCEL_QUANT_FORMAT_INT4, ACCEL_DTYPE_BF16, ACCEL_DTYPE_BF16, 1, 8192, 72, 128, FALSE, TRUE },
    { ACCEL_QUANT_FORMAT_INT4, ACCEL_DTYPE_F16, ACCEL_DTYPE_F16, 13, 8192, 40, 32, TRUE, FALSE },
    { ACCEL_QUANT_FORMAT_INT8, ACCEL_DTYPE_BF16, ACCEL_DTYPE_F32, 16, 4096, 56, 64, TRUE, TRUE },
    { ACCEL_QUANT_FORMAT_INT4, ACCEL_DTYPE_BF16, ACCEL_DTYPE_BF16, 70, 2048, 136, 128, TRUE, FALSE },
    { ACCEL_QUANT_FORMAT_FP8_E4M3, ACCEL_DTYPE_BF16, ACCEL_DTYPE_BF16, 3, 4096, 24, 128, FALSE, FALSE },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    run_quant (cases[c].format, cases[c].act, cases[c].scale, cases[c].m, cases[c].k, cases[c].n, cases[c].group,
               cases[c].zeros, cases[c].bias);
}

static void
test_bad_input (void)
{
  if (lt_device_for ("grouped-gemm", "quant-matmul", NULL) == NULL)
    return;
  gint64 da[2] = { 10, 16 }, db[3] = { 3, 16, 8 }, doff[1] = { 4 }, dout[2] = { 10, 8 }, db2[3] = { 2, 16, 8 };
  g_autofree double *a = lt_random (ACCEL_DTYPE_BF16, 384, -1, 1);   /* enough for every buffer below */
  g_autoptr(AccelBuffer) ba = lt_new (ACCEL_DTYPE_BF16, da, 2, a);
  g_autoptr(AccelBuffer) bb = lt_new (ACCEL_DTYPE_BF16, db, 3, a);
  g_autoptr(AccelBuffer) bb2 = lt_new (ACCEL_DTYPE_BF16, db2, 3, a);
  g_autoptr(AccelBuffer) bout = lt_alloc (ACCEL_DTYPE_BF16, dout, 2);

  /* Offsets that decrease, do not end at T, or pass it: data, checked where
   * the kernel runs; the device stays usable (lt_expect_error checks). */
  const double bad[][4] = { { 0, 6, 4, 10 }, { 0, 3, 6, 9 }, { 0, 3, 12, 10 }, { 1, 3, 6, 10 } };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(AccelBuffer) boff = lt_new (ACCEL_DTYPE_I32, doff, 1, bad[i]);
      g_autoptr(AccelOp) op = accel_grouped_gemm_new (ba, bb, boff, bout);
      lt_expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "group-offsets");
    }
  /* A group count that disagrees with b. */
  const double good[4] = { 0, 3, 6, 10 };
  g_autoptr(AccelBuffer) boff = lt_new (ACCEL_DTYPE_I32, doff, 1, good);
  g_autoptr(AccelOp) op = accel_grouped_gemm_new (ba, bb2, boff, bout);
  lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, "group-offsets");
  /* Unsupported dtype pair. */
  g_autoptr(AccelBuffer) bb16 = lt_new (ACCEL_DTYPE_F16, db, 3, a);
  g_autoptr(AccelOp) op2 = accel_grouped_gemm_new (ba, bb16, boff, bout);
  lt_expect_error (op2, ACCEL_ERROR_DTYPE_UNSUPPORTED, "b");

  /* quant-matmul: K not a multiple of the group, scales of the wrong shape,
   * codes of the wrong type. */
  gint64 da32[2] = { 10, 32 }, dq[2] = { 8, 16 }, dq32[2] = { 8, 32 }, dsc[2] = { 8, 1 }, dsc2[2] = { 8, 2 };
  gint64 dqo[2] = { 10, 8 };
  g_autofree double *a32 = lt_random (ACCEL_DTYPE_BF16, 320, -1, 1);
  g_autoptr(AccelBuffer) act = lt_new (ACCEL_DTYPE_BF16, da32, 2, a32);
  g_autoptr(AccelBuffer) codes = lt_alloc (ACCEL_DTYPE_U8, dq, 2);
  g_autoptr(AccelBuffer) sc = lt_new (ACCEL_DTYPE_BF16, dsc, 2, a32);
  g_autoptr(AccelBuffer) sc2 = lt_new (ACCEL_DTYPE_BF16, dsc2, 2, a32);
  g_autoptr(AccelBuffer) qo = lt_alloc (ACCEL_DTYPE_BF16, dqo, 2);
  g_autoptr(AccelOp) q1 = accel_quant_matmul_new (act, codes, sc, qo, ACCEL_QUANT_FORMAT_INT4, 64);
  lt_expect_error (q1, ACCEL_ERROR_INVALID_ARGUMENT, "group-size");
  g_autoptr(AccelOp) q2 = accel_quant_matmul_new (act, codes, sc2, qo, ACCEL_QUANT_FORMAT_INT4, 32);
  lt_expect_error (q2, ACCEL_ERROR_SHAPE_MISMATCH, "scales");
  g_autoptr(AccelBuffer) fp8 = lt_alloc (ACCEL_DTYPE_FP8_E4M3, dq32, 2);
  g_autoptr(AccelOp) q3 = accel_quant_matmul_new (act, fp8, sc, qo, ACCEL_QUANT_FORMAT_FP8_E4M3, 32);
  g_object_set (q3, "zeros", sc, NULL);
  lt_expect_error (q3, ACCEL_ERROR_INVALID_ARGUMENT, "zeros");
  g_autoptr(AccelOp) q4 = accel_quant_matmul_new (act, codes, sc, qo, ACCEL_QUANT_FORMAT_INT8, 32);
  lt_expect_error (q4, ACCEL_ERROR_DTYPE_UNSUPPORTED, "b");
}

const LtTest lt_tests[] = {
  { "/libs/grouped/grouped-gemm", test_grouped_gemm },
  { "/libs/grouped/grouped-gemm-sizes", test_grouped_gemm_sizes },
  { "/libs/grouped/quant-matmul", test_quant_matmul },
  { "/libs/grouped/quant-matmul-shapes", test_quant_matmul_shapes },
  { "/libs/grouped/bad-input", test_bad_input },
  { NULL, NULL },
};
