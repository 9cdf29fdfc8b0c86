/* rng-fill on cuda:0 through the `curand` plugin's kernel (cuRAND's
 * Philox4x32-10), which runs because this program's environment sets
 * ACCEL_CUDA_RNG=curand. Its values are not cpu:0's, so they are checked
 * against the distribution itself: uniform values lie in [low, high), the
 * sample mean and the mean square deviation from the true mean lie within
 * six standard deviations of those estimators (plus a bound of the
 * rounding to the dtype), and the same seed and offset give the same bytes.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "cuda-test.h"
#include "accel-test-values.h"

/* Odd sizes: a normal fill of an odd count draws one more value into
 * scratch memory. */
static const gint64 sizes[] = { 1, 3, 1001, (1 << 20) + 1 };
static const AccelDType float_types[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16 };

/* Below this count the estimators are too far from normal for a bound in
 * standard deviations to mean a tail probability (one value's squared
 * deviation is chi-squared with one degree of freedom): small fills are
 * checked for range and reproducibility only. */
#define MIN_MOMENTS 1000
/* Outside six standard deviations with probability about 2e-9 per check. */
#define SIGMAS 6.0

typedef struct {
  int distribution;
  guint64 seed, offset;
  double a, b;              /* low and high, or mean and stddev */
} Fill;

static guint64
random_u64 (void)
{
  return (guint64) g_test_rand_int () | ((guint64) (guint32) g_test_rand_int () << 32);
}

/* A fill with fresh parameters. Bounds, mean and stddev are multiples of
 * 1/4 below 16, which every dtype holds exactly, so that the range check
 * needs no rounding allowance. */
static Fill
random_fill (int distribution)
{
  Fill f = { distribution, random_u64 (), (guint64) g_test_rand_int_range (0, 1 << 30), 0, 0 };
  if (distribution == ACCEL_RNG_UNIFORM)
    {
      f.a = g_test_rand_int_range (-16, 8) / 4.0;
      f.b = f.a + g_test_rand_int_range (1, 32) / 4.0;
    }
  else
    {
      f.a = g_test_rand_int_range (-8, 8) / 4.0;
      f.b = g_test_rand_int_range (1, 12) / 4.0;
    }
  return f;
}

static AccelOp *
rng_op (AccelBuffer *dst, const Fill *f)
{
  gboolean normal = f->distribution == ACCEL_RNG_NORMAL;
  return accel_op_new ("rng-fill", "dst", dst, "distribution", f->distribution, "seed", f->seed,
                       "offset", f->offset, normal ? "mean" : "low", f->a, normal ? "stddev" : "high", f->b, NULL);
}

static AccelBuffer *
filled (AccelDType dtype, gint64 n, const Fill *f)
{
  AccelBuffer *dst = ct_alloc (ct_gpu (), dtype, &n, 1);
  g_autoptr(AccelOp) op = rng_op (dst, f);
  ct_submit (ct_gpu (), op);
  return dst;
}

static gboolean
same_bytes (AccelBuffer *x, AccelBuffer *y)
{
  g_autofree guint8 *a = ct_read_bytes (x);
  g_autofree guint8 *b = ct_read_bytes (y);
  return accel_buffer_get_size (x) == accel_buffer_get_size (y)
         && memcmp (a, b, accel_buffer_get_size (x)) == 0;
}

/* Checks the values of a fill of @dst: range, then moments. */
static void
check_values (const char *what, AccelBuffer *dst, const Fill *f)
{
  AccelDType dtype = accel_buffer_get_dtype (dst);
  gsize n = (gsize) accel_buffer_get_n_elements (dst);
  g_autofree double *x = ct_read (dst);
  gboolean narrow = dtype == ACCEL_DTYPE_F16 || dtype == ACCEL_DTYPE_BF16;
  gboolean normal = f->distribution == ACCEL_RNG_NORMAL;

  for (gsize i = 0; i < n; i++)
    {
      /* The op excludes high, except that f16 and bf16 may round up to it. */
      gboolean in_range = normal ? isfinite (x[i])
                                 : x[i] >= f->a && (x[i] < f->b || (narrow && x[i] == f->b));
      if (!in_range)
        {
          g_test_fail_printf ("%s: element %" G_GSIZE_FORMAT " is %.17g, outside the distribution's range "
                              "(low or mean %g, high or stddev %g)", what, i, x[i], f->a, f->b);
          return;
        }
    }
  if (n < MIN_MOMENTS)
    return;

  /* The true moments: mean mu, variance var, and the variance of one
   * squared deviation (mu4 - var^2: (b-a)^4 (1/80 - 1/144) for a uniform
   * distribution, 2 sigma^4 for a normal one). */
  double mu, var, var_sq;
  if (normal)
    {
      mu = f->a;
      var = f->b * f->b;
      var_sq = 2 * var * var;
    }
  else
    {
      double w = f->b - f->a;
      mu = (f->a + f->b) / 2;
      var = w * w / 12;
      var_sq = w * w * w * w / 180;
    }
  /* Every stored value x is within r = 8 u (|x| + scale) of one drawn
   * exactly from the distribution (u: the dtype's unit roundoff, at least
   * binary32's, as cuRAND draws from 32-bit words; scale: high - low, or
   * stddev): the rounding to the dtype, the binary32 arithmetic that f16
   * and bf16 values go through, cuRAND's grid of uniforms and the last-bit
   * errors of its Box-Muller transform each stay below 2 u (|x| + scale).
   * A squared deviation then moves by at most r (2 |x - mu| + r). The
   * allowance adds the mean of these bounds to six standard deviations of
   * the estimator. */
  double u = MAX (ct_eps (dtype), 0x1p-24), scale = normal ? f->b : f->b - f->a;
  double sum = 0, sum_sq = 0, slack = 0, slack_sq = 0;
  for (gsize i = 0; i < n; i++)
    {
      double d = x[i] - mu, r = 8 * u * (fabs (x[i]) + scale);
      sum += x[i];
      sum_sq += d * d;
      slack += r;
      slack_sq += r * (2 * fabs (d) + r);
    }
  double mean = sum / n, m2 = sum_sq / n;
  double mean_tol = SIGMAS * sqrt (var / n) + slack / n;
  double m2_tol = SIGMAS * sqrt (var_sq / n) + slack_sq / n;
  if (fabs (mean - mu) > mean_tol)
    g_test_fail_printf ("%s: sample mean %.9g, the distribution's %.9g (allowed %.3g)", what, mean, mu, mean_tol);
  if (fabs (m2 - var) > m2_tol)
    g_test_fail_printf ("%s: mean square deviation %.9g, the distribution's variance %.9g (allowed %.3g)",
                        what, m2, var, m2_tol);
}

/* The kernel that runs rng-fill on cuda:0 is the curand plugin's, and its
 * values are not those of the cuda plugin's Philox (which are cpu:0's). */
static void
test_kernel (void)
{
  AccelDevice *gpu = ct_gpu ();
  if (gpu == NULL)
    return;
  gint64 n = 1001;
  Fill f = random_fill (ACCEL_RNG_UNIFORM);
  g_autoptr(AccelBuffer) on_gpu = ct_alloc (gpu, ACCEL_DTYPE_F32, &n, 1);
  g_autoptr(AccelOp) op = rng_op (on_gpu, &f);
  g_autoptr(GError) error = NULL;
  g_assert_true (accel_op_validate (op, &error));
  const AccelKernel *kernel = accel_registry_find_kernel (accel_system_get_registry (ct_system ()), op, gpu, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (accel_kernel_get_plugin_name (kernel), ==, "curand");
  ct_submit (gpu, op);

  g_autoptr(AccelBuffer) on_cpu = ct_alloc (ct_cpu (), ACCEL_DTYPE_F32, &n, 1);
  g_autoptr(AccelOp) cpu_op = rng_op (on_cpu, &f);
  ct_submit (ct_cpu (), cpu_op);
  g_assert_false (same_bytes (on_gpu, on_cpu));
}

static void
check_distribution (int distribution)
{
  if (!ct_gpu ())
    return;
  for (guint t = 0; t < G_N_ELEMENTS (float_types); t++)
    for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
      {
        AccelDType dtype = float_types[t];
        gint64 n = sizes[s];
        Fill f = random_fill (distribution);
        g_autofree char *what = g_strdup_printf ("rng-fill %s %s n=%" G_GINT64_FORMAT,
                                                 distribution == ACCEL_RNG_NORMAL ? "normal" : "uniform",
                                                 accel_dtype_get_name (dtype), n);
        g_autoptr(AccelBuffer) dst = filled (dtype, n, &f);
        check_values (what, dst, &f);

        /* The same seed and offset: the same bytes. */
        g_autoptr(AccelBuffer) again = filled (dtype, n, &f);
        if (!same_bytes (dst, again))
          g_test_fail_printf ("%s: two fills with one seed and offset differ", what);

        /* Another seed, or another offset: other values (for a large
         * count: a few values of a narrow dtype may well coincide). */
        if (n >= MIN_MOMENTS)
          {
            Fill g = f;
            g.seed ^= 1 + (guint64) g_test_rand_int_range (0, G_MAXINT32);
            g_autoptr(AccelBuffer) seeded = filled (dtype, n, &g);
            check_values (what, seeded, &g);
            if (same_bytes (dst, seeded))
              g_test_fail_printf ("%s: seeds %" G_GUINT64_FORMAT " and %" G_GUINT64_FORMAT " give the same bytes",
                                  what, f.seed, g.seed);
            g = f;
            g.offset += 1 + (guint64) g_test_rand_int_range (0, 1 << 20);
            g_autoptr(AccelBuffer) shifted = filled (dtype, n, &g);
            if (same_bytes (dst, shifted))
              g_test_fail_printf ("%s: offsets %" G_GUINT64_FORMAT " and %" G_GUINT64_FORMAT " give the same bytes",
                                  what, f.offset, g.offset);
          }
      }
}

static void
test_uniform (void)
{
  check_distribution (ACCEL_RNG_UNIFORM);
}

static void
test_normal (void)
{
  check_distribution (ACCEL_RNG_NORMAL);
}

/* A fill of an odd count into a view, between two elements of fresh
 * random values: the extra value drawn goes to scratch memory, not past
 * the view, and the view gets the bytes of a fill of its own buffer. */
static void
test_odd_normal_in_view (void)
{
  if (!ct_gpu ())
    return;
  for (guint t = 0; t < G_N_ELEMENTS (float_types); t++)
    for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
      {
        AccelDType dtype = float_types[t];
        gint64 n = sizes[s], outer = n + 2;
        Fill f = random_fill (ACCEL_RNG_NORMAL);
        g_autofree char *what = g_strdup_printf ("rng-fill normal %s n=%" G_GINT64_FORMAT " in a view",
                                                 accel_dtype_get_name (dtype), n);
        g_autoptr(AccelBuffer) whole = ct_alloc (ct_gpu (), dtype, &outer, 1);
        g_autofree double *before = accel_test_random_values (dtype, (gsize) outer, 100, 200);
        ct_write (whole, before);

        g_autoptr(AccelShape) shape = accel_shape_new (&n, 1);
        g_autoptr(GError) error = NULL;
        g_autoptr(AccelBuffer) view = accel_buffer_new_view (whole, 1, shape, &error);
        g_assert_no_error (error);
        g_autoptr(AccelOp) op = rng_op (view, &f);
        ct_submit (ct_gpu (), op);

        g_autofree double *after = ct_read (whole);
        g_assert_cmpfloat (after[0], ==, before[0]);
        g_assert_cmpfloat (after[n + 1], ==, before[n + 1]);
        check_values (what, view, &f);
        g_autoptr(AccelBuffer) alone = filled (dtype, n, &f);
        if (!same_bytes (view, alone))
          g_test_fail_printf ("%s: the view's values are not those of a buffer of its own", what);
      }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/curand/kernel", test_kernel);
  g_test_add_func ("/cuda/curand/uniform", test_uniform);
  g_test_add_func ("/cuda/curand/normal", test_normal);
  g_test_add_func ("/cuda/curand/odd-normal-in-view", test_odd_normal_in_view);
  return ct_run ();
}
