/* accel-cuda-flashattn-kvcache.c: `attention-kvcache` (paged KV cache:
 * decode and chunked prefill) on the cuda backend through the split-KV
 * kernels of accel-flashattn-kvcache.cu.
 *
 * Rank 500, the plugin's (accel-cuda-flashattn-plugin.c registers it).
 * supports() declines what the kernels do not cover (dtypes other
 * than f16/bf16, head dims other than 64/128/256, Dv != D, buffers not
 * 16-byte aligned). seqlens-k and block-table are read by the kernels on the
 * device, so their values are checked there: the kernels leave codes that
 * accel_cuda_lane_check_after() hands back once the op's work has run, and
 * the op then fails with ACCEL_ERROR_INVALID_ARGUMENT naming the sequence
 * and the block, without a synchronisation on the submit path. The kernels
 * never read a page named by a bad entry.
 *
 * The op is read through its properties, so this file needs nothing of the
 * op type beyond its name and the property names of docs/attention-variants.md.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "accel-config.h"
#include "accel-cuda.h"
#include "accel-cuda-flashattn-private.h"
#include "accel-flashattn.h"

#define OP_NAME "attention-kvcache"

/* The op's properties; buffers borrowed from the op. */
typedef struct {
  AccelBuffer *q, *k_cache, *v_cache, *block_table, *seqlens_k, *out, *lse, *alibi_slopes;
  gboolean causal;
  int window_left, window_right, sinks, num_splits;
  double scale, softcap;
} KvOp;

/* The op's fields: the kernels read the op through its public struct. */
static void
kv_op_read (AccelOp *op, KvOp *k)
{
  AccelAttentionKvcache *self = ACCEL_ATTENTION_KVCACHE (op);

  k->q = self->q;
  k->k_cache = self->k_cache;
  k->v_cache = self->v_cache;
  k->block_table = self->block_table;
  k->seqlens_k = self->seqlens_k;
  k->out = self->out;
  k->lse = self->lse;
  k->alibi_slopes = self->alibi_slopes;
  k->causal = self->causal;
  k->window_left = self->window_left;
  k->window_right = self->window_right;
  k->sinks = self->sinks;
  k->num_splits = self->num_splits;
  k->scale = self->scale;
  k->softcap = self->softcap;
}

static void
fill_params (AccelFlashAttnKvcacheParams *p, const KvOp *k)
{
  const AccelShape *sq = accel_buffer_get_shape (k->q);
  const AccelShape *sk = accel_buffer_get_shape (k->k_cache);
  const AccelShape *sb = accel_buffer_get_shape (k->block_table);

  memset (p, 0, sizeof *p);
  p->q = accel_buffer_get_data (k->q);
  p->k_cache = accel_buffer_get_data (k->k_cache);
  p->v_cache = accel_buffer_get_data (k->v_cache);
  p->block_table = accel_buffer_get_data (k->block_table);
  p->seqlens_k = accel_buffer_get_data (k->seqlens_k);
  p->out = accel_buffer_get_data (k->out);
  p->lse = k->lse ? accel_buffer_get_data (k->lse) : NULL;
  p->alibi_slopes = k->alibi_slopes ? accel_buffer_get_data (k->alibi_slopes) : NULL;
  p->batch = (int32_t) accel_shape_get_dim (sq, 0);
  p->heads_q = (int32_t) accel_shape_get_dim (sq, 1);
  p->seqlen_q = (int32_t) accel_shape_get_dim (sq, 2);
  p->head_dim = (int32_t) accel_shape_get_dim (sq, 3);
  p->num_pages = (int32_t) accel_shape_get_dim (sk, 0);
  p->page_size = (int32_t) accel_shape_get_dim (sk, 1);
  p->heads_kv = (int32_t) accel_shape_get_dim (sk, 2);
  p->max_blocks = (int32_t) accel_shape_get_dim (sb, 1);
  if (k->alibi_slopes && accel_shape_get_rank (accel_buffer_get_shape (k->alibi_slopes)) == 2)
    p->alibi_batch_stride = p->heads_q;
  p->dtype = accel_buffer_get_dtype (k->q) == ACCEL_DTYPE_BF16 ? ACCEL_FA_BF16 : ACCEL_FA_F16;
  p->causal = k->causal ? 1 : 0;
  p->window_left = k->window_left;
  p->window_right = k->window_right;
  p->sinks = k->sinks;
  p->scale = (float) k->scale;
  p->softcap = (float) k->softcap;
  p->num_splits = k->num_splits;
}

gboolean
accel_cuda_flashattn_kvcache_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  KvOp k;

  if (!accel_cuda_flashattn_device_supported (OP_NAME, device, error))
    return FALSE;
  kv_op_read (op, &k);
  AccelDType dtype = accel_buffer_get_dtype (k.q);
  const AccelShape *sq = accel_buffer_get_shape (k.q);
  gint64 D = accel_shape_get_dim (sq, 3), Dv = accel_shape_get_dim (accel_buffer_get_shape (k.v_cache), 3);
  if (dtype != ACCEL_DTYPE_F16 && dtype != ACCEL_DTYPE_BF16)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   OP_NAME " (cuda_flashattn): dtype %s is not supported (f16, bf16)", accel_dtype_get_name (dtype));
      return FALSE;
    }
  if (D != 64 && D != 128 && D != 256)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   OP_NAME " (cuda_flashattn): head dim %" G_GINT64_FORMAT " is not supported (64, 128, 256)", D);
      return FALSE;
    }
  if (Dv != D)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   OP_NAME " (cuda_flashattn): value head dim %" G_GINT64_FORMAT " differs from the key head dim %"
                   G_GINT64_FORMAT, Dv, D);
      return FALSE;
    }
  /* A device served by a host process has no addresses on this side; the
   * host checks them when it picks the kernel there. */
  if (!ACCEL_CUDA_IS_DEVICE (device))
    return TRUE;
  AccelFlashAttnKvcacheParams p;
  fill_params (&p, &k);
  return accel_cuda_flashattn_check (OP_NAME, accel_flashattn_kvcache_check (&p), error);
}

/* What the completion thread needs to word an error. */
typedef struct {
  gint64 pages, page_size, max_blocks;
} KvJudge;

static guint64
code_u64 (const gint32 *codes, guint i)
{
  return (guint64) (guint32) codes[i] | ((guint64) (guint32) codes[i + 1] << 32);
}

static gboolean
kvcache_judge (const gint32 *codes, guint n_codes, gpointer user_data, GError **error)
{
  const KvJudge *j = user_data;
  g_return_val_if_fail (n_codes >= ACCEL_FA_KVCACHE_N_CODES, FALSE);
  guint64 bad_len = code_u64 (codes, 0), bad_block = code_u64 (codes, 2);

  if (bad_len != 0)
    {
      gint64 b = 0x7fffffff - (gint64) (bad_len >> 32);
      gint32 len = (gint32) (guint32) bad_len;
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   OP_NAME ": “seqlens-k” of sequence %" G_GINT64_FORMAT " is %d, outside [0, %" G_GINT64_FORMAT
                   "] (%" G_GINT64_FORMAT " blocks of %" G_GINT64_FORMAT " rows)",
                   b, len, j->max_blocks * j->page_size, j->max_blocks, j->page_size);
      return FALSE;
    }
  if (bad_block != 0)
    {
      gint64 b = 0x7fffffff - (gint64) (bad_block >> 32);
      gint64 n = 0x7fffffff - (gint64) (guint32) bad_block;
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   OP_NAME ": “block-table” entry [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "] (sequence %"
                   G_GINT64_FORMAT ", block %" G_GINT64_FORMAT ") is not a page index in [0, %" G_GINT64_FORMAT ")",
                   b, n, b, n, j->pages);
      return FALSE;
    }
  return TRUE;
}

gboolean
accel_cuda_flashattn_kvcache_run (AccelOp *op, gpointer context, GError **error)
{
  AccelCudaLane *lane = context;
  AccelFlashAttnKvcacheParams p;
  KvOp k;

  kv_op_read (op, &k);
  fill_params (&p, &k);
  if (p.batch == 0)
    return TRUE;

  KvJudge *judge = g_new (KvJudge, 1);
  judge->pages = p.num_pages;
  judge->page_size = p.page_size;
  judge->max_blocks = p.max_blocks;
  p.codes = accel_cuda_lane_check_after (lane, ACCEL_FA_KVCACHE_N_CODES, kvcache_judge, judge, g_free, error);
  if (p.codes == NULL)
    return FALSE;

  /* Fixed here so that the workspace and the launch agree. */
  p.num_splits = accel_flashattn_kvcache_num_splits (&p);
  gsize size = accel_flashattn_kvcache_workspace_size (&p);
  gpointer workspace = NULL;
  if (size > 0 && (workspace = accel_cuda_lane_alloc_workspace (lane, size, error)) == NULL)
    return FALSE;

  int status = accel_flashattn_kvcache (&p, workspace, accel_cuda_lane_get_stream (lane));
  return accel_cuda_flashattn_report (OP_NAME, status, error);
}
