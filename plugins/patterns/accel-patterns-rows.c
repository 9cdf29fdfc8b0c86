/* accel-patterns-rows.c: picking rows out of host blocks, and reading and
 * writing float rows of any float dtype.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-patterns-rows.h"

#include <string.h>
#include <accel-half.h>

/* A block of the @n_rows items of @block (items of @item_size bytes) at
 * the indices @rows, in that order. */
GBytes *
accel_patterns_rows_gather (GBytes *block, gsize item_size, const guint *rows, guint n_rows)
{
  const guint8 *src = g_bytes_get_data (block, NULL);
  guint8 *dst = g_malloc (MAX (item_size * n_rows, 1));
  for (guint i = 0; i < n_rows; i++)
    memcpy (dst + i * item_size, src + (gsize) rows[i] * item_size, item_size);
  return g_bytes_new_take (dst, item_size * n_rows);
}

/* Whether the patterns can read and write @dtype as real numbers. */
gboolean
accel_patterns_dtype_is_real (AccelDType dtype)
{
  return dtype == ACCEL_DTYPE_F32 || dtype == ACCEL_DTYPE_F64 || dtype == ACCEL_DTYPE_F16
         || dtype == ACCEL_DTYPE_BF16;
}

void
accel_patterns_to_f32 (AccelDType dtype, gconstpointer src, float *dst, gsize n)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F32:
      memcpy (dst, src, n * sizeof (float));
      break;
    case ACCEL_DTYPE_F64:
      for (gsize i = 0; i < n; i++)
        dst[i] = (float) ((const double *) src)[i];
      break;
    case ACCEL_DTYPE_F16:
      for (gsize i = 0; i < n; i++)
        dst[i] = accel_f16_to_f32 (((const guint16 *) src)[i]);
      break;
    case ACCEL_DTYPE_BF16:
      for (gsize i = 0; i < n; i++)
        dst[i] = accel_bf16_to_f32 (((const guint16 *) src)[i]);
      break;
    default:
      g_return_if_reached ();
    }
}

void
accel_patterns_from_f32 (AccelDType dtype, const float *src, gpointer dst, gsize n)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F32:
      memcpy (dst, src, n * sizeof (float));
      break;
    case ACCEL_DTYPE_F64:
      for (gsize i = 0; i < n; i++)
        ((double *) dst)[i] = src[i];
      break;
    case ACCEL_DTYPE_F16:
      for (gsize i = 0; i < n; i++)
        ((guint16 *) dst)[i] = accel_f16_from_f32 (src[i]);
      break;
    case ACCEL_DTYPE_BF16:
      for (gsize i = 0; i < n; i++)
        ((guint16 *) dst)[i] = accel_bf16_from_f32 (src[i]);
      break;
    default:
      g_return_if_reached ();
    }
}
