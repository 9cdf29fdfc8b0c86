/* Tests of layernorm and rmsnorm against the definitions computed in f64,
 * f32, f16 and bf16, with and without gamma and beta, in place; row
 * lengths that take each of the CUDA kernels' paths (a warp per row, a
 * block per row from registers, a cluster per row, two reads of long
 * rows; 16-byte packs between a head and a tail, and one element at a
 * time), rows far from zero, misaligned views; then bad input.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include "libs-test.h"

/* The definition, rounded to @dt: @gamma and @beta nullable. */
static double *
reference (gboolean rms, AccelDType dt, const double *x, const double *gamma, const double *beta,
           gint64 total, gint64 n, double eps)
{
  double *want = g_new (double, MAX (total, 1));
  for (gint64 row = 0; row < total / n; row++)
    {
      const double *xr = x + row * n;
      double mean = 0, var = 0;
      if (!rms)
        {
          for (gint64 j = 0; j < n; j++)
            mean += xr[j];
          mean /= n;
        }
      for (gint64 j = 0; j < n; j++)
        var += (xr[j] - mean) * (xr[j] - mean);
      var /= n;
      for (gint64 j = 0; j < n; j++)
        {
          double v = (xr[j] - mean) / sqrt (var + eps);
          if (gamma)
            v *= gamma[j];
          if (beta)
            v += beta[j];
          want[row * n + j] = lt_round (dt, v);
        }
    }
  return want;
}

static double
tolerance (AccelDType dt)
{
  return dt == ACCEL_DTYPE_F32 ? 1e-5 : 2 * lt_eps (dt);
}

/* One case on fresh data in [lo, hi): variant 0: gamma and beta; 1:
 * neither; 2: gamma only, in place; 3: beta only. */
static void
check_case (gboolean rms, AccelDType dt, const gint64 *dims, guint rank, guint variant, double lo, double hi)
{
  gint64 n = dims[rank - 1], total = 1;
  for (guint i = 0; i < rank; i++)
    total *= dims[i];
  double eps = variant == 1 ? 1e-3 : 1e-5;
  g_autofree double *x = lt_random (dt, total, lo, hi);
  g_autofree double *gamma = lt_random (dt, n, 0.5, 1.5);
  g_autofree double *beta = lt_random (dt, n, -1, 1);
  gint64 dn[1] = { n };
  gboolean has_gamma = variant == 0 || variant == 2, has_beta = variant == 0 || variant == 3;
  g_autoptr(AccelBuffer) bx = lt_new (dt, dims, rank, x);
  g_autoptr(AccelBuffer) bg = has_gamma ? lt_new (dt, dn, 1, gamma) : NULL;
  g_autoptr(AccelBuffer) bb = has_beta ? lt_new (dt, dn, 1, beta) : NULL;
  g_autoptr(AccelBuffer) by = variant == 2 ? g_object_ref (bx) : lt_alloc (dt, dims, rank);
  g_autoptr(AccelOp) op = rms ? accel_rmsnorm_new (bx, bg, bb, by) : accel_layernorm_new (bx, bg, bb, by);
  g_object_set (op, "eps", eps, NULL);

  double tol = tolerance (dt);
  lt_submit_compare (op, tol, tol, "*", NULL);
  g_autofree double *y = lt_read (by);
  g_autofree double *want = reference (rms, dt, x, has_gamma ? gamma : NULL, has_beta ? beta : NULL, total, n, eps);
  g_autofree char *what = g_strdup_printf ("%s %s [.., %" G_GINT64_FORMAT "] variant %u",
                                           rms ? "rmsnorm" : "layernorm", accel_dtype_get_name (dt), n, variant);
  lt_assert_close (what, y, want, total, tol, tol);
}

static void
check (gboolean rms)
{
  if (lt_device_for ("layernorm", "rmsnorm", NULL) == NULL)
    return;
  const AccelDType dts[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16 };
  /* Rows of odd length are a head, whole 16-byte packs and a tail on
   * cuda, each row's at other places; 1000 and 12000 are whole 16-byte
   * packs of f32 only, 256, 4096, 24576 and 40000 of every type. On
   * cuda: up to 1024 a warp per row (512 f32), up to 32768 a block per
   * row (16384 f32; 4096 of f16 or bf16 is 64 threads of 8 packs, 24576
   * is 384 of 8, 12000 of f32 is 384 of 8, 20011 of f16 or bf16 is 320
   * threads of packs, head and tail), up to 262144 over a cluster of 2
   * to 8 blocks on sm_90 (40000, 40001, 65536 and 262144 of f16 or bf16,
   * 20011, 24576, 40000, 40001 and 65536 of f32: whole packs streamed
   * through shared memory, ragged rows in registers), longer two reads
   * (262144 of f32). 21 rows are not a whole number of four-row blocks. */
  const gint64 shapes[][3] = {
    { 1, 7, 1 }, { 2, 5, 33 }, { 3, 7, 256 }, { 1, 9, 1000 }, { 1, 3, 1001 }, { 1, 5, 4096 },
    { 1, 3, 4095 }, { 1, 2, 12000 }, { 1, 2, 20011 }, { 1, 2, 24576 }, { 2, 1, 40000 }, { 3, 1, 40001 }, { 3, 1, 65536 },
    { 1, 1, 262144 },
  };
  for (guint d = 0; d < G_N_ELEMENTS (dts); d++)
    for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
      for (guint variant = 0; variant < 4; variant++)
        check_case (rms, dts[d], shapes[s], 3, variant, -3, 5);
}

static void
test_layernorm (void)
{
  check (FALSE);
}

static void
test_rmsnorm (void)
{
  check (TRUE);
}

/* Many rows too long for registers: on sm_90 the clusters that stream
 * them through shared memory each take several rows, so every buffer is
 * refilled while the rows before it are worked on (33000 of bf16 is two
 * parts of 33000 bytes, of f32 four); in place too. */
static void
test_many_long_rows (void)
{
  if (lt_device_for ("layernorm", "rmsnorm", NULL) == NULL)
    return;
  const gint64 bf16_dims[2] = { 200, 33000 }, f32_dims[2] = { 100, 33000 };
  for (guint rms = 0; rms < 2; rms++)
    {
      check_case (rms, ACCEL_DTYPE_BF16, bf16_dims, 2, 0, -3, 5);
      check_case (rms, ACCEL_DTYPE_BF16, bf16_dims, 2, 2, -3, 5);
      check_case (rms, ACCEL_DTYPE_F32, f32_dims, 2, 0, -3, 5);
    }
}

/* Rows around 1000 with deviations of 1: f32 statistics that subtract a
 * rounded f32 mean, or take E[x²] − E[x]², miss the tolerance by far. */
static void
test_far_from_zero (void)
{
  if (lt_device_for ("layernorm", "rmsnorm", NULL) == NULL)
    return;
  const gint64 lengths[] = { 256, 4096, 20000 };
  for (guint rms = 0; rms < 2; rms++)
    for (guint i = 0; i < G_N_ELEMENTS (lengths); i++)
      {
        gint64 dims[2] = { 3, lengths[i] };
        check_case (rms, ACCEL_DTYPE_F32, dims, 2, 1, 999, 1001);
        check_case (rms, ACCEL_DTYPE_F32, dims + 1, 1, 0, -1001, -999);
      }
}

/* Views into their buffers: x, y and gamma the same number of elements
 * off a 16-byte boundary (wide loads of each row between its head and
 * tail on cuda), gamma at another (read one element at a time where it
 * is not aligned with x), y at another than x (one element at a time). */
static void
test_misaligned (void)
{
  if (lt_device_for ("layernorm", "rmsnorm", NULL) == NULL)
    return;
  const AccelDType dts[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_BF16 };
  const gint64 lengths[] = { 256, 4096, 4097 };
  /* Offsets in elements of x, y and gamma. */
  const gint64 offsets[][3] = { { 1, 1, 1 }, { 1, 1, 0 }, { 3, 3, 6 }, { 1, 2, 1 } };
  for (guint rms = 0; rms < 2; rms++)
    for (guint d = 0; d < G_N_ELEMENTS (dts); d++)
      for (guint i = 0; i < G_N_ELEMENTS (lengths); i++)
        for (guint o = 0; o < G_N_ELEMENTS (offsets); o++)
          {
            AccelDType dt = dts[d];
            gint64 n = lengths[i], rows = 5, total = rows * n;
            gint64 dims[2] = { rows, n }, dn[1] = { n }, whole[1] = { total + 8 }, whole_n[1] = { n + 8 };
            g_autoptr(GError) error = NULL;
            g_autoptr(AccelShape) shape = accel_shape_new (dims, 2);
            g_autoptr(AccelShape) shape_n = accel_shape_new (dn, 1);
            g_autoptr(AccelBuffer) bx_whole = lt_new (dt, whole, 1, NULL);
            g_autoptr(AccelBuffer) by_whole = lt_new (dt, whole, 1, NULL);
            g_autoptr(AccelBuffer) bg_whole = lt_new (dt, whole_n, 1, NULL);
            g_autoptr(AccelBuffer) bx = accel_buffer_new_view (bx_whole, offsets[o][0], shape, &error);
            g_assert_no_error (error);
            g_autoptr(AccelBuffer) by = accel_buffer_new_view (by_whole, offsets[o][1], shape, &error);
            g_assert_no_error (error);
            g_autoptr(AccelBuffer) bg = accel_buffer_new_view (bg_whole, offsets[o][2], shape_n, &error);
            g_assert_no_error (error);
            g_autofree double *x = lt_random (dt, total, -3, 5);
            g_autofree double *gamma = lt_random (dt, n, 0.5, 1.5);
            lt_write (bx, x);
            lt_write (bg, gamma);

            g_autoptr(AccelOp) op = rms ? accel_rmsnorm_new (bx, bg, NULL, by) : accel_layernorm_new (bx, bg, NULL, by);
            lt_submit (op);
            double tol = tolerance (dt);
            g_autofree double *y = lt_read (by);
            g_autofree double *want = reference (rms, dt, x, gamma, NULL, total, n, 1e-5);
            g_autofree char *what = g_strdup_printf ("%s %s [5, %" G_GINT64_FORMAT "] offsets %" G_GINT64_FORMAT
                                                     ", %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT,
                                                     rms ? "rmsnorm" : "layernorm", accel_dtype_get_name (dt), n,
                                                     offsets[o][0], offsets[o][1], offsets[o][2]);
            lt_assert_close (what, y, want, total, tol, tol);
          }
}

static void
test_bad_input (void)
{
  if (lt_device_for ("layernorm", "rmsnorm", "scan", NULL) == NULL)
    return;
  gint64 dx[2] = { 4, 6 }, d5[1] = { 5 };
  g_autoptr(AccelBuffer) x = lt_new (ACCEL_DTYPE_F32, dx, 2, NULL);
  g_autoptr(AccelBuffer) y = lt_alloc (ACCEL_DTYPE_F32, dx, 2);
  {
    g_autoptr(AccelBuffer) gamma = lt_new (ACCEL_DTYPE_F32, d5, 1, NULL);
    g_autoptr(AccelOp) op = accel_layernorm_new (x, gamma, NULL, y);
    lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, "“gamma”");
  }
  {
    gint64 d6[1] = { 6 };
    g_autoptr(AccelBuffer) beta = lt_new (ACCEL_DTYPE_BF16, d6, 1, NULL);
    g_autoptr(AccelOp) op = accel_rmsnorm_new (x, NULL, beta, y);
    lt_expect_error (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, NULL);
  }
  {
    g_autoptr(AccelBuffer) x64 = lt_new (ACCEL_DTYPE_F64, dx, 2, NULL);
    g_autoptr(AccelBuffer) y64 = lt_alloc (ACCEL_DTYPE_F64, dx, 2);
    g_autoptr(AccelOp) op = accel_layernorm_new (x64, NULL, NULL, y64);
    lt_expect_error (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, NULL);
  }
  {
    gint64 d64[2] = { 6, 4 };
    g_autoptr(AccelBuffer) yt = lt_alloc (ACCEL_DTYPE_F32, d64, 2);
    g_autoptr(AccelOp) op = accel_rmsnorm_new (x, NULL, NULL, yt);
    lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, NULL);
  }
  {
    g_autoptr(AccelBuffer) xi = lt_new (ACCEL_DTYPE_I32, dx, 2, NULL);
    g_autoptr(AccelBuffer) yi = lt_alloc (ACCEL_DTYPE_I32, dx, 2);
    g_autoptr(AccelOp) op = accel_rmsnorm_new (xi, NULL, NULL, yi);
    lt_expect_error (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, "“x”");
  }
  {
    gint64 d16[2] = { 1, 6 };
    g_autoptr(AccelBuffer) gamma = lt_new (ACCEL_DTYPE_F32, d16, 2, NULL);
    g_autoptr(AccelOp) op = accel_rmsnorm_new (x, gamma, NULL, y);
    lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, "“gamma”");
  }
  {
    g_autoptr(AccelOp) op = accel_layernorm_new (x, NULL, NULL, y);
    ACCEL_LAYERNORM (op)->eps = -1;
    lt_expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "eps");
  }
  {
    g_autoptr(AccelOp) op = accel_rmsnorm_new (x, NULL, NULL, y);
    ACCEL_RMSNORM (op)->eps = NAN;
    lt_expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "eps");
  }
}

const LtTest lt_tests[] = {
  { "/libs/norm/layernorm", test_layernorm },
  { "/libs/norm/rmsnorm", test_rmsnorm },
  { "/libs/norm/many-long-rows", test_many_long_rows },
  { "/libs/norm/far-from-zero", test_far_from_zero },
  { "/libs/norm/misaligned", test_misaligned },
  { "/libs/norm/bad-input", test_bad_input },
  { NULL, NULL },
};
