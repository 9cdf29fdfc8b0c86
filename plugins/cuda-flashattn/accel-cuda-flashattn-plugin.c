/* accel-cuda-flashattn-plugin.c: the `cuda_flashattn` plugin: `attention`
 * and `attention-backward` on the `cuda` backend through this project's
 * FlashAttention kernels (accel-flashattn-fwd.cu, accel-flashattn-bwd.cu),
 * with their variants: ALiBi slopes and sinks (both directions) and fp8
 * e4m3 inputs (forward: converted to the output's type in a workspace,
 * then the same kernels). `attention-varlen` is in
 * accel-cuda-flashattn-varlen.c, `attention-kvcache` in
 * accel-cuda-flashattn-kvcache.c.
 *
 * Rank 500, above every other attention kernel. supports() declines what
 * the kernels do not cover (dtypes other than f16, bf16 and f32 and,
 * forward only, fp8 e4m3 inputs with an f16/bf16 output; head dims D or Dv
 * that are not multiples of 8 up to 256; buffers not 16-byte aligned), so
 * the op then falls to the next kernel (the cpu backend's stays available
 * by name) or fails with a message naming the supported set.
 *
 * The variant fields (alibi_slopes, sinks, the fp8 descales) are read from
 * the ops' public structs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "accel-config.h"
#include "accel-cuda.h"
#include "accel-cuda-flashattn-private.h"
#include "accel-flashattn.h"

#define KERNEL_RANK 500

/* The variant properties of docs/attention-variants.md; buffers borrowed
 * from the op. */
typedef struct {
  AccelBuffer *alibi_slopes;
  int sinks;
  double q_descale, k_descale, v_descale;
} Variants;

/* The variant fields of an attention or attention-backward op. */
static void
variants_read (AccelOp *op, Variants *v)
{
  memset (v, 0, sizeof *v);
  v->q_descale = v->k_descale = v->v_descale = 1.0;
  if (ACCEL_IS_ATTENTION (op))
    {
      AccelAttention *self = ACCEL_ATTENTION (op);
      v->alibi_slopes = self->alibi_slopes;
      v->sinks = self->sinks;
      v->q_descale = self->q_descale;
      v->k_descale = self->k_descale;
      v->v_descale = self->v_descale;
    }
  else
    {
      AccelAttentionBackward *self = ACCEL_ATTENTION_BACKWARD (op);
      v->alibi_slopes = self->alibi_slopes;
      v->sinks = self->sinks;
    }
}

/**
 * accel_cuda_flashattn_fill_variants:
 * @p: parameters whose heads_q is set
 * @alibi_slopes: (nullable): the op's slopes, f32 [Hq] or [B, Hq] (the op
 *   checks the shape)
 * @sinks: the op's sinks
 *
 * Sets the ALiBi and sink fields of @p.
 */
void
accel_cuda_flashattn_fill_variants (AccelFlashAttnFwdParams *p, AccelBuffer *alibi_slopes, int sinks)
{
  if (alibi_slopes != NULL)
    {
      p->alibi_slopes = accel_buffer_get_data (alibi_slopes);
      p->alibi_batch_stride = accel_shape_get_rank (accel_buffer_get_shape (alibi_slopes)) == 2 ? p->heads_q : 0;
    }
  p->sinks = sinks;
}

/**
 * accel_cuda_flashattn_alibi_supported:
 * @op_name: the op's name, for the message
 * @alibi_slopes: (nullable): the op's slopes
 * @sinks: the op's sinks
 * @error: return location for a #GError
 *
 * Whether the kernels take these variant parameters: f32 slopes, sinks
 * not below 0.
 *
 * Returns: %TRUE if they do
 */
gboolean
accel_cuda_flashattn_alibi_supported (const char *op_name, AccelBuffer *alibi_slopes, int sinks, GError **error)
{
  if (alibi_slopes != NULL && accel_buffer_get_dtype (alibi_slopes) != ACCEL_DTYPE_F32)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "%s (cuda_flashattn): “alibi-slopes” dtype %s is not supported (f32)", op_name,
                   accel_dtype_get_name (accel_buffer_get_dtype (alibi_slopes)));
      return FALSE;
    }
  if (sinks < 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s (cuda_flashattn): “sinks” is %d, below 0", op_name, sinks);
      return FALSE;
    }
  return TRUE;
}

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

/**
 * accel_cuda_flashattn_dtype:
 * @dtype: f16, bf16 or f32
 *
 * Returns: the kernels' #AccelFlashAttnDType for @dtype
 */
int32_t
accel_cuda_flashattn_dtype (AccelDType dtype)
{
  return dtype == ACCEL_DTYPE_BF16 ? ACCEL_FA_BF16 : dtype == ACCEL_DTYPE_F32 ? ACCEL_FA_F32 : ACCEL_FA_F16;
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
  p->head_dim_v = (int32_t) accel_shape_get_dim (accel_buffer_get_shape (v), 3);
  p->heads_kv = (int32_t) accel_shape_get_dim (sk, 1);
  p->seqlen_k = (int32_t) accel_shape_get_dim (sk, 2);
  /* The kernels' type is the output's: q, k and v are of it too, or fp8. */
  p->dtype = accel_cuda_flashattn_dtype (accel_buffer_get_dtype (out));
  p->causal = causal ? 1 : 0;
  p->window_left = window_left;
  p->window_right = window_right;
  p->scale = (float) scale;
  p->softcap = (float) softcap;
  p->path = ACCEL_FA_PATH_AUTO;
}

/* What the kernels cannot take, checked on the op's shapes alone; @allow_fp8:
 * q, k and v may be fp8 e4m3 when @out is f16 or bf16. */
static gboolean
shapes_supported (const char *op_name, AccelBuffer *q, AccelBuffer *k, AccelBuffer *v, AccelBuffer *out,
                  gboolean allow_fp8, GError **error)
{
  AccelDType dtype = accel_buffer_get_dtype (q), out_dtype = accel_buffer_get_dtype (out);
  const AccelShape *sq = accel_buffer_get_shape (q), *sk = accel_buffer_get_shape (k);
  const AccelShape *sv = accel_buffer_get_shape (v);
  gint64 D = accel_shape_get_dim (sq, 3), Dv = accel_shape_get_dim (sv, 3);

  if (dtype == ACCEL_DTYPE_FP8_E4M3 && (!allow_fp8 || (out_dtype != ACCEL_DTYPE_F16 && out_dtype != ACCEL_DTYPE_BF16)))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "%s (cuda_flashattn): fp8-e4m3 inputs are supported in the forward pass with an f16 or bf16 "
                   "output only (out is %s)", op_name, accel_dtype_get_name (out_dtype));
      return FALSE;
    }
  if (dtype == ACCEL_DTYPE_FP8_E4M3
      && (accel_buffer_get_dtype (k) != ACCEL_DTYPE_FP8_E4M3 || accel_buffer_get_dtype (v) != ACCEL_DTYPE_FP8_E4M3))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "%s (cuda_flashattn): fp8-e4m3 q needs fp8-e4m3 k and v", op_name);
      return FALSE;
    }
  if (dtype != ACCEL_DTYPE_F16 && dtype != ACCEL_DTYPE_BF16 && dtype != ACCEL_DTYPE_F32 && dtype != ACCEL_DTYPE_FP8_E4M3)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "%s (cuda_flashattn): dtype %s is not supported (" ACCEL_FA_DTYPES_TEXT "%s)", op_name,
                   accel_dtype_get_name (dtype), allow_fp8 ? ", fp8-e4m3 inputs" : "");
      return FALSE;
    }
  if (!accel_cuda_flashattn_head_dims_supported (op_name, D, Dv, error))
    return FALSE;
  if (accel_shape_get_dim (sq, 0) > 65535 || accel_shape_get_dim (sq, 1) > 65535
      || accel_shape_get_dim (sq, 2) > G_MAXINT32 / 2 || accel_shape_get_dim (sk, 2) > G_MAXINT32 / 2)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s (cuda_flashattn): batch or heads above 65535, or sequence above 2^30", op_name);
      return FALSE;
    }
  return TRUE;
}

/**
 * accel_cuda_flashattn_head_dims_supported:
 * @op_name: the op's name, for the message
 * @D: the head dim of q and k
 * @Dv: the head dim of v and out
 * @error: return location for a #GError
 *
 * Whether the kernels take these head dims: multiples of 8 from 8 to 256,
 * each; otherwise @error names the supported set.
 *
 * Returns: %TRUE if they do
 */
gboolean
accel_cuda_flashattn_head_dims_supported (const char *op_name, gint64 D, gint64 Dv, GError **error)
{
  const char *which = NULL;
  gint64 bad = 0;

  if (D < 8 || D > 256 || D % 8 != 0)
    which = "head dim", bad = D;
  else if (Dv < 8 || Dv > 256 || Dv % 8 != 0)
    which = "value head dim", bad = Dv;
  if (which == NULL)
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "%s (cuda_flashattn): %s %" G_GINT64_FORMAT " is not supported (" ACCEL_FA_HEAD_DIMS_TEXT ")",
               op_name, which, bad);
  return FALSE;
}

/**
 * accel_cuda_flashattn_report:
 * @op_name: the op's name, for the message
 * @status: what a kernel entry point returned
 * @error: return location for a #GError
 *
 * Turns the entry points' status into a #GError: %ACCEL_ERROR_NO_KERNEL for
 * ACCEL_FA_UNSUPPORTED, else the CUDA error's.
 *
 * Returns: %TRUE for success
 */
gboolean
accel_cuda_flashattn_report (const char *op_name, int status, GError **error)
{
  if (status == ACCEL_FA_UNSUPPORTED)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL, "%s (cuda_flashattn): parameters not supported", op_name);
      return FALSE;
    }
  return accel_cuda_check ((cudaError_t) status, op_name, error);
}

/**
 * accel_cuda_flashattn_device_supported:
 * @op_name: the op's name, for the message
 * @device: the device an op is offered to
 * @error: return location for a #GError
 *
 * Whether @device can run the kernels (compute capability 8.0 or newer);
 * otherwise %ACCEL_ERROR_NO_KERNEL.
 *
 * Returns: %TRUE if it can
 */
gboolean
accel_cuda_flashattn_device_supported (const char *op_name, AccelDevice *device, GError **error)
{
  int major = 0, minor = 0;

  if (!accel_cuda_get_compute_capability (device, &major, &minor) || major < 8)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL,
                   "%s (cuda_flashattn): needs compute capability 8.0 or newer (device has %d.%d)", op_name, major,
                   minor);
      return FALSE;
    }
  return TRUE;
}

/**
 * accel_cuda_flashattn_check:
 * @op_name: the op's name, for the message
 * @why: (nullable): what an accel_flashattn_*_check() entry point returned
 * @error: return location for a #GError
 *
 * Turns the kernels' reason for refusing parameters into
 * %ACCEL_ERROR_INVALID_ARGUMENT.
 *
 * Returns: %TRUE where @why is %NULL (the kernels take the parameters)
 */
gboolean
accel_cuda_flashattn_check (const char *op_name, const char *why, GError **error)
{
  if (why != NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT, "%s (cuda_flashattn): %s", op_name, why);
      return FALSE;
    }
  return TRUE;
}

/* ---- attention ----------------------------------------------------------- */

static void
fill_attention (AccelFlashAttnFwdParams *p, AccelAttention *self, const Variants *v)
{
  fill_fwd (p, self->q, self->k, self->v, self->out, self->lse, self->causal, self->window_left,
            self->window_right, self->scale, self->softcap);
  accel_cuda_flashattn_fill_variants (p, v->alibi_slopes, v->sinks);
  p->q_descale = (float) v->q_descale;
  p->k_descale = (float) v->k_descale;
  p->v_descale = (float) v->v_descale;
}

/* What attention and attention-backward check alike, in this order: the
 * device, the shapes (@out: the output, or dq), and the variants, which
 * this reads into @variants. */
static gboolean
op_supported (AccelOp *op, const char *op_name, AccelDevice *device, AccelBuffer *q, AccelBuffer *k, AccelBuffer *v,
              AccelBuffer *out, gboolean allow_fp8, Variants *variants, GError **error)
{
  if (!accel_cuda_flashattn_device_supported (op_name, device, error))
    return FALSE;
  if (!shapes_supported (op_name, q, k, v, out, allow_fp8, error))
    return FALSE;
  variants_read (op, variants);
  return accel_cuda_flashattn_alibi_supported (op_name, variants->alibi_slopes, variants->sinks, error);
}

static gboolean
attention_is_fp8 (AccelAttention *self)
{
  return accel_buffer_get_dtype (self->q) == ACCEL_DTYPE_FP8_E4M3;
}

static gboolean
attention_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  AccelAttention *self = ACCEL_ATTENTION (op);
  Variants v;

  if (!op_supported (op, "attention", device, self->q, self->k, self->v, self->out, TRUE, &v, error))
    return FALSE;
  if (!attention_is_fp8 (self) && (v.q_descale != 1.0 || v.k_descale != 1.0 || v.v_descale != 1.0))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "attention (cuda_flashattn): the descales must be 1.0 for %s inputs",
                   accel_dtype_get_name (accel_buffer_get_dtype (self->q)));
      return FALSE;
    }
  /* The buffers of a device served by a host process hold no addresses on
   * this side; the host checks alignment when it picks the kernel there. */
  if (!ACCEL_CUDA_IS_DEVICE (device))
    return TRUE;
  AccelFlashAttnFwdParams p;
  fill_attention (&p, self, &v);
  const char *why = attention_is_fp8 (self) ? accel_flashattn_fwd_fp8_check (&p) : accel_flashattn_fwd_check (&p);
  return accel_cuda_flashattn_check ("attention", why, error);
}

static gboolean
attention_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAttention *self = ACCEL_ATTENTION (op);
  AccelCudaLane *lane = context;
  AccelFlashAttnFwdParams p;
  Variants v;

  variants_read (op, &v);
  fill_attention (&p, self, &v);
  if (attention_is_fp8 (self))
    {
      gsize size = accel_flashattn_fwd_fp8_workspace_size (&p);
      gpointer workspace = NULL;
      if (size > 0 && (workspace = accel_cuda_lane_alloc_workspace (lane, size, error)) == NULL)
        return FALSE;
      return accel_cuda_flashattn_report ("attention",
                                          accel_flashattn_fwd_fp8 (&p, workspace, accel_cuda_lane_get_stream (lane)),
                                          error);
    }
  return accel_cuda_flashattn_report ("attention", accel_flashattn_fwd (&p, accel_cuda_lane_get_stream (lane)), error);
}

/* ---- attention-backward -------------------------------------------------- */

static void
fill_bwd (AccelFlashAttnBwdParams *p, AccelAttentionBackward *self, const Variants *v)
{
  memset (p, 0, sizeof *p);
  fill_fwd (&p->fwd, self->q, self->k, self->v, self->out, self->lse, self->causal, self->window_left,
            self->window_right, self->scale, self->softcap);
  accel_cuda_flashattn_fill_variants (&p->fwd, v->alibi_slopes, v->sinks);
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
  Variants v;

  if (!op_supported (op, "attention-backward", device, self->q, self->k, self->v, self->dq, FALSE, &v, error))
    return FALSE;
  if (!ACCEL_CUDA_IS_DEVICE (device))
    return TRUE;   /* checked again by the host process, with addresses */
  AccelFlashAttnBwdParams p;
  fill_bwd (&p, self, &v);
  return accel_cuda_flashattn_check ("attention-backward", accel_flashattn_bwd_check (&p), error);
}

static gboolean
attention_backward_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAttentionBackward *self = ACCEL_ATTENTION_BACKWARD (op);
  AccelCudaLane *lane = context;
  AccelFlashAttnBwdParams p;
  Variants v;

  variants_read (op, &v);
  fill_bwd (&p, self, &v);
  gpointer workspace = accel_cuda_lane_alloc_workspace (lane, accel_flashattn_bwd_workspace_size (&p), error);
  if (workspace == NULL)
    return FALSE;
  return accel_cuda_flashattn_report ("attention-backward",
                                      accel_flashattn_bwd (&p, workspace, accel_cuda_lane_get_stream (lane)), error);
}

/* ---- the plugin ---------------------------------------------------------- */

static const AccelKernelEntry kernels[] = {
  { "attention", { .supports = attention_supports, .run = attention_run } },
  { "attention-backward", { .supports = attention_backward_supports, .run = attention_backward_run } },
  { "attention-kvcache",
    { .supports = accel_cuda_flashattn_kvcache_supports, .run = accel_cuda_flashattn_kvcache_run } },
  { "attention-varlen", { .supports = accel_cuda_flashattn_varlen_supports, .run = accel_cuda_flashattn_varlen_run } },
  { "attention-varlen-backward",
    { .supports = accel_cuda_flashattn_varlen_supports, .run = accel_cuda_flashattn_varlen_run } },
};

ACCEL_PLUGIN_DEFINE_KERNELS (cuda_flashattn, "FlashAttention forward and backward kernels on the cuda backend",
                             ACCEL_CUDA_BACKEND_NAME, KERNEL_RANK, kernels, ACCEL_VERSION, "LGPL-2.1-or-later")
