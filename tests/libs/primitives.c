/* Tests of sort, scan, histogram, select and segmented-reduce against
 * plain definitions on fresh random data: duplicates, signed zeros and
 * NaNs for the sort (stability checked through the values), wrapping
 * integer sums, empty segments; then bad input.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "libs-test.h"

/* sort */

typedef struct {
  double key;
  gint64 index;
  gboolean descending;
} Item;

/* The documented order: by value (-0 = +0), every NaN after all. */
static int
item_cmp (const void *pa, const void *pb)
{
  const Item *a = pa, *b = pb;
  gboolean na = isnan (a->key), nb = isnan (b->key);
  int c = 0;
  if (na || nb)
    c = na - nb;
  else if (a->key != b->key)
    c = a->key < b->key ? -1 : 1;
  if (a->descending)
    c = -c;
  if (c == 0)
    c = a->index < b->index ? -1 : 1;
  return c;
}

static void
test_sort (void)
{
  if (lt_device_for ("sort", NULL) == NULL)
    return;
  const AccelDType dts[] = {
    ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_I32, ACCEL_DTYPE_U8, ACCEL_DTYPE_I8,
    ACCEL_DTYPE_I64, ACCEL_DTYPE_U32, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
  };
  const gint64 shapes[][2] = { { 1, 1001 }, { 5, 37 }, { 3, 1 }, { 1, 70000 } };
  for (guint d = 0; d < G_N_ELEMENTS (dts); d++)
    for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
      for (int descending = 0; descending < 2; descending++)
        {
          AccelDType dt = dts[d];
          gint64 rows = shapes[s][0], n = shapes[s][1], total = rows * n;
          gboolean is_float = accel_dtype_is_float (dt);
          double lo = dt == ACCEL_DTYPE_U8 || dt == ACCEL_DTYPE_U32 ? 0 : -50;
          /* Few distinct keys, so there are many ties to keep in order. */
          g_autofree double *keys = lt_random (dt, total, lo, lo + 100);
          if (is_float)
            for (gint64 i = 0; i < total; i++)
              {
                int r = g_test_rand_int_range (0, 20);
                /* NaNs of both signs: every NaN sorts after +inf. */
                keys[i] = r == 0 ? (g_test_rand_bit () ? NAN : -NAN) : r == 1 ? -0.0 : r == 2 ? 0.0
                          : r == 3 ? -INFINITY : r == 4 ? INFINITY : lt_round (dt, floor (keys[i]) / 4);
              }
          g_autofree double *values = g_new (double, total);
          for (gint64 i = 0; i < total; i++)
            values[i] = (double) (i % n);
          g_autoptr(AccelBuffer) bk = lt_new (dt, shapes[s], 2, keys);
          g_autoptr(AccelBuffer) bv = lt_new (ACCEL_DTYPE_I32, shapes[s], 2, values);
          g_autoptr(AccelOp) op = accel_sort_new (bk, bv);
          g_object_set (op, "descending", (gboolean) descending, NULL);

          lt_submit_compare (op, 0, 0, "*", NULL);
          g_autofree double *got_k = lt_read (bk);
          g_autofree double *got_v = lt_read (bv);
          g_autofree Item *items = g_new (Item, n);
          for (gint64 r = 0; r < rows; r++)
            {
              for (gint64 i = 0; i < n; i++)
                items[i] = (Item) { keys[r * n + i], i, descending };
              qsort (items, n, sizeof (Item), item_cmp);
              for (gint64 i = 0; i < n; i++)
                {
                  double gk = got_k[r * n + i], wk = items[i].key;
                  gboolean same = (isnan (gk) && isnan (wk)) || gk == wk;
                  if (!same || got_v[r * n + i] != (double) items[i].index)
                    g_error ("sort %s%s, row %" G_GINT64_FORMAT ", position %" G_GINT64_FORMAT
                             ": got key %g value %g, expected key %g value %" G_GINT64_FORMAT,
                             accel_dtype_get_name (dt), descending ? " descending" : "", r, i,
                             gk, got_v[r * n + i], wk, items[i].index);
                }
            }
        }

  /* Keys alone (a path of its own on cuda for f32 and f64): NaNs of both
   * signs, zeros and infinities, up and down, against the same order. */
  const AccelDType key_dts[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_I32 };
  const gint64 key_ns[] = { 1, 513, 70001 };
  for (guint d = 0; d < G_N_ELEMENTS (key_dts); d++)
    for (guint s = 0; s < G_N_ELEMENTS (key_ns); s++)
      for (int descending = 0; descending < 2; descending++)
        {
          AccelDType dt = key_dts[d];
          gint64 n = key_ns[s];
          g_autofree double *keys = lt_random (dt, n, -1000, 1000);
          if (accel_dtype_is_float (dt))
            for (gint64 i = 0; i < n; i++)
              {
                int r = g_test_rand_int_range (0, 16);
                keys[i] = r == 0 ? NAN : r == 1 ? -NAN : r == 2 ? -0.0 : r == 3 ? -INFINITY
                          : r == 4 ? INFINITY : keys[i];
              }
          g_autoptr(AccelBuffer) bk = lt_new (dt, &n, 1, keys);
          g_autoptr(AccelOp) op = accel_sort_new (bk, NULL);
          g_object_set (op, "descending", (gboolean) descending, NULL);
          lt_submit_compare (op, 0, 0, "*", NULL);
          g_autofree double *got = lt_read (bk);
          g_autofree Item *items = g_new (Item, n);
          for (gint64 i = 0; i < n; i++)
            items[i] = (Item) { keys[i], i, descending };
          qsort (items, n, sizeof (Item), item_cmp);
          for (gint64 i = 0; i < n; i++)
            if (!((isnan (got[i]) && isnan (items[i].key)) || got[i] == items[i].key))
              g_error ("sort keys %s%s, n %" G_GINT64_FORMAT ", position %" G_GINT64_FORMAT ": got %g, expected %g",
                       accel_dtype_get_name (dt), descending ? " descending" : "", n, i, got[i], items[i].key);
        }
}

/* scan */

static void
test_scan (void)
{
  if (lt_device_for ("scan", NULL) == NULL)
    return;
  const AccelDType dts[] = { ACCEL_DTYPE_I32, ACCEL_DTYPE_U32, ACCEL_DTYPE_I64, ACCEL_DTYPE_F32, ACCEL_DTYPE_F64 };
  const gint64 shapes[][2] = { { 1, 1000 }, { 7, 33 }, { 2, 1 }, { 1, 100003 } };
  for (guint d = 0; d < G_N_ELEMENTS (dts); d++)
    for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
      for (int exclusive = 0; exclusive < 2; exclusive++)
        {
          AccelDType dt = dts[d];
          gint64 rows = shapes[s][0], n = shapes[s][1], total = rows * n;
          gboolean in_place = s == 1;
          /* i32 sums that overflow and wrap. */
          double span = dt == ACCEL_DTYPE_I32 ? 1e8 : dt == ACCEL_DTYPE_U32 ? 1e9 : 100;
          double lo = dt == ACCEL_DTYPE_U32 ? 0 : -span / 2;
          g_autofree double *x = lt_random (dt, total, lo, lo + span);
          g_autoptr(AccelBuffer) bx = lt_new (dt, shapes[s], 2, x);
          g_autoptr(AccelBuffer) by = in_place ? g_object_ref (bx) : lt_alloc (dt, shapes[s], 2);
          g_autoptr(AccelOp) op = accel_scan_new (bx, by, exclusive ? ACCEL_SCAN_EXCLUSIVE : ACCEL_SCAN_INCLUSIVE);
          double rtol = dt == ACCEL_DTYPE_F32 ? 1e-5 : dt == ACCEL_DTYPE_F64 ? 1e-12 : 0;
          double atol = rtol * sqrt ((double) n) * 50;

          lt_submit_compare (op, rtol, atol, "*", NULL);
          g_autofree double *y = lt_read (by);
          g_autofree double *want = g_new (double, total);
          for (gint64 r = 0; r < rows; r++)
            {
              gint64 isum = 0;
              double fsum = 0;
              for (gint64 i = 0; i < n; i++)
                {
                  double v = x[r * n + i];
                  if (!exclusive)
                    isum += (gint64) v, fsum += v;
                  if (dt == ACCEL_DTYPE_I32)
                    want[r * n + i] = (gint32) (guint32) isum;
                  else if (dt == ACCEL_DTYPE_U32)
                    want[r * n + i] = (guint32) isum;
                  else if (dt == ACCEL_DTYPE_I64)
                    want[r * n + i] = (double) isum;
                  else
                    want[r * n + i] = fsum;
                  if (exclusive)
                    isum += (gint64) v, fsum += v;
                }
            }
          lt_assert_close ("scan", y, want, total, rtol, atol);
        }
}

/* histogram */

static void
test_histogram (void)
{
  if (lt_device_for ("histogram", NULL) == NULL)
    return;
  const struct { AccelDType dt; double lo, hi, sample_lo, sample_hi; int bins; gint64 n; } cases[] = {
    { ACCEL_DTYPE_U8, 0, 256, 0, 256, 16, 10007 },
    { ACCEL_DTYPE_U8, 10, 200, 0, 256, 7, 333 },
    { ACCEL_DTYPE_I32, -1000, 1000, -1500, 1500, 13, 50001 },
    { ACCEL_DTYPE_F32, 0, 1, -0.5, 1.5, 8, 40000 },     /* exact binary arithmetic */
    { ACCEL_DTYPE_F64, -2, 2, -3, 3, 64, 9999 },
  };
  for (guint c = 0; c < 2 * G_N_ELEMENTS (cases); c++)
    {
      /* Each case twice: numpy's closed last bin (the default), then half-open. */
      gboolean include_upper = c < G_N_ELEMENTS (cases);
      guint k = c % G_N_ELEMENTS (cases);
      gint64 ds[1] = { cases[k].n }, db[1] = { cases[k].bins };
      g_autofree double *x = lt_random (cases[k].dt, cases[k].n, cases[k].sample_lo, cases[k].sample_hi);
      /* Samples on the edges, the upper one where the type holds it. */
      for (gint64 i = 0; i < cases[k].n; i += g_test_rand_int_range (5, 40))
        x[i] = g_test_rand_bit () || (cases[k].dt == ACCEL_DTYPE_U8 && cases[k].hi > 255) ? cases[k].lo : cases[k].hi;
      g_autoptr(AccelBuffer) bx = lt_new (cases[k].dt, ds, 1, x);
      g_autoptr(AccelBuffer) bh = lt_new (ACCEL_DTYPE_I32, db, 1, x);   /* garbage to overwrite */
      g_autoptr(AccelOp) op = accel_histogram_new (bx, bh, cases[k].lo, cases[k].hi, cases[k].bins);
      g_object_set (op, "include-upper", include_upper, NULL);

      lt_submit_compare (op, 0, cases[k].dt == ACCEL_DTYPE_F64 ? 2 : 0, "*", NULL);
      g_autofree double *h = lt_read (bh);
      g_autofree double *want = g_new0 (double, cases[k].bins);
      for (gint64 i = 0; i < cases[k].n; i++)
        if (x[i] >= cases[k].lo && x[i] < cases[k].hi)
          want[(int) floor ((x[i] - cases[k].lo) * cases[k].bins / (cases[k].hi - cases[k].lo))]++;
        else if (include_upper && x[i] == cases[k].hi)
          want[cases[k].bins - 1]++;
      lt_assert_close ("histogram", h, want, cases[k].bins, 0, cases[k].dt == ACCEL_DTYPE_F64 ? 2 : 0);
    }
}

/* select */

static void
test_select (void)
{
  if (lt_device_for ("select", NULL) == NULL)
    return;
  const struct { AccelDType in, flags, count; gint64 n; } cases[] = {
    { ACCEL_DTYPE_F32, ACCEL_DTYPE_U8, ACCEL_DTYPE_I64, 1001 },
    { ACCEL_DTYPE_I64, ACCEL_DTYPE_I32, ACCEL_DTYPE_I32, 77 },
    { ACCEL_DTYPE_BF16, ACCEL_DTYPE_I8, ACCEL_DTYPE_I32, 1 },
    { ACCEL_DTYPE_F64, ACCEL_DTYPE_U32, ACCEL_DTYPE_I64, 100000 },
  };
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      gint64 n = cases[c].n, dn[1] = { n }, d1[1] = { 1 };
      g_autofree double *x = lt_random (cases[c].in, n, -100, 100);
      g_autofree double *f = g_new (double, n);
      for (gint64 i = 0; i < n; i++)
        f[i] = g_test_rand_int_range (0, 3) == 0 ? g_test_rand_int_range (1, 100) : 0;
      g_autofree double *old = lt_random (cases[c].in, n, 500, 600);
      g_autoptr(AccelBuffer) bx = lt_new (cases[c].in, dn, 1, x);
      g_autoptr(AccelBuffer) bf = lt_new (cases[c].flags, dn, 1, f);
      g_autoptr(AccelBuffer) bo = lt_new (cases[c].in, dn, 1, old);
      g_autoptr(AccelBuffer) bc = lt_new (cases[c].count, d1, 1, NULL);
      g_autoptr(AccelOp) op = accel_select_new (bx, bf, bo, bc);

      lt_submit_compare (op, 0, 0, "*", NULL);
      g_autofree double *out = lt_read (bo);
      g_autofree double *count = lt_read (bc);
      gint64 k = 0;
      for (gint64 i = 0; i < n; i++)
        if (f[i] != 0)
          {
            g_assert_cmpfloat (out[k], ==, x[i]);
            k++;
          }
      g_assert_cmpfloat (count[0], ==, (double) k);
      for (gint64 i = k; i < n; i++)
        g_assert_cmpfloat (out[i], ==, old[i]);
    }
}

/* segmented-reduce */

static void
test_segmented_reduce (void)
{
  if (lt_device_for ("segmented-reduce", NULL) == NULL)
    return;
  const AccelDType dts[] = { ACCEL_DTYPE_I32, ACCEL_DTYPE_U32, ACCEL_DTYPE_I64, ACCEL_DTYPE_F32, ACCEL_DTYPE_F64 };
  for (guint d = 0; d < G_N_ELEMENTS (dts); d++)
    for (AccelReduceOp r = ACCEL_REDUCE_SUM; r <= ACCEL_REDUCE_MEAN; r++)
      {
        AccelDType dt = dts[d];
        gboolean is_float = dt == ACCEL_DTYPE_F32 || dt == ACCEL_DTYPE_F64;
        if (r == ACCEL_REDUCE_MEAN && !is_float)
          continue;
        gint64 n = 5003, n_seg = 101;
        /* Random boundaries, with empty segments and the ends included. */
        g_autofree double *off = g_new (double, n_seg + 1);
        off[0] = 0;
        off[n_seg] = (double) n;
        for (gint64 i = 1; i < n_seg; i++)
          off[i] = g_test_rand_int_range (0, 6) == 0 ? off[i - 1] : floor (g_test_rand_double_range (off[i - 1], n));
        double span = dt == ACCEL_DTYPE_I32 ? 2e9 : 200;
        g_autofree double *x = lt_random (dt, n, dt == ACCEL_DTYPE_U32 ? 0 : -span / 2, span / 2);
        gint64 dn[1] = { n }, doff[1] = { n_seg + 1 }, dout[1] = { n_seg };
        g_autoptr(AccelBuffer) bx = lt_new (dt, dn, 1, x);
        g_autoptr(AccelBuffer) boff = lt_new (d % 2 ? ACCEL_DTYPE_I64 : ACCEL_DTYPE_I32, doff, 1, off);
        g_autoptr(AccelBuffer) bout = lt_alloc (dt, dout, 1);
        g_autoptr(AccelOp) op = accel_segmented_reduce_new (bx, boff, bout, r);
        double rtol = dt == ACCEL_DTYPE_F32 ? 1e-5 : dt == ACCEL_DTYPE_F64 ? 1e-12 : 0;

        lt_submit_compare (op, rtol, rtol * 100, "*", NULL);
        g_autofree double *got = lt_read (bout);
        g_autofree double *want = g_new (double, n_seg);
        for (gint64 s = 0; s < n_seg; s++)
          {
            gint64 b = (gint64) off[s], e = (gint64) off[s + 1];
            double lowest = dt == ACCEL_DTYPE_F32 ? -FLT_MAX : dt == ACCEL_DTYPE_F64 ? -DBL_MAX
                            : dt == ACCEL_DTYPE_I32 ? G_MININT32 : dt == ACCEL_DTYPE_U32 ? 0 : (double) G_MININT64;
            double highest = dt == ACCEL_DTYPE_F32 ? FLT_MAX : dt == ACCEL_DTYPE_F64 ? DBL_MAX
                             : dt == ACCEL_DTYPE_I32 ? G_MAXINT32 : dt == ACCEL_DTYPE_U32 ? G_MAXUINT32 : (double) G_MAXINT64;
            gint64 isum = 0;
            double fsum = 0, mx = lowest, mn = highest;
            for (gint64 i = b; i < e; i++)
              {
                isum += (gint64) x[i];
                fsum += x[i];
                mx = MAX (mx, x[i]);
                mn = MIN (mn, x[i]);
              }
            switch (r)
              {
              case ACCEL_REDUCE_SUM:
                want[s] = is_float ? fsum : dt == ACCEL_DTYPE_I32 ? (gint32) (guint32) isum
                          : dt == ACCEL_DTYPE_U32 ? (guint32) isum : (double) isum;
                break;
              case ACCEL_REDUCE_MAX: want[s] = mx; break;
              case ACCEL_REDUCE_MIN: want[s] = mn; break;
              default: want[s] = fsum / (double) (e - b); break;
              }
          }
        lt_assert_close ("segmented-reduce", got, want, n_seg, rtol, rtol * 100);
      }
}

static void
test_bad_input (void)
{
  if (lt_device_for ("sort", "scan", "histogram", "select", "segmented-reduce", NULL) == NULL)
    return;
  gint64 d8[1] = { 8 }, d7[1] = { 7 }, d1[1] = { 1 }, d4[1] = { 4 }, d3[1] = { 3 };
  {
    g_autoptr(AccelBuffer) keys = lt_new (ACCEL_DTYPE_C64, d8, 1, NULL);
    g_autoptr(AccelOp) op = accel_sort_new (keys, NULL);
    lt_expect_error (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, NULL);
  }
  {
    g_autoptr(AccelBuffer) keys = lt_new (ACCEL_DTYPE_F32, d8, 1, NULL);
    g_autoptr(AccelBuffer) values = lt_new (ACCEL_DTYPE_F32, d7, 1, NULL);
    g_autoptr(AccelOp) op = accel_sort_new (keys, values);
    lt_expect_error (op, ACCEL_ERROR_SHAPE_MISMATCH, NULL);
  }
  {
    g_autoptr(AccelBuffer) x = lt_new (ACCEL_DTYPE_F32, d8, 1, NULL);
    g_autoptr(AccelBuffer) y = lt_alloc (ACCEL_DTYPE_F64, d8, 1);
    g_autoptr(AccelOp) op = accel_scan_new (x, y, ACCEL_SCAN_INCLUSIVE);
    lt_expect_error (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, NULL);
  }
  {
    g_autoptr(AccelBuffer) x = lt_new (ACCEL_DTYPE_F32, d8, 1, NULL);
    g_autoptr(AccelBuffer) h = lt_alloc (ACCEL_DTYPE_I32, d4, 1);
    g_autoptr(AccelOp) op = accel_histogram_new (x, h, 1.0, 1.0, 4);
    lt_expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, "upper");
    g_autoptr(AccelOp) op2 = accel_histogram_new (x, h, 0.0, 1.0, 5);
    lt_expect_error (op2, ACCEL_ERROR_SHAPE_MISMATCH, "“bins”");
    g_autoptr(AccelBuffer) xi = lt_new (ACCEL_DTYPE_I32, d8, 1, NULL);
    g_autoptr(AccelOp) op3 = accel_histogram_new (xi, h, 0.5, 4.0, 4);
    lt_expect_error (op3, ACCEL_ERROR_INVALID_ARGUMENT, "whole numbers");
  }
  {
    g_autoptr(AccelBuffer) x = lt_new (ACCEL_DTYPE_F32, d8, 1, NULL);
    g_autoptr(AccelBuffer) f = lt_new (ACCEL_DTYPE_F32, d8, 1, NULL);
    g_autoptr(AccelBuffer) o = lt_alloc (ACCEL_DTYPE_F32, d8, 1);
    g_autoptr(AccelBuffer) c = lt_alloc (ACCEL_DTYPE_I32, d1, 1);
    g_autoptr(AccelOp) op = accel_select_new (x, f, o, c);
    lt_expect_error (op, ACCEL_ERROR_DTYPE_UNSUPPORTED, NULL);
    g_autoptr(AccelOp) op2 = accel_select_new (x, x, o, c);
    g_autoptr(AccelBuffer) fu = lt_new (ACCEL_DTYPE_U8, d7, 1, NULL);
    g_object_set (op2, "flags", fu, NULL);
    lt_expect_error (op2, ACCEL_ERROR_SHAPE_MISMATCH, NULL);
  }
  {
    double bad[4][3] = { { 0, 5, 3 }, { 0, 9, 9 }, { -1, 2, 8 }, { 0, 0, 0 } };
    g_autoptr(AccelBuffer) x = lt_new (ACCEL_DTYPE_I32, d8, 1, NULL);
    g_autoptr(AccelBuffer) out = lt_alloc (ACCEL_DTYPE_I32, (gint64[]) { 2 }, 1);
    const char *why[3] = { "decreases", "outside", "outside" };
    for (guint i = 0; i < 3; i++)
      {
        g_autoptr(AccelBuffer) off = lt_new (ACCEL_DTYPE_I32, d3, 1, bad[i]);
        g_autoptr(AccelOp) op = accel_segmented_reduce_new (x, off, out, ACCEL_REDUCE_SUM);
        if (lt_device_is_cpu ())
          lt_expect_error (op, ACCEL_ERROR_INVALID_ARGUMENT, why[i]);
      }
    g_autoptr(AccelBuffer) off = lt_new (ACCEL_DTYPE_I32, d3, 1, bad[3]);
    g_autoptr(AccelOp) mean = accel_segmented_reduce_new (x, off, out, ACCEL_REDUCE_MEAN);
    lt_expect_error (mean, ACCEL_ERROR_DTYPE_UNSUPPORTED, "mean");
  }
}

const LtTest lt_tests[] = {
  { "/libs/primitives/sort", test_sort },
  { "/libs/primitives/scan", test_scan },
  { "/libs/primitives/histogram", test_histogram },
  { "/libs/primitives/select", test_select },
  { "/libs/primitives/segmented-reduce", test_segmented_reduce },
  { "/libs/primitives/bad-input", test_bad_input },
  { NULL, NULL },
};
