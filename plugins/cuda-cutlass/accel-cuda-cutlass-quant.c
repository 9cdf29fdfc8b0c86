/* accel-cuda-cutlass-quant.c: `quant-matmul` on the cuda backend, two
 * kernels:
 *
 * - rank 200, sm_80 on: tensor cores fed with the codes dequantised in
 *   registers (accel-cutlass-quant-mma.cu), f32 results exact to the op's
 *   definition; a and b 16-byte aligned.
 * - rank 100, sm_80 on: the tiled f32 kernel of accel-cutlass-quant.cu,
 *   everything the op takes.
 *
 * No other cuda kernel runs the op; what an application would otherwise do
 * (dequantise, then a bf16 GEMM through cuBLAS) is the baseline of
 * `accel-bench-libs libs-cutlass`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-cutlass-private.h"

#define OP_NAME "quant-matmul"

/* The op as the kernels take it; data pointers only on a device of this
 * process. */
static gboolean
params_fill (AccelOp *op, AccelDevice *device, AccelCutlassQuantParams *p, GError **error)
{
  AccelQuantMatmul *self = ACCEL_QUANT_MATMUL (op);
  const AccelShape *sa = accel_buffer_get_shape (self->a);
  gboolean local = device == NULL || ACCEL_CUDA_IS_DEVICE (device);

  memset (p, 0, sizeof *p);
  if (!accel_cuda_cutlass_type (accel_buffer_get_dtype (self->a), &p->act_type)
      || !accel_cuda_cutlass_type (accel_buffer_get_dtype (self->scales), &p->scale_type))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED, OP_NAME " (cuda_cutlass): type not supported");
      return FALSE;
    }
  p->m = accel_shape_get_dim (sa, 0);
  p->k = accel_shape_get_dim (sa, 1);
  p->n = accel_shape_get_dim (accel_buffer_get_shape (self->b), 0);
  p->group_size = self->group_size;
  p->format = self->format == ACCEL_QUANT_FORMAT_INT4 ? ACCEL_CUTLASS_QUANT_INT4
              : self->format == ACCEL_QUANT_FORMAT_INT8 ? ACCEL_CUTLASS_QUANT_INT8 : ACCEL_CUTLASS_QUANT_FP8;
  if (local)
    {
      p->a = accel_buffer_get_data (self->a);
      p->b = accel_buffer_get_data (self->b);
      p->scales = accel_buffer_get_data (self->scales);
      p->out = accel_buffer_get_data (self->out);
      p->bias = self->bias ? accel_buffer_get_data (self->bias) : NULL;
    }
  if (self->zeros)
    p->zeros = local ? accel_buffer_get_data (self->zeros) : accel_cuda_cutlass_stand_in;
  return TRUE;
}

gboolean
accel_cuda_cutlass_quant_generic_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  AccelCutlassQuantParams p;
  return accel_cuda_cutlass_needs_cc (device, 8, 0, OP_NAME, error) && params_fill (op, device, &p, error)
         && accel_cuda_cutlass_general_fits (p.n, 1, OP_NAME, error);
}

gboolean
accel_cuda_cutlass_quant_generic_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCutlassQuantParams p;
  return params_fill (op, NULL, &p, error)
         && accel_cuda_cutlass_check (accel_cutlass_quant_generic (&p, accel_cuda_lane_get_stream (context)),
                                      OP_NAME, error);
}

gboolean
accel_cuda_cutlass_quant_mma_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  AccelCutlassQuantParams p;
  if (!accel_cuda_cutlass_needs_cc (device, 8, 0, OP_NAME, error) || !params_fill (op, device, &p, error))
    return FALSE;
  if (!accel_cutlass_quant_mma_supported (&p))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   OP_NAME " (cuda_cutlass mma): needs 16-byte aligned “a” and “b”");
      return FALSE;
    }
  return TRUE;
}

gboolean
accel_cuda_cutlass_quant_mma_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCudaLane *lane = context;
  AccelCutlassQuantParams p;
  void *workspace = NULL;
  gsize size;

  if (!params_fill (op, NULL, &p, error))
    return FALSE;
  size = accel_cutlass_quant_mma_workspace (&p);
  if (size > 0 && (workspace = accel_cuda_lane_alloc_workspace (lane, size, error)) == NULL)
    return FALSE;
  return accel_cuda_cutlass_check (accel_cutlass_quant_mma (&p, workspace, accel_cuda_lane_get_stream (lane)),
                                   OP_NAME, error);
}
