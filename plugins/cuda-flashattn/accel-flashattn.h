/* accel-flashattn.h: the C entry points of the FlashAttention kernels.
 *
 * Plain C with no GLib, so that the plugin, the standalone harness and the
 * ctypes benchmark (bench/attention_vs_torch.py) share one interface. Every
 * function enqueues on @stream and returns a cudaError_t as an int;
 * ACCEL_FA_UNSUPPORTED means the parameters are outside what the kernels
 * cover (accel_flashattn_*_check() says why).
 *
 * Layout: q [B, Hq, Sq, D], k [B, Hkv, Sk, D], v [B, Hkv, Sk, Dv],
 * out [B, Hq, Sq, Dv], each with its own batch, head and row strides in
 * elements (the last dimension contiguous, rows 16-byte aligned); lse is
 * [B, Hq, Sq] f32, contiguous. The mask is aligned to the bottom right as in
 * core/ops/accel-attention.h. D and Dv are multiples of 8 up to 256
 * (ACCEL_FA_HEAD_DIMS_TEXT); 64, 128 and 256 with D = Dv have
 * specialised kernels, every other pair runs in the general instances.
 * Types f16 and bf16 (tensor cores), f32 (CUDA cores, f32 arithmetic).
 *
 * Variants (docs/attention-variants.md), all off when their fields are zero:
 * ALiBi slopes and attention sinks (forward and backward); packed ragged
 * sequences (cu_seqlens_q set: attention-varlen and its backward); fp8 e4m3
 * inputs (accel_flashattn_fwd_fp8, forward only).
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
  ACCEL_FA_F32 = 2,
} AccelFlashAttnDType;

/* What the kernels cover, worded for error messages. */
#define ACCEL_FA_HEAD_DIMS_TEXT "multiples of 8 from 8 to 256 (q/k and v each)"
#define ACCEL_FA_DTYPES_TEXT "f16, bf16, f32"


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

  /* ALiBi: logit (i, j) += -slope * |i + Sk - Sq - j| after the scale and
   * the soft cap, slope = alibi_slopes[b * alibi_batch_stride + h]. */
  const float *alibi_slopes;    /* nullable: f32 [Hq] or [B, Hq], device memory */
  int32_t alibi_batch_stride;   /* 0 for [Hq], heads_q for [B, Hq] */
  /* Keys j < sinks are exempt from window_left (causal and window_right
   * still apply); nothing changes without a left window. */
  int32_t sinks;

  /* attention-varlen when cu_seqlens_q is set: q [Tq, Hq, D],
   * k and v [Tk, Hkv, D], out [Tq, Hq, D], lse [Hq, Tq]; batch = B (the
   * number of sequences), seqlen_q = Tq and seqlen_k = Tk (the totals); the
   * batch strides are unused, the head and row strides as for the padded
   * layout (packed: D and H * D). cu_seqlens_q and cu_seqlens_k are i32
   * [B + 1] in device memory: sequence b owns query rows
   * cu_seqlens_q[b] .. cu_seqlens_q[b+1]-1 and likewise keys. Their values
   * are checked on the device (see ACCEL_FA_VARLEN_N_CODES); a sequence
   * whose bounds are not 0 <= start <= end <= total is taken as empty, so
   * nothing outside the buffers is touched whatever they hold. */
  const int32_t *cu_seqlens_q, *cu_seqlens_k;
  int32_t *codes;               /* nullable: ACCEL_FA_VARLEN_N_CODES device words, zeroed by the caller */

  /* accel_flashattn_fwd_fp8() only: per-tensor descales of the e4m3
   * inputs (0 means 1). */
  float q_descale, k_descale, v_descale;

  /* The head dim of v and out (and dout, dv); 0: head_dim. */
  int32_t head_dim_v;
} AccelFlashAttnFwdParams;

/* The words the varlen forward writes to @codes (zeroed by the caller):
 * codes[0] = 0, or 1 + the first index i of cu_seqlens_q that breaks
 *   cu[0] == 0, cu[i-1] <= cu[i], cu[B] == Tq; codes[1] = cu[i],
 *   codes[2] = cu[i-1] (0 for i = 0);
 * codes[3..5]: the same for cu_seqlens_k against Tk. */
#define ACCEL_FA_VARLEN_N_CODES 6

/* The backward pass: dq like q, dk like k, dv like v, dout like out. With
 * cu_seqlens_q set (attention-varlen's backward) the lse is [Hq, Tq] and
 * the gradients are packed like their inputs; the cu_seqlens values are
 * checked as in the forward pass (codes). */
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

/* fp8 forward: q, k, v are fp8 e4m3 (strides in elements, that is bytes;
 * 16-byte aligned rows), out is p->dtype (f16 or bf16). Converts q, k and
 * v * v_descale to p->dtype in @workspace (contiguous [B, H, S, D]), folds
 * q_descale * k_descale into the scale and runs accel_flashattn_fwd() on the
 * copies. Not with cu_seqlens_q. */
const char *accel_flashattn_fwd_fp8_check (const AccelFlashAttnFwdParams *p);
size_t accel_flashattn_fwd_fp8_workspace_size (const AccelFlashAttnFwdParams *p);
int accel_flashattn_fwd_fp8 (const AccelFlashAttnFwdParams *p, void *workspace, void *stream);

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
