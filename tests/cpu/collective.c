/* Collectives among CPU devices: every collective on 2, 3 and 4 ranks,
 * every dtype its kind takes, odd sizes, in-place forms, against a
 * reference computed here from the values written.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "collective-test.h"

static const gint64 counts[] = { 1, 7, 1001 };
static const AccelReduction reductions[] = {
  ACCEL_REDUCTION_SUM, ACCEL_REDUCTION_PROD, ACCEL_REDUCTION_MIN, ACCEL_REDUCTION_MAX, ACCEL_REDUCTION_AVG,
};

static gboolean
reduction_applies (AccelDType dtype, AccelReduction reduction)
{
  return !accel_dtype_is_complex (dtype) || reduction == ACCEL_REDUCTION_SUM || reduction == ACCEL_REDUCTION_AVG;
}

/* all-reduce, out of place and in place. */
static void
check_all_reduce (AccelCommunicator *comm, guint n, AccelDType dtype, AccelReduction reduction, gint64 count,
                  gboolean in_place)
{
  CollRanks r = { n };
  guint k = cpu_test_components (dtype);
  for (guint i = 0; i < n; i++)
    {
      r.src[i] = coll_alloc (coll_device (i), dtype, count);
      r.values[i] = coll_fill (r.src[i], reduction);
      r.dst[i] = in_place ? g_object_ref (r.src[i]) : coll_alloc (coll_device (i), dtype, count);
      r.ops[i] = accel_all_reduce_new (r.src[i], r.dst[i], reduction);
    }
  coll_submit (comm, r.ops, n);

  g_autofree double *want = g_new (double, count * k);
  coll_reference_reduce (dtype, reduction, r.values, n, 0, count * k, want);
  for (guint i = 0; i < n; i++)
    {
      g_autofree double *got = cpu_test_read (r.dst[i]);
      g_autofree char *what = g_strdup_printf ("all-reduce %s %s n=%u count=%" G_GINT64_FORMAT " rank %u%s",
                                               accel_dtype_get_name (dtype),
                                               g_enum_get_value (g_type_class_peek (ACCEL_TYPE_REDUCTION),
                                                                 reduction)->value_nick,
                                               n, count, i, in_place ? " in place" : "");
      coll_assert_equal (what, got, want, count * k);
    }
  coll_ranks_clear (&r);
}

static void
test_all_reduce (void)
{
  g_type_class_ref (ACCEL_TYPE_REDUCTION);
  for (guint n = 2; n <= 4; n++)
    {
      g_autoptr(AccelCommunicator) comm = coll_comm (n);
      for (guint d = 0; d < coll_n_all_dtypes; d++)
        for (guint e = 0; e < G_N_ELEMENTS (reductions); e++)
          {
            if (!reduction_applies (coll_all_dtypes[d], reductions[e]))
              continue;
            for (guint c = 0; c < G_N_ELEMENTS (counts); c++)
              check_all_reduce (comm, n, coll_all_dtypes[d], reductions[e], counts[c], c == 1);
          }
    }
}

static void
check_all_gather (AccelCommunicator *comm, guint n, AccelDType dtype, gint64 count, gboolean in_place)
{
  CollRanks r = { n };
  guint k = cpu_test_components (dtype);
  g_autoptr(GError) error = NULL;
  for (guint i = 0; i < n; i++)
    {
      r.dst[i] = coll_alloc (coll_device (i), dtype, count * n);
      if (in_place)
        {
          /* This rank's block of dst is its src. */
          g_autoptr(AccelShape) shape = accel_shape_new_1d (count);
          r.src[i] = accel_buffer_new_view (r.dst[i], count * i, shape, &error);
          g_assert_no_error (error);
        }
      else
        r.src[i] = coll_alloc (coll_device (i), dtype, count);
      r.values[i] = coll_fill (r.src[i], ACCEL_REDUCTION_SUM);
      r.ops[i] = accel_all_gather_new (r.src[i], r.dst[i]);
    }
  coll_submit (comm, r.ops, n);

  g_autofree double *want = g_new (double, count * k * n);
  for (guint i = 0; i < n; i++)
    memcpy (want + i * count * k, r.values[i], sizeof (double) * count * k);
  for (guint i = 0; i < n; i++)
    {
      g_autofree double *got = cpu_test_read (r.dst[i]);
      g_autofree char *what = g_strdup_printf ("all-gather %s n=%u count=%" G_GINT64_FORMAT " rank %u%s",
                                               accel_dtype_get_name (dtype), n, count, i, in_place ? " in place" : "");
      coll_assert_equal (what, got, want, count * k * n);
    }
  coll_ranks_clear (&r);
}

static void
test_all_gather (void)
{
  for (guint n = 2; n <= 4; n++)
    {
      g_autoptr(AccelCommunicator) comm = coll_comm (n);
      for (guint d = 0; d < coll_n_all_dtypes; d++)
        for (guint c = 0; c < G_N_ELEMENTS (counts); c++)
          check_all_gather (comm, n, coll_all_dtypes[d], counts[c], c == 1);
    }
}

static void
check_reduce_scatter (AccelCommunicator *comm, guint n, AccelDType dtype, AccelReduction reduction, gint64 count,
                      gboolean in_place)
{
  CollRanks r = { n };
  guint k = cpu_test_components (dtype);
  g_autoptr(GError) error = NULL;
  for (guint i = 0; i < n; i++)
    {
      r.src[i] = coll_alloc (coll_device (i), dtype, count * n);
      r.values[i] = coll_fill (r.src[i], reduction);
      if (in_place)
        {
          g_autoptr(AccelShape) shape = accel_shape_new_1d (count);
          r.dst[i] = accel_buffer_new_view (r.src[i], count * i, shape, &error);
          g_assert_no_error (error);
        }
      else
        r.dst[i] = coll_alloc (coll_device (i), dtype, count);
      r.ops[i] = accel_reduce_scatter_new (r.src[i], r.dst[i], reduction);
    }
  coll_submit (comm, r.ops, n);

  for (guint i = 0; i < n; i++)
    {
      g_autofree double *want = g_new (double, count * k);
      coll_reference_reduce (dtype, reduction, r.values, n, i * count * k, count * k, want);
      g_autofree double *got = cpu_test_read (r.dst[i]);
      g_autofree char *what = g_strdup_printf ("reduce-scatter %s n=%u count=%" G_GINT64_FORMAT " rank %u%s",
                                               accel_dtype_get_name (dtype), n, count, i, in_place ? " in place" : "");
      coll_assert_equal (what, got, want, count * k);
    }
  coll_ranks_clear (&r);
}

static void
test_reduce_scatter (void)
{
  for (guint n = 2; n <= 4; n++)
    {
      g_autoptr(AccelCommunicator) comm = coll_comm (n);
      for (guint d = 0; d < coll_n_all_dtypes; d++)
        for (guint e = 0; e < G_N_ELEMENTS (reductions); e++)
          if (reduction_applies (coll_all_dtypes[d], reductions[e]))
            for (guint c = 0; c < G_N_ELEMENTS (counts); c++)
              check_reduce_scatter (comm, n, coll_all_dtypes[d], reductions[e], counts[c], c == 2);
    }
}

static void
test_broadcast (void)
{
  const AccelDType dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_C128, ACCEL_DTYPE_I64, ACCEL_DTYPE_U8 };
  for (guint n = 2; n <= 4; n++)
    {
      g_autoptr(AccelCommunicator) comm = coll_comm (n);
      for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
        for (guint root = 0; root < n; root++)
          for (guint c = 0; c < G_N_ELEMENTS (counts); c++)
            {
              AccelDType dtype = dtypes[d];
              gint64 count = counts[c];
              gboolean in_place = c == 0;
              CollRanks r = { n };
              for (guint i = 0; i < n; i++)
                {
                  r.dst[i] = coll_alloc (coll_device (i), dtype, count);
                  /* Every rank's dst starts with other values: they must go. */
                  r.values[i] = coll_fill (r.dst[i], ACCEL_REDUCTION_SUM);
                  if (i == root)
                    {
                      r.src[i] = in_place ? g_object_ref (r.dst[i]) : coll_alloc (coll_device (i), dtype, count);
                      if (!in_place)
                        {
                          g_free (r.values[i]);
                          r.values[i] = coll_fill (r.src[i], ACCEL_REDUCTION_SUM);
                        }
                    }
                  r.ops[i] = accel_broadcast_new (r.src[i], r.dst[i], root);
                }
              coll_submit (comm, r.ops, n);
              for (guint i = 0; i < n; i++)
                {
                  g_autofree double *got = cpu_test_read (r.dst[i]);
                  g_autofree char *what = g_strdup_printf ("broadcast %s n=%u root=%u rank %u", accel_dtype_get_name (dtype),
                                                           n, root, i);
                  coll_assert_equal (what, got, r.values[root], count * cpu_test_components (dtype));
                }
              coll_ranks_clear (&r);
            }
    }
}

static void
test_root_reduce (void)
{
  const AccelDType dtypes[] = { ACCEL_DTYPE_F64, ACCEL_DTYPE_BF16, ACCEL_DTYPE_I32, ACCEL_DTYPE_U8, ACCEL_DTYPE_C64 };
  for (guint n = 2; n <= 4; n++)
    {
      g_autoptr(AccelCommunicator) comm = coll_comm (n);
      for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
        for (guint e = 0; e < G_N_ELEMENTS (reductions); e++)
          {
            AccelDType dtype = dtypes[d];
            if (!reduction_applies (dtype, reductions[e]))
              continue;
            guint root = (d + e) % n;
            gint64 count = counts[(d + e) % G_N_ELEMENTS (counts)];
            guint k = cpu_test_components (dtype);
            CollRanks r = { n };
            g_autofree double *before = NULL;
            for (guint i = 0; i < n; i++)
              {
                r.src[i] = coll_alloc (coll_device (i), dtype, count);
                r.values[i] = coll_fill (r.src[i], reductions[e]);
                /* Non-roots give a dst too: it must stay as it was. */
                r.dst[i] = coll_alloc (coll_device (i), dtype, count);
                double *v = coll_fill (r.dst[i], ACCEL_REDUCTION_SUM);
                if (i == (root + 1) % n)
                  before = v;
                else
                  g_free (v);
                r.ops[i] = accel_root_reduce_new (r.src[i], r.dst[i], reductions[e], root);
              }
            coll_submit (comm, r.ops, n);
            g_autofree double *want = g_new (double, count * k);
            coll_reference_reduce (dtype, reductions[e], r.values, n, 0, count * k, want);
            g_autofree double *got = cpu_test_read (r.dst[root]);
            coll_assert_equal ("root-reduce at the root", got, want, count * k);
            g_autofree double *other = cpu_test_read (r.dst[(root + 1) % n]);
            coll_assert_equal ("root-reduce: a non-root's dst is untouched", other, before, count * k);
            coll_ranks_clear (&r);
          }
    }
}

static void
test_all_to_all (void)
{
  const AccelDType dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_C128, ACCEL_DTYPE_I8, ACCEL_DTYPE_FP8_E5M2 };
  for (guint n = 2; n <= 4; n++)
    {
      g_autoptr(AccelCommunicator) comm = coll_comm (n);
      for (guint d = 0; d < G_N_ELEMENTS (dtypes); d++)
        for (guint c = 0; c < G_N_ELEMENTS (counts); c++)
          {
            AccelDType dtype = dtypes[d];
            gint64 block = counts[c];
            gsize kb = block * cpu_test_components (dtype);
            CollRanks r = { n };
            for (guint i = 0; i < n; i++)
              {
                r.src[i] = coll_alloc (coll_device (i), dtype, block * n);
                r.values[i] = coll_fill (r.src[i], ACCEL_REDUCTION_SUM);
                r.dst[i] = coll_alloc (coll_device (i), dtype, block * n);
                r.ops[i] = accel_all_to_all_new (r.src[i], r.dst[i]);
              }
            coll_submit (comm, r.ops, n);
            for (guint j = 0; j < n; j++)
              {
                g_autofree double *want = g_new (double, kb * n);
                for (guint i = 0; i < n; i++)
                  memcpy (want + i * kb, r.values[i] + j * kb, sizeof (double) * kb);
                g_autofree double *got = cpu_test_read (r.dst[j]);
                coll_assert_equal ("all-to-all", got, want, kb * n);
              }
            coll_ranks_clear (&r);
          }
    }
}

/* send/recv: a pair, an exchange between two ranks, and a ring shift in
 * one submission (every rank sends and receives). */
static void
test_send_recv (void)
{
  for (guint n = 2; n <= 4; n++)
    {
      g_autoptr(AccelCommunicator) comm = coll_comm (n);
      gint64 count = counts[n % G_N_ELEMENTS (counts)] + 2;
      AccelDType dtype = n == 3 ? ACCEL_DTYPE_C64 : ACCEL_DTYPE_F32;
      gsize k = count * cpu_test_components (dtype);

      /* A pair, from the last rank to rank 0; the ops in any order. */
      {
        g_autoptr(AccelBuffer) src = coll_alloc (coll_device (n - 1), dtype, count);
        g_autoptr(AccelBuffer) dst = coll_alloc (coll_device (0), dtype, count);
        g_autofree double *v = coll_fill (src, ACCEL_REDUCTION_SUM);
        AccelOp *ops[2] = { accel_recv_new (dst, n - 1), accel_send_new (src, 0) };
        coll_submit (comm, ops, 2);
        g_autofree double *got = cpu_test_read (dst);
        coll_assert_equal ("send/recv pair", got, v, k);
        g_object_unref (ops[0]);
        g_object_unref (ops[1]);
      }

      /* A ring shift: rank i sends to i+1 and receives from i-1. */
      CollRanks r = { n };
      AccelOp *ops[2 * CT_MAX_RANKS];
      for (guint i = 0; i < n; i++)
        {
          r.src[i] = coll_alloc (coll_device (i), dtype, count);
          r.dst[i] = coll_alloc (coll_device (i), dtype, count);
          r.values[i] = coll_fill (r.src[i], ACCEL_REDUCTION_SUM);
          ops[2 * i] = accel_send_new (r.src[i], (i + 1) % n);
          ops[2 * i + 1] = accel_recv_new (r.dst[i], (i + n - 1) % n);
        }
      coll_submit (comm, ops, 2 * n);
      for (guint i = 0; i < n; i++)
        {
          g_autofree double *got = cpu_test_read (r.dst[i]);
          coll_assert_equal ("ring shift", got, r.values[(i + n - 1) % n], k);
          g_object_unref (ops[2 * i]);
          g_object_unref (ops[2 * i + 1]);
        }
      coll_ranks_clear (&r);
    }
}

/* Many collectives in flight at once complete each once, right, in order. */
static void
completed (GObject *source, GAsyncResult *result, gpointer data)
{
  int *left = data;
  g_autoptr(GError) error = NULL;
  g_assert_true (accel_communicator_submit_finish (ACCEL_COMMUNICATOR (source), result, &error));
  g_assert_no_error (error);
  (*left)--;
}

static void
test_pipelined (void)
{
  const guint n = 4, rounds = 24;
  const gint64 count = 333;
  g_autoptr(AccelCommunicator) comm = coll_comm (n);
  CollRanks r = { n };
  int left = rounds;

  for (guint i = 0; i < n; i++)
    {
      r.src[i] = coll_alloc (coll_device (i), ACCEL_DTYPE_F64, count);
      r.values[i] = coll_fill (r.src[i], ACCEL_REDUCTION_SUM);
    }
  /* In place, sum and avg by turns: after the first sum every rank holds
   * the same values, which an avg keeps and a sum multiplies by n. */
  for (guint k = 0; k < rounds; k++)
    {
      AccelOp *ops[CT_MAX_RANKS];
      for (guint i = 0; i < n; i++)
        ops[i] = accel_all_reduce_new (r.src[i], r.src[i], k % 2 ? ACCEL_REDUCTION_AVG : ACCEL_REDUCTION_SUM);
      accel_communicator_submit_async (comm, ops, n, NULL, completed, &left);
      for (guint i = 0; i < n; i++)
        g_object_unref (ops[i]);
    }
  while (left > 0)
    g_main_context_iteration (NULL, TRUE);

  g_autofree double *want = g_new (double, count);
  coll_reference_reduce (ACCEL_DTYPE_F64, ACCEL_REDUCTION_SUM, r.values, n, 0, count, want);
  for (guint k = 2; k < rounds; k += 2)
    for (gint64 e = 0; e < count; e++)
      want[e] = want[e] * n;
  for (guint i = 0; i < n; i++)
    {
      g_autofree double *got = cpu_test_read (r.src[i]);
      coll_assert_equal ("pipelined sums and averages", got, want, count);
    }
  coll_ranks_clear (&r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/collective/all-reduce", test_all_reduce);
  g_test_add_func ("/collective/all-gather", test_all_gather);
  g_test_add_func ("/collective/reduce-scatter", test_reduce_scatter);
  g_test_add_func ("/collective/broadcast", test_broadcast);
  g_test_add_func ("/collective/root-reduce", test_root_reduce);
  g_test_add_func ("/collective/all-to-all", test_all_to_all);
  g_test_add_func ("/collective/send-recv", test_send_recv);
  g_test_add_func ("/collective/pipelined", test_pipelined);
  return cpu_test_run ();
}
