/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include <accel-half.h>
#include "accel-test-values.h"

guint
accel_test_components (AccelDType dtype)
{
  return accel_dtype_is_complex (dtype) ? 2 : 1;
}

void
accel_test_store (AccelDType dtype, guint8 *p, double v)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F16: { guint16 h = accel_f16_from_f64 (v); memcpy (p, &h, 2); } break;
    case ACCEL_DTYPE_BF16: { guint16 h = accel_bf16_from_f64 (v); memcpy (p, &h, 2); } break;
    case ACCEL_DTYPE_FP8_E4M3: *p = accel_fp8_e4m3_from_f64 (v); break;
    case ACCEL_DTYPE_FP8_E5M2: *p = accel_fp8_e5m2_from_f64 (v); break;
    case ACCEL_DTYPE_F32: case ACCEL_DTYPE_C64: { float f = (float) v; memcpy (p, &f, 4); } break;
    case ACCEL_DTYPE_F64: case ACCEL_DTYPE_C128: memcpy (p, &v, 8); break;
    case ACCEL_DTYPE_I8: { gint8 x = (gint8) (gint64) v; memcpy (p, &x, 1); } break;
    case ACCEL_DTYPE_U8: { guint8 x = (guint8) (gint64) v; memcpy (p, &x, 1); } break;
    case ACCEL_DTYPE_I32: { gint32 x = (gint32) (gint64) v; memcpy (p, &x, 4); } break;
    case ACCEL_DTYPE_U32: { guint32 x = (guint32) (gint64) v; memcpy (p, &x, 4); } break;
    case ACCEL_DTYPE_I64: { gint64 x = (gint64) v; memcpy (p, &x, 8); } break;
    default: g_assert_not_reached ();
    }
}

double
accel_test_load (AccelDType dtype, const guint8 *p)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F16: { guint16 h; memcpy (&h, p, 2); return accel_f16_to_f32 (h); }
    case ACCEL_DTYPE_BF16: { guint16 h; memcpy (&h, p, 2); return accel_bf16_to_f32 (h); }
    case ACCEL_DTYPE_FP8_E4M3: return accel_fp8_e4m3_to_f32 (*p);
    case ACCEL_DTYPE_FP8_E5M2: return accel_fp8_e5m2_to_f32 (*p);
    case ACCEL_DTYPE_F32: case ACCEL_DTYPE_C64: { float f; memcpy (&f, p, 4); return f; }
    case ACCEL_DTYPE_F64: case ACCEL_DTYPE_C128: { double d; memcpy (&d, p, 8); return d; }
    case ACCEL_DTYPE_I8: return (gint8) *p;
    case ACCEL_DTYPE_U8: return *p;
    case ACCEL_DTYPE_I32: { gint32 x; memcpy (&x, p, 4); return x; }
    case ACCEL_DTYPE_U32: { guint32 x; memcpy (&x, p, 4); return x; }
    case ACCEL_DTYPE_I64: { gint64 x; memcpy (&x, p, 8); return (double) x; }
    default: g_assert_not_reached ();
    }
  return 0;
}

double
accel_test_round_to (AccelDType dtype, double v)
{
  guint8 tmp[16];
  accel_test_store (dtype, tmp, v);
  return accel_test_load (dtype, tmp);
}

/* The components of @buffer's elements, and the bytes of each. */
static gsize
n_components (AccelBuffer *buffer, gsize *component_size)
{
  AccelDType dtype = accel_buffer_get_dtype (buffer);
  *component_size = accel_dtype_get_size (dtype) / accel_test_components (dtype);
  return (gsize) accel_buffer_get_n_elements (buffer) * accel_test_components (dtype);
}

/* Of each floating dtype: its machine epsilon and its subnormals' spacing. */
typedef struct {
  AccelDType dtype;
  double eps;
  double denorm_min;
} FloatLimits;

static const FloatLimits float_limits[] = {
  { ACCEL_DTYPE_F16, 0x1p-10, 0x1p-24 },
  { ACCEL_DTYPE_BF16, 0x1p-7, 0x1p-133 },
  { ACCEL_DTYPE_F32, 0x1p-23, 0x1p-149 },
  { ACCEL_DTYPE_C64, 0x1p-23, 0x1p-149 },
  { ACCEL_DTYPE_F64, 0x1p-52, 0x1p-1074 },
  { ACCEL_DTYPE_C128, 0x1p-52, 0x1p-1074 },
  { ACCEL_DTYPE_FP8_E4M3, 0x1p-3, 0x1p-9 },
  { ACCEL_DTYPE_FP8_E5M2, 0x1p-2, 0x1p-16 },
};

/* @dtype's limits; zeros for an integer dtype. */
static FloatLimits
limits_of (AccelDType dtype)
{
  for (guint i = 0; i < G_N_ELEMENTS (float_limits); i++)
    if (float_limits[i].dtype == dtype)
      return float_limits[i];
  return (FloatLimits) { dtype, 0.0, 0.0 };
}

double
accel_test_eps (AccelDType dtype)
{
  return limits_of (dtype).eps;
}

double
accel_test_denorm_min (AccelDType dtype)
{
  return limits_of (dtype).denorm_min;
}

void
accel_test_write_values (AccelBuffer *buffer, const double *values)
{
  g_autoptr(GError) error = NULL;
  AccelDType dtype = accel_buffer_get_dtype (buffer);
  gsize cs, n = n_components (buffer, &cs), size = accel_buffer_get_size (buffer);
  g_autofree guint8 *bytes = g_malloc0 (MAX (MAX (size, n * cs), 1));

  for (gsize i = 0; i < n; i++)
    accel_test_store (dtype, bytes + i * cs, values[i]);
  g_assert_true (accel_buffer_write (buffer, bytes, size, &error));
  g_assert_no_error (error);
}

double *
accel_test_read_values (AccelBuffer *buffer)
{
  g_autoptr(GError) error = NULL;
  AccelDType dtype = accel_buffer_get_dtype (buffer);
  gsize cs, n = n_components (buffer, &cs), size = accel_buffer_get_size (buffer);
  g_autofree guint8 *bytes = g_malloc0 (MAX (MAX (size, n * cs), 1));
  g_assert_true (accel_buffer_read (buffer, bytes, size, &error));
  g_assert_no_error (error);
  double *values = g_new (double, MAX (n, 1));

  for (gsize i = 0; i < n; i++)
    values[i] = accel_test_load (dtype, bytes + i * cs);
  return values;
}

double *
accel_test_random_values (AccelDType dtype, gsize n, double lo, double hi)
{
  double *values = g_new (double, MAX (n, 1));
  for (gsize i = 0; i < n; i++)
    do
      values[i] = accel_test_round_to (dtype, g_test_rand_double_range (lo, hi));
    while (values[i] == 0.0);
  return values;
}

gint32 *
accel_test_random_permutation (gint64 n)
{
  gint32 *perm = g_new (gint32, MAX (n, 1));
  for (gint64 i = 0; i < n; i++)
    perm[i] = (gint32) i;
  for (gint64 i = n - 1; i > 0; i--)
    {
      gint64 j = g_test_rand_int_range (0, (gint32) i + 1);
      gint32 t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
  return perm;
}
