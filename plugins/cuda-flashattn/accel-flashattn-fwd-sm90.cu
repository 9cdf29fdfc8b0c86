/* accel-flashattn-fwd-sm90.cu: the forward pass on Hopper (sm_90a) with
 * warpgroup MMA, for the instances 64, 128 and 256 (every head dim up to
 * 256 runs in one of them).
 *
 * A block of two warpgroups takes 128 query rows (64 each) of one (batch,
 * head), against key blocks of 128 (64 at D = 256). S = Q K^T is one
 * wgmma chain per key block with Q and K read from shared memory; O += P V
 * takes P from registers (the S accumulators, rounded, are already the
 * A-operand fragment) and V from shared memory read transposed (MN-major).
 * Q, K and V live in shared memory in the 128-byte-swizzled layout the
 * tensor cores read: per 64-column half, rows of 128 bytes whose 16-byte
 * chunks are XORed with (row % 8). The online softmax, the masks and the
 * soft cap are those of the sm_80 kernel (Scores), and so are the GENERAL
 * instances (ALiBi, sinks, varlen, head dims below the instance's: the
 * k16 steps of Q K^T past Dqk are skipped, P V runs at the instance's
 * width over V's zero-filled columns and stores Dv of them) beside the
 * plain ones.
 *
 * Two schedules: K and V double-buffered with cp.async, each block's S,
 * softmax and P V in turn (D = 256); or OVERLAP (D = 64 and 128): three
 * stages loaded one block ahead, one barrier a block, and the softmax of
 * block j computed while P V of block j - 1 is in flight (O is rescaled
 * once that is done).
 *
 * Built only for sm_90a (-gencode=arch=compute_90a,code=sm_90a) with
 * -DACCEL_FA_HAVE_SM90; accel_flashattn_fwd() calls it first on a device of
 * compute capability 9.0 and falls back to the sm_80 kernels for what it
 * declines.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <type_traits>
#include "accel-flashattn-private.h"
#include "accel-flashattn-sm90.cuh"

namespace accel_fa {

constexpr int kBM = 128, kThreads = 256;

template <int D, int BN, int STAGES>
struct Sm90Config {
  static constexpr int kTileBytes = BN * D * 2;                               /* one K or V tile */
  static constexpr int kSmem = kBM * D * 2 + 2 * STAGES * kTileBytes + 1024;  /* Q, stages x (K, V), alignment */
};

template <typename T, int kD, int kBN, bool GENERAL, bool OVERLAP>
__global__ void __launch_bounds__ (kThreads, 1)
fwd_sm90_kernel (const AccelFlashAttnFwdParams p, float scale)
{
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  /* Built for another target than sm_90a: never launched there. */
  __trap ();
#else
  constexpr int kStages = OVERLAP ? 3 : 2;
  constexpr int kTileBytes = Sm90Config<kD, kBN, kStages>::kTileBytes;
  constexpr int SN = kBN / 8, ON = kD / 8;

  extern __shared__ __align__ (1024) unsigned char smem_raw[];
  const uint32_t raw_u = smem_u32 (smem_raw);
  unsigned char *smem = smem_raw + ((1024 - (raw_u & 1023)) & 1023);
  T *sQ = reinterpret_cast<T *> (smem);
  T *sK = sQ + kBM * kD;                /* [kStages][kBN * kD] */
  T *sV = sK + kStages * kBN * kD;      /* [kStages][kBN * kD] */
  const uint32_t sQ_u = smem_u32 (sQ), sK_u = smem_u32 (sK), sV_u = smem_u32 (sV);

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2;
  FwdBlock<T> fb;
  if (!fwd_block<T, kD, GENERAL> (p, kBM, warp, fb))
    return;
  const int m0 = fb.m0, Sq = fb.Sq, Sk = fb.Sk, dqk = fb.dqk, dv = fb.dv;
  const KeyBlocks<GENERAL> blocks = key_blocks<GENERAL> (fb.mi, m0, kBM, kBN, fb.sinks);
  fb.set_rows (p);
  const T *gk = fb.gk, *gv = fb.gv;
  const int64_t ks = p.k_strides[2], vs = p.v_strides[2], os = p.o_strides[2];

  /* This thread's rows (within the block) of every 8-column tile. */
  const int row0 = wg * 64 + (warp & 3) * 16 + (lane >> 2);

  if (blocks.empty)
    {
      fwd_store_empty<T, kBM, kD, kThreads> (fb.go, os, fb.glse, tid, m0, Sq, dv);
      return;
    }
  const int n_iter = blocks.n_iter;

  Scores<kBM, kBN, GENERAL> sc;
  sc.init (p, scale, fb, lane);
  const float sl = sc.sl;

  float o[ON * 4];
  float row_max[2] = { -INFINITY, -INFINITY }, row_sum[2] = { 0.f, 0.f };
#pragma unroll
  for (int i = 0; i < ON * 4; i++)
    o[i] = 0.f;

  load_tile_sw128<T, kBM, kD, kThreads> (sQ, fb.gq, p.q_strides[2], Sq - m0, tid, dqk);
  /* V is read MN-major: the leading byte offset steps between 64-dim
   * slabs, the stride byte offset between groups of 8 keys (checked on the
   * H100: the other assignment gives wrong results). */
  const uint32_t v_lbo = kBN * 128, v_sbo = 1024;
  auto load_block = [&] (int it) {
    const int nb = blocks.at (it), st = it % kStages;
    load_tile_sw128<T, kBN, kD, kThreads> (sK + st * kBN * kD, gk + (int64_t) nb * kBN * ks, ks, Sk - nb * kBN, tid, dqk);
    load_tile_sw128<T, kBN, kD, kThreads> (sV + st * kBN * kD, gv + (int64_t) nb * kBN * vs, vs, Sk - nb * kBN, tid, dv);
  };
  /* S = Q K^T for block @it into @s (issued, committed, not waited for). */
  auto issue_s = [&] (int it, float *s) {
    const uint32_t kb = sK_u + (it % kStages) * kTileBytes;
#pragma unroll
    for (int kk = 0; kk < kD / 16; kk++)
      if (!GENERAL || kk * 16 < dqk)
        Wgmma<T, kBN>::ss (s, make_desc (sQ_u + (kk >> 2) * kBM * 128 + wg * 64 * 128 + (kk & 3) * 32, 16, 1024),
                           make_desc (kb + (kk >> 2) * kBN * 128 + (kk & 3) * 32, 16, 1024), kk > 0);
    wgmma_commit ();
  };
  /* O += P V for block @it, P in @pa (issued, committed). */
  auto issue_pv = [&] (int it, uint32_t (*pa)[4]) {
    const uint32_t vb = sV_u + (it % kStages) * kTileBytes;
#pragma unroll
    for (int kk = 0; kk < kBN / 16; kk++)
      Wgmma<T, kD>::rs (o, pa[kk], make_desc (vb + kk * 16 * 128, v_lbo, v_sbo));
    wgmma_commit ();
  };
  auto rescale = [&] (const float *corr) {
#pragma unroll
    for (int dt = 0; dt < ON; dt++)
#pragma unroll
      for (int e = 0; e < 4; e++)
        o[dt * 4 + e] *= corr[e >> 1];
  };

  float s[SN * 4], corr[2];
  uint32_t pa[kBN / 16][4];
  if constexpr (!OVERLAP)
    {
      /* Two stages, each refilled two blocks ahead once its P V is done;
       * per block: S, softmax, P V, each waited for. */
      load_block (0);
      cp_async_commit ();
      if (n_iter > 1)
        load_block (1);
      cp_async_commit ();
      for (int it = 0; it < n_iter; it++)
        {
          cp_async_wait<1> ();
          fence_proxy_async ();
          __syncthreads ();
          wgmma_fence ();
          issue_s (it, s);
          wgmma_wait0 ();
          fence_regs<SN * 4> (s);
          sc.scores (s, blocks.at (it), row0, row_max, row_sum, corr);
          rescale (corr);
          pack_a_tiles<T, kBN> (s, pa);
          fence_regs<ON * 4> (o);
          wgmma_fence ();
          issue_pv (it, pa);
          wgmma_wait0 ();
          fence_regs<ON * 4> (o);
          /* Everyone is done with this stage: refill it with block it + 2. */
          __syncthreads ();
          if (it + 2 < n_iter)
            load_block (it + 2);
          cp_async_commit ();
        }
    }
  else
    {
      /* Three stages, each loaded one block ahead; the softmax of block it
       * runs while P V of block it - 1 is in flight (o is rescaled once
       * that is done: O = corr_it (O + P_{it-1} V_{it-1})). One barrier a
       * block: it publishes block it's K and V and frees the stage of
       * block it - 2 for block it + 1. */
      load_block (0);
      cp_async_commit ();
      for (int it = 0; it < n_iter; it++)
        {
          cp_async_wait<0> ();
          fence_proxy_async ();
          __syncthreads ();
          if (it + 1 < n_iter)
            load_block (it + 1);
          cp_async_commit ();
          wgmma_fence ();
          issue_s (it, s);
          if (it > 0)
            {
              issue_pv (it - 1, pa);
              wgmma_wait<1> ();
            }
          else
            wgmma_wait0 ();
          fence_regs<SN * 4> (s);
          sc.scores (s, blocks.at (it), row0, row_max, row_sum, corr);
          wgmma_wait0 ();
          fence_regs<ON * 4> (o);
          fence_regs_u32<kBN / 16 * 4> (&pa[0][0]);
          rescale (corr);
          pack_a_tiles<T, kBN> (s, pa);
          fence_regs<ON * 4> (o);
        }
      if (n_iter > 0)
        {
          wgmma_fence ();
          issue_pv (n_iter - 1, pa);
          wgmma_wait0 ();
          fence_regs<ON * 4> (o);
        }
    }
  cp_async_wait<0> ();

  /* Epilogue: normalise; stage O in this thread's rows of sQ (plain
   * row-major with the sm_80 swizzle), then 16-byte stores. */
#pragma unroll
  for (int hh = 0; hh < 2; hh++)
    fwd_finish_row<T, kD> (sQ, o, hh, row0 + hh * 8, lane, row_max[hh], row_sum[hh], sl, fb.glse, m0, Sq);
  __syncwarp ();
  /* Each warp stores its own 16 rows. */
  fwd_store_rows<T, kD, 16> (fb.go, os, sQ, wg * 64 + (warp & 3) * 16, lane, m0, Sq, dv);
#endif
}

template <typename T, int D, int BN, bool GENERAL, bool OVERLAP>
static int
launch_sm90_kernel (const AccelFlashAttnFwdParams &p, float scale, cudaStream_t stream)
{
  constexpr int smem = Sm90Config<D, BN, OVERLAP ? 3 : 2>::kSmem;
  constexpr auto kernel = fwd_sm90_kernel<T, D, BN, GENERAL, OVERLAP>;
  int err = accel_cuda_smem_once<kernel> (smem);
  if (err != cudaSuccess)
    return err;
  /* varlen: an upper bound of the query blocks (see the sm_80 launch). */
  dim3 grid = p.cu_seqlens_q ? dim3 ((p.seqlen_q + kBM - 1) / kBM + p.batch, p.heads_q, 1)
                             : dim3 ((p.seqlen_q + kBM - 1) / kBM, p.heads_q, p.batch);
  kernel<<<grid, kThreads, smem, stream>>> (p, scale);
  return cudaGetLastError ();
}

template <typename T, int D, int BN, bool OVERLAP>
static int
launch_sm90 (const AccelFlashAttnFwdParams &p, float scale, cudaStream_t stream)
{
  if (accel_fa_is_general (&p))
    return launch_sm90_kernel<T, D, BN, true, OVERLAP> (p, scale, stream);
  return launch_sm90_kernel<T, D, BN, false, OVERLAP> (p, scale, stream);
}

/* Whether d = 128 runs the overlapped schedule (3 stages; chosen from the
 * H100 measurements in docs/flashattn.md: 489 against 422 TFLOP/s at
 * seqlen 4096); d = 256 has no room for a third stage. */
constexpr bool kOverlap128 = true;

#ifdef ACCEL_FA_FWD90_VARIANTS
/* Harness builds: ACCEL_FA_FWD90_CFG bit 0 flips the schedule of d = 128
 * (bf16 only). */
static int
fwd90_variant ()
{
  static int v = -1;
  return accel_fa_env_variant ("ACCEL_FA_FWD90_CFG", &v);
}
#endif

template <typename T>
static int
dispatch_sm90 (const AccelFlashAttnFwdParams &p, float scale, cudaStream_t stream)
{
#ifdef ACCEL_FA_FWD90_VARIANTS
  if constexpr (std::is_same<T, __nv_bfloat16>::value)
    {
      const int v = fwd90_variant ();
      if ((v & 1) && accel_fa_dim_class (&p) == 128)
        return launch_sm90<T, 128, 128, !kOverlap128> (p, scale, stream);
    }
#endif
  /* A d = 192 instance for the head dims of (128, 192] (three slabs, keys
   * by 64, overlapped) was measured slower than the 256 one on the H100
   * (d 160: 215 against 280 TFLOP/s; 192: 280 against 324): they run at
   * the width of 256. */
  switch (accel_fa_dim_class (&p))
    {
    /* D = 64: overlapped, 335 against the sm_80 kernel's 302 TFLOP/s at
     * seqlen 4096 (without the overlap it was 302 against 310). */
    case 64:
      return launch_sm90<T, 64, 128, true> (p, scale, stream);
    case 128:
      return launch_sm90<T, 128, 128, kOverlap128> (p, scale, stream);
    case 256:
      return launch_sm90<T, 256, 64, false> (p, scale, stream);
    default:
      return ACCEL_FA_UNSUPPORTED;
    }
}

} /* namespace accel_fa */

using namespace accel_fa;

bool
accel_fa_device_is_sm90 ()
{
  static int cached[64];   /* 0 unknown, 1 yes, 2 no */
  int dev = 0;
  if (cudaGetDevice (&dev) != cudaSuccess || dev < 0 || dev >= 64)
    return false;
  if (cached[dev] == 0)
    {
      int major = 0, minor = 0;
      cudaDeviceGetAttribute (&major, cudaDevAttrComputeCapabilityMajor, dev);
      cudaDeviceGetAttribute (&minor, cudaDevAttrComputeCapabilityMinor, dev);
      cached[dev] = major == 9 && minor == 0 ? 1 : 2;
    }
  return cached[dev] == 1;
}

int
accel_fa_fwd_sm90 (const AccelFlashAttnFwdParams *p, float scale, cudaStream_t stream)
{
  if (!accel_fa_device_is_sm90 ())
    return ACCEL_FA_UNSUPPORTED;
  /* ACCEL_FA_SM90_DIMS (harness only): a comma list of the head dims this
   * path takes, to compare it with the sm_80 kernels dim by dim. */
  const char *dims = getenv ("ACCEL_FA_SM90_DIMS");
  if (dims != nullptr)
    {
      char want[8];
      snprintf (want, sizeof want, "%d", accel_fa_dim_class (p));
      if (strstr (dims, want) == nullptr)
        return ACCEL_FA_UNSUPPORTED;
    }
#ifndef ACCEL_FA_ONLY_BF16
  if (p->dtype == ACCEL_FA_F16)
    return dispatch_sm90<__half> (*p, scale, stream);
#endif
  return dispatch_sm90<__nv_bfloat16> (*p, scale, stream);
}
