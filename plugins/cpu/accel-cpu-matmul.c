/* accel-cpu-matmul.c: matmul through CBLAS sgemm plus its epilogue.
 *
 * The operands are widened to f32 (f16, bf16 and fp8 exactly; f32 is used
 * in place), multiplied with sgemm into an f32 product, and the epilogue
 * (row and column scales, beta times the old c, bias, the activation, the
 * residual, then the fp8 output scale, with the amax taken on the way)
 * applied while storing,
 * rounding once to the type of c (fp8 e4m3 saturating at ±448, as
 * cuBLASLt does).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include <cblas.h>
#include <accel-half.h>
#include "accel-cpu-kernels.h"

static inline float
gelu (float x)
{
  /* The tanh approximation, as cuBLASLt's GELU epilogue. */
  const double k = 0.7978845608028654;   /* sqrt (2 / pi) */
  double xd = x;
  return (float) (0.5 * xd * (1.0 + tanh (k * (xd + 0.044715 * xd * xd * xd))));
}

static inline float
gelu_erf (float x)
{
  double xd = x;
  return (float) (0.5 * xd * (1.0 + erf (xd * 0.7071067811865476)));
}

static inline void
store (AccelDType dt, void *c, gint64 i, float v)
{
  switch (dt)
    {
    case ACCEL_DTYPE_F32:
      ((float *) c)[i] = v;
      break;
    case ACCEL_DTYPE_F16:
      ((guint16 *) c)[i] = accel_f16_from_f32 (v);
      break;
    case ACCEL_DTYPE_BF16:
      ((guint16 *) c)[i] = accel_bf16_from_f32 (v);
      break;
    case ACCEL_DTYPE_FP8_E4M3:
      ((guint8 *) c)[i] = accel_fp8_e4m3_from_f32 (v);
      break;
    default:
      ((guint8 *) c)[i] = accel_fp8_e5m2_from_f32 (v);
      break;
    }
}

typedef struct {
  AccelMatmulEpilogue epilogue;
  AccelDType c_dtype;
  gint64 m, n;
  const float *t;          /* alpha op(a) op(b), per batch [m, n] */
  const float *c_old;      /* beta's operand, nullable (beta 0) */
  float beta;
  const float *bias;       /* [n], nullable */
  const float *row_scales; /* [m], nullable */
  const float *col_scales; /* [n], nullable */
  const float *residual;   /* as c, nullable */
  float c_scale;
  void *c;
  guint32 amax_bits;       /* atomic: the bits of max |v|, a non-negative float */
} EpilogueJob;

/* Non-negative floats order as their bits: an atomic integer max. */
static void
atomic_max_bits (guint32 *bits, float v)
{
  guint32 want;
  memcpy (&want, &v, sizeof want);
  guint32 old = g_atomic_int_get ((gint *) bits);
  while (want > old && !g_atomic_int_compare_and_exchange_full ((gint *) bits, (gint) old, (gint) want, (gint *) &old))
    ;
}

static void
epilogue_rows (gint64 begin, gint64 end, gpointer data)
{
  EpilogueJob *job = data;
  AccelMatmulEpilogue e = job->epilogue;
  float amax = 0.0f;

  for (gint64 row = begin; row < end; row++)
    for (gint64 j = 0; j < job->n; j++)
      {
        gint64 i = row * job->n + j;
        float v = job->t[i];
        if (job->row_scales)
          v *= job->row_scales[row % job->m];
        if (job->col_scales)
          v *= job->col_scales[j];
        if (job->c_old)
          v += job->beta * job->c_old[i];
        if (job->bias)
          v += job->bias[j];
        if (e == ACCEL_MATMUL_EPILOGUE_RELU || e == ACCEL_MATMUL_EPILOGUE_BIAS_RELU)
          v = v > 0.0f ? v : (isnan (v) ? v : 0.0f);
        else if (e == ACCEL_MATMUL_EPILOGUE_GELU || e == ACCEL_MATMUL_EPILOGUE_BIAS_GELU)
          v = gelu (v);
        else if (e == ACCEL_MATMUL_EPILOGUE_GELU_ERF || e == ACCEL_MATMUL_EPILOGUE_BIAS_GELU_ERF)
          v = gelu_erf (v);
        if (job->residual)
          v += job->residual[i];
        amax = fmaxf (amax, fabsf (v));
        store (job->c_dtype, job->c, i, v * job->c_scale);
      }
  atomic_max_bits (&job->amax_bits, amax);
}

gboolean
accel_cpu_matmul_run (AccelOp *op, gpointer context, GError **error)
{
  AccelMatmul *self = ACCEL_MATMUL (op);
  AccelGemmDims d;
  if (!accel_gemm_dims (op, self->a, self->transa, self->b, self->transb, self->c, &d, error))
    return FALSE;
  gint64 batch = d.batch, m = d.m, k = d.k, n = d.n;
  AccelDType c_dtype = accel_buffer_get_dtype (self->c);
  AccelBuffer *const operands[] = { self->a, self->b, self->bias, self->row_scales, self->col_scales, self->residual };
  float *f[G_N_ELEMENTS (operands)] = { NULL };
  gboolean own[G_N_ELEMENTS (operands)] = { FALSE };
  float *t = NULL, *c_old = NULL;
  gboolean ok = FALSE;

  if (batch == 0 || m == 0 || n == 0)
    {
      if (self->amax)
        *(float *) accel_buffer_get_data (self->amax) = 0.0f;
      return TRUE;
    }
  for (guint i = 0; i < G_N_ELEMENTS (operands); i++)
    if (operands[i] && (f[i] = accel_cpu_widen (context, operands[i], &own[i], error)) == NULL)
      goto out;

  gint64 nc = batch * m * n;
  t = accel_cpu_scratch_alloc (nc * sizeof (float), error);
  if (t == NULL)
    goto out;
  /* Only an f32, f16 or bf16 c is accumulated into (an fp8 c needs beta 0);
   * it is read before the epilogue writes over it. */
  if (self->beta != 0.0)
    {
      c_old = accel_cpu_scratch_alloc (nc * sizeof (float), error);
      if (c_old == NULL)
        goto out;
      accel_cpu_to_f32 (context, c_dtype, accel_buffer_get_data (self->c), c_old, nc);
    }

  float alpha = (float) (self->alpha * self->a_scale * self->b_scale);
  for (gint64 i = 0; i < batch; i++)
    cblas_sgemm (CblasRowMajor, self->transa ? CblasTrans : CblasNoTrans,
                 self->transb ? CblasTrans : CblasNoTrans, (int) m, (int) n, (int) k,
                 alpha, f[0] + i * m * k, (int) MAX (self->transa ? m : k, 1),
                 f[1] + i * k * n, (int) MAX (self->transb ? k : n, 1),
                 0.0f, t + i * m * n, (int) n);

  EpilogueJob job = {
    self->epilogue, c_dtype, m, n, t, c_old, (float) self->beta, f[2], f[3], f[4], f[5],
    (float) self->c_scale, accel_buffer_get_data (self->c), 0,
  };
  accel_cpu_parallel_for (context, batch * m, MAX (16384 / n, 1), epilogue_rows, &job);
  if (self->amax)
    memcpy (accel_buffer_get_data (self->amax), &job.amax_bits, sizeof (float));
  ok = TRUE;

out:
  for (guint i = 0; i < G_N_ELEMENTS (operands); i++)
    if (own[i])
      accel_cpu_scratch_free (f[i]);
  accel_cpu_scratch_free (t);
  accel_cpu_scratch_free (c_old);
  return ok;
}
