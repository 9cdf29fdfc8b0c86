/* accel-cpu-grouped-gemm.c: grouped-gemm, one CBLAS sgemm per non-empty
 * group on f32 operands (widened exactly), rounded once to the output
 * type. The offsets are checked here, before any row is read: they are
 * data, and the op's validation cannot see them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cblas.h>
#include "accel-cpu-kernels.h"

static gboolean
check_offsets (const gint32 *offsets, gint64 groups, gint64 rows, GError **error)
{
  if (offsets[0] != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "grouped-gemm: “group-offsets”[0] is %d; it must be 0", offsets[0]);
      return FALSE;
    }
  for (gint64 g = 0; g < groups; g++)
    if (offsets[g + 1] < offsets[g] || offsets[g + 1] > rows)
      {
        g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                     "grouped-gemm: “group-offsets”[%" G_GINT64_FORMAT "] is %d after %d; offsets never decrease "
                     "and stay within the %" G_GINT64_FORMAT " rows of “a”",
                     g + 1, offsets[g + 1], offsets[g], rows);
        return FALSE;
      }
  if (offsets[groups] != rows)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "grouped-gemm: “group-offsets”[%" G_GINT64_FORMAT "] is %d; it must be the %" G_GINT64_FORMAT
                   " rows of “a”", groups, offsets[groups], rows);
      return FALSE;
    }
  return TRUE;
}

gboolean
accel_cpu_grouped_gemm_run (AccelOp *op, gpointer context, GError **error)
{
  AccelGroupedGemm *self = ACCEL_GROUPED_GEMM (op);
  const AccelShape *sa = accel_buffer_get_shape (self->a), *sb = accel_buffer_get_shape (self->b);
  gint64 T = accel_shape_get_dim (sa, 0), K = accel_shape_get_dim (sa, 1), G = accel_shape_get_dim (sb, 0);
  gint64 N = accel_shape_get_dim (sb, self->transb ? 1 : 2);
  const gint32 *offsets = accel_buffer_get_data (self->group_offsets);
  gboolean own_a = FALSE, own_b = FALSE, own_bias = FALSE, ok = FALSE;
  float *fa = NULL, *fb = NULL, *fbias = NULL, *t = NULL;

  if (!check_offsets (offsets, G, T, error))
    return FALSE;
  if (T == 0 || N == 0)
    return TRUE;
  if ((fa = accel_cpu_widen (context, self->a, &own_a, error)) == NULL
      || (fb = accel_cpu_widen (context, self->b, &own_b, error)) == NULL
      || (self->bias && (fbias = accel_cpu_widen (context, self->bias, &own_bias, error)) == NULL)
      || (t = accel_cpu_scratch_alloc (T * N * sizeof (float), error)) == NULL)
    goto out;

  for (gint64 g = 0; g < G; g++)
    {
      gint64 r0 = offsets[g], rows = offsets[g + 1] - r0;
      if (rows == 0)
        continue;
      float *tg = t + r0 * N;
      cblas_sgemm (CblasRowMajor, CblasNoTrans, self->transb ? CblasTrans : CblasNoTrans, (int) rows, (int) N,
                   (int) K, (float) self->alpha, fa + r0 * K, (int) MAX (K, 1), fb + g * K * N,
                   (int) MAX (self->transb ? K : N, 1), 0.0f, tg, (int) N);
      if (fbias)
        for (gint64 r = 0; r < rows; r++)
          for (gint64 j = 0; j < N; j++)
            tg[r * N + j] += fbias[g * N + j];
    }
  accel_cpu_from_f32 (context, accel_buffer_get_dtype (self->out), t, accel_buffer_get_data (self->out), T * N);
  ok = TRUE;

out:
  if (own_a)
    accel_cpu_scratch_free (fa);
  if (own_b)
    accel_cpu_scratch_free (fb);
  if (own_bias)
    accel_cpu_scratch_free (fbias);
  accel_cpu_scratch_free (t);
  return ok;
}
