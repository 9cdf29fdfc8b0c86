/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <math.h>
#include <string.h>
#include "collective-test.h"

const AccelDType coll_all_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16, ACCEL_DTYPE_C64, ACCEL_DTYPE_C128,
  ACCEL_DTYPE_I8, ACCEL_DTYPE_U8, ACCEL_DTYPE_I32, ACCEL_DTYPE_U32, ACCEL_DTYPE_I64,
  ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_FP8_E5M2,
};
const guint coll_n_all_dtypes = G_N_ELEMENTS (coll_all_dtypes);

static AccelDevice *devices[CT_MAX_RANKS];

AccelDevice *
coll_device (guint index)
{
  g_assert_cmpuint (index, <, CT_MAX_RANKS);
  if (devices[index] == NULL)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *name = g_strdup_printf ("cpu:%u", index);
      devices[index] = accel_system_get_device (cpu_test_system (), name, &error);
      g_assert_no_error (error);
      /* The test's system keeps its devices: this reference is the test's. */
      g_object_unref (devices[index]);
    }
  return devices[index];
}

AccelCommunicator *
coll_comm (guint n_ranks)
{
  g_autoptr(GError) error = NULL;
  AccelDevice *devs[CT_MAX_RANKS];
  for (guint i = 0; i < n_ranks; i++)
    devs[i] = coll_device (i);
  AccelCommunicator *comm = accel_communicator_new (devs, n_ranks, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (accel_communicator_get_n_ranks (comm), ==, n_ranks);
  return comm;
}

AccelBuffer *
coll_alloc (AccelDevice *device, AccelDType dtype, gint64 count)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelShape) shape = accel_shape_new_1d (count);
  AccelBuffer *buffer = accel_device_alloc (device, dtype, shape, &error);
  g_assert_no_error (error);
  return buffer;
}

double *
coll_random_values (AccelDType dtype, gsize n, AccelReduction reduction)
{
  double *v = g_new (double, MAX (n, 1));
  for (gsize i = 0; i < n; i++)
    {
      if (accel_dtype_is_integer (dtype))
        {
          gboolean is_unsigned = dtype == ACCEL_DTYPE_U8 || dtype == ACCEL_DTYPE_U32;
          if (reduction == ACCEL_REDUCTION_PROD)
            v[i] = g_test_rand_int_range (1, 4) * (is_unsigned || g_test_rand_bit () ? 1 : -1);
          else
            v[i] = is_unsigned ? g_test_rand_int_range (1, 60) : g_test_rand_int_range (-30, 31);
          if (v[i] == 0)
            v[i] = 7;
        }
      else
        {
          double lo = -2.0, hi = 2.0;
          if (dtype == ACCEL_DTYPE_FP8_E4M3 || dtype == ACCEL_DTYPE_FP8_E5M2)
            lo = -1.0, hi = 1.0;   /* products and sums of four stay far from their limits */
          do
            v[i] = cpu_test_round_to (dtype, g_test_rand_double_range (lo, hi));
          while (v[i] == 0.0);
        }
    }
  return v;
}

double *
coll_fill (AccelBuffer *buffer, AccelReduction reduction)
{
  AccelDType dtype = accel_buffer_get_dtype (buffer);
  gsize n = (gsize) accel_buffer_get_n_elements (buffer) * cpu_test_components (dtype);
  double *v = coll_random_values (dtype, n, reduction);
  cpu_test_write (buffer, v);
  return v;
}

void
coll_reference_reduce (AccelDType dtype, AccelReduction reduction, double *const *values, guint n_ranks,
                       gsize offset, gsize n, double *out)
{
  for (gsize i = 0; i < n; i++)
    {
      double acc = values[0][offset + i];
      for (guint r = 1; r < n_ranks; r++)
        {
          double v = values[r][offset + i];
          switch (reduction)
            {
            case ACCEL_REDUCTION_SUM: case ACCEL_REDUCTION_AVG: acc += v; break;
            case ACCEL_REDUCTION_PROD: acc *= v; break;
            case ACCEL_REDUCTION_MIN: acc = fmin (acc, v); break;
            case ACCEL_REDUCTION_MAX: acc = fmax (acc, v); break;
            }
        }
      if (reduction == ACCEL_REDUCTION_AVG)
        acc = accel_dtype_is_integer (dtype) ? trunc (acc / n_ranks) : acc / n_ranks;
      out[i] = cpu_test_round_to (dtype, acc);
    }
}

void
coll_submit (AccelCommunicator *comm, AccelOp **ops, guint n_ops)
{
  g_autoptr(GError) error = NULL;
  gboolean ok = accel_communicator_submit (comm, ops, n_ops, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (ok);
}

char *
coll_submit_expect (AccelCommunicator *comm, AccelOp **ops, guint n_ops, AccelError code)
{
  g_autoptr(GError) error = NULL;
  gboolean ok = accel_communicator_submit (comm, ops, n_ops, NULL, &error);
  g_assert_false (ok);
  g_assert_error (error, ACCEL_ERROR, (gint) code);
  g_test_message ("expected error: %s", error->message);
  return g_strdup (error->message);
}

void
coll_ranks_clear (CollRanks *r)
{
  for (guint i = 0; i < CT_MAX_RANKS; i++)
    {
      g_clear_object (&r->src[i]);
      g_clear_object (&r->dst[i]);
      g_clear_pointer (&r->values[i], g_free);
      g_clear_object (&r->ops[i]);
    }
}

void
coll_assert_equal (const char *what, const double *got, const double *want, gsize n)
{
  for (gsize i = 0; i < n; i++)
    if (!(got[i] == want[i] || (isnan (got[i]) && isnan (want[i]))))
      g_error ("%s: element %" G_GSIZE_FORMAT " is %.17g, expected %.17g", what, i, got[i], want[i]);
}
