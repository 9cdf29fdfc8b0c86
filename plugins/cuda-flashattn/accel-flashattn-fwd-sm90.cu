/* accel-flashattn-fwd-sm90.cu: the forward pass on Hopper (sm_90a) with
 * warpgroup MMA, for head dims 64, 128 and 256.
 *
 * A block of two warpgroups takes 128 query rows (64 each) of one (batch,
 * head), against key blocks of 128 (64 at D = 256). S = Q K^T is one wgmma chain per key block with Q and K read from
 * shared memory; O += P V takes P from registers (the S accumulators,
 * rounded, are already the A-operand fragment) and V from shared memory
 * read transposed (MN-major). Q, K and V live in shared memory in the
 * 128-byte-swizzled layout the tensor cores read: per 64-column half,
 * rows of 128 bytes whose 16-byte chunks are XORed with (row % 8).
 * K and V are double-buffered with cp.async; the online softmax, the masks
 * and the soft cap are those of the sm_80 kernel, and so are the GENERAL
 * instances (ALiBi, sinks, varlen, head dims below the instance's: the
 * k16 steps of Q K^T past Dqk are skipped, P V runs at the instance's
 * width over V's zero-filled columns and stores Dv of them) beside the
 * plain ones.
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
#include "accel-flashattn-private.h"
#include "accel-flashattn-sm90.cuh"

namespace accel_fa {

constexpr int kBM = 128, kThreads = 256;

template <int D, int BN>
struct Sm90Config {
  static constexpr int kTileBytes = BN * D * 2;                      /* one K or V tile */
  static constexpr int kSmem = kBM * D * 2 + 4 * kTileBytes + 1024;  /* Q, 2 x (K, V), alignment */
};

template <typename T, int kD, int kBN, bool GENERAL>
__global__ void __launch_bounds__ (kThreads, 1)
fwd_sm90_kernel (const AccelFlashAttnFwdParams p, float scale)
{
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  /* Built for another target than sm_90a: never launched there. */
  __trap ();
#else
  constexpr int kTileBytes = Sm90Config<kD, kBN>::kTileBytes;
  using TT = TypeTraits<T>;
  constexpr int SN = kBN / 8, ON = kD / 8;

  extern __shared__ __align__ (1024) unsigned char smem_raw[];
  const uint32_t raw_u = smem_u32 (smem_raw);
  unsigned char *smem = smem_raw + ((1024 - (raw_u & 1023)) & 1023);
  T *sQ = reinterpret_cast<T *> (smem);
  T *sK = sQ + kBM * kD;                /* [2][kBN * kD] */
  T *sV = sK + 2 * kBN * kD;            /* [2][kBN * kD] */
  const uint32_t sQ_u = smem_u32 (sQ), sK_u = smem_u32 (sK), sV_u = smem_u32 (sV);

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2;
  const int h = blockIdx.y;
  const int hk = h / (p.heads_q / p.heads_kv);
  const bool varlen = GENERAL && p.cu_seqlens_q != nullptr;
  const int dqk = GENERAL ? p.head_dim : kD;
  const int dv = GENERAL ? (p.head_dim_v > 0 ? p.head_dim_v : p.head_dim) : kD;
  int b, m_block, Sq = p.seqlen_q, Sk = p.seqlen_k, q_start = 0, k_start = 0;
  if (varlen)
    {
      if (!varlen_block (p, kBM, warp, false, b, m_block, q_start, Sq, k_start, Sk))
        return;   /* one of the surplus blocks of the grid's upper bound */
    }
  else
    {
      m_block = gridDim.x - 1 - blockIdx.x;
      b = blockIdx.z;
    }
  const int bs = varlen ? 0 : b;   /* varlen buffers have no batch stride */
  const int m0 = m_block * kBM;

  MaskInfo mi;
  mi.seqlen_q = Sq;
  mi.seqlen_k = Sk;
  mi.off = Sk - Sq;
  mi.left = p.window_left;
  mi.right = p.causal ? 0 : p.window_right;
  const int sinks = GENERAL && mi.left >= 0 ? p.sinks : 0;
  const KeyBlocks<GENERAL> blocks = key_blocks<GENERAL> (mi, m0, kBM, kBN, sinks);

  const T *gq = static_cast<const T *> (p.q) + bs * p.q_strides[0] + h * p.q_strides[1]
                + (int64_t) (q_start + m0) * p.q_strides[2];
  const T *gk = static_cast<const T *> (p.k) + bs * p.k_strides[0] + hk * p.k_strides[1] + (int64_t) k_start * p.k_strides[2];
  const T *gv = static_cast<const T *> (p.v) + bs * p.v_strides[0] + hk * p.v_strides[1] + (int64_t) k_start * p.v_strides[2];
  T *go = static_cast<T *> (p.out) + bs * p.o_strides[0] + h * p.o_strides[1] + (int64_t) (q_start + m0) * p.o_strides[2];
  float *glse = nullptr;
  if (p.lse)
    glse = p.lse + (varlen ? (int64_t) h * p.seqlen_q + q_start : ((int64_t) b * p.heads_q + h) * Sq) + m0;
  const int64_t ks = p.k_strides[2], vs = p.v_strides[2], os = p.o_strides[2];

  /* This thread's rows (within the block) of every 8-column tile. */
  const int row0 = wg * 64 + (warp & 3) * 16 + (lane >> 2);

  if (blocks.empty)
    {
      for (int idx = tid; idx < kBM * (kD / 8); idx += kThreads)
        {
          int r = idx / (kD / 8), c = idx % (kD / 8);
          if (m0 + r < Sq && c * 8 < dv)
            *reinterpret_cast<uint4 *> (go + r * os + c * 8) = make_uint4 (0, 0, 0, 0);
        }
      if (glse)
        for (int r = tid; r < kBM; r += kThreads)
          if (m0 + r < Sq)
            glse[r] = -INFINITY;
      return;
    }
  const int n_iter = blocks.n_iter;

  const bool capped = p.softcap > 0.f;
  const float sl = capped ? 1.f : scale * kLog2e;
  const float cap_in = capped ? scale / p.softcap : 0.f;
  const float cap_out = p.softcap * kLog2e;
  /* ALiBi in the units of S (logit = S * sl / log2 (e) after the cap). */
  const bool alibi = GENERAL && p.alibi_slopes != nullptr;
  const float alibi_mul = alibi ? -p.alibi_slopes[(int64_t) b * p.alibi_batch_stride + h] * kLog2e / sl : 0.f;

  /* Prologue: Q with the first K/V block, then the second K/V block. */
  load_tile_sw128<T, kBM, kD, kThreads> (sQ, gq, p.q_strides[2], Sq - m0, tid, dqk);
#pragma unroll
  for (int j = 0; j < 2; j++)
    {
      if (j < n_iter)
        {
          const int nb = blocks.at (j);
          load_tile_sw128<T, kBN, kD, kThreads> (sK + j * kBN * kD, gk + (int64_t) nb * kBN * ks, ks, Sk - nb * kBN, tid, dqk);
          load_tile_sw128<T, kBN, kD, kThreads> (sV + j * kBN * kD, gv + (int64_t) nb * kBN * vs, vs, Sk - nb * kBN, tid, dv);
        }
      cp_async_commit ();
    }

  float o[ON * 4], s[SN * 4];
  float row_max[2] = { -INFINITY, -INFINITY }, row_sum[2] = { 0.f, 0.f };
#pragma unroll
  for (int i = 0; i < ON * 4; i++)
    o[i] = 0.f;

  /* V is read MN-major: the leading byte offset steps between 64-dim
   * slabs, the stride byte offset between groups of 8 keys (checked on the
   * H100: the other assignment gives wrong results). */
  const uint32_t v_lbo = kBN * 128, v_sbo = 1024;

  for (int it = 0; it < n_iter; it++)
    {
      const int nb = blocks.at (it);
      const int st = it & 1;
      cp_async_wait<1> ();
      fence_proxy_async ();
      __syncthreads ();

      /* S = Q K^T */
      const uint32_t kb = sK_u + st * kTileBytes, vb = sV_u + st * kTileBytes;
      wgmma_fence ();
#pragma unroll
      for (int kk = 0; kk < kD / 16; kk++)
        {
          if (GENERAL && kk * 16 >= dqk)
            break;
          uint64_t da = make_desc (sQ_u + (kk >> 2) * kBM * 128 + wg * 64 * 128 + (kk & 3) * 32, 16, 1024);
          uint64_t db = make_desc (kb + (kk >> 2) * kBN * 128 + (kk & 3) * 32, 16, 1024);
          Wgmma<T, kBN>::ss (s, da, db, kk > 0);
        }
      wgmma_commit ();
      wgmma_wait0 ();
      fence_regs<SN * 4> (s);

      if (capped)
        {
#pragma unroll
          for (int i = 0; i < SN * 4; i++)
            s[i] = fast_tanh (s[i] * cap_in) * cap_out;
        }
      if (alibi)
        {
#pragma unroll
          for (int hh = 0; hh < 2; hh++)
            {
              /* p - j of the thread's first column */
              const float rel = (float) (m0 + row0 + hh * 8 + mi.off - nb * kBN - (lane & 3) * 2);
#pragma unroll
              for (int nt = 0; nt < SN; nt++)
#pragma unroll
                for (int e = 0; e < 2; e++)
                  s[nt * 4 + 2 * hh + e] = fmaf (fabsf (rel - (float) (nt * 8 + e)), alibi_mul, s[nt * 4 + 2 * hh + e]);
            }
        }
      if (tile_needs_mask (mi, m0, kBM, nb * kBN, kBN))
        {
          const int sink_rel = sinks - nb * kBN - (lane & 3) * 2;
#pragma unroll
          for (int hh = 0; hh < 2; hh++)
            {
              int lo, hi;
              row_limits (mi, m0 + row0 + hh * 8, nb * kBN + (lane & 3) * 2, lo, hi);
#pragma unroll
              for (int nt = 0; nt < SN; nt++)
#pragma unroll
                for (int e = 0; e < 2; e++)
                  {
                    const int c = nt * 8 + e;
                    /* sinks are exempt from the left window only */
                    if (c > hi || (c < lo && (!GENERAL || c >= sink_rel)))
                      s[nt * 4 + 2 * hh + e] = -INFINITY;
                  }
            }
        }

#pragma unroll
      for (int hh = 0; hh < 2; hh++)
        {
          float mx = row_max[hh];
#pragma unroll
          for (int nt = 0; nt < SN; nt++)
            mx = fmaxf (mx, fmaxf (s[nt * 4 + 2 * hh], s[nt * 4 + 2 * hh + 1]));
          mx = fmaxf (mx, __shfl_xor_sync (0xffffffffu, mx, 1));
          mx = fmaxf (mx, __shfl_xor_sync (0xffffffffu, mx, 2));
          const float m_use = mx == -INFINITY ? 0.f : mx * sl;
          const float corr = fast_exp2 (row_max[hh] * sl - m_use);
          row_max[hh] = mx;
          row_sum[hh] *= corr;
#pragma unroll
          for (int dt = 0; dt < ON; dt++)
            {
              o[dt * 4 + 2 * hh] *= corr;
              o[dt * 4 + 2 * hh + 1] *= corr;
            }
          float sum = 0.f;
#pragma unroll
          for (int nt = 0; nt < SN; nt++)
            {
              float p0 = fast_exp2 (fmaf (s[nt * 4 + 2 * hh], sl, -m_use));
              float p1 = fast_exp2 (fmaf (s[nt * 4 + 2 * hh + 1], sl, -m_use));
              s[nt * 4 + 2 * hh] = p0;
              s[nt * 4 + 2 * hh + 1] = p1;
              sum += p0 + p1;
            }
          row_sum[hh] += sum;
        }

      /* O += P V */
      uint32_t pa[kBN / 16][4];
#pragma unroll
      for (int kk = 0; kk < kBN / 16; kk++)
        {
          pa[kk][0] = TT::pack (s[(2 * kk) * 4 + 0], s[(2 * kk) * 4 + 1]);
          pa[kk][1] = TT::pack (s[(2 * kk) * 4 + 2], s[(2 * kk) * 4 + 3]);
          pa[kk][2] = TT::pack (s[(2 * kk + 1) * 4 + 0], s[(2 * kk + 1) * 4 + 1]);
          pa[kk][3] = TT::pack (s[(2 * kk + 1) * 4 + 2], s[(2 * kk + 1) * 4 + 3]);
        }
      fence_regs<ON * 4> (o);
      wgmma_fence ();
#pragma unroll
      for (int kk = 0; kk < kBN / 16; kk++)
        Wgmma<T, kD>::rs (o, pa[kk], make_desc (vb + kk * 16 * 128, v_lbo, v_sbo));
      wgmma_commit ();
      wgmma_wait0 ();
      fence_regs<ON * 4> (o);

      /* Everyone is done with this stage: refill it with block it + 2. */
      __syncthreads ();
      if (it + 2 < n_iter)
        {
          const int nb2 = blocks.at (it + 2);
          load_tile_sw128<T, kBN, kD, kThreads> (sK + st * kBN * kD, gk + (int64_t) nb2 * kBN * ks, ks, Sk - nb2 * kBN, tid, dqk);
          load_tile_sw128<T, kBN, kD, kThreads> (sV + st * kBN * kD, gv + (int64_t) nb2 * kBN * vs, vs, Sk - nb2 * kBN, tid, dv);
        }
      cp_async_commit ();
    }
  cp_async_wait<0> ();

  /* Epilogue: normalise; stage O in this thread's rows of sQ (plain
   * row-major with the sm_80 swizzle), then 16-byte stores. */
#pragma unroll
  for (int hh = 0; hh < 2; hh++)
    {
      float sum = row_sum[hh];
      sum += __shfl_xor_sync (0xffffffffu, sum, 1);
      sum += __shfl_xor_sync (0xffffffffu, sum, 2);
      const float inv = sum > 0.f ? 1.f / sum : 0.f;
      const int row = row0 + hh * 8;
#pragma unroll
      for (int dt = 0; dt < ON; dt++)
        *reinterpret_cast<uint32_t *> (sQ + swz<kD> (row, dt * 8 + (lane & 3) * 2))
          = TT::pack (o[dt * 4 + 2 * hh] * inv, o[dt * 4 + 2 * hh + 1] * inv);
      if (glse && (lane & 3) == 0 && m0 + row < Sq)
        glse[row] = sum > 0.f ? (row_max[hh] * sl + __log2f (sum)) * kLn2 : -INFINITY;
    }
  __syncwarp ();
  /* Each warp stores its own 16 rows. */
  constexpr int CH = kD / 8;
  const int wrow = wg * 64 + (warp & 3) * 16;
#pragma unroll
  for (int idx = lane; idx < 16 * CH; idx += 32)
    {
      const int row = wrow + idx / CH, c = idx % CH;
      if (m0 + row < Sq && c * 8 < dv)
        *reinterpret_cast<uint4 *> (go + row * os + c * 8) = *reinterpret_cast<const uint4 *> (sQ + swz<kD> (row, c * 8));
    }
#endif
}

template <typename T, int D, int BN, bool GENERAL>
static int
launch_sm90_kernel (const AccelFlashAttnFwdParams &p, float scale, cudaStream_t stream)
{
  constexpr int smem = Sm90Config<D, BN>::kSmem;
  auto kernel = fwd_sm90_kernel<T, D, BN, GENERAL>;
  static bool configured = false;
  if (!configured)
    {
      cudaError_t err = cudaFuncSetAttribute (kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
      if (err != cudaSuccess)
        return err;
      configured = true;
    }
  /* varlen: an upper bound of the query blocks (see the sm_80 launch). */
  dim3 grid = p.cu_seqlens_q ? dim3 ((p.seqlen_q + kBM - 1) / kBM + p.batch, p.heads_q, 1)
                             : dim3 ((p.seqlen_q + kBM - 1) / kBM, p.heads_q, p.batch);
  kernel<<<grid, kThreads, smem, stream>>> (p, scale);
  return cudaGetLastError ();
}

template <typename T, int D, int BN>
static int
launch_sm90 (const AccelFlashAttnFwdParams &p, float scale, cudaStream_t stream)
{
  if (accel_fa_is_general (&p))
    return launch_sm90_kernel<T, D, BN, true> (p, scale, stream);
  return launch_sm90_kernel<T, D, BN, false> (p, scale, stream);
}

template <typename T>
static int
dispatch_sm90 (const AccelFlashAttnFwdParams &p, float scale, cudaStream_t stream)
{
  switch (accel_fa_dim_class (&p))
    {
    /* D = 64 runs correctly here too (launch_sm90<T, 64, 128>) but at 302
     * TFLOP/s against the sm_80 kernel's 310 on the H100 (seq 4096): it is
     * left to the sm_80 kernel. */
    case 128:
      return launch_sm90<T, 128, 128> (p, scale, stream);
    case 256:
      return launch_sm90<T, 256, 64> (p, scale, stream);
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
