/* fft on cpu:0 against a direct binary64 DFT: c2c, r2c and c2r, 1 to 3
 * axes, batches, odd and even lengths, forward and inverse, in place.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "cpu-test.h"

typedef struct {
  guint rank;
  gint64 dims[4];
  guint n_axes;
} FftShape;

static const FftShape shapes[] = {
  { 1, { 1 }, 1 },
  { 1, { 7 }, 1 },
  { 1, { 8 }, 1 },
  { 1, { 129 }, 1 },
  { 2, { 3, 33 }, 1 },
  { 3, { 2, 7, 33 }, 2 },
  { 2, { 6, 10 }, 2 },
  { 3, { 7, 5, 9 }, 3 },
  { 4, { 2, 3, 4, 6 }, 3 },
};

/* In-place DFT of complex @x (interleaved, row-major @dims) along @axis. */
static void
dft_axis (double *x, const gint64 *dims, guint rank, guint axis, int sign)
{
  gint64 n = dims[axis], inner = 1, outer = 1;
  for (guint i = axis + 1; i < rank; i++)
    inner *= dims[i];
  for (guint i = 0; i < axis; i++)
    outer *= dims[i];
  g_autofree double *tmp = g_new (double, 2 * n);

  for (gint64 o = 0; o < outer; o++)
    for (gint64 in = 0; in < inner; in++)
      {
        double *base = x + 2 * (o * n * inner + in);
        for (gint64 kk = 0; kk < n; kk++)
          {
            double re = 0, im = 0;
            for (gint64 j = 0; j < n; j++)
              {
                double a = sign * 2.0 * G_PI * (double) ((kk * j) % n) / (double) n;
                double xr = base[2 * j * inner], xi = base[2 * j * inner + 1];
                re += xr * cos (a) - xi * sin (a);
                im += xr * sin (a) + xi * cos (a);
              }
            tmp[2 * kk] = re;
            tmp[2 * kk + 1] = im;
          }
        for (gint64 kk = 0; kk < n; kk++)
          {
            base[2 * kk * inner] = tmp[2 * kk];
            base[2 * kk * inner + 1] = tmp[2 * kk + 1];
          }
      }
}

static void
dft (double *x, const FftShape *s, int sign)
{
  for (guint a = s->rank - s->n_axes; a < s->rank; a++)
    dft_axis (x, s->dims, s->rank, a, sign);
}

static gint64
n_elements (const gint64 *dims, guint rank)
{
  gint64 n = 1;
  for (guint i = 0; i < rank; i++)
    n *= dims[i];
  return n;
}

static double
max_abs (const double *v, gsize n)
{
  double m = 1e-300;
  for (gsize i = 0; i < n; i++)
    m = MAX (m, fabs (v[i]));
  return m;
}

static double
fft_rtol (AccelDType dtype, const FftShape *s)
{
  gint64 points = 1;
  for (guint a = s->rank - s->n_axes; a < s->rank; a++)
    points *= s->dims[a];
  return 16.0 * cpu_test_eps (dtype) * (log2 ((double) points) + 2.0);
}

static void
check_with_global_scale (const char *what, const double *got, const double *want, gsize n, double rtol)
{
  double m = max_abs (want, n);
  g_autofree double *scale = g_new (double, n);
  for (gsize i = 0; i < n; i++)
    scale[i] = m;
  cpu_test_assert_close (what, got, want, scale, n, rtol, 0.0);
}

static void
test_c2c (gconstpointer data)
{
  AccelDType dtype = GPOINTER_TO_INT (data);

  for (guint si = 0; si < G_N_ELEMENTS (shapes); si++)
    for (int dir = 0; dir < 2; dir++)
      for (int inplace = 0; inplace < 2; inplace++)
        {
          const FftShape *s = &shapes[si];
          gint64 n = n_elements (s->dims, s->rank);
          g_autoptr(AccelBuffer) in = cpu_test_alloc (dtype, s->dims, s->rank);
          g_autoptr(AccelBuffer) out = inplace ? g_object_ref (in) : cpu_test_alloc (dtype, s->dims, s->rank);
          g_autofree double *x = cpu_test_fill_random (in, -1, 1);

          g_autoptr(AccelOp) op = accel_fft_new (in, out, ACCEL_FFT_C2C,
                                                 dir ? ACCEL_FFT_INVERSE : ACCEL_FFT_FORWARD, s->n_axes);
          cpu_test_submit (op);
          g_autofree double *got = cpu_test_read (out);
          dft (x, s, dir ? +1 : -1);

          g_autofree char *what = g_strdup_printf ("c2c %s shape %u#%u dir %d inplace %d",
                                                   accel_dtype_get_name (dtype), si, s->n_axes, dir, inplace);
          check_with_global_scale (what, got, x, 2 * n, fft_rtol (dtype, s));
        }
}

/* The half spectrum of real @x (shape @s): the last axis keeps n/2+1. */
static double *
half_spectrum (const double *x, const FftShape *s, gint64 *half_dims)
{
  gint64 n = n_elements (s->dims, s->rank);
  gint64 last = s->dims[s->rank - 1], half = last / 2 + 1;
  g_autofree double *full = g_new0 (double, 2 * n);
  for (gint64 i = 0; i < n; i++)
    full[2 * i] = x[i];
  dft (full, s, -1);

  memcpy (half_dims, s->dims, s->rank * sizeof (gint64));
  half_dims[s->rank - 1] = half;
  gint64 rows = n / last;
  double *out = g_new (double, 2 * rows * half);
  for (gint64 r = 0; r < rows; r++)
    memcpy (out + 2 * r * half, full + 2 * r * last, 2 * half * sizeof (double));
  return out;
}

static void
test_r2c (gconstpointer data)
{
  AccelDType rtype = GPOINTER_TO_INT (data);
  AccelDType ctype = rtype == ACCEL_DTYPE_F32 ? ACCEL_DTYPE_C64 : ACCEL_DTYPE_C128;

  for (guint si = 0; si < G_N_ELEMENTS (shapes); si++)
    {
      const FftShape *s = &shapes[si];
      gint64 hdims[4];
      g_autoptr(AccelBuffer) in = cpu_test_alloc (rtype, s->dims, s->rank);
      g_autofree double *x = cpu_test_fill_random (in, -1, 1);
      g_autofree double *want = half_spectrum (x, s, hdims);
      g_autoptr(AccelBuffer) out = cpu_test_alloc (ctype, hdims, s->rank);

      g_autoptr(AccelOp) op = accel_fft_new (in, out, ACCEL_FFT_R2C, ACCEL_FFT_FORWARD, s->n_axes);
      cpu_test_submit (op);
      g_autofree double *got = cpu_test_read (out);
      g_autofree char *what = g_strdup_printf ("r2c %s shape %u", accel_dtype_get_name (rtype), si);
      check_with_global_scale (what, got, want, 2 * n_elements (hdims, s->rank), fft_rtol (rtype, s));
    }
}

static void
test_c2r (gconstpointer data)
{
  AccelDType rtype = GPOINTER_TO_INT (data);
  AccelDType ctype = rtype == ACCEL_DTYPE_F32 ? ACCEL_DTYPE_C64 : ACCEL_DTYPE_C128;

  for (guint si = 0; si < G_N_ELEMENTS (shapes); si++)
    {
      const FftShape *s = &shapes[si];
      gint64 n = n_elements (s->dims, s->rank), hdims[4];
      g_autofree double *x = g_new (double, n);
      for (gint64 i = 0; i < n; i++)
        x[i] = g_test_rand_double_range (-1, 1);
      /* A Hermitian input: the spectrum of a real signal. */
      g_autofree double *spec = half_spectrum (x, s, hdims);
      g_autoptr(AccelBuffer) in = cpu_test_alloc (ctype, hdims, s->rank);
      cpu_test_write (in, spec);
      g_autofree double *stored = cpu_test_read (in);
      g_autoptr(AccelBuffer) out = cpu_test_alloc (rtype, s->dims, s->rank);

      g_autoptr(AccelOp) op = accel_fft_new (in, out, ACCEL_FFT_C2R, ACCEL_FFT_INVERSE, s->n_axes);
      cpu_test_submit (op);
      g_autofree double *got = cpu_test_read (out);

      gint64 points = 1;
      for (guint a = s->rank - s->n_axes; a < s->rank; a++)
        points *= s->dims[a];
      g_autofree double *want = g_new (double, n);
      for (gint64 i = 0; i < n; i++)
        want[i] = x[i] * (double) points;
      g_autofree char *what = g_strdup_printf ("c2r %s shape %u", accel_dtype_get_name (rtype), si);
      check_with_global_scale (what, got, want, n, 4 * fft_rtol (rtype, s));

      /* The input is only read. */
      g_autofree double *after = cpu_test_read (in);
      g_assert_cmpmem (after, 2 * n_elements (hdims, s->rank) * sizeof (double),
                       stored, 2 * n_elements (hdims, s->rank) * sizeof (double));
    }
}

/* The same transform again on other buffers runs the cached plan on new arrays. */
static void
test_plan_reuse (void)
{
  gint64 dims[2] = { 5, 64 };
  FftShape s = { 2, { 5, 64 }, 1 };

  for (int rep = 0; rep < 3; rep++)
    {
      g_autoptr(AccelBuffer) in = cpu_test_alloc (ACCEL_DTYPE_C64, dims, 2);
      g_autoptr(AccelBuffer) out = cpu_test_alloc (ACCEL_DTYPE_C64, dims, 2);
      g_autofree double *x = cpu_test_fill_random (in, -1, 1);
      g_autoptr(AccelOp) op = accel_fft_new (in, out, ACCEL_FFT_C2C, ACCEL_FFT_FORWARD, 1);
      cpu_test_submit (op);
      g_autofree double *got = cpu_test_read (out);
      dft (x, &s, -1);
      check_with_global_scale ("plan reuse", got, x, 2 * 5 * 64, fft_rtol (ACCEL_DTYPE_C64, &s));
    }
}

/* Large enough for FFTW's threads: a few rows against the direct DFT, and
 * the whole batch through a forward-inverse round trip. */
static void
test_threaded (void)
{
  gint64 dims[2] = { 32, 1024 };
  FftShape row = { 1, { 1024 }, 1 };
  g_autoptr(AccelBuffer) in = cpu_test_alloc (ACCEL_DTYPE_C128, dims, 2);
  g_autoptr(AccelBuffer) mid = cpu_test_alloc (ACCEL_DTYPE_C128, dims, 2);
  g_autoptr(AccelBuffer) back = cpu_test_alloc (ACCEL_DTYPE_C128, dims, 2);
  g_autofree double *x = cpu_test_fill_random (in, -1, 1);

  g_autoptr(AccelOp) fwd = accel_fft_new (in, mid, ACCEL_FFT_C2C, ACCEL_FFT_FORWARD, 1);
  g_autoptr(AccelOp) inv = accel_fft_new (mid, back, ACCEL_FFT_C2C, ACCEL_FFT_INVERSE, 1);
  cpu_test_submit (fwd);
  cpu_test_submit (inv);
  g_autofree double *spec = cpu_test_read (mid);
  g_autofree double *got = cpu_test_read (back);

  static const gint64 rows[] = { 0, 17, 31 };
  for (guint r = 0; r < G_N_ELEMENTS (rows); r++)
    {
      g_autofree double *want = g_memdup2 (x + 2 * 1024 * rows[r], 2 * 1024 * sizeof (double));
      dft (want, &row, -1);
      check_with_global_scale ("threaded forward row", spec + 2 * 1024 * rows[r], want, 2 * 1024,
                               fft_rtol (ACCEL_DTYPE_C128, &row));
    }
  g_autofree double *want = g_new (double, 2 * 32 * 1024);
  for (gsize i = 0; i < 2 * 32 * 1024; i++)
    want[i] = x[i] * 1024;
  check_with_global_scale ("threaded round trip", got, want, 2 * 32 * 1024, fft_rtol (ACCEL_DTYPE_C128, &row));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_data_func ("/cpu/fft/c2c/c64", GINT_TO_POINTER (ACCEL_DTYPE_C64), test_c2c);
  g_test_add_data_func ("/cpu/fft/c2c/c128", GINT_TO_POINTER (ACCEL_DTYPE_C128), test_c2c);
  g_test_add_data_func ("/cpu/fft/r2c/f32", GINT_TO_POINTER (ACCEL_DTYPE_F32), test_r2c);
  g_test_add_data_func ("/cpu/fft/r2c/f64", GINT_TO_POINTER (ACCEL_DTYPE_F64), test_r2c);
  g_test_add_data_func ("/cpu/fft/c2r/f32", GINT_TO_POINTER (ACCEL_DTYPE_F32), test_c2r);
  g_test_add_data_func ("/cpu/fft/c2r/f64", GINT_TO_POINTER (ACCEL_DTYPE_F64), test_c2r);
  g_test_add_func ("/cpu/fft/plan-reuse", test_plan_reuse);
  g_test_add_func ("/cpu/fft/threaded", test_threaded);
  return cpu_test_run ();
}
