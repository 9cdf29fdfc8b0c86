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

#ifdef __cplusplus
}
#endif
