/* accel-demo: the main job. Runs a GEMM and an FFT on the default device,
 * checks each against a float64 reference computed here, and prints what
 * it measured.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include <complex.h>
#include <math.h>
#include <stdio.h>

static void
fill_random (float *x, gsize n, GRand *rand)
{
  for (gsize i = 0; i < n; i++)
    x[i] = (float) g_rand_double_range (rand, -1.0, 1.0);
}

/* A buffer of @dtype and @shape on @dev holding @data, as many bytes as
 * the buffer has (%NULL: left as allocated). */
static AccelBuffer *
new_buffer (AccelDevice *dev, AccelDType dtype, const AccelShape *shape, const void *data, GError **error)
{
  AccelBuffer *buffer = accel_device_alloc (dev, dtype, shape, error);
  if (buffer && data && !accel_buffer_write (buffer, data, accel_buffer_get_size (buffer), error))
    g_clear_object (&buffer);
  return buffer;
}

/* Runs @op twice and returns the milliseconds of the second run (the
 * first loads the kernel's plugin), or a negative value with @error set. */
static double
time_second_run (AccelDevice *dev, AccelOp *op, GError **error)
{
  if (!accel_device_submit (dev, op, NULL, error))
    return -1;
  gint64 t0 = g_get_monotonic_time ();
  if (!accel_device_submit (dev, op, NULL, error))
    return -1;
  return (g_get_monotonic_time () - t0) / 1000.0;
}

static gboolean
demo_gemm (AccelDevice *dev, GRand *rand, GError **error)
{
  const gint64 m = 509, k = 383, n = 257;
  g_autofree float *a = g_new (float, m * k);
  g_autofree float *b = g_new (float, k * n);
  g_autofree float *c = g_new (float, m * n);
  fill_random (a, m * k, rand);
  fill_random (b, k * n, rand);

  g_autoptr(AccelShape) sa = accel_shape_new_2d (m, k);
  g_autoptr(AccelShape) sb = accel_shape_new_2d (k, n);
  g_autoptr(AccelShape) sc = accel_shape_new_2d (m, n);
  g_autoptr(AccelBuffer) ba = new_buffer (dev, ACCEL_DTYPE_F32, sa, a, error);
  g_autoptr(AccelBuffer) bb = ba ? new_buffer (dev, ACCEL_DTYPE_F32, sb, b, error) : NULL;
  g_autoptr(AccelBuffer) bc = bb ? new_buffer (dev, ACCEL_DTYPE_F32, sc, NULL, error) : NULL;
  if (!bc)
    return FALSE;

  g_autoptr(AccelOp) op = accel_gemm_new (ba, bb, bc);
  double ms = time_second_run (dev, op, error);
  if (ms < 0 || !accel_buffer_read (bc, (guint8 *) c, m * n * sizeof (float), error))
    return FALSE;

  double err = 0, ref_norm = 0;
  for (gint64 i = 0; i < m; i++)
    for (gint64 j = 0; j < n; j++)
      {
        double ref = 0;
        for (gint64 p = 0; p < k; p++)
          ref += (double) a[i * k + p] * b[p * n + j];
        err += (c[i * n + j] - ref) * (c[i * n + j] - ref);
        ref_norm += ref * ref;
      }
  double rel = sqrt (err / ref_norm);
  printf ("gemm f32 %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
          ": %.3f ms (%.1f GFLOP/s), relative error %.2e vs float64 reference: %s\n",
          m, k, n, ms, 2.0 * m * n * k / (ms * 1e6), rel, rel < 1e-5 ? "ok" : "WRONG");
  return rel < 1e-5;
}

static gboolean
demo_fft (AccelDevice *dev, GRand *rand, GError **error)
{
  const gint64 batch = 7, len = 1000;
  g_autofree float *x = g_new (float, batch * len * 2);
  g_autofree float *y = g_new (float, batch * len * 2);
  fill_random (x, batch * len * 2, rand);

  g_autoptr(AccelShape) shape = accel_shape_new_2d (batch, len);
  g_autoptr(AccelBuffer) in = new_buffer (dev, ACCEL_DTYPE_C64, shape, x, error);
  g_autoptr(AccelBuffer) out = in ? new_buffer (dev, ACCEL_DTYPE_C64, shape, NULL, error) : NULL;
  if (!out)
    return FALSE;

  g_autoptr(AccelOp) op = accel_fft_new (in, out, ACCEL_FFT_C2C, ACCEL_FFT_FORWARD, 1);
  double ms = time_second_run (dev, op, error);
  if (ms < 0 || !accel_buffer_read (out, (guint8 *) y, batch * len * 8, error))
    return FALSE;

  double err = 0, ref_norm = 0;
  for (gint64 bi = 0; bi < batch; bi++)
    for (gint64 f = 0; f < len; f++)
      {
        double complex acc = 0;
        for (gint64 t = 0; t < len; t++)
          {
            double complex v = x[(bi * len + t) * 2] + I * x[(bi * len + t) * 2 + 1];
            acc += v * cexp (-2.0 * I * G_PI * (double) ((f * t) % len) / len);
          }
        double complex got = y[(bi * len + f) * 2] + I * y[(bi * len + f) * 2 + 1];
        err += cabs (got - acc) * cabs (got - acc);
        ref_norm += cabs (acc) * cabs (acc);
      }
  double rel = sqrt (err / ref_norm);
  printf ("fft c2c c64 %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT
          ": %.3f ms, relative error %.2e vs float64 DFT: %s\n",
          batch, len, ms, rel, rel < 1e-5 ? "ok" : "WRONG");
  return rel < 1e-5;
}

int
main (int argc, char **argv)
{
  g_autoptr(GError) error = NULL;
  const char *name = argc > 1 ? argv[1] : "default";

  g_autoptr(AccelSystem) system = accel_system_new (&error);
  if (!system)
    {
      fprintf (stderr, "accel-demo: %s\n", error->message);
      return 1;
    }
  g_autoptr(AccelDevice) dev = accel_system_get_device (system, name, &error);
  if (!dev)
    {
      fprintf (stderr, "accel-demo: %s\n", error->message);
      return 1;
    }
  printf ("device %s (backend %s)\n", accel_device_get_name (dev), accel_device_get_backend_name (dev));

  g_autoptr(GRand) rand = g_rand_new ();
  gboolean ok = demo_gemm (dev, rand, &error);
  if (error)
    {
      fprintf (stderr, "accel-demo: gemm: %s\n", error->message);
      return 1;
    }
  ok = demo_fft (dev, rand, &error) && ok;
  if (error)
    {
      fprintf (stderr, "accel-demo: fft: %s\n", error->message);
      return 1;
    }
  accel_system_shutdown (system);
  return ok ? 0 : 1;
}
