/* accel-cuda-cutlass-matmul.c: `matmul` on the cuda backend where
 * cuBLASLt (the cublaslt plugin, rank 100) cannot run it: the epilogue
 * extras (residual, row-scales, col-scales, amax), the exact GELU with an
 * fp8 result, and k = 0. Two kernels, both declining every other matmul so
 * that cuBLASLt keeps serving those:
 *
 * - rank 160, sm_90: CUTLASS's Hopper GEMM with the whole epilogue in one
 *   visitor tree (accel-cutlass-matmul-sm90.cu): bf16 or f16 throughout,
 *   a [m, k] and b [n, k], a residual, beta 0, no amax, k and n multiples
 *   of 8. `accel-bench-libs libs-cutlass` measures it beside cuBLASLt's
 *   bias+GELU followed by a residual-add kernel, the two-pass way.
 * - rank 150, sm_80 on: the tiled f32 kernel of accel-cutlass-matmul.cu,
 *   every type, layout and extra the op takes.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-cutlass-private.h"

#define OP_NAME "matmul"

static gboolean
is_fp8 (AccelDType dtype)
{
  return dtype == ACCEL_DTYPE_FP8_E4M3 || dtype == ACCEL_DTYPE_FP8_E5M2;
}

static AccelCutlassAct
act_of (AccelMatmulEpilogue e)
{
  switch (e)
    {
    case ACCEL_MATMUL_EPILOGUE_RELU:
    case ACCEL_MATMUL_EPILOGUE_BIAS_RELU:
      return ACCEL_CUTLASS_ACT_RELU;
    case ACCEL_MATMUL_EPILOGUE_GELU:
    case ACCEL_MATMUL_EPILOGUE_BIAS_GELU:
      return ACCEL_CUTLASS_ACT_GELU_TANH;
    case ACCEL_MATMUL_EPILOGUE_GELU_ERF:
    case ACCEL_MATMUL_EPILOGUE_BIAS_GELU_ERF:
      return ACCEL_CUTLASS_ACT_GELU_ERF;
    default:
      return ACCEL_CUTLASS_ACT_NONE;
    }
}

/* The op as the kernels take it; data pointers only on a device of this
 * process (elsewhere a stand-in says which optional buffers are set). */
static gboolean
params_fill (AccelOp *op, AccelDevice *device, AccelCutlassMatmulParams *p, GError **error)
{
  AccelMatmul *self = ACCEL_MATMUL (op);
  gboolean local = device == NULL || ACCEL_CUDA_IS_DEVICE (device);
  AccelGemmDims d;

  memset (p, 0, sizeof *p);
  if (!accel_gemm_dims (op, self->a, self->transa, self->b, self->transb, self->c, &d, error))
    return FALSE;
  if (!accel_cuda_cutlass_type (accel_buffer_get_dtype (self->a), &p->a_type)
      || !accel_cuda_cutlass_type (accel_buffer_get_dtype (self->b), &p->b_type)
      || !accel_cuda_cutlass_type (accel_buffer_get_dtype (self->c), &p->c_type)
      || (self->bias && !accel_cuda_cutlass_type (accel_buffer_get_dtype (self->bias), &p->bias_type)))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED, OP_NAME " (cuda_cutlass): type not supported");
      return FALSE;
    }
  p->batch = d.batch, p->m = d.m, p->n = d.n, p->k = d.k;
  p->transa = self->transa;
  p->transb = self->transb;
  p->alpha = (float) (self->alpha * self->a_scale * self->b_scale);
  p->beta = (float) self->beta;
  p->c_scale = (float) self->c_scale;
  p->act = act_of (self->epilogue);
#define PTR(buffer) \
  ((buffer) == NULL ? NULL : local ? accel_buffer_get_data (buffer) : (gpointer) accel_cuda_cutlass_stand_in)
  p->a = PTR (self->a);
  p->b = PTR (self->b);
  p->c = PTR (self->c);
  p->bias = PTR (self->bias);
  p->residual = PTR (self->residual);
  p->row_scales = PTR (self->row_scales);
  p->col_scales = PTR (self->col_scales);
  p->amax = PTR (self->amax);
#undef PTR
  return TRUE;
}

/* Only what cuBLASLt cannot run. */
static gboolean
beyond_cublaslt (AccelOp *op, const AccelCutlassMatmulParams *p, GError **error)
{
  AccelMatmul *self = ACCEL_MATMUL (op);
  if (self->residual || self->row_scales || self->col_scales || self->amax || p->k == 0
      || (p->act == ACCEL_CUTLASS_ACT_GELU_ERF && is_fp8 (accel_buffer_get_dtype (self->c))))
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
               OP_NAME " (cuda_cutlass): runs only what cuBLASLt cannot (the residual, row-scales, col-scales and "
               "amax epilogues, gelu-erf into fp8, k = 0)");
  return FALSE;
}

gboolean
accel_cuda_cutlass_matmul_generic_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  AccelCutlassMatmulParams p;
  return accel_cuda_cutlass_needs_cc (device, 8, 0, OP_NAME, error) && params_fill (op, device, &p, error)
         && beyond_cublaslt (op, &p, error) && accel_cuda_cutlass_general_fits (p.n, p.batch, OP_NAME, error);
}

gboolean
accel_cuda_cutlass_matmul_generic_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCutlassMatmulParams p;
  return params_fill (op, NULL, &p, error)
         && accel_cuda_cutlass_check (accel_cutlass_matmul_generic (&p, accel_cuda_lane_get_stream (context)),
                                      OP_NAME, error);
}

#ifdef ACCEL_CUTLASS_HAVE_SM90
gboolean
accel_cuda_cutlass_matmul_sm90_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  AccelCutlassMatmulParams p;
  if (!accel_cuda_cutlass_is_sm90 (device, OP_NAME, error))
    return FALSE;
  if (!params_fill (op, device, &p, error) || !beyond_cublaslt (op, &p, error))
    return FALSE;
  if (!accel_cutlass_matmul_sm90_supported (&p))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   OP_NAME " (cuda_cutlass sm90): takes bf16 or f16 with a residual, transb, beta 0 and no amax, "
                   "k and n multiples of 8, 16-byte aligned buffers");
      return FALSE;
    }
  return TRUE;
}

gboolean
accel_cuda_cutlass_matmul_sm90_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCudaLane *lane = context;
  AccelCutlassMatmulParams p;
  int sm_count = accel_cuda_device_get_sm_count (accel_cuda_lane_get_device (lane));
  void *workspace = NULL;
  gsize size;

  if (!params_fill (op, NULL, &p, error))
    return FALSE;
  size = accel_cutlass_matmul_sm90_workspace (&p, sm_count);
  if (size > 0 && (workspace = accel_cuda_lane_alloc_workspace (lane, size, error)) == NULL)
    return FALSE;
  return accel_cuda_cutlass_check (accel_cutlass_matmul_sm90 (&p, sm_count, workspace,
                                                              accel_cuda_lane_get_stream (lane)),
                                   OP_NAME " (sm90)", error);
}
#endif
