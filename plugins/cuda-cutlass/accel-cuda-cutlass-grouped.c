/* accel-cuda-cutlass-grouped.c: `grouped-gemm` on the cuda backend, two
 * kernels:
 *
 * - rank 200, sm_90 (H100/H200): CUTLASS's ptr-array grouped GEMM
 *   (accel-cutlass-grouped-sm90.cu) for bf16 → bf16, f16 → f16 (b either
 *   way) and fp8-e4m3 → bf16 (b [G, N, K]), with K and N whole 16-byte
 *   rows and 16-byte aligned buffers. No other cuda kernel runs the op; the
 *   alternative an application has is a loop of cuBLAS GEMMs, one per group,
 *   which `accel-bench-libs libs-cutlass` measures beside it.
 * - rank 100, sm_80 on: the general tiled kernel of
 *   accel-cutlass-grouped.cu, every type pair and size the op takes.
 *
 * Both run the offset check first (one block on the device: the offsets
 * are never read back), which leaves codes that judge() turns into the
 * op's error once its work has run; the kernels after it read nothing
 * when the offsets are bad.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-cutlass-private.h"

#define OP_NAME "grouped-gemm"

/* The op's buffers as the kernels take them; data pointers only on a device
 * of this process (a remote one checks them where it runs the op). */
static gboolean
params_fill (AccelOp *op, AccelDevice *device, AccelCutlassGroupedParams *p, GError **error)
{
  AccelGroupedGemm *self = ACCEL_GROUPED_GEMM (op);
  const AccelShape *sa = accel_buffer_get_shape (self->a), *sb = accel_buffer_get_shape (self->b);
  gboolean local = device == NULL || ACCEL_CUDA_IS_DEVICE (device);

  memset (p, 0, sizeof *p);
  if (!accel_cuda_cutlass_type (accel_buffer_get_dtype (self->a), &p->in_type)
      || !accel_cuda_cutlass_type (accel_buffer_get_dtype (self->out), &p->out_type))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED, OP_NAME " (cuda_cutlass): type not supported");
      return FALSE;
    }
  p->rows = accel_shape_get_dim (sa, 0);
  p->k = accel_shape_get_dim (sa, 1);
  p->groups = accel_shape_get_dim (sb, 0);
  p->n = accel_shape_get_dim (sb, self->transb ? 1 : 2);
  p->transb = self->transb;
  p->alpha = (float) self->alpha;
  if (local)
    {
      p->a = accel_buffer_get_data (self->a);
      p->b = accel_buffer_get_data (self->b);
      p->bias = self->bias ? accel_buffer_get_data (self->bias) : NULL;
      p->out = accel_buffer_get_data (self->out);
      p->offsets = accel_buffer_get_data (self->group_offsets);
    }
  p->sm_count = 1;   /* set for real in run() */
  return TRUE;
}

/* What the completion thread needs to word an error. */
typedef struct {
  gint64 groups, rows;
} Judge;

static gboolean
judge (const gint32 *codes, guint n_codes, gpointer user_data, GError **error)
{
  const Judge *j = user_data;
  g_return_val_if_fail (n_codes >= ACCEL_CUTLASS_GROUPED_N_CODES, FALSE);
  if (codes[0] == 0)
    return TRUE;
  gint64 i = (gint64) codes[0] - 1;
  if (i == 0)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 OP_NAME ": “group-offsets”[0] is %d; it must be 0", codes[1]);
  else if (codes[1] < codes[2])
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 OP_NAME ": “group-offsets”[%" G_GINT64_FORMAT "] is %d, below “group-offsets”[%"
                 G_GINT64_FORMAT "] = %d (the offsets must not decrease)", i, codes[1], i - 1, codes[2]);
  else
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 OP_NAME ": “group-offsets”[%" G_GINT64_FORMAT "] is %d; it must be the %" G_GINT64_FORMAT
                 " rows of “a”", j->groups, codes[1], j->rows);
  return FALSE;
}

/* Asks for the codes and enqueues the check; FALSE with @error set. */
static gboolean
enqueue_check (AccelCudaLane *lane, AccelCutlassGroupedParams *p, GError **error)
{
  Judge *j = g_new (Judge, 1);
  j->groups = p->groups;
  j->rows = p->rows;
  p->codes = accel_cuda_lane_check_after (lane, ACCEL_CUTLASS_GROUPED_N_CODES, judge, j, g_free, error);
  p->sm_count = accel_cuda_device_get_sm_count (accel_cuda_lane_get_device (lane));
  return p->codes != NULL
         && accel_cuda_cutlass_check (accel_cutlass_grouped_check (p, accel_cuda_lane_get_stream (lane)),
                                      OP_NAME " offset check", error);
}

gboolean
accel_cuda_cutlass_grouped_generic_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  AccelCutlassGroupedParams p;
  return accel_cuda_cutlass_needs_cc (device, 8, 0, OP_NAME, error) && params_fill (op, device, &p, error)
         && accel_cuda_cutlass_general_fits (p.n, 1, OP_NAME, error);
}

gboolean
accel_cuda_cutlass_grouped_generic_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCudaLane *lane = context;
  AccelCutlassGroupedParams p;
  return params_fill (op, NULL, &p, error) && enqueue_check (lane, &p, error)
         && accel_cuda_cutlass_check (accel_cutlass_grouped_generic (&p, accel_cuda_lane_get_stream (lane)),
                                      OP_NAME, error);
}

#ifdef ACCEL_CUTLASS_HAVE_SM90
gboolean
accel_cuda_cutlass_grouped_sm90_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  AccelCutlassGroupedParams p;
  if (!accel_cuda_cutlass_is_sm90 (device, OP_NAME, error))
    return FALSE;
  if (!params_fill (op, device, &p, error))
    return FALSE;
  if (!accel_cutlass_grouped_sm90_supported (&p))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   OP_NAME " (cuda_cutlass sm90): takes bf16 → bf16, f16 → f16 and fp8-e4m3 → bf16 (transb) with "
                   "K and N whole 16-byte rows and 16-byte aligned buffers");
      return FALSE;
    }
  return TRUE;
}

gboolean
accel_cuda_cutlass_grouped_sm90_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCudaLane *lane = context;
  AccelCutlassGroupedParams p;
  void *workspace;

  if (!params_fill (op, NULL, &p, error) || !enqueue_check (lane, &p, error))
    return FALSE;
  if (p.rows == 0)
    return TRUE;
  workspace = accel_cuda_lane_alloc_workspace (lane, accel_cutlass_grouped_sm90_workspace (&p), error);
  return workspace != NULL
         && accel_cuda_cutlass_check (accel_cutlass_grouped_sm90 (&p, workspace, accel_cuda_lane_get_stream (lane)),
                                      OP_NAME " (sm90)", error);
}
#endif
