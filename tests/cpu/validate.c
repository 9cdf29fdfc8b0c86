/* Bad input to every op of the portable set on cpu:0: each is refused
 * before launch with the right ACCEL_ERROR code, and the next good op on
 * the same device succeeds. Also the device's memory cap
 * (ACCEL_CPU_MEMORY_LIMIT=64M in this program's environment) and empty
 * buffers.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "cpu-test.h"

static AccelBuffer *
buf (AccelDType dtype, guint rank, ...)
{
  gint64 dims[8];
  va_list ap;
  va_start (ap, rank);
  for (guint i = 0; i < rank; i++)
    dims[i] = va_arg (ap, gint64);
  va_end (ap);
  return cpu_test_alloc (dtype, dims, rank);
}

#define B1(t, a) buf (t, 1, (gint64) (a))
#define B2(t, a, b) buf (t, 2, (gint64) (a), (gint64) (b))
#define B3(t, a, b, c) buf (t, 3, (gint64) (a), (gint64) (b), (gint64) (c))
#define B4(t, a, b, c, d) buf (t, 4, (gint64) (a), (gint64) (b), (gint64) (c), (gint64) (d))

/* Submits @op expecting @code, then checks that a good op still runs. */
static void
expect (AccelOp *op, AccelError code)
{
  g_autoptr(AccelOp) owned = op;
  cpu_test_submit_expect_error (owned, code);

  g_autoptr(AccelBuffer) ok = B1 (ACCEL_DTYPE_F32, 3);
  g_autoptr(AccelOp) good = accel_fill_new (ok, 1.5);
  cpu_test_submit (good);
  g_autofree double *v = cpu_test_read (ok);
  g_assert_cmpfloat (v[2], ==, 1.5);
}

static void
test_copy_cast_fill (void)
{
  g_autoptr(AccelBuffer) f32_7 = B1 (ACCEL_DTYPE_F32, 7);
  g_autoptr(AccelBuffer) f64_7 = B1 (ACCEL_DTYPE_F64, 7);
  g_autoptr(AccelBuffer) f32_8 = B1 (ACCEL_DTYPE_F32, 8);

  expect (accel_copy_new (f32_7, f64_7), ACCEL_ERROR_DTYPE_UNSUPPORTED);
  expect (accel_copy_new (f32_7, f32_8), ACCEL_ERROR_SHAPE_MISMATCH);
  expect (accel_copy_new (f32_7, NULL), ACCEL_ERROR_INVALID_ARGUMENT);
  expect (accel_cast_new (f32_7, f32_8), ACCEL_ERROR_SHAPE_MISMATCH);
  expect (accel_cast_new (f32_7, f32_7), ACCEL_ERROR_INVALID_ARGUMENT);

  AccelOp *fill = accel_fill_new (f32_7, 1.0);
  g_object_set (fill, "value-imag", 2.0, NULL);
  expect (fill, ACCEL_ERROR_INVALID_ARGUMENT);
}

static void
test_gemm (void)
{
  g_autoptr(AccelBuffer) a = B2 (ACCEL_DTYPE_F32, 7, 5);
  g_autoptr(AccelBuffer) b = B2 (ACCEL_DTYPE_F32, 5, 3);
  g_autoptr(AccelBuffer) c = B2 (ACCEL_DTYPE_F32, 7, 3);
  g_autoptr(AccelBuffer) b_bad = B2 (ACCEL_DTYPE_F32, 4, 3);
  g_autoptr(AccelBuffer) c_bad = B2 (ACCEL_DTYPE_F32, 3, 7);
  g_autoptr(AccelBuffer) b64 = B2 (ACCEL_DTYPE_F64, 5, 3);
  g_autoptr(AccelBuffer) i32 = B2 (ACCEL_DTYPE_I32, 7, 5);
  g_autoptr(AccelBuffer) v1 = B1 (ACCEL_DTYPE_F32, 5);
  g_autoptr(AccelBuffer) a3 = B3 (ACCEL_DTYPE_F32, 2, 7, 5);
  g_autoptr(AccelBuffer) b3 = B3 (ACCEL_DTYPE_F32, 3, 5, 3);
  g_autoptr(AccelBuffer) c3 = B3 (ACCEL_DTYPE_F32, 2, 7, 3);
  g_autoptr(AccelBuffer) a64 = B2 (ACCEL_DTYPE_F64, 7, 5);
  g_autoptr(AccelBuffer) c64 = B2 (ACCEL_DTYPE_F64, 7, 3);

  expect (accel_gemm_new (a, b_bad, c), ACCEL_ERROR_SHAPE_MISMATCH);
  expect (accel_gemm_new (a, b, c_bad), ACCEL_ERROR_SHAPE_MISMATCH);
  expect (accel_gemm_new (a, b64, c), ACCEL_ERROR_DTYPE_UNSUPPORTED);
  expect (accel_gemm_new (i32, b, c), ACCEL_ERROR_DTYPE_UNSUPPORTED);
  expect (accel_gemm_new (v1, b, c), ACCEL_ERROR_SHAPE_MISMATCH);
  expect (accel_gemm_new (a3, b, c), ACCEL_ERROR_SHAPE_MISMATCH);
  expect (accel_gemm_new (a3, b3, c3), ACCEL_ERROR_SHAPE_MISMATCH);
  expect (accel_gemm_new (a, b, NULL), ACCEL_ERROR_INVALID_ARGUMENT);
  expect (accel_gemm_new (a, b, a), ACCEL_ERROR_SHAPE_MISMATCH);

  AccelOp *tf32 = accel_gemm_new (a64, b64, c64);
  g_object_set (tf32, "compute", ACCEL_GEMM_COMPUTE_TF32, NULL);
  expect (tf32, ACCEL_ERROR_INVALID_ARGUMENT);

  /* transa makes a [7, 5] read as [5, 7]: k = 7 does not fit b [5, 3]. */
  AccelOp *trans = accel_gemm_new (a, b, c);
  g_object_set (trans, "transa", TRUE, NULL);
  expect (trans, ACCEL_ERROR_SHAPE_MISMATCH);

  /* c aliasing an input. */
  g_autoptr(AccelBuffer) sq = B2 (ACCEL_DTYPE_F32, 4, 4);
  g_autoptr(AccelBuffer) sq2 = B2 (ACCEL_DTYPE_F32, 4, 4);
  expect (accel_gemm_new (sq, sq2, sq), ACCEL_ERROR_INVALID_ARGUMENT);

  /* A non-contiguous operand. */
  gint64 dims[2] = { 5, 3 }, strides[2] = { 1, 5 };
  g_autoptr(AccelShape) tshape = accel_shape_new_strided (dims, strides, 2);
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelBuffer) bt = accel_device_alloc (cpu_test_device (), ACCEL_DTYPE_F32, tshape, &error);
  g_assert_no_error (error);
  expect (accel_gemm_new (a, bt, c), ACCEL_ERROR_INVALID_ARGUMENT);
}

static void
test_blas1 (void)
{
  g_autoptr(AccelBuffer) x = B1 (ACCEL_DTYPE_F32, 7);
  g_autoptr(AccelBuffer) y = B1 (ACCEL_DTYPE_F32, 8);
  g_autoptr(AccelBuffer) yd = B1 (ACCEL_DTYPE_F64, 7);
  g_autoptr(AccelBuffer) xi = B1 (ACCEL_DTYPE_I8, 7);

  expect (accel_axpy_new (2.0, x, y), ACCEL_ERROR_SHAPE_MISMATCH);
  expect (accel_axpy_new (2.0, x, yd), ACCEL_ERROR_DTYPE_UNSUPPORTED);
  expect (accel_axpy_new (2.0, xi, xi), ACCEL_ERROR_DTYPE_UNSUPPORTED);
  expect (accel_scal_new (2.0, xi), ACCEL_ERROR_DTYPE_UNSUPPORTED);
  expect (accel_scal_new (2.0, NULL), ACCEL_ERROR_INVALID_ARGUMENT);
}

static void
test_rng (void)
{
  g_autoptr(AccelBuffer) f = B1 (ACCEL_DTYPE_F32, 9);
  g_autoptr(AccelBuffer) i = B1 (ACCEL_DTYPE_I32, 9);

  expect (accel_rng_fill_new (i, ACCEL_RNG_UNIFORM, 1), ACCEL_ERROR_DTYPE_UNSUPPORTED);

  AccelOp *bounds = accel_rng_fill_new (f, ACCEL_RNG_UNIFORM, 1);
  g_object_set (bounds, "low", 2.0, "high", 1.0, NULL);
  expect (bounds, ACCEL_ERROR_INVALID_ARGUMENT);

  AccelOp *wrap = accel_rng_fill_new (f, ACCEL_RNG_UNIFORM, 1);
  g_object_set (wrap, "offset", G_MAXUINT64 - 1, NULL);
  expect (wrap, ACCEL_ERROR_INVALID_ARGUMENT);
}

static void
test_fft (void)
{
  g_autoptr(AccelBuffer) c8 = B1 (ACCEL_DTYPE_C64, 8);
  g_autoptr(AccelBuffer) c8b = B1 (ACCEL_DTYPE_C64, 8);
  g_autoptr(AccelBuffer) c7 = B1 (ACCEL_DTYPE_C64, 7);
  g_autoptr(AccelBuffer) c5 = B1 (ACCEL_DTYPE_C64, 5);
  g_autoptr(AccelBuffer) z8 = B1 (ACCEL_DTYPE_C128, 8);
  g_autoptr(AccelBuffer) r8 = B1 (ACCEL_DTYPE_F32, 8);
  g_autoptr(AccelBuffer) m = B2 (ACCEL_DTYPE_C64, 4, 8);

  expect (accel_fft_new (r8, c8, ACCEL_FFT_C2C, ACCEL_FFT_FORWARD, 1), ACCEL_ERROR_DTYPE_UNSUPPORTED);
  expect (accel_fft_new (c8, z8, ACCEL_FFT_C2C, ACCEL_FFT_FORWARD, 1), ACCEL_ERROR_DTYPE_UNSUPPORTED);
  expect (accel_fft_new (c8, c7, ACCEL_FFT_C2C, ACCEL_FFT_FORWARD, 1), ACCEL_ERROR_SHAPE_MISMATCH);
  expect (accel_fft_new (r8, c8, ACCEL_FFT_R2C, ACCEL_FFT_FORWARD, 1), ACCEL_ERROR_SHAPE_MISMATCH);
  expect (accel_fft_new (r8, c5, ACCEL_FFT_R2C, ACCEL_FFT_INVERSE, 1), ACCEL_ERROR_INVALID_ARGUMENT);
  expect (accel_fft_new (c5, r8, ACCEL_FFT_C2R, ACCEL_FFT_FORWARD, 1), ACCEL_ERROR_INVALID_ARGUMENT);
  expect (accel_fft_new (c8, c8b, ACCEL_FFT_C2C, ACCEL_FFT_FORWARD, 2), ACCEL_ERROR_SHAPE_MISMATCH);
  expect (accel_fft_new (m, c8, ACCEL_FFT_C2C, ACCEL_FFT_FORWARD, 1), ACCEL_ERROR_SHAPE_MISMATCH);

  /* The good forms pass. */
  g_autoptr(AccelOp) r2c = accel_fft_new (r8, c5, ACCEL_FFT_R2C, ACCEL_FFT_FORWARD, 1);
  cpu_test_submit (r2c);
}

static void
test_reduce_softmax (void)
{
  g_autoptr(AccelBuffer) src = B3 (ACCEL_DTYPE_F32, 2, 3, 4);
  g_autoptr(AccelBuffer) d24 = B2 (ACCEL_DTYPE_F32, 2, 4);
  g_autoptr(AccelBuffer) d23 = B2 (ACCEL_DTYPE_F32, 2, 3);
  g_autoptr(AccelBuffer) d64 = B2 (ACCEL_DTYPE_F64, 2, 4);
  g_autoptr(AccelBuffer) isrc = B3 (ACCEL_DTYPE_I32, 2, 3, 4);
  g_autoptr(AccelBuffer) i24 = B2 (ACCEL_DTYPE_I32, 2, 4);
  g_autoptr(AccelBuffer) s2 = B3 (ACCEL_DTYPE_F32, 2, 3, 5);
  g_autoptr(AccelBuffer) cs = B3 (ACCEL_DTYPE_C64, 2, 3, 4);

  expect (accel_reduce_new (src, d24, ACCEL_REDUCE_SUM, 3), ACCEL_ERROR_INVALID_ARGUMENT);
  expect (accel_reduce_new (src, d24, ACCEL_REDUCE_SUM, -4), ACCEL_ERROR_INVALID_ARGUMENT);
  expect (accel_reduce_new (src, d24, ACCEL_REDUCE_MAX, 2), ACCEL_ERROR_SHAPE_MISMATCH);
  expect (accel_reduce_new (src, d64, ACCEL_REDUCE_MEAN, 1), ACCEL_ERROR_DTYPE_UNSUPPORTED);
  expect (accel_reduce_new (isrc, i24, ACCEL_REDUCE_SUM, 1), ACCEL_ERROR_DTYPE_UNSUPPORTED);
  expect (accel_softmax_new (src, s2), ACCEL_ERROR_SHAPE_MISMATCH);
  expect (accel_softmax_new (cs, cs), ACCEL_ERROR_DTYPE_UNSUPPORTED);

  g_autoptr(AccelOp) ok1 = accel_reduce_new (src, d24, ACCEL_REDUCE_SUM, 1);
  cpu_test_submit (ok1);
  g_autoptr(AccelOp) ok2 = accel_reduce_new (src, d23, ACCEL_REDUCE_MIN, -1);
  cpu_test_submit (ok2);
}

static void
test_attention (void)
{
  g_autoptr(AccelBuffer) q = B4 (ACCEL_DTYPE_F32, 1, 4, 5, 8);
  g_autoptr(AccelBuffer) k = B4 (ACCEL_DTYPE_F32, 1, 2, 6, 8);
  g_autoptr(AccelBuffer) v = B4 (ACCEL_DTYPE_F32, 1, 2, 6, 3);
  g_autoptr(AccelBuffer) out = B4 (ACCEL_DTYPE_F32, 1, 4, 5, 3);
  g_autoptr(AccelBuffer) k3 = B4 (ACCEL_DTYPE_F32, 1, 3, 6, 8);
  g_autoptr(AccelBuffer) v3 = B4 (ACCEL_DTYPE_F32, 1, 3, 6, 3);
  g_autoptr(AccelBuffer) kd = B4 (ACCEL_DTYPE_F32, 1, 2, 6, 7);
  g_autoptr(AccelBuffer) kf64 = B4 (ACCEL_DTYPE_F64, 1, 2, 6, 8);
  g_autoptr(AccelBuffer) out_bad = B4 (ACCEL_DTYPE_F32, 1, 4, 6, 3);
  g_autoptr(AccelBuffer) q3 = B3 (ACCEL_DTYPE_F32, 4, 5, 8);
  g_autoptr(AccelBuffer) lse64 = B3 (ACCEL_DTYPE_F64, 1, 4, 5);
  g_autoptr(AccelBuffer) lse_bad = B3 (ACCEL_DTYPE_F32, 1, 4, 6);
  g_autoptr(AccelBuffer) qi = B4 (ACCEL_DTYPE_I32, 1, 4, 5, 8);

  expect (accel_attention_new (q, k3, v3, out), ACCEL_ERROR_SHAPE_MISMATCH);   /* 4 % 3 heads */
  expect (accel_attention_new (q, kd, v, out), ACCEL_ERROR_SHAPE_MISMATCH);    /* head dim */
  expect (accel_attention_new (q, kf64, v, out), ACCEL_ERROR_DTYPE_UNSUPPORTED);
  expect (accel_attention_new (q, k, v, out_bad), ACCEL_ERROR_SHAPE_MISMATCH);
  expect (accel_attention_new (q3, k, v, out), ACCEL_ERROR_SHAPE_MISMATCH);
  expect (accel_attention_new (qi, k, v, out), ACCEL_ERROR_DTYPE_UNSUPPORTED);
  expect (accel_attention_new (q, k, v, q), ACCEL_ERROR_SHAPE_MISMATCH);

  AccelOp *l1 = accel_attention_new (q, k, v, out);
  g_object_set (l1, "lse", lse64, NULL);
  expect (l1, ACCEL_ERROR_DTYPE_UNSUPPORTED);
  AccelOp *l2 = accel_attention_new (q, k, v, out);
  g_object_set (l2, "lse", lse_bad, NULL);
  expect (l2, ACCEL_ERROR_SHAPE_MISMATCH);

  g_autoptr(AccelOp) good = accel_attention_new (q, k, v, out);
  cpu_test_submit (good);
}

/* Ops on buffers with no elements do nothing and succeed. */
static void
test_empty (void)
{
  g_autoptr(AccelBuffer) e = B1 (ACCEL_DTYPE_F32, 0);
  g_autoptr(AccelBuffer) e2 = B1 (ACCEL_DTYPE_F32, 0);
  g_autoptr(AccelBuffer) a = B2 (ACCEL_DTYPE_F32, 0, 5);
  g_autoptr(AccelBuffer) b = B2 (ACCEL_DTYPE_F32, 5, 3);
  g_autoptr(AccelBuffer) c = B2 (ACCEL_DTYPE_F32, 0, 3);
  AccelOp *ops[] = {
    accel_fill_new (e, 1.0),
    accel_copy_new (e, e2),
    accel_cast_new (e, e2),
    accel_scal_new (2.0, e),
    accel_axpy_new (2.0, e, e2),
    accel_rng_fill_new (e, ACCEL_RNG_NORMAL, 3),
    accel_gemm_new (a, b, c),
  };
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      cpu_test_submit (ops[i]);
      g_clear_object (&ops[i]);
    }
}

static void
test_memory_limit (void)
{
  AccelDevice *device = cpu_test_device ();
  guint64 limit = 0;
  g_autoptr(GError) error = NULL;

  g_object_get (device, "memory-limit", &limit, NULL);
  g_assert_cmpuint (limit, ==, 64 << 20);
  g_assert_cmpuint (accel_device_get_memory_total (device), ==, 64 << 20);

  gint64 big = (gint64) 32 << 20;   /* 128 MiB of f32 */
  g_autoptr(AccelShape) big_shape = accel_shape_new (&big, 1);
  AccelBuffer *none = accel_device_alloc (device, ACCEL_DTYPE_F32, big_shape, &error);
  g_assert_null (none);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY);
  g_assert_nonnull (strstr (error->message, "ACCEL_CPU_MEMORY_LIMIT"));
  g_assert_nonnull (strstr (error->message, "134217728"));
  g_test_message ("%s", error->message);
  g_clear_error (&error);

  gint64 part = (gint64) 10 << 20;  /* 40 MiB */
  g_autoptr(AccelShape) part_shape = accel_shape_new (&part, 1);
  AccelBuffer *first = accel_device_alloc (device, ACCEL_DTYPE_F32, part_shape, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (accel_device_get_memory_free (device), <=, (64 << 20) - (40 << 20));
  AccelBuffer *second = accel_device_alloc (device, ACCEL_DTYPE_F32, part_shape, &error);
  g_assert_null (second);
  g_assert_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY);
  g_clear_error (&error);

  /* Freed memory is available again, and the device still works. */
  g_object_unref (first);
  second = accel_device_alloc (device, ACCEL_DTYPE_F32, part_shape, &error);
  g_assert_no_error (error);
  g_autoptr(AccelOp) op = accel_fill_new (second, 4.0);
  cpu_test_submit (op);
  g_clear_object (&op);
  g_object_unref (second);
}

/* Every op of the set, with non-default parameters, round-trips through
 * its serialised form exactly (the device host process relies on it). */
static void
test_serialize (void)
{
  g_autoptr(AccelBuffer) m = B2 (ACCEL_DTYPE_F32, 4, 4);
  g_autoptr(AccelBuffer) m2 = B2 (ACCEL_DTYPE_F32, 4, 4);
  g_autoptr(AccelBuffer) m3 = B2 (ACCEL_DTYPE_F32, 4, 4);
  g_autoptr(AccelBuffer) c = B1 (ACCEL_DTYPE_C64, 8);
  g_autoptr(AccelBuffer) c2 = B1 (ACCEL_DTYPE_C64, 8);
  g_autoptr(AccelBuffer) q = B4 (ACCEL_DTYPE_F32, 1, 2, 3, 4);
  g_autoptr(AccelBuffer) lse = B3 (ACCEL_DTYPE_F32, 1, 2, 3);
  g_autoptr(GPtrArray) buffers = g_ptr_array_new ();
  AccelBuffer *all[] = { m, m2, m3, c, c2, q, lse };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    g_ptr_array_add (buffers, all[i]);

  AccelOp *ops[] = {
    accel_copy_new (m, m2),
    accel_fill_new (c, -2.5),
    accel_cast_new (m, m2),
    accel_gemm_new (m, m2, m3),
    accel_axpy_new (0.25, m, m2),
    accel_scal_new (-3.0, m),
    accel_rng_fill_new (m, ACCEL_RNG_NORMAL, G_MAXUINT64 - 5),
    accel_fft_new (c, c2, ACCEL_FFT_C2C, ACCEL_FFT_INVERSE, 1),
    accel_reduce_new (m, m2, ACCEL_REDUCE_MEAN, -2),
    accel_softmax_new (m, m),
    accel_attention_new (q, q, q, q),
  };
  g_object_set (ops[1], "value-imag", 0.5, NULL);
  g_object_set (ops[3], "transa", TRUE, "alpha", 0.5, "beta", 2.0, "compute", ACCEL_GEMM_COMPUTE_F32, NULL);
  g_object_set (ops[6], "offset", G_GUINT64_CONSTANT (1) << 40, "mean", 1.5, "stddev", 0.125, NULL);
  g_object_set (ops[10], "lse", lse, "causal", TRUE, "window-left", 7, "window-right", 0,
                "scale", 0.3, "softcap", 30.0, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      g_autoptr(AccelOp) back = cpu_test_round_trip (ops[i], buffers);
      g_object_unref (ops[i]);
    }
}

static void
test_n_threads (void)
{
  AccelDevice *device = cpu_test_device ();
  guint n = 99;

  g_object_set (device, "n-threads", 3u, NULL);
  g_object_get (device, "n-threads", &n, NULL);
  g_assert_cmpuint (n, ==, 3);
  g_object_set (device, "n-threads", 0u, NULL);
}

/* A view of @base from element @offset: [@n] or, with @rows, [@rows, @n]. */
static AccelBuffer *
view (AccelBuffer *base, gint64 offset, gint64 rows, gint64 n)
{
  gint64 dims[2] = { rows, n };
  g_autoptr(AccelShape) shape = rows ? accel_shape_new (dims, 2) : accel_shape_new (&n, 1);
  g_autoptr(GError) error = NULL;
  AccelBuffer *v = accel_buffer_new_view (base, offset, shape, &error);
  g_assert_no_error (error);
  return v;
}

/* An output that overlaps an input partly is refused by every op that may
 * run in place, and any overlap by those that may not; in place (the very
 * same range) runs. */
static void
test_overlap (void)
{
  g_autoptr(AccelBuffer) base = B1 (ACCEL_DTYPE_F32, 24);
  g_autofree double *data = cpu_test_fill_random (base, -2.0, 2.0);
  gint64 shift = g_test_rand_int_range (1, 8);
  g_autoptr(AccelBuffer) a = view (base, 0, 0, 8);
  g_autoptr(AccelBuffer) same = view (base, 0, 0, 8);
  g_autoptr(AccelBuffer) shifted = view (base, shift, 0, 8);

  g_autoptr(AccelOp) copy = accel_copy_new (a, shifted);
  cpu_test_expect_error_naming (copy, ACCEL_ERROR_INVALID_ARGUMENT, "copy: “dst” overlaps “src” partly");
  g_autoptr(AccelOp) axpy = accel_axpy_new (2.0, a, shifted);
  cpu_test_expect_error_naming (axpy, ACCEL_ERROR_INVALID_ARGUMENT, "axpy: “y” overlaps “x” partly");
  g_autoptr(AccelOp) softmax = accel_softmax_new (a, shifted);
  cpu_test_expect_error_naming (softmax, ACCEL_ERROR_INVALID_ARGUMENT, "softmax: “dst” overlaps “src” partly");
  g_autoptr(AccelOp) cast = accel_cast_new (a, same);
  cpu_test_expect_error_naming (cast, ACCEL_ERROR_INVALID_ARGUMENT, "cast: “dst” overlaps “src”; the result");
  g_autoptr(AccelBuffer) rows = view (base, 0, 2, 8);
  g_autoptr(AccelBuffer) sums = view (base, shift, 0, 2);
  g_autoptr(AccelOp) reduce = accel_reduce_new (rows, sums, ACCEL_REDUCE_SUM, 1);
  cpu_test_expect_error_naming (reduce, ACCEL_ERROR_INVALID_ARGUMENT, "reduce: “dst” overlaps “src”; the result");

  /* In place: y = 2 x + y with y the same range as x is 3 x. */
  g_autoptr(AccelOp) in_place = accel_axpy_new (2.0, a, same);
  cpu_test_submit (in_place);
  g_autofree double *got = cpu_test_read (base);
  for (guint i = 0; i < 24; i++)
    g_assert_cmpfloat_with_epsilon (got[i], i < 8 ? 3.0 * data[i] : data[i], 1e-5);

  g_autoptr(AccelBuffer) cbase = B1 (ACCEL_DTYPE_C64, 24);
  g_autofree double *cdata = cpu_test_fill_random (cbase, -1.0, 1.0);
  g_autoptr(AccelBuffer) c = view (cbase, 0, 0, 8);
  g_autoptr(AccelBuffer) cshifted = view (cbase, shift, 0, 8);
  g_autoptr(AccelOp) fft = accel_fft_new (c, cshifted, ACCEL_FFT_C2C, ACCEL_FFT_FORWARD, 1);
  cpu_test_expect_error_naming (fft, ACCEL_ERROR_INVALID_ARGUMENT, "fft: “output” overlaps “input” partly");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/cpu/validate/copy-cast-fill", test_copy_cast_fill);
  g_test_add_func ("/cpu/validate/gemm", test_gemm);
  g_test_add_func ("/cpu/validate/blas1", test_blas1);
  g_test_add_func ("/cpu/validate/rng", test_rng);
  g_test_add_func ("/cpu/validate/fft", test_fft);
  g_test_add_func ("/cpu/validate/reduce-softmax", test_reduce_softmax);
  g_test_add_func ("/cpu/validate/attention", test_attention);
  g_test_add_func ("/cpu/validate/empty", test_empty);
  g_test_add_func ("/cpu/validate/overlap", test_overlap);
  g_test_add_func ("/cpu/ops/serialize", test_serialize);
  g_test_add_func ("/cpu/device/memory-limit", test_memory_limit);
  g_test_add_func ("/cpu/device/n-threads", test_n_threads);
  return cpu_test_run ();
}
