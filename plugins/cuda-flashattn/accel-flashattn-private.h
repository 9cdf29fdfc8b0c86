/* accel-flashattn-private.h: host-side helpers the kernel files share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <cuda_runtime.h>
#include <math.h>
#include "accel-flashattn.h"

static inline float
accel_fa_scale (const AccelFlashAttnFwdParams *p)
{
  return p->scale > 0.f ? p->scale : 1.f / sqrtf ((float) p->head_dim);
}

static inline bool
accel_fa_strides_ok (const int64_t *s, const void *ptr)
{
  return ((uintptr_t) ptr % 16) == 0 && s[0] % 8 == 0 && s[1] % 8 == 0 && s[2] % 8 == 0;
}

static inline const char *
accel_fa_check_common (const AccelFlashAttnFwdParams *p)
{
  if (p->dtype != ACCEL_FA_F16 && p->dtype != ACCEL_FA_BF16)
    return "dtype is not f16 or bf16";
#ifdef ACCEL_FA_ONLY_BF16
  if (p->dtype != ACCEL_FA_BF16)
    return "this build has bf16 kernels only";
#endif
  if (p->head_dim != 64 && p->head_dim != 128 && p->head_dim != 256)
    return "head dim is not 64, 128 or 256";
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
  if (!accel_fa_strides_ok (p->q_strides, p->q) || !accel_fa_strides_ok (p->k_strides, p->k)
      || !accel_fa_strides_ok (p->v_strides, p->v) || !accel_fa_strides_ok (p->o_strides, p->out))
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
 * window, varlen); the plain case keeps kernels that pay for none of it. */
static inline bool
accel_fa_is_general (const AccelFlashAttnFwdParams *p)
{
  return p->alibi_slopes != nullptr || (p->sinks > 0 && p->window_left >= 0) || p->cu_seqlens_q != nullptr;
}

#ifdef ACCEL_FA_HAVE_SM90
int accel_fa_fwd_sm90 (const AccelFlashAttnFwdParams *p, float scale, cudaStream_t stream);
#endif
