/* accel-cuda-flashattn-plugin.c: the `cuda_flashattn` plugin: `attention`
 * and `attention-backward` on the `cuda` backend through this project's
 * FlashAttention kernels (accel-flashattn-fwd.cu, accel-flashattn-bwd.cu).
 *
 * Rank 500, above every other attention kernel. supports() declines what
 * the kernels do not cover (dtypes other than f16/bf16, head dims other
 * than 64/128/256, Dv != D, buffers not 16-byte aligned), so the op then
 * falls to the next kernel or fails with a message naming the reason.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "accel-config.h"
#include "accel-cuda.h"
#include "accel-flashattn.h"

#define KERNEL_RANK 500

static void
strides_of (AccelBuffer *buffer, int64_t strides[3])
{
  /* The op requires contiguous [B, H, S, D] buffers. */
  const AccelShape *s = accel_buffer_get_shape (buffer);
  int64_t d = accel_shape_get_dim (s, 3), S = accel_shape_get_dim (s, 2), H = accel_shape_get_dim (s, 1);
  strides[2] = d;
  strides[1] = S * d;
  strides[0] = H * S * d;
}

static void
fill_fwd (AccelFlashAttnFwdParams *p, AccelBuffer *q, AccelBuffer *k, AccelBuffer *v, AccelBuffer *out,
          AccelBuffer *lse, gboolean causal, int window_left, int window_right, double scale, double softcap)
{
  const AccelShape *sq = accel_buffer_get_shape (q);
  const AccelShape *sk = accel_buffer_get_shape (k);

  memset (p, 0, sizeof *p);
  p->q = accel_buffer_get_data (q);
  p->k = accel_buffer_get_data (k);
  p->v = accel_buffer_get_data (v);
  p->out = accel_buffer_get_data (out);
  p->lse = lse ? accel_buffer_get_data (lse) : NULL;
  strides_of (q, p->q_strides);
  strides_of (k, p->k_strides);
  strides_of (v, p->v_strides);
  strides_of (out, p->o_strides);
  p->batch = (int32_t) accel_shape_get_dim (sq, 0);
  p->heads_q = (int32_t) accel_shape_get_dim (sq, 1);
  p->seqlen_q = (int32_t) accel_shape_get_dim (sq, 2);
  p->head_dim = (int32_t) accel_shape_get_dim (sq, 3);
  p->heads_kv = (int32_t) accel_shape_get_dim (sk, 1);
  p->seqlen_k = (int32_t) accel_shape_get_dim (sk, 2);
  p->dtype = accel_buffer_get_dtype (q) == ACCEL_DTYPE_BF16 ? ACCEL_FA_BF16 : ACCEL_FA_F16;
  p->causal = causal ? 1 : 0;
  p->window_left = window_left;
  p->window_right = window_right;
  p->scale = (float) scale;
  p->softcap = (float) softcap;
  p->path = ACCEL_FA_PATH_AUTO;
}

/* What the kernels cannot take, checked on the op's shapes alone. */
static gboolean
shapes_supported (const char *op_name, AccelBuffer *q, AccelBuffer *k, AccelBuffer *v, GError **error)
{
  AccelDType dtype = accel_buffer_get_dtype (q);
  const AccelShape *sq = accel_buffer_get_shape (q), *sk = accel_buffer_get_shape (k);
  const AccelShape *sv = accel_buffer_get_shape (v);
  gint64 D = accel_shape_get_dim (sq, 3), Dv = accel_shape_get_dim (sv, 3);

  if (dtype != ACCEL_DTYPE_F16 && dtype != ACCEL_DTYPE_BF16)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "%s (cuda_flashattn): dtype %s is not supported (f16, bf16)", op_name, accel_dtype_get_name (dtype));
      return FALSE;
    }
  if (D != 64 && D != 128 && D != 256)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s (cuda_flashattn): head dim %" G_GINT64_FORMAT " is not supported (64, 128, 256)", op_name, D);
      return FALSE;
    }
  if (Dv != D)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s (cuda_flashattn): value head dim %" G_GINT64_FORMAT " differs from the key head dim %"
                   G_GINT64_FORMAT, op_name, Dv, D);
      return FALSE;
    }
  if (accel_shape_get_dim (sq, 0) > 65535 || accel_shape_get_dim (sq, 1) > 65535
      || accel_shape_get_dim (sq, 2) > G_MAXINT32 / 2 || accel_shape_get_dim (sk, 2) > G_MAXINT32 / 2)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s (cuda_flashattn): batch or heads above 65535, or sequence above 2^30", op_name);
      return FALSE;
    }
  return TRUE;
}

static gboolean
report (const char *op_name, int status, GError **error)
{
  if (status == ACCEL_FA_UNSUPPORTED)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL, "%s (cuda_flashattn): parameters not supported", op_name);
      return FALSE;
    }
  return accel_cuda_check ((cudaError_t) status, op_name, error);
}

/* ---- attention ----------------------------------------------------------- */

static gboolean
attention_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  AccelAttention *self = ACCEL_ATTENTION (op);
  int major = 0, minor = 0;

  if (!accel_cuda_get_compute_capability (device, &major, &minor) || major < 8)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL,
                   "attention (cuda_flashattn): needs compute capability 8.0 or newer (device has %d.%d)", major, minor);
      return FALSE;
    }
  if (!shapes_supported ("attention", self->q, self->k, self->v, error))
    return FALSE;
  /* The buffers of a device served by a host process hold no addresses on
   * this side; the host checks alignment when it picks the kernel there. */
  if (!ACCEL_CUDA_IS_DEVICE (device))
    return TRUE;
  AccelFlashAttnFwdParams p;
  fill_fwd (&p, self->q, self->k, self->v, self->out, self->lse, self->causal, self->window_left,
            self->window_right, self->scale, self->softcap);
  const char *why = accel_flashattn_fwd_check (&p);
  if (why != NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "attention (cuda_flashattn): %s", why);
      return FALSE;
    }
  return TRUE;
}

static gboolean
attention_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAttention *self = ACCEL_ATTENTION (op);
  AccelCudaLane *lane = context;
  AccelFlashAttnFwdParams p;

  fill_fwd (&p, self->q, self->k, self->v, self->out, self->lse, self->causal, self->window_left,
            self->window_right, self->scale, self->softcap);
  return report ("attention", accel_flashattn_fwd (&p, accel_cuda_lane_get_stream (lane)), error);
}

static const AccelKernelVTable attention_kernel = {
  .supports = attention_supports,
  .run = attention_run,
};

/* ---- attention-backward -------------------------------------------------- */

static void
fill_bwd (AccelFlashAttnBwdParams *p, AccelAttentionBackward *self)
{
  memset (p, 0, sizeof *p);
  fill_fwd (&p->fwd, self->q, self->k, self->v, self->out, self->lse, self->causal, self->window_left,
            self->window_right, self->scale, self->softcap);
  p->dout = accel_buffer_get_data (self->dout);
  p->dq = accel_buffer_get_data (self->dq);
  p->dk = accel_buffer_get_data (self->dk);
  p->dv = accel_buffer_get_data (self->dv);
  strides_of (self->dout, p->do_strides);
  strides_of (self->dq, p->dq_strides);
  strides_of (self->dk, p->dk_strides);
  strides_of (self->dv, p->dv_strides);
}

static gboolean
attention_backward_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  AccelAttentionBackward *self = ACCEL_ATTENTION_BACKWARD (op);
  int major = 0, minor = 0;

  if (!accel_cuda_get_compute_capability (device, &major, &minor) || major < 8)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL,
                   "attention-backward (cuda_flashattn): needs compute capability 8.0 or newer (device has %d.%d)",
                   major, minor);
      return FALSE;
    }
  if (!shapes_supported ("attention-backward", self->q, self->k, self->v, error))
    return FALSE;
  if (!ACCEL_CUDA_IS_DEVICE (device))
    return TRUE;   /* checked again by the host process, with addresses */
  AccelFlashAttnBwdParams p;
  fill_bwd (&p, self);
  const char *why = accel_flashattn_bwd_check (&p);
  if (why != NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "attention-backward (cuda_flashattn): %s", why);
      return FALSE;
    }
  return TRUE;
}

static gboolean
attention_backward_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAttentionBackward *self = ACCEL_ATTENTION_BACKWARD (op);
  AccelCudaLane *lane = context;
  AccelFlashAttnBwdParams p;

  fill_bwd (&p, self);
  gpointer workspace = accel_cuda_lane_alloc_workspace (lane, accel_flashattn_bwd_workspace_size (&p), error);
  if (workspace == NULL)
    return FALSE;
  return report ("attention-backward", accel_flashattn_bwd (&p, workspace, accel_cuda_lane_get_stream (lane)), error);
}

static const AccelKernelVTable attention_backward_kernel = {
  .supports = attention_backward_supports,
  .run = attention_backward_run,
};

void accel_cuda_flashattn_register_kvcache (AccelPlugin *plugin);   /* accel-cuda-flashattn-kvcache.c */

static gboolean
plugin_init (AccelPlugin *plugin, GError **error)
{
  accel_plugin_register_kernel (plugin, "attention", ACCEL_CUDA_BACKEND_NAME, KERNEL_RANK, &attention_kernel);
  accel_plugin_register_kernel (plugin, "attention-backward", ACCEL_CUDA_BACKEND_NAME, KERNEL_RANK,
                                &attention_backward_kernel);
  accel_cuda_flashattn_register_kvcache (plugin);
  return TRUE;
}

ACCEL_PLUGIN_DEFINE (cuda_flashattn, "FlashAttention forward and backward kernels on the cuda backend",
                     plugin_init, ACCEL_VERSION, "LGPL-2.1-or-later")
