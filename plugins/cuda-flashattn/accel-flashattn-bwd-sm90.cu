/* accel-flashattn-bwd-sm90.cu: the main kernel of the backward pass on
 * Hopper (sm_90a) with warpgroup MMA, for the head dims of the 64, 128 and
 * 256 instances: causal or not, windows, soft cap, GQA; with DIMS, any D
 * and Dv up to the instance's (the k16 steps past them skipped, the columns
 * of dV, dK and dQ past them computed on zeros and never stored). ALiBi,
 * sinks and varlen stay with the sm_80 kernel's general instances. At
 * D = 256 two launches share the work (PART, see Config).
 *
 * A block of two warpgroups owns 128 keys (64 each) of one (batch, kv
 * head) and walks every query block (64 rows) of every query head of its
 * group, as the sm_80 kernel does, so GQA needs no reduction of dK and dV.
 * Per step, in each warpgroup:
 *   S^T  = K_w Q^T       wgmma m64n64, both from shared memory (K-major)
 *   dP^T = V_w dO^T      the same, issued right behind, so P^T = exp2 (S^T
 *                        - lse) is computed while dP^T is in flight
 *   dV  += P^T dO        wgmma m64nD, P^T from registers, dO MN-major
 *   dK  += dS^T Q        the same, dS^T = P^T (dP^T - Dsum)
 * dS^T goes to shared memory transposed (stmatrix .trans: dS, [query]
 * [key], K-major) and the block computes dQ = dS K with K read MN-major:
 * at D = 128 (256) each warpgroup takes 64 (128) of the columns over all
 * 128 keys, at D = 64 each takes its own 64 keys and the two halves meet
 * in shared memory. The dQ block (64 x D, f32) is stored to shared memory in the
 * accumulators' own order (dq_perm_offset) and added to the workspace's
 * dQ accumulator by one bulk asynchronous reduction
 * (cp.reduce.async.bulk .add.f32) issued by one thread: the L2 does the
 * additions, no thread waits on them, and the next step goes on in the
 * other of two dQ buffers (FlashAttention-3's way of accumulating dQ).
 *
 * At D = 256 the dK/dQ launch adds dQ with red.global.add.v4.f32 from the
 * registers instead (same layout): its shared memory holds no dQ buffers.
 *
 * Q, dO, lse and Dsum are double-buffered with cp.async (single at D = 256
 * in the dK/dQ launch); K and V stay in shared memory for the whole block.
 * Shared memory at D = 128: K, V 32 KB each, Q, dO 2 x 16 KB each, dS
 * 16 KB, dQ 2 x 32 KB: 210 KB.
 *
 * VARIANT (harness builds with ACCEL_FA_BWD90_VARIANTS, chosen by
 * ACCEL_FA_BWD90_CFG): bit 0 stores dS element by element instead of with
 * stmatrix; bit 1 adds dQ to the workspace with one red.global.add.v4.f32
 * per 4 accumulators instead of the bulk reduction (the same layout); bit
 * 2 (D = 128) has each warpgroup reduce its own half of the dQ block after
 * a barrier of its own, instead of one reduction after a block barrier.
 *
 * Built only for sm_90a (see accel-flashattn-fwd-sm90.cu).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include "accel-flashattn-private.h"
#include "accel-flashattn-sm90.cuh"

namespace accel_fa {

namespace bwd90 {

constexpr int kBM = 64, kBN = 128, kThreads = 256;

/* PART: 0 the whole backward (D <= 128); at D = 256, where the dV and dK
 * accumulators do not fit together, 1 computes dV alone and 2 dK and dQ
 * (Q and dO single-buffered there, dQ added with atomics, to fit in
 * shared memory). */
template <int D, int PART>
struct Config {
  static constexpr bool kHasV = PART != 1, kHasS = PART != 1;
  static constexpr int kStages = D == 256 && PART == 2 ? 1 : 2;
  static constexpr bool kBulk = PART != 1 && D != 256;   /* dQ buffers for the bulk reductions */
  static constexpr int kQBytes = kBM * D * 2;            /* one Q or dO stage */
  static constexpr int kKBytes = kBN * D * 2;            /* K or V */
  static constexpr int kSBytes = kBM * kBN * 2;          /* dS */
  static constexpr int kDQFloats = kBM * D * (D == 64 ? 2 : 1);   /* one dQ buffer (two halves at D = 64) */
  static constexpr int kSmem = (kHasV ? 2 : 1) * kKBytes + 2 * kStages * kQBytes + (kHasS ? kSBytes : 0)
                               + (kBulk ? 2 * kDQFloats * 4 : 0) + 4 * kBM * 4 + 1024;
};

__device__ __forceinline__ void
red_add_f32x4 (float *dst, float4 v)
{
  asm volatile ("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(dst), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                : "memory");
}

/* Waits at named barrier ID (1..15) for the 128 threads of a warpgroup. */
template <int ID>
__device__ __forceinline__ void
wg_barrier ()
{
  asm volatile ("bar.sync %0, 128;" :: "n"(ID) : "memory");
}

template <typename T, int D, bool DIMS, int VARIANT, int PART>
__global__ void __launch_bounds__ (kThreads, 1)
bwd_kernel (const AccelFlashAttnBwdParams p, AccelFaBwdWork w, float scale)
{
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap ();   /* built for another target than sm_90a: never launched there */
#else
  using TT = TypeTraits<T>;
  using C = Config<D, PART>;
  constexpr bool kDoDV = PART != 2, kDoDK = PART != 1;
  constexpr int NA = D / 2;          /* dK, dV accumulators per thread (m64nD) */
  constexpr int NQ = D == 256 ? 64 : 32;   /* dQ accumulators per thread: m64n128 at D = 256, else m64n64 */
  constexpr bool kAtomicDQ = (VARIANT & 2) || D == 256;

  extern __shared__ __align__ (1024) unsigned char smem_raw[];
  const uint32_t raw_u = smem_u32 (smem_raw);
  unsigned char *smem = smem_raw + ((1024 - (raw_u & 1023)) & 1023);
  T *sK = reinterpret_cast<T *> (smem);
  T *sV = sK + kBN * D;                                      /* none in PART 1 */
  T *sQ = sV + (C::kHasV ? kBN * D : 0);                     /* [kStages][kBM * D] */
  T *sdO = sQ + C::kStages * kBM * D;                        /* [kStages][kBM * D] */
  T *sdS = sdO + C::kStages * kBM * D;                       /* [kBM][kBN]: 2 slabs of 64 keys */
  float *sdQ = reinterpret_cast<float *> (sdS + (C::kHasS ? kBM * kBN : 0));   /* [2][kDQFloats] */
  float *sL = sdQ + (C::kBulk ? 2 * C::kDQFloats : 0);       /* [2][kBM] */
  float *sDs = sL + 2 * kBM;                                 /* [2][kBM] */
  const uint32_t sK_u = smem_u32 (sK), sV_u = smem_u32 (sV), sQ_u0 = smem_u32 (sQ), sdO_u0 = smem_u32 (sdO);
  const uint32_t sdS_u = smem_u32 (sdS);

  const AccelFlashAttnFwdParams &f = p.fwd;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2, wr = warp & 3;
  const int t128 = tid & 127;
  const int n_block = blockIdx.x, hk = blockIdx.y, b = blockIdx.z;
  const int group = f.heads_q / f.heads_kv;
  const int n0 = n_block * kBN;
  const int Sq = f.seqlen_q, Sk = f.seqlen_k;
  const int dqk = DIMS ? f.head_dim : D;
  const int dv = DIMS ? (f.head_dim_v > 0 ? f.head_dim_v : f.head_dim) : D;
  constexpr bool kSplitReduce = (VARIANT & 4) && D == 128;
  /* DIMS skips the k16 steps past Dqk and Dv at D <= 128; at D = 256 the
   * conditional MMAs cost registers the dK/dQ part has not got, so there
   * the tiles are zero-filled to the full width and every step runs. */
  constexpr bool kGuard = DIMS && D <= 128;
  const int read_qk = kGuard ? cols_read (dqk) : D, read_v = kGuard ? cols_read (dv) : D;

  const MaskInfo mi = mask_info (f, Sq, Sk);

  /* The query blocks that see a key of this block (the sm_80 kernel's rule). */
  int mb_min, n_mb;
  query_blocks (mi, n0, kBN, false, kBM, mb_min, n_mb);
  const int n_iter = n_mb * group;

  const int64_t ks = f.k_strides[2], vs = f.v_strides[2];
  const T *gk = static_cast<const T *> (f.k) + b * f.k_strides[0] + hk * f.k_strides[1] + (int64_t) n0 * ks;
  const T *gv = static_cast<const T *> (f.v) + b * f.v_strides[0] + hk * f.v_strides[1] + (int64_t) n0 * vs;

  const bool capped = f.softcap > 0.f;
  const float sl = capped ? 1.f : scale * kLog2e;
  const float cap_in = capped ? scale / f.softcap : 0.f;
  const float cap_out = f.softcap * kLog2e;

  auto load_step = [&] (int it, int st) {
    const int hq = hk * group + it / n_mb;
    const int m0 = (mb_min + it % n_mb) * kBM;
    const T *gq = static_cast<const T *> (f.q) + b * f.q_strides[0] + hq * f.q_strides[1] + (int64_t) m0 * f.q_strides[2];
    const T *gdo = static_cast<const T *> (p.dout) + b * p.do_strides[0] + hq * p.do_strides[1]
                   + (int64_t) m0 * p.do_strides[2];
    load_tile_sw128<T, kBM, D, kThreads> (sQ + st * kBM * D, gq, f.q_strides[2], Sq - m0, tid, dqk, read_qk);
    load_tile_sw128<T, kBM, D, kThreads> (sdO + st * kBM * D, gdo, p.do_strides[2], Sq - m0, tid, dv, read_v);
    const int64_t rb = ((int64_t) b * f.heads_q + hq) * w.sq_pad + m0;
    if (tid < kBM / 4)
      cp_async_16 (smem_u32 (sL + st * kBM + tid * 4), w.lse2 + rb + tid * 4, 16);
    else if (tid < kBM / 2)
      cp_async_16 (smem_u32 (sDs + st * kBM + (tid - kBM / 4) * 4), w.dsum + rb + (tid - kBM / 4) * 4, 16);
  };

  /* PART 2 has no dV (its fences must not keep one alive); PART 1's dK
   * appears only past the end of its steps, where nothing reaches. */
  constexpr int NV = kDoDV ? NA : 1, NK = NA;
  float acc_dv[NV], acc_dk[NK];
#pragma unroll
  for (int i = 0; i < NV; i++)
    acc_dv[i] = 0.f;
#pragma unroll
  for (int i = 0; i < NK; i++)
    acc_dk[i] = 0.f;

  load_tile_sw128<T, kBN, D, kThreads> (sK, gk, ks, Sk - n0, tid, dqk, read_qk);
  if (kDoDK)
    load_tile_sw128<T, kBN, D, kThreads> (sV, gv, vs, Sk - n0, tid, dv, read_v);
  if (n_iter > 0)
    load_step (0, 0);
  cp_async_commit ();

  /* This thread's key rows (within the block) of every 8-column tile of
   * S^T, and the first key of its warp's 16. */
  const int krow = wg * 64 + wr * 16 + (lane >> 2);

  for (int it = 0; it < n_iter; it++)
    {
      const int st = C::kStages == 2 ? it & 1 : 0;
      const int hq = hk * group + it / n_mb;
      const int m0 = (mb_min + it % n_mb) * kBM;
      if (C::kStages == 2 && it + 1 < n_iter)
        {
          load_step (it + 1, st ^ 1);
          cp_async_commit ();
          cp_async_wait<1> ();
        }
      else
        cp_async_wait<0> ();   /* one stage: loaded at the end of the last step */
      fence_proxy_async ();
      __syncthreads ();

      const uint32_t sQ_u = sQ_u0 + st * C::kQBytes, sdO_u = sdO_u0 + st * C::kQBytes;
      const float *lse2 = sL + st * kBM, *dsum = sDs + st * kBM;

      /* S^T and dP^T, two wgmma groups in flight. */
      float s[32], dp[32];
      wgmma_fence ();
#pragma unroll
      for (int kk = 0; kk < D / 16; kk++)
        if (!kGuard || kk * 16 < dqk)
          Wgmma<T, 64>::ss (s, make_desc (sK_u + (kk >> 2) * kBN * 128 + wg * 64 * 128 + (kk & 3) * 32, 16, 1024),
                          make_desc (sQ_u + (kk >> 2) * kBM * 128 + (kk & 3) * 32, 16, 1024), kk > 0);
      wgmma_commit ();
      if (kDoDK)
        {
#pragma unroll
          for (int kk = 0; kk < D / 16; kk++)
            if (!kGuard || kk * 16 < dv)
              Wgmma<T, 64>::ss (dp, make_desc (sV_u + (kk >> 2) * kBN * 128 + wg * 64 * 128 + (kk & 3) * 32, 16, 1024),
                                make_desc (sdO_u + (kk >> 2) * kBM * 128 + (kk & 3) * 32, 16, 1024), kk > 0);
          wgmma_commit ();
          wgmma_wait<1> ();
        }
      else
        wgmma_wait<0> ();
      fence_regs<32> (s);

      /* P^T = exp2 (S^T * sl - lse2[query]); element (key krow + 8 hh,
       * query 8 nt + 2 (lane % 4) + e) is s[4 nt + 2 hh + e]. */
      const bool masked = tile_needs_mask (mi, m0, kBM, n0, kBN);
#pragma unroll
      for (int nt = 0; nt < 8; nt++)
        {
          const int c = nt * 8 + (lane & 3) * 2;
          const float2 l2 = *reinterpret_cast<const float2 *> (lse2 + c);
#pragma unroll
          for (int e = 0; e < 4; e++)
            {
              float x = s[nt * 4 + e];
              if (capped)
                x = fast_tanh (x * cap_in) * cap_out;
              x = fmaf (x, sl, -((e & 1) ? l2.y : l2.x));
              if (masked)
                {
                  int lo, hi;
                  row_limits (mi, m0 + c + (e & 1), n0 + krow + (e >> 1) * 8, lo, hi);
                  if (0 > hi || 0 < lo)
                    x = -INFINITY;
                }
              s[nt * 4 + e] = fast_exp2 (x);
            }
        }
      uint32_t pa[4][4];
      if (kDoDV)
        {
          pack_a_tiles<T, 64> (s, pa);
        }

      if constexpr (!kDoDK)
        {
          /* PART 1: dV += P^T dO, then the step is over. */
          fence_regs<NV> (acc_dv);
          wgmma_fence ();
#pragma unroll
          for (int kk = 0; kk < 4; kk++)
            Wgmma<T, D>::rs (acc_dv, pa[kk], make_desc (sdO_u + kk * 16 * 128, kBM * 128, 1024));
          wgmma_commit ();
          wgmma_wait<0> ();
          fence_regs<NV> (acc_dv);
          fence_regs_u32<16> (&pa[0][0]);
          __syncthreads ();   /* the next step's loads overwrite this step's stage */
          continue;
        }

      /* dS^T = P^T (dP^T - Dsum), times 1 - tanh^2 under the soft cap
       * (tanh recovered from P: log2 (P) + lse2 = the capped logit). */
      wgmma_wait<0> ();
      fence_regs<32> (dp);
#pragma unroll
      for (int nt = 0; nt < 8; nt++)
        {
          const int c = nt * 8 + (lane & 3) * 2;
          const float2 ds2 = *reinterpret_cast<const float2 *> (dsum + c);
#pragma unroll
          for (int e = 0; e < 4; e++)
            {
              const float pv = s[nt * 4 + e];
              float d = pv * (dp[nt * 4 + e] - ((e & 1) ? ds2.y : ds2.x));
              if (capped && pv > 0.f)
                {
                  const float2 l2 = *reinterpret_cast<const float2 *> (lse2 + c);
                  const float t = (__log2f (pv) + ((e & 1) ? l2.y : l2.x)) / cap_out;
                  d *= 1.f - t * t;
                }
              dp[nt * 4 + e] = d;
            }
        }
      uint32_t da[4][4];
      pack_a_tiles<T, 64> (dp, da);

      /* dV += P^T dO, dK += dS^T Q: A from registers, B MN-major. */
      fence_regs<NV> (acc_dv);
      fence_regs<NK> (acc_dk);
      wgmma_fence ();
      if constexpr (kDoDV)
        {
#pragma unroll
          for (int kk = 0; kk < 4; kk++)
            Wgmma<T, D>::rs (acc_dv, pa[kk], make_desc (sdO_u + kk * 16 * 128, kBM * 128, 1024));
        }
#pragma unroll
      for (int kk = 0; kk < 4; kk++)
        Wgmma<T, D>::rs (acc_dk, da[kk], make_desc (sQ_u + kk * 16 * 128, kBM * 128, 1024));
      wgmma_commit ();

      /* dS^T to shared memory as dS [query][key]: lane 8 j + i addresses
       * row i of stored matrix j = query 16 kk + 8 (j / 2) + i, keys
       * wg 64 + wr 16 + 8 (j % 2) .. + 7. */
      if (VARIANT & 1)
        {
#pragma unroll
          for (int nt = 0; nt < 8; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++)
              {
                const int q = nt * 8 + (lane & 3) * 2 + (e & 1), key = krow + (e >> 1) * 8;
                const float2 f2 = TT::unpack (TT::pack (dp[nt * 4 + e], 0.f));
                sdS[sw128<kBM> (q, key)] = T (f2.x);
              }
        }
      else
        {
          const int j = lane >> 3, i = lane & 7;
          const int key0 = wg * 64 + wr * 16 + (j & 1) * 8;
#pragma unroll
          for (int kk = 0; kk < 4; kk++)
            {
              const int q = kk * 16 + (j >> 1) * 8 + i;
              stmatrix_x4_trans (sdS_u + 2 * sw128<kBM> (q, key0), da[kk][0], da[kk][1], da[kk][2], da[kk][3]);
            }
        }
      fence_proxy_async ();
      if (!kAtomicDQ && (kSplitReduce ? t128 == 0 : tid == 0))
        bulk_wait_read<1> ();   /* this step's dQ buffer: its reduction two steps ago has read it */
      __syncthreads ();

      /* dQ = dS K (without the scale): D = 128 (256), this warpgroup's 64
       * (128) columns over the 128 keys; D = 64, all columns over its 64
       * keys. */
      float dq[NQ];
      wgmma_fence ();
      if constexpr (D == 256)
        {
#pragma unroll
          for (int kk = 0; kk < kBN / 16; kk++)
            Wgmma<T, 128>::ss_tb (dq, make_desc (sdS_u + (kk >> 2) * kBM * 128 + (kk & 3) * 32, 16, 1024),
                                  make_desc (sK_u + 2 * wg * kBN * 128 + kk * 16 * 128, kBN * 128, 1024), kk > 0);
        }
      else if constexpr (D == 128)
        {
#pragma unroll
          for (int kk = 0; kk < kBN / 16; kk++)
            Wgmma<T, 64>::ss_tb (dq, make_desc (sdS_u + (kk >> 2) * kBM * 128 + (kk & 3) * 32, 16, 1024),
                                 make_desc (sK_u + wg * kBN * 128 + kk * 16 * 128, kBN * 128, 1024), kk > 0);
        }
      else
        {
#pragma unroll
          for (int kk = 0; kk < 4; kk++)
            Wgmma<T, 64>::ss_tb (dq, make_desc (sdS_u + wg * kBM * 128 + kk * 32, 16, 1024),
                                 make_desc (sK_u + (wg * 64 + kk * 16) * 128, kBN * 128, 1024), kk > 0);
        }
      wgmma_commit ();
      wgmma_wait<0> ();
      fence_regs<NQ> (dq);
      fence_regs<NV> (acc_dv);
      fence_regs<NK> (acc_dk);
      if (kDoDV)
        fence_regs_u32<16> (&pa[0][0]);
      fence_regs_u32<16> (&da[0][0]);

      float *gdq = w.dq_accum + (((int64_t) b * f.heads_q + hq) * w.sq_pad + m0) * D;
      if constexpr (kAtomicDQ)
        {
          /* The same order, straight from the registers: this
           * warpgroup's NQ / 4 pieces of 128 threads. */
          float4 *g4 = reinterpret_cast<float4 *> (gdq) + (D == 64 ? 0 : wg * (NQ / 4) * 128);
#pragma unroll
          for (int c = 0; c < NQ / 4; c++)
            red_add_f32x4 (reinterpret_cast<float *> (g4 + c * 128 + t128),
                           make_float4 (dq[4 * c], dq[4 * c + 1], dq[4 * c + 2], dq[4 * c + 3]));
          if (C::kStages == 1)
            {
              /* Every warpgroup is done with this step's Q, dO and dS. */
              __syncthreads ();
              if (it + 1 < n_iter)
                load_step (it + 1, 0);
              cp_async_commit ();
            }
          continue;
        }
      /* The dQ block in the accumulators' order (dq_perm_offset): 16-byte
       * pieces, thread-minor. D = 64: the warpgroups' halves, then summed. */
      float *bufq = sdQ + st * C::kDQFloats;
      float4 *q4 = reinterpret_cast<float4 *> (bufq) + (D == 128 ? wg * 8 * 128 : wg * 1024);
#pragma unroll
      for (int c = 0; c < 8; c++)
        q4[c * 128 + t128] = make_float4 (dq[4 * c], dq[4 * c + 1], dq[4 * c + 2], dq[4 * c + 3]);
      if constexpr (kSplitReduce)
        {
          /* Each warpgroup's 64 columns are 16 KB of their own. */
          fence_proxy_async ();
          if (wg == 0)
            wg_barrier<1> ();
          else
            wg_barrier<2> ();
          if (t128 == 0)
            bulk_reduce_add_f32 (gdq + wg * 64 * 64, smem_u32 (bufq + wg * 64 * 64), 64 * 64 * 4);
          continue;
        }
      if constexpr (D == 64)
        {
          __syncthreads ();
          float4 *h0 = reinterpret_cast<float4 *> (bufq), *h1 = h0 + 1024;
#pragma unroll
          for (int k = 0; k < 4; k++)
            {
              const float4 a = h0[k * 256 + tid], c = h1[k * 256 + tid];
              h0[k * 256 + tid] = make_float4 (a.x + c.x, a.y + c.y, a.z + c.z, a.w + c.w);
            }
        }
      fence_proxy_async ();
      __syncthreads ();
      if (tid == 0)
        bulk_reduce_add_f32 (gdq, smem_u32 (bufq), kBM * D * 4);
    }
  if (!kAtomicDQ && (kSplitReduce ? t128 == 0 : tid == 0))
    bulk_wait_all ();
  if (n_iter == 0)
    cp_async_wait<0> ();

  /* dK (times the scale) and dV: 4-byte stores straight from the
   * accumulators (once per block). */
  T *gdk = static_cast<T *> (p.dk) + b * p.dk_strides[0] + hk * p.dk_strides[1] + (int64_t) n0 * p.dk_strides[2];
  T *gdv = static_cast<T *> (p.dv) + b * p.dv_strides[0] + hk * p.dv_strides[1] + (int64_t) n0 * p.dv_strides[2];
#pragma unroll
  for (int hh = 0; hh < 2; hh++)
    {
      const int r = krow + hh * 8;
      if (n0 + r >= Sk)
        continue;
#pragma unroll
      for (int nt = 0; nt < D / 8; nt++)
        {
          const int col = nt * 8 + (lane & 3) * 2;
          if constexpr (kDoDK)
            if (col < dqk)
              *reinterpret_cast<uint32_t *> (gdk + r * p.dk_strides[2] + col)
                = TT::pack (acc_dk[nt * 4 + 2 * hh] * scale, acc_dk[nt * 4 + 2 * hh + 1] * scale);
          if constexpr (kDoDV)
            if (col < dv)
              *reinterpret_cast<uint32_t *> (gdv + r * p.dv_strides[2] + col)
                = TT::pack (acc_dv[nt * 4 + 2 * hh], acc_dv[nt * 4 + 2 * hh + 1]);
        }
    }
#endif
}

template <typename T, int D, bool DIMS, int VARIANT, int PART>
static int
launch_part (const AccelFlashAttnBwdParams &p, const AccelFaBwdWork &w, float scale, cudaStream_t stream)
{
  constexpr int smem = Config<D, PART>::kSmem;
  constexpr auto kernel = bwd_kernel<T, D, DIMS, VARIANT, PART>;
  int err = accel_cuda_smem_once<kernel> (smem);
  if (err != cudaSuccess)
    return err;
  dim3 grid ((p.fwd.seqlen_k + kBN - 1) / kBN, p.fwd.heads_kv, p.fwd.batch);
  kernel<<<grid, kThreads, smem, stream>>> (p, w, scale);
  return cudaGetLastError ();
}

template <typename T, int D, bool DIMS, int VARIANT>
static int
launch (const AccelFlashAttnBwdParams &p, const AccelFaBwdWork &w, float scale, cudaStream_t stream)
{
  if constexpr (D <= 128)
    return launch_part<T, D, DIMS, VARIANT, 0> (p, w, scale, stream);
  else
    {
      int err = launch_part<T, D, DIMS, VARIANT, 1> (p, w, scale, stream);
      return err != cudaSuccess ? err : launch_part<T, D, DIMS, VARIANT, 2> (p, w, scale, stream);
    }
}

template <typename T, int VARIANT>
static int
dispatch (const AccelFlashAttnBwdParams &p, const AccelFaBwdWork &w, float scale, cudaStream_t stream)
{
  const int dc = accel_fa_dim_class (&p.fwd);
  const bool dims = p.fwd.head_dim != dc || accel_fa_dv (&p.fwd) != dc;
  switch (dc)
    {
    case 64:
      return dims ? launch<T, 64, true, VARIANT> (p, w, scale, stream) : launch<T, 64, false, VARIANT> (p, w, scale, stream);
    case 128:
      return dims ? launch<T, 128, true, VARIANT> (p, w, scale, stream)
                  : launch<T, 128, false, VARIANT> (p, w, scale, stream);
    case 256:
      return dims ? launch<T, 256, true, VARIANT> (p, w, scale, stream)
                  : launch<T, 256, false, VARIANT> (p, w, scale, stream);
    default:
      return ACCEL_FA_UNSUPPORTED;
    }
}

template <typename T>
static int
dispatch_variant (const AccelFlashAttnBwdParams &p, const AccelFaBwdWork &w, float scale, cudaStream_t stream)
{
#ifdef ACCEL_FA_BWD90_VARIANTS
  static int v = -1;
  switch (accel_fa_env_variant ("ACCEL_FA_BWD90_CFG", &v) & 7)
    {
    case 1:
      return dispatch<T, 1> (p, w, scale, stream);
    case 2:
      return dispatch<T, 2> (p, w, scale, stream);
    case 3:
      return dispatch<T, 3> (p, w, scale, stream);
    case 4:
      return dispatch<T, 4> (p, w, scale, stream);
    default:
      break;
    }
#endif
  return dispatch<T, 0> (p, w, scale, stream);
}

} /* namespace bwd90 */

} /* namespace accel_fa */

using namespace accel_fa;

int
accel_fa_bwd_sm90 (const AccelFlashAttnBwdParams *p, const AccelFaBwdWork *w, float scale, cudaStream_t stream)
{
  /* ACCEL_FA_BWD_SM90=0 (harness only): leave every case to the sm_80 kernel. */
  static int enabled = -1;
  if (enabled < 0)
    {
      const char *e = getenv ("ACCEL_FA_BWD_SM90");
      enabled = e == nullptr || atoi (e) != 0;
    }
  if (!enabled || !accel_fa_device_is_sm90 () || accel_fa_has_variants (&p->fwd) || p->fwd.seqlen_k == 0)
    return ACCEL_FA_UNSUPPORTED;
#ifndef ACCEL_FA_ONLY_BF16
  if (p->fwd.dtype == ACCEL_FA_F16)
    return bwd90::dispatch_variant<__half> (*p, *w, scale, stream);
#endif
  if (p->fwd.dtype == ACCEL_FA_BF16)
    return bwd90::dispatch_variant<__nv_bfloat16> (*p, *w, scale, stream);
  return ACCEL_FA_UNSUPPORTED;
}
