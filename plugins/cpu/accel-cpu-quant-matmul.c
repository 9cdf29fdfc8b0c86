/* accel-cpu-quant-matmul.c: quant-matmul, the oracle: the weights are
 * dequantised to f32 exactly as the op defines them, then one CBLAS sgemm
 * against the widened activations, the bias added, and the result rounded
 * once to the output type.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cblas.h>
#include <accel-half.h>
#include "accel-cpu-kernels.h"

typedef struct {
  AccelQuantFormat format;
  const guint8 *codes;
  const float *scales, *zeros;   /* [N, groups] */
  gint64 K, groups, group_size;
  float *w;                      /* [N, K] */
} DequantJob;

static void
dequant_rows (gint64 begin, gint64 end, gpointer data)
{
  DequantJob *job = data;
  for (gint64 n = begin; n < end; n++)
    for (gint64 k = 0; k < job->K; k++)
      {
        gint64 g = n * job->groups + k / job->group_size;
        float q, zero;
        switch (job->format)
          {
          case ACCEL_QUANT_FORMAT_INT4:
            {
              guint8 byte = job->codes[n * (job->K / 2) + k / 2];
              q = (float) ((k & 1) ? byte >> 4 : byte & 0xf);
              zero = job->zeros ? job->zeros[g] : 8.0f;
              break;
            }
          case ACCEL_QUANT_FORMAT_INT8:
            q = (float) (gint8) job->codes[n * job->K + k];
            zero = job->zeros ? job->zeros[g] : 0.0f;
            break;
          default:
            q = accel_fp8_e4m3_to_f32 (job->codes[n * job->K + k]);
            zero = 0.0f;
            break;
          }
        job->w[n * job->K + k] = (q - zero) * job->scales[g];
      }
}

gboolean
accel_cpu_quant_matmul_run (AccelOp *op, gpointer context, GError **error)
{
  AccelQuantMatmul *self = ACCEL_QUANT_MATMUL (op);
  const AccelShape *sa = accel_buffer_get_shape (self->a);
  gint64 M = accel_shape_get_dim (sa, 0), K = accel_shape_get_dim (sa, 1);
  gint64 N = accel_shape_get_dim (accel_buffer_get_shape (self->b), 0);
  gboolean own_a = FALSE, own_s = FALSE, own_z = FALSE, own_bias = FALSE, ok = FALSE;
  float *fa = NULL, *fs = NULL, *fz = NULL, *fbias = NULL, *w = NULL, *t = NULL;

  if (M == 0 || N == 0)
    return TRUE;
  if ((fa = accel_cpu_widen (context, self->a, &own_a, error)) == NULL
      || (fs = accel_cpu_widen (context, self->scales, &own_s, error)) == NULL
      || (self->zeros && (fz = accel_cpu_widen (context, self->zeros, &own_z, error)) == NULL)
      || (self->bias && (fbias = accel_cpu_widen (context, self->bias, &own_bias, error)) == NULL)
      || (w = accel_cpu_scratch_alloc (MAX (N * K, 1) * sizeof (float), error)) == NULL
      || (t = accel_cpu_scratch_alloc (M * N * sizeof (float), error)) == NULL)
    goto out;

  DequantJob job = {
    self->format, accel_buffer_get_data (self->b), fs, fz, K, K / self->group_size, self->group_size, w,
  };
  accel_cpu_parallel_for (context, N, MAX (65536 / MAX (K, 1), 1), dequant_rows, &job);
  cblas_sgemm (CblasRowMajor, CblasNoTrans, CblasTrans, (int) M, (int) N, (int) K, 1.0f, fa, (int) MAX (K, 1),
               w, (int) MAX (K, 1), 0.0f, t, (int) N);
  if (fbias)
    for (gint64 i = 0; i < M; i++)
      for (gint64 j = 0; j < N; j++)
        t[i * N + j] += fbias[j];
  accel_cpu_from_f32 (context, accel_buffer_get_dtype (self->out), t, accel_buffer_get_data (self->out), M * N);
  ok = TRUE;

out:
  if (own_a)
    accel_cpu_scratch_free (fa);
  if (own_s)
    accel_cpu_scratch_free (fs);
  if (own_z)
    accel_cpu_scratch_free (fz);
  if (own_bias)
    accel_cpu_scratch_free (fbias);
  accel_cpu_scratch_free (w);
  accel_cpu_scratch_free (t);
  return ok;
}
