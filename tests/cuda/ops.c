/* The portable ops of the `cuda` and `cublas` plugins on cuda:0 against
 * cpu:0, on fresh random data at sizes that are no multiple of any tile.
 * Copies, fills, casts and uniform rng-fill must give the same bytes;
 * arithmetic agrees to the rounding of its dtype.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include "cuda-test.h"
#include "accel-test-values.h"

static const gint64 sizes[] = { 1, 33, 257, 1023, 100003 };
static const AccelDType float_types[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16 };

static AccelBuffer *
pick (CtPair *pair, gboolean on_gpu)
{
  return on_gpu ? pair->gpu : pair->cpu;
}

/* An op of @type from src to dst: copy, cast, softmax. */
typedef struct {
  const char *type;
  CtPair *src, *dst;
} PairCase;

static AccelOp *
make_src_dst (gboolean on_gpu, gpointer data)
{
  PairCase *c = data;
  return accel_op_new (c->type, "src", pick (c->src, on_gpu), "dst", pick (c->dst, on_gpu), NULL);
}

/* copy */

/* A buffer laid out as the transpose of a rows x cols matrix, on both
 * devices, holding the same bytes. */
static CtPair *
transposed_pair (AccelDType dtype, gint64 rows, gint64 cols)
{
  gint64 dims[2] = { cols, rows }, strides[2] = { 1, cols };
  g_autoptr(AccelShape) shape = accel_shape_new_strided (dims, strides, 2);
  g_autoptr(GError) error = NULL;
  CtPair *pair = g_new0 (CtPair, 1);
  pair->cpu = accel_device_alloc (ct_cpu (), dtype, shape, &error);
  g_assert_no_error (error);
  pair->gpu = accel_device_alloc (ct_gpu (), dtype, shape, &error);
  g_assert_no_error (error);
  gsize size = accel_buffer_get_size (pair->cpu);
  g_autofree float *bytes = g_new (float, size / sizeof (float));
  for (gsize i = 0; i < size / sizeof (float); i++)
    bytes[i] = (float) g_test_rand_double_range (-1, 1);
  g_assert_true (accel_buffer_write (pair->cpu, (guint8 *) bytes, size, &error));
  g_assert_true (accel_buffer_write (pair->gpu, (guint8 *) bytes, size, &error));
  g_assert_no_error (error);
  return pair;
}

static void
test_copy (void)
{
  if (!ct_gpu ())
    return;
  for (guint t = 0; t < G_N_ELEMENTS (float_types); t++)
    for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
      {
        g_autoptr(CtPair) src = ct_pair_new (float_types[t], &sizes[s], 1, -10, 10);
        g_autoptr(CtPair) dst = ct_pair_new (float_types[t], &sizes[s], 1, -1, 1);
        PairCase c = { "copy", src, dst };
        ct_submit_both (make_src_dst, &c);
        ct_assert_same_bytes ("copy", dst->gpu, dst->cpu);
      }
  /* Strided source and destination: a transposed 33 x 257 layout. */
  gint64 tdims[2] = { 257, 33 };
  g_autoptr(CtPair) src = transposed_pair (ACCEL_DTYPE_C64, 33, 257);
  g_autoptr(CtPair) dst = ct_pair_new_empty (ACCEL_DTYPE_C64, tdims, 2);
  PairCase c = { "copy", src, dst };
  ct_submit_both (make_src_dst, &c);
  ct_assert_same_bytes ("strided copy", dst->gpu, dst->cpu);
  g_autoptr(CtPair) back = transposed_pair (ACCEL_DTYPE_C64, 33, 257);
  PairCase d = { "copy", dst, back };
  ct_submit_both (make_src_dst, &d);
  ct_assert_same_bytes ("copy into a strided buffer", back->gpu, back->cpu);

  /* And a strided cast. */
  g_autoptr(CtPair) wide = ct_pair_new_empty (ACCEL_DTYPE_C128, tdims, 2);
  PairCase e = { "cast", src, wide };
  ct_submit_both (make_src_dst, &e);
  ct_assert_same_bytes ("strided cast", wide->gpu, wide->cpu);
}

/* fill */

typedef struct {
  CtPair *dst;
  double value, imag;
} FillCase;

static AccelOp *
make_fill (gboolean on_gpu, gpointer data)
{
  FillCase *c = data;
  return accel_op_new ("fill", "dst", pick (c->dst, on_gpu), "value", c->value, "value-imag", c->imag, NULL);
}

static void
test_fill (void)
{
  static const AccelDType all[] = {
    ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16, ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_C64, ACCEL_DTYPE_C128,
    ACCEL_DTYPE_I8, ACCEL_DTYPE_U8, ACCEL_DTYPE_I32, ACCEL_DTYPE_U32, ACCEL_DTYPE_I64,
    ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_FP8_E5M2,
  };
  if (!ct_gpu ())
    return;
  for (guint t = 0; t < G_N_ELEMENTS (all); t++)
    for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
      {
        g_autoptr(CtPair) dst = ct_pair_new_empty (all[t], &sizes[s], 1);
        FillCase c = { dst, g_test_rand_double_range (-300, 300),
                       accel_dtype_is_complex (all[t]) ? g_test_rand_double_range (-5, 5) : 0.0 };
        ct_submit_both (make_fill, &c);
        ct_assert_same_bytes ("fill", dst->gpu, dst->cpu);
      }
}

/* cast */

static void
test_cast (void)
{
  static const AccelDType all[] = {
    ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16, ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_C64, ACCEL_DTYPE_C128,
    ACCEL_DTYPE_I8, ACCEL_DTYPE_U8, ACCEL_DTYPE_I32, ACCEL_DTYPE_U32, ACCEL_DTYPE_I64,
    ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_FP8_E5M2,
  };
  gint64 n = 1023;
  if (!ct_gpu ())
    return;
  for (guint from = 0; from < G_N_ELEMENTS (all); from++)
    {
      /* Values beyond every integer range and every narrow float's, so
       * saturation and overflow are exercised too. */
      gboolean is_int = accel_dtype_is_integer (all[from]);
      g_autoptr(CtPair) src = ct_pair_new (all[from], &n, 1, is_int ? -100 : -1e5, is_int ? 200 : 1e5);
      for (guint to = 0; to < G_N_ELEMENTS (all); to++)
        {
          g_autoptr(CtPair) dst = ct_pair_new_empty (all[to], &n, 1);
          PairCase c = { "cast", src, dst };
          g_autofree char *what = g_strdup_printf ("cast %s -> %s", accel_dtype_get_name (all[from]),
                                                   accel_dtype_get_name (all[to]));
          ct_submit_both (make_src_dst, &c);
          ct_assert_same_bytes (what, dst->gpu, dst->cpu);
        }
    }
}

/* reduce */

typedef struct {
  CtPair *src, *dst;
  int reduction, axis;
} ReduceCase;

static AccelOp *
make_reduce (gboolean on_gpu, gpointer data)
{
  ReduceCase *c = data;
  return accel_op_new ("reduce", "src", pick (c->src, on_gpu), "dst", pick (c->dst, on_gpu),
                       "reduction", c->reduction, "axis", c->axis, NULL);
}

static void
test_reduce (void)
{
  static const gint64 shapes[][3] = { { 1, 1, 1 }, { 3, 33, 5 }, { 2, 1023, 1 }, { 1, 257, 33 }, { 7, 3, 1025 } };
  if (!ct_gpu ())
    return;
  for (guint t = 0; t < G_N_ELEMENTS (float_types); t++)
    for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
      for (int axis = 0; axis < 3; axis++)
        for (int reduction = 0; reduction < 4; reduction++)
          {
            AccelDType dtype = float_types[t];
            gint64 out[2];
            guint k = 0;
            for (int i = 0; i < 3; i++)
              if (i != axis)
                out[k++] = shapes[s][i];
            g_autoptr(CtPair) src = ct_pair_new (dtype, shapes[s], 3, -4, 4);
            g_autoptr(CtPair) dst = ct_pair_new_empty (dtype, out, 2);
            ReduceCase c = { src, dst, reduction, axis };
            ct_submit_both (make_reduce, &c);
            /* Sums are rounded once from binary64 on both; the order of the
             * additions differs. */
            double len = (double) shapes[s][axis];
            g_autofree char *what = g_strdup_printf ("reduce %s op %d axis %d of %" G_GINT64_FORMAT "x%"
                                                     G_GINT64_FORMAT "x%" G_GINT64_FORMAT,
                                                     accel_dtype_get_name (dtype), reduction, axis,
                                                     shapes[s][0], shapes[s][1], shapes[s][2]);
            ct_assert_pair_close (what, dst, NULL, 2 * ct_eps (dtype), 4 * len * 1e-15);
          }
}

/* softmax */

static void
test_softmax (void)
{
  static const gint64 shapes[][2] = { { 1, 1 }, { 33, 1 }, { 5, 257 }, { 3, 1023 }, { 2, 10007 } };
  if (!ct_gpu ())
    return;
  for (guint t = 0; t < G_N_ELEMENTS (float_types); t++)
    for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
      {
        AccelDType dtype = float_types[t];
        g_autoptr(CtPair) src = ct_pair_new (dtype, shapes[s], 2, -8, 8);
        g_autoptr(CtPair) dst = ct_pair_new_empty (dtype, shapes[s], 2);
        PairCase c = { "softmax", src, dst };
        ct_submit_both (make_src_dst, &c);
        /* expf differs between libraries by an ulp or two; small
         * probabilities are subnormal in f16, with a spacing of their own. */
        double rtol = dtype == ACCEL_DTYPE_F64 ? 1e-13 : dtype == ACCEL_DTYPE_F32 ? 1e-6 : 2 * ct_eps (dtype);
        ct_assert_pair_close ("softmax", dst, NULL, rtol, 2 * accel_test_denorm_min (dtype));
      }
}

/* rng-fill */

typedef struct {
  CtPair *dst;
  int distribution;
  guint64 seed, offset;
} RngCase;

static AccelOp *
make_rng (gboolean on_gpu, gpointer data)
{
  RngCase *c = data;
  return accel_op_new ("rng-fill", "dst", pick (c->dst, on_gpu), "distribution", c->distribution,
                       "seed", c->seed, "offset", c->offset, "low", -3.0, "high", 5.0,
                       "mean", 1.5, "stddev", 2.0, NULL);
}

static void
test_rng_uniform_bit_identical (void)
{
  if (!ct_gpu ())
    return;
  for (guint t = 0; t < G_N_ELEMENTS (float_types); t++)
    for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
      {
        g_autoptr(CtPair) dst = ct_pair_new_empty (float_types[t], &sizes[s], 1);
        RngCase c = { dst, ACCEL_RNG_UNIFORM, g_test_rand_int () | ((guint64) g_test_rand_int () << 32),
                      (guint64) g_test_rand_int_range (0, 1 << 30) };
        ct_submit_both (make_rng, &c);
        g_autofree char *what = g_strdup_printf ("rng-fill uniform %s n=%" G_GINT64_FORMAT,
                                                 accel_dtype_get_name (float_types[t]), sizes[s]);
        ct_assert_same_bytes (what, dst->gpu, dst->cpu);
      }
}

static void
test_rng_normal (void)
{
  if (!ct_gpu ())
    return;
  for (guint t = 0; t < G_N_ELEMENTS (float_types); t++)
    for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
      {
        AccelDType dtype = float_types[t];
        g_autoptr(CtPair) dst = ct_pair_new_empty (dtype, &sizes[s], 1);
        RngCase c = { dst, ACCEL_RNG_NORMAL, g_test_rand_int (), 7 };
        ct_submit_both (make_rng, &c);
        /* log, sin and cos may differ in the last bit between libraries. */
        double rtol = dtype == ACCEL_DTYPE_F64 ? 1e-13 : 2 * ct_eps (dtype);
        ct_assert_pair_close ("rng-fill normal", dst, NULL, rtol, 1e-12);
      }
}

/* axpy and scal */

typedef struct {
  CtPair *x, *y;
  double alpha;
} BlasCase;

static AccelOp *
make_axpy (gboolean on_gpu, gpointer data)
{
  BlasCase *c = data;
  return accel_op_new ("axpy", "x", pick (c->x, on_gpu), "y", pick (c->y, on_gpu), "alpha", c->alpha, NULL);
}

static AccelOp *
make_scal (gboolean on_gpu, gpointer data)
{
  BlasCase *c = data;
  return accel_op_new ("scal", "x", pick (c->x, on_gpu), "alpha", c->alpha, NULL);
}

static void
test_axpy_scal (void)
{
  static const AccelDType types[] = {
    ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_C64, ACCEL_DTYPE_C128, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
  };
  if (!ct_gpu ())
    return;
  for (guint t = 0; t < G_N_ELEMENTS (types); t++)
    for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
      {
        AccelDType dtype = types[t];
        g_autoptr(CtPair) x = ct_pair_new (dtype, &sizes[s], 1, -2, 2);
        g_autoptr(CtPair) y = ct_pair_new (dtype, &sizes[s], 1, -2, 2);
        BlasCase c = { x, y, g_test_rand_double_range (-3, 3) };
        ct_submit_both (make_axpy, &c);
        /* One rounding of the result, plus the products' on each side. */
        g_autofree double *scale = g_new (double, y->n_values);
        for (gsize i = 0; i < y->n_values; i++)
          scale[i] = fabs (c.alpha) * 2 + 2;
        ct_assert_pair_close ("axpy", y, scale, 2 * ct_eps (dtype), 0.0);

        ct_submit_both (make_scal, &c);
        ct_assert_pair_close ("scal", x, NULL, 2 * ct_eps (dtype), 0.0);
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/ops/copy", test_copy);
  g_test_add_func ("/cuda/ops/fill", test_fill);
  g_test_add_func ("/cuda/ops/cast", test_cast);
  g_test_add_func ("/cuda/ops/reduce", test_reduce);
  g_test_add_func ("/cuda/ops/softmax", test_softmax);
  g_test_add_func ("/cuda/ops/rng-fill-uniform-bit-identical", test_rng_uniform_bit_identical);
  g_test_add_func ("/cuda/ops/rng-fill-normal", test_rng_normal);
  g_test_add_func ("/cuda/ops/axpy-scal", test_axpy_scal);
  return ct_run ();
}
