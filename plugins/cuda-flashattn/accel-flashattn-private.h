/* accel-flashattn-private.h: host-side helpers the kernel files share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include "accel-flashattn.h"
#include "accel-cuda-smem.cuh"   /* accel_cuda_smem_once () */

static inline float
accel_fa_scale (const AccelFlashAttnFwdParams *p)
{
  return p->scale > 0.f ? p->scale : 1.f / sqrtf ((float) p->head_dim);
}

/* The head dim of v, out, dout and dv. */
static inline int
accel_fa_dv (const AccelFlashAttnFwdParams *p)
{
  return p->head_dim_v > 0 ? p->head_dim_v : p->head_dim;
}

static inline int
accel_fa_elem_size (const AccelFlashAttnFwdParams *p)
{
  return p->dtype == ACCEL_FA_F32 ? 4 : 2;
}

/* The kernel instance's head dim (64, 128 or 256): the smallest that holds
 * both D and Dv; the general instances run any pair below it. */
static inline int
accel_fa_dim_class (const AccelFlashAttnFwdParams *p)
{
  const int m = p->head_dim > accel_fa_dv (p) ? p->head_dim : accel_fa_dv (p);
  return m <= 64 ? 64 : m <= 128 ? 128 : 256;
}

static inline bool
accel_fa_head_dim_ok (int d)
{
  return d >= 8 && d <= 256 && d % 8 == 0;
}

/* 16-byte aligned base and strides (@esize bytes per element). */
static inline bool
accel_fa_strides_ok (const int64_t *s, const void *ptr, int esize)
{
  const int64_t per = 16 / esize;
  return ((uintptr_t) ptr % 16) == 0 && s[0] % per == 0 && s[1] % per == 0 && s[2] % per == 0;
}

static inline const char *
accel_fa_check_common (const AccelFlashAttnFwdParams *p)
{
  if (p->dtype != ACCEL_FA_F16 && p->dtype != ACCEL_FA_BF16 && p->dtype != ACCEL_FA_F32)
    return "dtype is not one of " ACCEL_FA_DTYPES_TEXT;
#ifdef ACCEL_FA_ONLY_BF16
  if (p->dtype == ACCEL_FA_F16)
    return "this build has no f16 kernels";
#endif
  if (!accel_fa_head_dim_ok (p->head_dim) || !accel_fa_head_dim_ok (accel_fa_dv (p)) || p->head_dim_v < 0)
    return "head dims must be " ACCEL_FA_HEAD_DIMS_TEXT;
  if (p->batch < 0 || p->heads_q < 1 || p->heads_kv < 1 || p->seqlen_q < 0 || p->seqlen_k < 0)
    return "negative or zero sizes";
  if (p->heads_q % p->heads_kv != 0)
    return "query heads are not a multiple of key/value heads";
  if (p->batch > 65535 || p->heads_q > 65535)
    return "batch or head count above 65535";
  if (p->window_left < -1 || p->window_right < -1)
    return "window extents below -1";
  if (!(p->softcap >= 0.f) || !(p->scale >= 0.f))
    return "negative scale or softcap";
  const int es = accel_fa_elem_size (p);
  if (!accel_fa_strides_ok (p->q_strides, p->q, es) || !accel_fa_strides_ok (p->k_strides, p->k, es)
      || !accel_fa_strides_ok (p->v_strides, p->v, es) || !accel_fa_strides_ok (p->o_strides, p->out, es))
    return "a buffer or stride is not 16-byte aligned";
  if (p->sinks < 0)
    return "negative sinks";
  if (p->alibi_slopes && (p->alibi_batch_stride < 0 || ((uintptr_t) p->alibi_slopes % 4) != 0))
    return "bad alibi slopes (negative batch stride or not 4-byte aligned)";
  if (p->cu_seqlens_q || p->cu_seqlens_k)
    {
      if (!p->cu_seqlens_q || !p->cu_seqlens_k)
        return "varlen needs both cu_seqlens_q and cu_seqlens_k";
      if (p->batch < 1)
        return "varlen needs at least one sequence";
      /* Keeps the block counts of accel_fa::varlen_locate() in 32 bits. */
      if (p->seqlen_q > (1 << 30) || p->seqlen_k > (1 << 30))
        return "varlen totals above 2^30 rows";
    }
  return nullptr;
}

/* Whether @p needs the kernels' general variant (ALiBi, sinks under a left
 * window, varlen, head dims other than the instance's); the plain case
 * keeps kernels that pay for none of it. */
static inline bool
accel_fa_has_variants (const AccelFlashAttnFwdParams *p)
{
  return p->alibi_slopes != nullptr || (p->sinks > 0 && p->window_left >= 0) || p->cu_seqlens_q != nullptr;
}

static inline bool
accel_fa_is_general (const AccelFlashAttnFwdParams *p)
{
  const int dc = accel_fa_dim_class (p);
  return accel_fa_has_variants (p) || p->head_dim != dc || accel_fa_dv (p) != dc;
}

/* The backward pass's device scratch (accel-flashattn-bwd.cu): per query
 * row (padded to 64, see bwd_work_layout) the lse in log2 units (+inf for
 * rows that see no key), Dsum = rowsum (dO * O), and the f32 dQ
 * accumulator of the instance's D columns. */
struct AccelFaBwdWork {
  float *dq_accum;   /* [B, Hq, Sq_pad, D] */
  float *lse2;       /* [B, Hq, Sq_pad] */
  float *dsum;       /* [B, Hq, Sq_pad] */
  int sq_pad;
};

/* The workspace rows are padded to this many. */
#define ACCEL_FA_BWD_ROWS 64

/* The workspace: rows of the padded layout [B, Hq, Sq_pad], or for varlen
 * [Hq, Tq_pad] with a block of slack after the last packed row (a query
 * block of the last sequence may run past it). dq_accum rows hold the
 * instance's D floats. */
static inline AccelFaBwdWork
accel_fa_bwd_work_layout (const AccelFlashAttnBwdParams *p, void *base, size_t *total)
{
  AccelFaBwdWork w;
  const AccelFlashAttnFwdParams *f = &p->fwd;
  const bool varlen = f->cu_seqlens_q != nullptr;
  const int R = ACCEL_FA_BWD_ROWS;
  w.sq_pad = (f->seqlen_q + R - 1) / R * R + (varlen ? R : 0);
  const size_t rows = (size_t) (varlen ? 1 : f->batch) * f->heads_q * w.sq_pad;
  const size_t a = (rows * accel_fa_dim_class (f) * sizeof (float) + 255) & ~(size_t) 255;
  const size_t l = (rows * sizeof (float) + 255) & ~(size_t) 255;
  char *c = static_cast<char *> (base);
  w.dq_accum = reinterpret_cast<float *> (c);
  w.lse2 = reinterpret_cast<float *> (c + a);
  w.dsum = reinterpret_cast<float *> (c + a + l);
  if (total)
    *total = a + 2 * l;
  return w;
}

#ifdef ACCEL_FA_HAVE_SM90
int accel_fa_fwd_sm90 (const AccelFlashAttnFwdParams *p, float scale, cudaStream_t stream);
bool accel_fa_device_is_sm90 ();
/* The wgmma main kernel of the backward pass (accel-flashattn-bwd-sm90.cu),
 * or ACCEL_FA_UNSUPPORTED for what it does not cover; its dq_accum blocks
 * are in the order of dq_perm_offset(). */
int accel_fa_bwd_sm90 (const AccelFlashAttnBwdParams *p, const AccelFaBwdWork *w, float scale, cudaStream_t stream);
#endif

/* The f32 kernels (accel-flashattn-f32.cu, CUDA cores). */
int accel_fa_fwd_f32 (const AccelFlashAttnFwdParams *p, float scale, cudaStream_t stream);
int accel_fa_bwd_f32 (const AccelFlashAttnBwdParams *p, void *workspace, float scale, cudaStream_t stream);

/* The harness builds' variant switches: the integer in environment
 * variable @name (0 where unset), read once into *@cache (-1 before). */
static inline int
accel_fa_env_variant (const char *name, int *cache)
{
  if (*cache < 0)
    {
      const char *e = getenv (name);
      *cache = e ? atoi (e) : 0;
    }
  return *cache;
}
