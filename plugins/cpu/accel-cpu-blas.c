/* accel-cpu-blas.c: gemm, axpy and scal through CBLAS (OpenBLAS).
 *
 * f32, f64, c64 and c128 call the library on the buffers themselves, with no
 * copy. f16 and bf16 have no CBLAS entry points: their operands are widened
 * to f32, multiplied with sgemm (f32 accumulation), and the result rounded
 * back to nearest even.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cblas.h>
#include <accel-half.h>
#include "accel-cpu-kernels.h"

typedef struct {
  gint64 batch, m, n, k;
  int lda, ldb, ldc;
  gint64 stride_a, stride_b, stride_c;   /* elements between batch entries */
  CBLAS_TRANSPOSE ta, tb;
} GemmDims;

static void
gemm_dims (AccelGemm *self, GemmDims *g)
{
  AccelGemmDims d;
  accel_gemm_dims (ACCEL_OP (self), self->a, self->transa, self->b, self->transb, self->c, &d, NULL);

  g->batch = d.batch;
  g->m = d.m;
  g->k = d.k;
  g->n = d.n;
  /* Row-major leading dimensions are the stored row lengths. */
  g->lda = (int) MAX (self->transa ? d.m : d.k, 1);
  g->ldb = (int) MAX (self->transb ? d.k : d.n, 1);
  g->ldc = (int) MAX (d.n, 1);
  g->stride_a = d.m * d.k;
  g->stride_b = d.k * d.n;
  g->stride_c = d.m * d.n;
  g->ta = self->transa ? CblasTrans : CblasNoTrans;
  g->tb = self->transb ? CblasTrans : CblasNoTrans;
}

static void
sgemm_batch (const GemmDims *g, float alpha, const float *a, const float *b, float beta, float *c)
{
  for (gint64 i = 0; i < g->batch; i++)
    cblas_sgemm (CblasRowMajor, g->ta, g->tb, (int) g->m, (int) g->n, (int) g->k,
                 alpha, a + i * g->stride_a, g->lda, b + i * g->stride_b, g->ldb,
                 beta, c + i * g->stride_c, g->ldc);
}

gboolean
accel_cpu_gemm_run (AccelOp *op, gpointer context, GError **error)
{
  AccelGemm *self = ACCEL_GEMM (op);
  AccelDType dtype = accel_buffer_get_dtype (self->a);
  const void *a = accel_buffer_get_data (self->a);
  const void *b = accel_buffer_get_data (self->b);
  void *c = accel_buffer_get_data (self->c);
  GemmDims g;

  gemm_dims (self, &g);
  if (g.m == 0 || g.n == 0 || g.batch == 0)
    return TRUE;

  switch (dtype)
    {
    case ACCEL_DTYPE_F32:
      sgemm_batch (&g, (float) self->alpha, a, b, (float) self->beta, c);
      return TRUE;

    case ACCEL_DTYPE_F64:
      for (gint64 i = 0; i < g.batch; i++)
        cblas_dgemm (CblasRowMajor, g.ta, g.tb, (int) g.m, (int) g.n, (int) g.k,
                     self->alpha, (const double *) a + i * g.stride_a, g.lda,
                     (const double *) b + i * g.stride_b, g.ldb,
                     self->beta, (double *) c + i * g.stride_c, g.ldc);
      return TRUE;

    case ACCEL_DTYPE_C64:
      {
        const float alpha[2] = { (float) self->alpha, 0.0f };
        const float beta[2] = { (float) self->beta, 0.0f };
        for (gint64 i = 0; i < g.batch; i++)
          cblas_cgemm (CblasRowMajor, g.ta, g.tb, (int) g.m, (int) g.n, (int) g.k,
                       alpha, (const float *) a + 2 * i * g.stride_a, g.lda,
                       (const float *) b + 2 * i * g.stride_b, g.ldb,
                       beta, (float *) c + 2 * i * g.stride_c, g.ldc);
        return TRUE;
      }

    case ACCEL_DTYPE_C128:
      {
        const double alpha[2] = { self->alpha, 0.0 };
        const double beta[2] = { self->beta, 0.0 };
        for (gint64 i = 0; i < g.batch; i++)
          cblas_zgemm (CblasRowMajor, g.ta, g.tb, (int) g.m, (int) g.n, (int) g.k,
                       alpha, (const double *) a + 2 * i * g.stride_a, g.lda,
                       (const double *) b + 2 * i * g.stride_b, g.ldb,
                       beta, (double *) c + 2 * i * g.stride_c, g.ldc);
        return TRUE;
      }

    case ACCEL_DTYPE_F16:
    case ACCEL_DTYPE_BF16:
      {
        gint64 na = g.batch * g.stride_a, nb = g.batch * g.stride_b, nc = g.batch * g.stride_c;
        float *fa = accel_cpu_scratch_alloc (na * sizeof (float), error);
        float *fb = fa ? accel_cpu_scratch_alloc (nb * sizeof (float), error) : NULL;
        float *fc = fb ? accel_cpu_scratch_alloc (nc * sizeof (float), error) : NULL;
        if (fc != NULL)
          {
            accel_cpu_to_f32 (context, dtype, a, fa, na);
            accel_cpu_to_f32 (context, dtype, b, fb, nb);
            /* With beta 0, c is not read, as BLAS does. */
            if (self->beta != 0.0)
              accel_cpu_to_f32 (context, dtype, c, fc, nc);
            sgemm_batch (&g, (float) self->alpha, fa, fb, (float) self->beta, fc);
            accel_cpu_from_f32 (context, dtype, fc, c, nc);
          }
        accel_cpu_scratch_free (fa);
        accel_cpu_scratch_free (fb);
        accel_cpu_scratch_free (fc);
        return fc != NULL;
      }

    default:
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "cpu gemm: dtype %s is not supported", accel_dtype_get_name (dtype));
      return FALSE;
    }
}

/* axpy and scal: BLAS level 1 takes int lengths, so long vectors go in
 * pieces. f16 and bf16 compute in f32 per element, in parallel. */

#define L1_PIECE ((gint64) 1 << 30)

typedef struct {
  AccelDType dtype;
  float alpha;
  const guint16 *x;
  guint16 *y;
} HalfL1Job;

static inline float
half_load (AccelDType dtype, guint16 v)
{
  return dtype == ACCEL_DTYPE_F16 ? accel_f16_to_f32 (v) : accel_bf16_to_f32 (v);
}

static inline guint16
half_store (AccelDType dtype, float v)
{
  return dtype == ACCEL_DTYPE_F16 ? accel_f16_from_f32 (v) : accel_bf16_from_f32 (v);
}

static void
half_axpy_range (gint64 begin, gint64 end, gpointer data)
{
  HalfL1Job *job = data;
  for (gint64 i = begin; i < end; i++)
    {
      float x = half_load (job->dtype, job->x[i]);
      float y = half_load (job->dtype, job->y[i]);
      job->y[i] = half_store (job->dtype, job->alpha * x + y);
    }
}

static void
half_scal_range (gint64 begin, gint64 end, gpointer data)
{
  HalfL1Job *job = data;
  for (gint64 i = begin; i < end; i++)
    job->y[i] = half_store (job->dtype, job->alpha * half_load (job->dtype, job->y[i]));
}

gboolean
accel_cpu_axpy_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAxpy *self = ACCEL_AXPY (op);
  AccelDType dtype = accel_buffer_get_dtype (self->x);
  const guint8 *x = accel_buffer_get_data (self->x);
  guint8 *y = accel_buffer_get_data (self->y);
  gint64 n = accel_buffer_get_n_elements (self->x);
  gsize es = accel_dtype_get_size (dtype);

  if (dtype == ACCEL_DTYPE_F16 || dtype == ACCEL_DTYPE_BF16)
    {
      HalfL1Job job = { dtype, (float) self->alpha, (const guint16 *) x, (guint16 *) y };
      accel_cpu_parallel_for (context, n, 32 * 1024, half_axpy_range, &job);
      return TRUE;
    }

  for (gint64 off = 0; off < n; off += L1_PIECE)
    {
      int len = (int) MIN (L1_PIECE, n - off);
      const void *xp = x + off * es;
      void *yp = y + off * es;
      switch (dtype)
        {
        case ACCEL_DTYPE_F32:
          cblas_saxpy (len, (float) self->alpha, xp, 1, yp, 1);
          break;
        case ACCEL_DTYPE_F64:
          cblas_daxpy (len, self->alpha, xp, 1, yp, 1);
          break;
        case ACCEL_DTYPE_C64:
          {
            const float alpha[2] = { (float) self->alpha, 0.0f };
            cblas_caxpy (len, alpha, xp, 1, yp, 1);
          }
          break;
        case ACCEL_DTYPE_C128:
          {
            const double alpha[2] = { self->alpha, 0.0 };
            cblas_zaxpy (len, alpha, xp, 1, yp, 1);
          }
          break;
        default:
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                       "cpu axpy: dtype %s is not supported", accel_dtype_get_name (dtype));
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
accel_cpu_scal_run (AccelOp *op, gpointer context, GError **error)
{
  AccelScal *self = ACCEL_SCAL (op);
  AccelDType dtype = accel_buffer_get_dtype (self->x);
  guint8 *x = accel_buffer_get_data (self->x);
  gint64 n = accel_buffer_get_n_elements (self->x);
  gsize es = accel_dtype_get_size (dtype);

  if (dtype == ACCEL_DTYPE_F16 || dtype == ACCEL_DTYPE_BF16)
    {
      HalfL1Job job = { dtype, (float) self->alpha, NULL, (guint16 *) x };
      accel_cpu_parallel_for (context, n, 32 * 1024, half_scal_range, &job);
      return TRUE;
    }

  for (gint64 off = 0; off < n; off += L1_PIECE)
    {
      int len = (int) MIN (L1_PIECE, n - off);
      void *xp = x + off * es;
      switch (dtype)
        {
        case ACCEL_DTYPE_F32:
          cblas_sscal (len, (float) self->alpha, xp, 1);
          break;
        case ACCEL_DTYPE_F64:
          cblas_dscal (len, self->alpha, xp, 1);
          break;
        case ACCEL_DTYPE_C64:
          cblas_csscal (len, (float) self->alpha, xp, 1);
          break;
        case ACCEL_DTYPE_C128:
          cblas_zdscal (len, self->alpha, xp, 1);
          break;
        default:
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                       "cpu scal: dtype %s is not supported", accel_dtype_get_name (dtype));
          return FALSE;
        }
    }
  return TRUE;
}
