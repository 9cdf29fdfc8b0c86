/* accel-flashattn.h: the C entry points of the FlashAttention kernels.
 *
 * Plain C with no GLib, so that the plugin, the standalone harness and the
 * ctypes benchmark (bench/attention_vs_torch.py) share one interface. Every
 * function enqueues on @stream and returns a cudaError_t as an int;
 * ACCEL_FA_UNSUPPORTED means the parameters are outside what the kernels
 * cover (accel_flashattn_*_check() says why).
 *
 * Layout: q [B, Hq, Sq, D], k [B, Hkv, Sk, D], v [B, Hkv, Sk, D],
 * out [B, Hq, Sq, D], each with its own batch, head and row strides in
 * elements (the last dimension contiguous, rows 16-byte aligned); lse is
 * [B, Hq, Sq] f32, contiguous. The mask is aligned to the bottom right as in
 * core/ops/accel-attention.h.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACCEL_FA_UNSUPPORTED (-1)

typedef enum {
  ACCEL_FA_F16 = 0,
  ACCEL_FA_BF16 = 1,
} AccelFlashAttnDType;

/* Which kernel family runs the forward pass. */
typedef enum {
  ACCEL_FA_PATH_AUTO = 0,   /* the fastest one the device has */
  ACCEL_FA_PATH_SM80 = 1,   /* mma.sync + cp.async (sm_80 and up) */
  ACCEL_FA_PATH_SM90 = 2,   /* wgmma (sm_90a) */
} AccelFlashAttnPath;

typedef struct {
  const void *q, *k, *v;
  void *out;
  float *lse;                   /* nullable */
  int64_t q_strides[3];         /* batch, head, row; in elements */
  int64_t k_strides[3];
  int64_t v_strides[3];
  int64_t o_strides[3];
  int32_t batch, heads_q, heads_kv, seqlen_q, seqlen_k, head_dim;
  int32_t dtype;                /* AccelFlashAttnDType */
  int32_t causal;
  int32_t window_left, window_right;   /* -1: unbounded */
  float scale;                  /* 0: 1/sqrt(head_dim) */
  float softcap;                /* 0: off */
  int32_t path;                 /* AccelFlashAttnPath */
} AccelFlashAttnFwdParams;

typedef struct {
  AccelFlashAttnFwdParams fwd;  /* q, k, v, out (the forward result), lse (required) */
  const void *dout;
  void *dq, *dk, *dv;
  int64_t do_strides[3];
  int64_t dq_strides[3];
  int64_t dk_strides[3];
  int64_t dv_strides[3];
} AccelFlashAttnBwdParams;

/* NULL if the kernels cover @p, else a static string saying why not. */
const char *accel_flashattn_fwd_check (const AccelFlashAttnFwdParams *p);
const char *accel_flashattn_bwd_check (const AccelFlashAttnBwdParams *p);

int accel_flashattn_fwd (const AccelFlashAttnFwdParams *p, void *stream);

/* Device scratch the backward pass needs, in bytes (256-byte aligned). */
size_t accel_flashattn_bwd_workspace_size (const AccelFlashAttnBwdParams *p);
int accel_flashattn_bwd (const AccelFlashAttnBwdParams *p, void *workspace, void *stream);

/* ---- paged KV cache (accel-flashattn-kvcache.cu) ------------------------
 *
 * The `attention-kvcache` op: q [B, Hq, Sq, D], k_cache and v_cache
 * [P, page, Hkv, D], block_table i32 [B, max_blocks], seqlens_k i32 [B],
 * out [B, Hq, Sq, D], lse f32 [B, Hq, Sq] (nullable); all contiguous.
 * Sequence b has L = seqlens_k[b] keys, row r in page
 * block_table[b, r / page] at row r % page; query i sits at position
 * L - Sq + i (bottom-right aligned). seqlens_k and block_table live in
 * device memory and are checked there: a bad seqlens_k[b] is taken as 0, a
 * block-table entry outside [0, P) is never read (its keys are zeros), and
 * both are reported through @codes (see ACCEL_FA_KVCACHE_N_CODES). */

/* The words the kernels write when @codes is set (zeroed by the caller):
 * codes[0..1] (little-endian u64): 0, or ((0x7fffffff - b) << 32) | (uint32) L
 *   for the first sequence b whose seqlens_k value L is outside
 *   [0, max_blocks * page];
 * codes[2..3]: 0, or ((0x7fffffff - b) << 32) | (0x7fffffff - n) for the first
 *   (b, n), in that order, whose block-table entry is outside [0, P) with
 *   n < ceil (L / page).
 * @codes must be 8-byte aligned. */
#define ACCEL_FA_KVCACHE_N_CODES 4

typedef struct {
  const void *q;
  const void *k_cache, *v_cache;
  const int32_t *block_table;
  const int32_t *seqlens_k;
  void *out;
  float *lse;                   /* nullable */
  const float *alibi_slopes;    /* nullable: [Hq] or [B, Hq] */
  int32_t alibi_batch_stride;   /* 0 for [Hq], Hq for [B, Hq] */
  int32_t batch, heads_q, heads_kv, seqlen_q, head_dim;
  int32_t num_pages, page_size, max_blocks;
  int32_t dtype;                /* AccelFlashAttnDType */
  int32_t causal;
  int32_t window_left, window_right;   /* -1: unbounded */
  int32_t sinks;                /* keys below this are exempt from window_left */
  float scale;                  /* 0: 1/sqrt(head_dim) */
  float softcap;                /* 0: off */
  int32_t num_splits;           /* 0: accel_flashattn_kvcache_num_splits() chooses */
  int32_t *codes;               /* nullable: ACCEL_FA_KVCACHE_N_CODES device words */
} AccelFlashAttnKvcacheParams;

const char *accel_flashattn_kvcache_check (const AccelFlashAttnKvcacheParams *p);
/* How many splits of the keys a run of @p uses on the current device:
 * p->num_splits if set (clamped), else a choice that fills the GPU. Set
 * p->num_splits to it before the two calls below so that they agree. */
int accel_flashattn_kvcache_num_splits (const AccelFlashAttnKvcacheParams *p);
/* Device scratch for the partial results of the splits, in bytes (0 with one split). */
size_t accel_flashattn_kvcache_workspace_size (const AccelFlashAttnKvcacheParams *p);
int accel_flashattn_kvcache (const AccelFlashAttnKvcacheParams *p, void *workspace, void *stream);

#ifdef __cplusplus
}
#endif
