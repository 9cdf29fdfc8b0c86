/* accel-cuda-flashattn-varlen.c: `attention-varlen` (packed ragged
 * sequences) and its backward, `attention-varlen-backward`, on the cuda
 * backend through the general instances of the kernels
 * (accel-flashattn-fwd.cu and accel-flashattn-fwd-sm90.cu forward,
 * accel-flashattn-bwd.cu backward, accel-flashattn-f32.cu for f32).
 *
 * Rank 500, the plugin's (accel-cuda-flashattn-plugin.c registers both).
 * supports() declines what the kernels do not cover (dtypes other
 * than f16, bf16 and f32; head dims that are not multiples of 8 up to 256;
 * buffers not 16-byte aligned), naming the supported set. The kernels read
 * cu-seqlens-q and cu-seqlens-k on the device, so nothing on the submit
 * path synchronises: the grid covers an upper bound of the query blocks
 * (forward) or key blocks (backward), each block finds its sequence by
 * walking the cu-seqlens, and one block checks both arrays (cu[0] == 0,
 * non-decreasing, cu[B] == T) and leaves codes that
 * accel_cuda_lane_check_after() hands back once the op's work has run; the
 * op then fails with ACCEL_ERROR_INVALID_ARGUMENT naming the buffer and the
 * first bad index. Whatever the arrays hold, the kernels stay inside the
 * buffers (a sequence with impossible bounds is taken as empty).
 *
 * The ops are read through their public structs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "accel-config.h"
#include "accel-cuda.h"
#include "accel-cuda-flashattn-private.h"
#include "accel-flashattn.h"

#define FWD_NAME "attention-varlen"
#define BWD_NAME "attention-varlen-backward"

/* The fields of either op; buffers borrowed from the op. */
typedef struct {
  const char *name;
  AccelBuffer *q, *k, *v, *out, *lse, *cu_q, *cu_k, *alibi_slopes;
  AccelBuffer *dout, *dq, *dk, *dv;   /* the backward's; NULL for the forward */
  gboolean causal;
  int window_left, window_right, sinks;
  double scale, softcap;
} VarlenOp;

/* The mask fields, laid out alike in both ops from `causal` on. */
#define VARLEN_READ_MASK(o, self)            \
  G_STMT_START                               \
  {                                          \
    (o)->cu_q = (self)->cu_seqlens_q;        \
    (o)->cu_k = (self)->cu_seqlens_k;        \
    (o)->alibi_slopes = (self)->alibi_slopes; \
    (o)->causal = (self)->causal;            \
    (o)->window_left = (self)->window_left;  \
    (o)->window_right = (self)->window_right; \
    (o)->sinks = (self)->sinks;              \
    (o)->scale = (self)->scale;              \
    (o)->softcap = (self)->softcap;          \
  }                                          \
  G_STMT_END

static void
varlen_op_read (AccelOp *op, VarlenOp *o)
{
  memset (o, 0, sizeof *o);
  if (ACCEL_IS_ATTENTION_VARLEN (op))
    {
      AccelAttentionVarlen *self = ACCEL_ATTENTION_VARLEN (op);
      o->name = FWD_NAME;
      o->q = self->q, o->k = self->k, o->v = self->v, o->out = self->out, o->lse = self->lse;
      VARLEN_READ_MASK (o, self);
      return;
    }
  AccelAttentionVarlenBackward *self = ACCEL_ATTENTION_VARLEN_BACKWARD (op);
  o->name = BWD_NAME;
  o->q = self->q, o->k = self->k, o->v = self->v, o->out = self->out, o->lse = self->lse;
  o->dout = self->dout, o->dq = self->dq, o->dk = self->dk, o->dv = self->dv;
  VARLEN_READ_MASK (o, self);
}

/* q [Tq, Hq, D], k [Tk, Hkv, D], v [Tk, Hkv, Dv], out [Tq, Hq, Dv], lse
 * [Hq, Tq], the gradients as what they are of; all contiguous (the ops'
 * rule). */
static void
fill_params (AccelFlashAttnBwdParams *bp, const VarlenOp *o)
{
  AccelFlashAttnFwdParams *p = &bp->fwd;
  const AccelShape *sq = accel_buffer_get_shape (o->q);
  const AccelShape *sk = accel_buffer_get_shape (o->k);
  const AccelShape *sc = accel_buffer_get_shape (o->cu_q);
  gint64 D = accel_shape_get_dim (sq, 2), Hq = accel_shape_get_dim (sq, 1), Hkv = accel_shape_get_dim (sk, 1);
  gint64 Dv = accel_shape_get_dim (accel_buffer_get_shape (o->v), 2);

  memset (bp, 0, sizeof *bp);
  p->q = accel_buffer_get_data (o->q);
  p->k = accel_buffer_get_data (o->k);
  p->v = accel_buffer_get_data (o->v);
  p->out = accel_buffer_get_data (o->out);
  p->lse = o->lse ? accel_buffer_get_data (o->lse) : NULL;
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
  p->head_dim_v = (int32_t) Dv;
  p->dtype = accel_cuda_flashattn_dtype (accel_buffer_get_dtype (o->q));
  p->causal = o->causal ? 1 : 0;
  p->window_left = o->window_left;
  p->window_right = o->window_right;
  p->scale = (float) o->scale;
  p->softcap = (float) o->softcap;
  p->path = ACCEL_FA_PATH_AUTO;
  accel_cuda_flashattn_fill_variants (p, o->alibi_slopes, o->sinks);
  p->cu_seqlens_q = accel_buffer_get_data (o->cu_q);
  p->cu_seqlens_k = accel_buffer_get_data (o->cu_k);
  if (o->dout != NULL)
    {
      bp->dout = accel_buffer_get_data (o->dout);
      bp->dq = accel_buffer_get_data (o->dq);
      bp->dk = accel_buffer_get_data (o->dk);
      bp->dv = accel_buffer_get_data (o->dv);
      memcpy (bp->do_strides, p->o_strides, sizeof p->o_strides);
      memcpy (bp->dq_strides, p->q_strides, sizeof p->q_strides);
      memcpy (bp->dk_strides, p->k_strides, sizeof p->k_strides);
      memcpy (bp->dv_strides, p->v_strides, sizeof p->v_strides);
    }
}

gboolean
accel_cuda_flashattn_varlen_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  VarlenOp o;

  varlen_op_read (op, &o);
  if (!accel_cuda_flashattn_device_supported (o.name, device, error))
    return FALSE;
  AccelDType dtype = accel_buffer_get_dtype (o.q);
  const AccelShape *sq = accel_buffer_get_shape (o.q);
  gint64 D = accel_shape_get_dim (sq, 2), Dv = accel_shape_get_dim (accel_buffer_get_shape (o.v), 2);
  gint64 B = accel_shape_get_dim (accel_buffer_get_shape (o.cu_q), 0) - 1;
  gint64 Tq = accel_shape_get_dim (sq, 0), Tk = accel_shape_get_dim (accel_buffer_get_shape (o.k), 0);
  if (dtype != ACCEL_DTYPE_F16 && dtype != ACCEL_DTYPE_BF16 && dtype != ACCEL_DTYPE_F32)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "%s (cuda_flashattn): dtype %s is not supported (" ACCEL_FA_DTYPES_TEXT ")", o.name,
                   accel_dtype_get_name (dtype));
      return FALSE;
    }
  if (!accel_cuda_flashattn_head_dims_supported (o.name, D, Dv, error))
    return FALSE;
  if (B < 1 || B > 65535 || accel_shape_get_dim (sq, 1) > 65535 || Tq > (1 << 30) || Tk > (1 << 30))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s (cuda_flashattn): sequences (%" G_GINT64_FORMAT ") outside [1, 65535], heads above 65535, "
                   "or more than 2^30 rows", o.name, B);
      return FALSE;
    }
  if (!accel_cuda_flashattn_alibi_supported (o.name, o.alibi_slopes, o.sinks, error))
    return FALSE;
  /* A device served by a host process has no addresses on this side; the
   * host checks them when it picks the kernel there. */
  if (!ACCEL_CUDA_IS_DEVICE (device))
    return TRUE;
  AccelFlashAttnBwdParams p;
  fill_params (&p, &o);
  const char *why = o.dout ? accel_flashattn_bwd_check (&p) : accel_flashattn_fwd_check (&p.fwd);
  return accel_cuda_flashattn_check (o.name, why, error);
}

/* What the completion thread needs to word an error. */
typedef struct {
  const char *name;   /* static */
  gint64 batch, total_q, total_k;
} VarlenJudge;

static gboolean
judge_one (const char *op_name, const char *buffer, const char *rows_of, const gint32 *c, gint64 batch, gint64 total,
           GError **error)
{
  if (c[0] == 0)
    return TRUE;
  gint64 i = (gint64) c[0] - 1;
  if (i == 0)
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "%s: “%s”[0] is %d, not 0", op_name, buffer, c[1]);
  else if (c[1] < c[2])
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 "%s: “%s”[%" G_GINT64_FORMAT "] is %d, below “%s”[%" G_GINT64_FORMAT "] = %d "
                 "(the offsets must not decrease)", op_name, buffer, i, c[1], buffer, i - 1, c[2]);
  else
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                 "%s: “%s”[%" G_GINT64_FORMAT "] is %d, not the %" G_GINT64_FORMAT " rows of “%s”",
                 op_name, buffer, batch, c[1], total, rows_of);
  return FALSE;
}

static gboolean
varlen_judge (const gint32 *codes, guint n_codes, gpointer user_data, GError **error)
{
  const VarlenJudge *j = user_data;
  g_return_val_if_fail (n_codes >= ACCEL_FA_VARLEN_N_CODES, FALSE);
  return judge_one (j->name, "cu-seqlens-q", "q", codes, j->batch, j->total_q, error)
         && judge_one (j->name, "cu-seqlens-k", "k", codes + 3, j->batch, j->total_k, error);
}

gboolean
accel_cuda_flashattn_varlen_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCudaLane *lane = context;
  AccelFlashAttnBwdParams p;
  VarlenOp o;

  varlen_op_read (op, &o);
  fill_params (&p, &o);

  VarlenJudge *judge = g_new (VarlenJudge, 1);
  judge->name = o.name;
  judge->batch = p.fwd.batch;
  judge->total_q = p.fwd.seqlen_q;
  judge->total_k = p.fwd.seqlen_k;
  p.fwd.codes = accel_cuda_lane_check_after (lane, ACCEL_FA_VARLEN_N_CODES, varlen_judge, judge, g_free, error);
  if (p.fwd.codes == NULL)
    return FALSE;

  cudaStream_t stream = accel_cuda_lane_get_stream (lane);
  int status;
  if (o.dout != NULL)
    {
      gpointer workspace = accel_cuda_lane_alloc_workspace (lane, accel_flashattn_bwd_workspace_size (&p), error);
      if (workspace == NULL)
        return FALSE;
      status = accel_flashattn_bwd (&p, workspace, stream);
    }
  else
    status = accel_flashattn_fwd (&p.fwd, stream);
  return accel_cuda_flashattn_report (o.name, status, error);
}
