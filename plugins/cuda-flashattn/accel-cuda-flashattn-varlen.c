/* accel-cuda-flashattn-varlen.c: `attention-varlen` (packed ragged
 * sequences) on the cuda backend through the forward kernels of
 * accel-flashattn-fwd.cu (sm_80 path) and accel-flashattn-fwd-sm90.cu
 * (sm_90a path, d = 128 and 256), in their general instances.
 *
 * Rank 500. supports() declines what the kernels do not cover (dtypes other
 * than f16/bf16, head dims other than 64/128/256, Dv != D, buffers not
 * 16-byte aligned). The kernels read cu-seqlens-q and cu-seqlens-k on the
 * device, so nothing on the submit path synchronises: the grid covers an
 * upper bound of the query blocks (ceil (Tq / 128) + B per head), each block
 * finds its sequence by walking cu-seqlens-q, and one block checks both
 * arrays (cu[0] == 0, non-decreasing, cu[B] == T) and leaves codes that
 * accel_cuda_lane_check_after() hands back once the op's work has run; the
 * op then fails with ACCEL_ERROR_INVALID_ARGUMENT naming the buffer and the
 * first bad index. Whatever the arrays hold, the kernels stay inside the
 * buffers (a sequence with impossible bounds is taken as empty).
 *
 * The op is read through its properties (the names of
 * docs/attention-variants.md), so this file needs nothing of the op type.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "accel-config.h"
#include "accel-cuda.h"
#include "accel-flashattn.h"

void accel_cuda_flashattn_register_varlen (AccelPlugin *plugin);
gboolean accel_cuda_flashattn_head_dims_supported (const char *op_name, gint64 D, gint64 Dv, GError **error);

#define KERNEL_RANK 500
#define OP_NAME "attention-varlen"

/* The op's properties; buffers borrowed from the op. */
typedef struct {
  AccelBuffer *q, *k, *v, *out, *lse, *cu_q, *cu_k, *alibi_slopes;
  gboolean causal;
  int window_left, window_right, sinks;
  double scale, softcap;
} VarlenOp;

/* The op's fields: the kernels read the op through its public struct. */
static void
varlen_op_read (AccelOp *op, VarlenOp *o)
{
  AccelAttentionVarlen *self = ACCEL_ATTENTION_VARLEN (op);

  o->q = self->q;
  o->k = self->k;
  o->v = self->v;
  o->out = self->out;
  o->lse = self->lse;
  o->cu_q = self->cu_seqlens_q;
  o->cu_k = self->cu_seqlens_k;
  o->alibi_slopes = self->alibi_slopes;
  o->causal = self->causal;
  o->window_left = self->window_left;
  o->window_right = self->window_right;
  o->sinks = self->sinks;
  o->scale = self->scale;
  o->softcap = self->softcap;
}

/* q [Tq, Hq, D], k and v [Tk, Hkv, D], out [Tq, Hq, D], lse [Hq, Tq]; all
 * contiguous (the op's rule). */
static void
fill_params (AccelFlashAttnFwdParams *p, const VarlenOp *o)
{
  const AccelShape *sq = accel_buffer_get_shape (o->q);
  const AccelShape *sk = accel_buffer_get_shape (o->k);
  const AccelShape *sc = accel_buffer_get_shape (o->cu_q);
  gint64 D = accel_shape_get_dim (sq, 2), Hq = accel_shape_get_dim (sq, 1), Hkv = accel_shape_get_dim (sk, 1);

  memset (p, 0, sizeof *p);
  p->q = accel_buffer_get_data (o->q);
  p->k = accel_buffer_get_data (o->k);
  p->v = accel_buffer_get_data (o->v);
  p->out = accel_buffer_get_data (o->out);
  p->lse = o->lse ? accel_buffer_get_data (o->lse) : NULL;
  gint64 Dv = accel_shape_get_dim (accel_buffer_get_shape (o->v), 2);
  p->q_strides[1] = p->k_strides[1] = D;
  p->q_strides[2] = Hq * D;
  p->k_strides[2] = Hkv * D;
  p->o_strides[1] = p->v_strides[1] = Dv;
  p->o_strides[2] = Hq * Dv;
  p->v_strides[2] = Hkv * Dv;
  p->batch = (int32_t) (accel_shape_get_dim (sc, 0) - 1);
  p->heads_q = (int32_t) Hq;
  p->heads_kv = (int32_t) Hkv;
  p->seqlen_q = (int32_t) accel_shape_get_dim (sq, 0);
  p->seqlen_k = (int32_t) accel_shape_get_dim (sk, 0);
  p->head_dim = (int32_t) D;
  p->head_dim_v = (int32_t) accel_shape_get_dim (accel_buffer_get_shape (o->v), 2);
  AccelDType dtype = accel_buffer_get_dtype (o->q);
  p->dtype = dtype == ACCEL_DTYPE_BF16 ? ACCEL_FA_BF16 : dtype == ACCEL_DTYPE_F32 ? ACCEL_FA_F32 : ACCEL_FA_F16;
  p->causal = o->causal ? 1 : 0;
  p->window_left = o->window_left;
  p->window_right = o->window_right;
  p->scale = (float) o->scale;
  p->softcap = (float) o->softcap;
  p->path = ACCEL_FA_PATH_AUTO;
  if (o->alibi_slopes != NULL)
    {
      p->alibi_slopes = accel_buffer_get_data (o->alibi_slopes);
      p->alibi_batch_stride = accel_shape_get_rank (accel_buffer_get_shape (o->alibi_slopes)) == 2 ? p->heads_q : 0;
    }
  p->sinks = o->sinks;
  p->cu_seqlens_q = accel_buffer_get_data (o->cu_q);
  p->cu_seqlens_k = accel_buffer_get_data (o->cu_k);
}

static gboolean
varlen_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  VarlenOp o;
  int major = 0, minor = 0;

  if (!accel_cuda_get_compute_capability (device, &major, &minor) || major < 8)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL,
                   OP_NAME " (cuda_flashattn): needs compute capability 8.0 or newer (device has %d.%d)", major, minor);
      return FALSE;
    }
  varlen_op_read (op, &o);
  AccelDType dtype = accel_buffer_get_dtype (o.q);
  const AccelShape *sq = accel_buffer_get_shape (o.q);
  gint64 D = accel_shape_get_dim (sq, 2), Dv = accel_shape_get_dim (accel_buffer_get_shape (o.v), 2);
  gint64 B = accel_shape_get_dim (accel_buffer_get_shape (o.cu_q), 0) - 1;
  gint64 Tq = accel_shape_get_dim (sq, 0), Tk = accel_shape_get_dim (accel_buffer_get_shape (o.k), 0);
  if (dtype != ACCEL_DTYPE_F16 && dtype != ACCEL_DTYPE_BF16 && dtype != ACCEL_DTYPE_F32)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   OP_NAME " (cuda_flashattn): dtype %s is not supported (" ACCEL_FA_DTYPES_TEXT ")",
                   accel_dtype_get_name (dtype));
      return FALSE;
    }
  if (!accel_cuda_flashattn_head_dims_supported (OP_NAME, D, Dv, error))
    return FALSE;
  if (B < 1 || B > 65535 || accel_shape_get_dim (sq, 1) > 65535 || Tq > (1 << 30) || Tk > (1 << 30))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   OP_NAME " (cuda_flashattn): sequences (%" G_GINT64_FORMAT ") outside [1, 65535], heads above 65535, "
                   "or more than 2^30 rows", B);
      return FALSE;
    }
  if (accel_buffer_get_dtype (o.cu_q) != ACCEL_DTYPE_I32 || accel_buffer_get_dtype (o.cu_k) != ACCEL_DTYPE_I32)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   OP_NAME " (cuda_flashattn): “cu-seqlens-q” and “cu-seqlens-k” must be i32");
      return FALSE;
    }
  if (o.alibi_slopes != NULL && accel_buffer_get_dtype (o.alibi_slopes) != ACCEL_DTYPE_F32)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   OP_NAME " (cuda_flashattn): “alibi-slopes” dtype %s is not supported (f32)",
                   accel_dtype_get_name (accel_buffer_get_dtype (o.alibi_slopes)));
      return FALSE;
    }
  /* A device served by a host process has no addresses on this side; the
   * host checks them when it picks the kernel there. */
  if (!ACCEL_CUDA_IS_DEVICE (device))
    return TRUE;
  AccelFlashAttnFwdParams p;
  fill_params (&p, &o);
  const char *why = accel_flashattn_fwd_check (&p);
  if (why != NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, OP_NAME " (cuda_flashattn): %s", why);
      return FALSE;
    }
  return TRUE;
}

/* What the completion thread needs to word an error. */
typedef struct {
  gint64 batch, total_q, total_k;
} VarlenJudge;

static gboolean
judge_one (const char *buffer, const char *rows_of, const gint32 *c, gint64 batch, gint64 total, GError **error)
{
  if (c[0] == 0)
    return TRUE;
  gint64 i = (gint64) c[0] - 1;
  if (i == 0)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 OP_NAME ": “%s”[0] is %d, not 0", buffer, c[1]);
  else if (c[1] < c[2])
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 OP_NAME ": “%s”[%" G_GINT64_FORMAT "] is %d, below “%s”[%" G_GINT64_FORMAT "] = %d "
                 "(the offsets must not decrease)", buffer, i, c[1], buffer, i - 1, c[2]);
  else
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 OP_NAME ": “%s”[%" G_GINT64_FORMAT "] is %d, not the %" G_GINT64_FORMAT " rows of “%s”",
                 buffer, batch, c[1], total, rows_of);
  return FALSE;
}

static gboolean
varlen_judge (const gint32 *codes, guint n_codes, gpointer user_data, GError **error)
{
  const VarlenJudge *j = user_data;
  g_return_val_if_fail (n_codes >= ACCEL_FA_VARLEN_N_CODES, FALSE);
  return judge_one ("cu-seqlens-q", "q", codes, j->batch, j->total_q, error)
         && judge_one ("cu-seqlens-k", "k", codes + 3, j->batch, j->total_k, error);
}

static gboolean
varlen_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCudaLane *lane = context;
  AccelFlashAttnFwdParams p;
  VarlenOp o;

  varlen_op_read (op, &o);
  fill_params (&p, &o);

  VarlenJudge *judge = g_new (VarlenJudge, 1);
  judge->batch = p.batch;
  judge->total_q = p.seqlen_q;
  judge->total_k = p.seqlen_k;
  p.codes = accel_cuda_lane_check_after (lane, ACCEL_FA_VARLEN_N_CODES, varlen_judge, judge, g_free, error);
  if (p.codes == NULL)
    return FALSE;

  int status = accel_flashattn_fwd (&p, accel_cuda_lane_get_stream (lane));
  if (status == ACCEL_FA_UNSUPPORTED)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL, OP_NAME " (cuda_flashattn): parameters not supported");
      return FALSE;
    }
  return accel_cuda_check ((cudaError_t) status, OP_NAME, error);
}

static const AccelKernelVTable varlen_kernel = {
  .supports = varlen_supports,
  .run = varlen_run,
};

/**
 * accel_cuda_flashattn_register_varlen:
 * @plugin: the cuda_flashattn plugin, in its plugin_init
 *
 * Registers the `attention-varlen` kernel of the cuda backend.
 */
void
accel_cuda_flashattn_register_varlen (AccelPlugin *plugin)
{
  accel_plugin_register_kernel (plugin, OP_NAME, ACCEL_CUDA_BACKEND_NAME, KERNEL_RANK, &varlen_kernel);
}
