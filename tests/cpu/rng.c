/* rng-fill on cpu:0: Philox4x32-10 known answers, the kernel against the
 * per-element reference mapping of accel-philox.h (bit for bit), the same
 * output whatever the thread count and however a buffer is split into fills
 * at matching offsets, and the moments of both distributions.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include <accel-philox.h>
#include "cpu-test.h"

/* Random123's known-answer vectors for philox4x32_R (R = 10). */
static void
test_known_answers (void)
{
  static const struct {
    guint32 ctr[4], key[2], out[4];
  } kat[] = {
    { { 0, 0, 0, 0 }, { 0, 0 }, { 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 } },
    { { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff }, { 0xffffffff, 0xffffffff },
      { 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd } },
    { { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344 }, { 0xa4093822, 0x299f31d0 },
      { 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 } },
  };

  for (guint i = 0; i < G_N_ELEMENTS (kat); i++)
    {
      guint32 out[4];
      accel_philox4x32_10 (kat[i].ctr, kat[i].key, out);
      g_assert_cmpmem (out, sizeof out, kat[i].out, sizeof kat[i].out);
    }
}

static AccelOp *
rng_op (AccelBuffer *dst, AccelRngDistribution dist, guint64 seed, guint64 offset, double a, double b)
{
  AccelOp *op = accel_rng_fill_new (dst, dist, seed);
  g_object_set (op, "offset", offset, NULL);
  if (dist == ACCEL_RNG_UNIFORM)
    g_object_set (op, "low", a, "high", b, NULL);
  else
    g_object_set (op, "mean", a, "stddev", b, NULL);
  return op;
}

/* The bytes the reference mapping gives for element @i. */
static void
reference_element (AccelDType dtype, AccelRngDistribution dist, guint64 seed, guint64 offset,
                   double a, double b, guint64 i, guint8 *out)
{
  gboolean normal = dist == ACCEL_RNG_NORMAL;
  if (dtype == ACCEL_DTYPE_F64)
    {
      double v = accel_philox_element_f64 (seed, offset, i, normal, a, b);
      memcpy (out, &v, 8);
      return;
    }
  float v = accel_philox_element_f32 (seed, offset, i, normal, a, b);
  if (dtype == ACCEL_DTYPE_F32)
    memcpy (out, &v, 4);
  else
    {
      guint16 h = dtype == ACCEL_DTYPE_F16 ? accel_f16_from_f32 (v) : accel_bf16_from_f32 (v);
      memcpy (out, &h, 2);
    }
}

static void
test_reference (gconstpointer data)
{
  AccelDType dtype = GPOINTER_TO_INT (data);
  gsize es = accel_dtype_get_size (dtype);
  static const gint64 sizes[] = { 1, 7, 33, 129, 100003 };

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (int d = 0; d < 2; d++)
      {
        gint64 n = sizes[s];
        guint64 seed = ((guint64) g_test_rand_int () << 32) | (guint32) g_test_rand_int ();
        guint64 offset = (guint64) g_test_rand_int_range (0, 1 << 30) * 4096 + (guint64) g_test_rand_int_range (0, 4096);
        double a = d ? 0.5 : -3.0, b = d ? 2.0 : 5.0;
        g_autoptr(AccelBuffer) dst = cpu_test_alloc (dtype, &n, 1);
        g_autoptr(AccelOp) op = rng_op (dst, d, seed, offset, a, b);
        cpu_test_submit (op);
        g_autofree guint8 *got = cpu_test_read_bytes (dst);

        for (gint64 i = 0; i < n; i++)
          {
            guint8 want[8];
            reference_element (dtype, d, seed, offset, a, b, (guint64) i, want);
            if (memcmp (got + i * es, want, es) != 0)
              {
                g_test_fail_printf ("rng-fill %s %s n=%" G_GINT64_FORMAT ": element %" G_GINT64_FORMAT
                                    " differs from the reference mapping", accel_dtype_get_name (dtype),
                                    d ? "normal" : "uniform", n, i);
                return;
              }
          }
      }
}

/* The same bytes with 1, 2, 3 and 8 threads per kernel. */
static void
test_threads (gconstpointer data)
{
  AccelDType dtype = GPOINTER_TO_INT (data);
  AccelDevice *device = cpu_test_device ();
  gint64 n = 1000003;
  static const guint threads[] = { 1, 2, 3, 8 };
  g_autofree guint8 *first = NULL;

  for (int d = 0; d < 2; d++)
    {
      g_clear_pointer (&first, g_free);
      for (guint t = 0; t < G_N_ELEMENTS (threads); t++)
        {
          g_object_set (device, "n-threads", threads[t], NULL);
          g_autoptr(AccelBuffer) dst = cpu_test_alloc (dtype, &n, 1);
          g_autoptr(AccelOp) op = rng_op (dst, d, 1234567, 99, d ? 0.0 : -1.0, d ? 1.0 : 1.0);
          cpu_test_submit (op);
          g_autofree guint8 *got = cpu_test_read_bytes (dst);
          if (first == NULL)
            first = g_steal_pointer (&got);
          else
            g_assert_cmpmem (got, accel_buffer_get_size (dst), first, accel_buffer_get_size (dst));
        }
    }
  g_object_set (device, "n-threads", 0u, NULL);
}

/* One fill equals fills of its pieces at matching offsets. */
static void
test_chunks (gconstpointer data)
{
  AccelDType dtype = GPOINTER_TO_INT (data);
  gsize es = accel_dtype_get_size (dtype);
  guint64 per_counter = dtype == ACCEL_DTYPE_F64 ? 2 : 4;
  gint64 n = 4099 * (gint64) per_counter + 3;
  guint64 seed = 0xdeadbeefcafef00d, offset = 17;

  for (int d = 0; d < 2; d++)
    {
      g_autoptr(AccelBuffer) whole = cpu_test_alloc (dtype, &n, 1);
      g_autoptr(AccelOp) op = rng_op (whole, d, seed, offset, 1.0, 3.0);
      cpu_test_submit (op);
      g_autofree guint8 *all = cpu_test_read_bytes (whole);

      /* Pieces that start on counter boundaries, of uneven counter counts. */
      static const gint64 cuts[] = { 0, 1, 8, 9, 300, 2047, 4099 };
      for (guint c = 0; c + 1 < G_N_ELEMENTS (cuts); c++)
        {
          gint64 start = cuts[c] * (gint64) per_counter;
          gint64 len = (c + 2 == G_N_ELEMENTS (cuts) ? n : cuts[c + 1] * (gint64) per_counter) - start;
          g_autoptr(AccelBuffer) piece = cpu_test_alloc (dtype, &len, 1);
          g_autoptr(AccelOp) pop = rng_op (piece, d, seed, offset + (guint64) cuts[c], 1.0, 3.0);
          cpu_test_submit (pop);
          g_autofree guint8 *got = cpu_test_read_bytes (piece);
          g_assert_cmpmem (got, len * es, all + start * es, len * es);
        }
    }
}

static void
test_moments (gconstpointer data)
{
  AccelDType dtype = GPOINTER_TO_INT (data);
  gint64 n = 1 << 20;

  for (int d = 0; d < 2; d++)
    {
      double a = d ? 3.0 : -2.0, b = d ? 0.5 : 6.0;
      g_autoptr(AccelBuffer) dst = cpu_test_alloc (dtype, &n, 1);
      g_autoptr(AccelOp) op = rng_op (dst, d, g_test_rand_int (), 0, a, b);
      cpu_test_submit (op);
      g_autofree double *v = cpu_test_read (dst);

      double sum = 0, sq = 0, lo = INFINITY, hi = -INFINITY;
      for (gint64 i = 0; i < n; i++)
        {
          sum += v[i];
          lo = MIN (lo, v[i]);
          hi = MAX (hi, v[i]);
        }
      double mean = sum / n;
      for (gint64 i = 0; i < n; i++)
        sq += (v[i] - mean) * (v[i] - mean);
      double var = sq / (n - 1);
      double want_mean = d ? a : (a + b) / 2;
      double want_var = d ? b * b : (b - a) * (b - a) / 12;
      /* Six standard errors; the variance's error is about var * sqrt(2/n)
       * (normal) and smaller for the uniform. Narrow types add rounding. */
      double tol_mean = 6 * sqrt (want_var / n) + cpu_test_eps (dtype) * fabs (want_mean) * 2;
      double tol_var = 6 * want_var * sqrt (2.0 / n) + 4 * cpu_test_eps (dtype) * want_var;
      g_test_message ("%s %s: mean %.6f (want %.6f), var %.6f (want %.6f)", accel_dtype_get_name (dtype),
                      d ? "normal" : "uniform", mean, want_mean, var, want_var);
      g_assert_cmpfloat_with_epsilon (mean, want_mean, tol_mean);
      g_assert_cmpfloat_with_epsilon (var, want_var, tol_var);
      if (d == 0)
        {
          g_assert_cmpfloat (lo, >=, a);
          /* f16 and bf16 may round up onto high; f32 and f64 stay below. */
          if (dtype == ACCEL_DTYPE_F32 || dtype == ACCEL_DTYPE_F64)
            g_assert_cmpfloat (hi, <, b);
          else
            g_assert_cmpfloat (hi, <=, b);
          g_assert_cmpfloat (lo, <, a + (b - a) * 1e-3);
          g_assert_cmpfloat (hi, >, b - (b - a) * 1e-2);
        }
      else
        {
          g_assert_true (isfinite (lo) && isfinite (hi));
          g_assert_cmpfloat (lo, <, a - 4 * b);
          g_assert_cmpfloat (hi, >, a + 4 * b);
        }
    }
}

/* The largest words give u just below 1, and `low + (high - low) * u` can
 * round up onto high (0.75 .. 4.5 does, in binary32 and binary64): the
 * mapping keeps f32 and f64 below high, as rng-fill documents. */
static void
test_below_high (void)
{
  const uint32_t top = 0xffffffffu;

  g_assert_cmpfloat (accel_philox_uniform_f32 (top, 0.75f, 4.5f), <, 4.5f);
  g_assert_cmpfloat (accel_philox_uniform_f64 (top, top, 0.75, 4.5), <, 4.5);
  for (guint i = 0; i < 10000; i++)
    {
      double a = g_test_rand_double_range (-1e3, 1e3);
      double b = a + g_test_rand_double_range (1e-3, 1e3);
      uint32_t w = top - (uint32_t) g_test_rand_int_range (0, 256);
      float f = accel_philox_uniform_f32 (w, (float) a, (float) b);
      double d = accel_philox_uniform_f64 (w, top - (uint32_t) g_test_rand_int_range (0, 64), a, b);
      if ((float) a < (float) b)
        {
          g_assert_cmpfloat (f, <, (float) b);
          g_assert_cmpfloat (f, >=, (float) a);
        }
      g_assert_cmpfloat (d, <, b);
      g_assert_cmpfloat (d, >=, a);
    }
  /* An empty range gives its one value. */
  g_assert_cmpfloat (accel_philox_uniform_f32 (top, 2.5f, 2.5f), ==, 2.5f);
  g_assert_cmpfloat (accel_philox_uniform_f64 (top, top, 2.5, 2.5), ==, 2.5);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/cpu/rng/known-answers", test_known_answers);
  g_test_add_func ("/cpu/rng/below-high", test_below_high);
  cpu_test_add_per_float_dtype ("/cpu/rng/reference", test_reference);
  cpu_test_add_per_float_dtype ("/cpu/rng/threads", test_threads);
  cpu_test_add_per_float_dtype ("/cpu/rng/chunks", test_chunks);
  cpu_test_add_per_float_dtype ("/cpu/rng/moments", test_moments);
  return cpu_test_run ();
}
