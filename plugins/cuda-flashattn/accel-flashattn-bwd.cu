/* accel-flashattn-bwd.cu: the backward pass for sm_80 and up.
 *
 * Three launches:
 *  1. preprocess: Dsum = rowsum (dO * O) per query row, the saved lse turned
 *     into log2 units (+inf for rows that saw no key, so their P is 0), and
 *     the f32 dQ accumulator zeroed; rows are padded to a multiple of BM.
 *  2. main: one block per BN keys of one (batch, kv head); it walks every
 *     query block of every query head of the group (so GQA needs no
 *     reduction of dK/dV afterwards), recomputes P^T = exp2 (K Q^T - lse)
 *     with each warp owning 16 keys, and accumulates
 *        dV += P^T dO,  dP^T = V dO^T,  dS^T = P^T (dP^T - Dsum),  dK += dS^T Q
 *     in registers; dS goes through shared memory for dQ += dS K, which is
 *     added to the f32 accumulator with atomics. Q, dO, lse and Dsum are
 *     double-buffered with cp.async.
 *     At D = 256 the dV and the dK/dQ halves run as two launches, since the
 *     two 16 x 256 accumulators do not fit in registers together.
 *  3. postprocess: dQ = scale * accumulator, rounded to the input type.
 *
 * GENERAL instances of the main kernel add ALiBi (a bias on S^T after the
 * soft cap, taken out again where the cap's derivative needs the capped
 * value), sinks (a key block holding sinks is seen by every query the
 * causal mask and the right window let through, whatever the left window),
 * head dims below the instance's (Dqk for q, k, dq, dk and Dv for v, out,
 * dout, dv; the k16 steps and 16-column tiles past them are skipped), and
 * packed ragged sequences (attention-varlen's backward: each block finds
 * its sequence and key block by walking cu_seqlens_k, the query rows past
 * the sequence's end are masked, the workspace rows are the packed rows).
 *
 * On sm_90a, accel-flashattn-bwd-sm90.cu replaces the main kernel for the
 * plain cases it covers; the preprocess and the workspace are shared.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include "accel-flashattn-common.cuh"
#include "accel-flashattn-private.h"

namespace accel_fa {

constexpr int kBwdBM = ACCEL_FA_BWD_ROWS;   /* query rows per step, and the padding of the workspace rows */

using BwdWork = AccelFaBwdWork;

/* One group of D/8 threads per row: 16-byte loads of dO and O (their Dv
 * columns). varlen runs as one batch of the packed rows. */
template <typename T, int D>
__global__ void __launch_bounds__ (256)
bwd_preprocess_kernel (const AccelFlashAttnBwdParams p, BwdWork w)
{
  using TT = TypeTraits<T>;
  constexpr int TPR = D / 8;
  constexpr int RPP = 256 / TPR;
  const AccelFlashAttnFwdParams &f = p.fwd;
  const int h = blockIdx.y, b = blockIdx.z;
  const int sub = threadIdx.x % TPR;
  const bool col_ok = sub * 8 < (f.head_dim_v > 0 ? f.head_dim_v : f.head_dim);
  const int64_t row_base = ((int64_t) b * f.heads_q + h) * w.sq_pad;
  const T *o = static_cast<const T *> (f.out) + b * f.o_strides[0] + h * f.o_strides[1];
  const T *dO = static_cast<const T *> (p.dout) + b * p.do_strides[0] + h * p.do_strides[1];

  for (int r = threadIdx.x / TPR; r < kBwdBM; r += RPP)
    {
      const int i = blockIdx.x * kBwdBM + r;
      float acc = 0.f;
      if (i < f.seqlen_q && col_ok)
        {
          uint4 a = *reinterpret_cast<const uint4 *> (o + i * f.o_strides[2] + sub * 8);
          uint4 c = *reinterpret_cast<const uint4 *> (dO + i * p.do_strides[2] + sub * 8);
          const uint32_t *ua = reinterpret_cast<const uint32_t *> (&a);
          const uint32_t *uc = reinterpret_cast<const uint32_t *> (&c);
#pragma unroll
          for (int e = 0; e < 4; e++)
            {
              float2 x = TT::unpack (ua[e]), y = TT::unpack (uc[e]);
              acc += x.x * y.x + x.y * y.y;
            }
        }
#pragma unroll
      for (int m = TPR / 2; m > 0; m >>= 1)
        acc += __shfl_xor_sync (0xffffffffu, acc, m);
      if (sub == 0)
        {
          w.dsum[row_base + i] = acc;
          float l = i < f.seqlen_q ? f.lse[((int64_t) b * f.heads_q + h) * f.seqlen_q + i] : -INFINITY;
          w.lse2[row_base + i] = l == -INFINITY ? INFINITY : l * kLog2e;
        }
      float4 *z = reinterpret_cast<float4 *> (w.dq_accum + (row_base + i) * D + sub * 8);
      z[0] = make_float4 (0.f, 0.f, 0.f, 0.f);
      z[1] = make_float4 (0.f, 0.f, 0.f, 0.f);
    }
}

/* dQ = scale * the accumulator, rounded. With PERM the accumulator's
 * query blocks are in the order of the sm_90a kernel (dq_perm_offset). */
template <typename T, int D, bool PERM>
__global__ void __launch_bounds__ (256)
bwd_postprocess_kernel (const AccelFlashAttnBwdParams p, BwdWork w, float scale)
{
  using TT = TypeTraits<T>;
  constexpr int TPR = D / 8;
  constexpr int RPP = 256 / TPR;
  const AccelFlashAttnFwdParams &f = p.fwd;
  const int h = blockIdx.y, b = blockIdx.z;
  const int sub = threadIdx.x % TPR;
  const int64_t row_base = ((int64_t) b * f.heads_q + h) * w.sq_pad;
  T *dq = static_cast<T *> (p.dq) + b * p.dq_strides[0] + h * p.dq_strides[1];
  if (sub * 8 >= f.head_dim)
    return;

  for (int r = threadIdx.x / TPR; r < kBwdBM; r += RPP)
    {
      const int i = blockIdx.x * kBwdBM + r;
      if (i >= f.seqlen_q)
        continue;
      float4 x, y;
      if (PERM)
        {
          const float *blk = w.dq_accum + (row_base + blockIdx.x * kBwdBM) * D;
          float v[8];
#pragma unroll
          for (int e = 0; e < 8; e++)
            v[e] = blk[dq_perm_offset<D> (r, sub * 8 + e)];
          x = make_float4 (v[0], v[1], v[2], v[3]);
          y = make_float4 (v[4], v[5], v[6], v[7]);
        }
      else
        {
          const float4 *a = reinterpret_cast<const float4 *> (w.dq_accum + (row_base + i) * D + sub * 8);
          x = a[0];
          y = a[1];
        }
      uint4 out;
      out.x = TT::pack (x.x * scale, x.y * scale);
      out.y = TT::pack (x.z * scale, x.w * scale);
      out.z = TT::pack (y.x * scale, y.y * scale);
      out.w = TT::pack (y.z * scale, y.w * scale);
      *reinterpret_cast<uint4 *> (dq + i * p.dq_strides[2] + sub * 8) = out;
    }
}

template <typename T, int D, int BM, int BN, int NW>
struct BwdConfig {
  static constexpr int kThreads = NW * 32;
  /* sK, sV, 2 x (sQ, sdO), sdS [BN][BM], 2 x (lse2, dsum) */
  static constexpr int kSmem = (2 * BN * D + 4 * BM * D + BN * BM) * (int) sizeof (T) + 4 * BM * (int) sizeof (float);
};

template <typename T, int D, int BM, int BN, int NW, bool DO_DV, bool DO_DKDQ, bool GENERAL>
__global__ void __launch_bounds__ (NW * 32, 1)
bwd_kernel (const AccelFlashAttnBwdParams p, BwdWork w, float scale)
{
  using TT = TypeTraits<T>;
  constexpr int NTH = NW * 32;
  constexpr int SN = BM / 8;         /* 8-column (query) tiles of S^T */
  constexpr int ON = D / 8;          /* 8-column tiles of dK, dV */
  constexpr int DQC = (BM / 16) * (D / 64) >= NW ? 64 : 32;   /* dims per dQ warp tile */
  constexpr int DQ_TILES = (BM / 16) * (D / DQC);
  static_assert (BN == 16 * NW, "each warp owns 16 keys");
  static_assert (BM >= 64 && BM == kBwdBM, "sdS rows need 8 chunks for the swizzle");

  extern __shared__ __align__ (128) unsigned char smem_raw[];
  T *sK = reinterpret_cast<T *> (smem_raw);
  T *sV = sK + BN * D;
  T *sQ = sV + BN * D;               /* [2][BM * D] */
  T *sdO = sQ + 2 * BM * D;          /* [2][BM * D] */
  T *sdS = sdO + 2 * BM * D;         /* [BN][BM] */
  float *sL = reinterpret_cast<float *> (sdS + BN * BM);   /* [2][BM] */
  float *sDs = sL + 2 * BM;                                /* [2][BM] */

  const AccelFlashAttnFwdParams &f = p.fwd;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int hk = blockIdx.y;
  const int group = f.heads_q / f.heads_kv;
  const bool varlen = GENERAL && f.cu_seqlens_q != nullptr;
  /* Head dims of q/k and of v/out (the instance's D in the plain case). */
  const int dqk = GENERAL ? f.head_dim : D;
  const int dv = GENERAL ? (f.head_dim_v > 0 ? f.head_dim_v : f.head_dim) : D;
  int b, n_block, Sq = f.seqlen_q, Sk = f.seqlen_k, q_start = 0, k_start = 0;
  if (varlen)
    {
      if (!varlen_block (f, BN, warp, true, b, n_block, q_start, Sq, k_start, Sk))
        return;   /* one of the surplus blocks of the grid's upper bound */
    }
  else
    {
      n_block = blockIdx.x;
      b = blockIdx.z;
    }
  const int bs = varlen ? 0 : b;   /* varlen buffers have no batch stride */
  const int n0 = n_block * BN;

  const MaskInfo mi = mask_info (f, Sq, Sk);
  const int sinks = GENERAL && mi.left >= 0 ? f.sinks : 0;

  /* Queries that see at least one key of [n0, min (n0 + BN, Sk)); every
   * query the right limit lets through sees a sink. */
  int mb_min, n_mb;
  query_blocks (mi, n0, BN, GENERAL && n0 < sinks, BM, mb_min, n_mb);
  const int n_iter = n_mb * group;

  const T *gk = static_cast<const T *> (f.k) + bs * f.k_strides[0] + hk * f.k_strides[1] + (int64_t) (k_start + n0) * f.k_strides[2];
  const T *gv = static_cast<const T *> (f.v) + bs * f.v_strides[0] + hk * f.v_strides[1] + (int64_t) (k_start + n0) * f.v_strides[2];

  const bool capped = f.softcap > 0.f;
  const float sl = capped ? 1.f : scale * kLog2e;
  const float cap_in = capped ? scale / f.softcap : 0.f;
  const float cap_out = f.softcap * kLog2e;
  const bool alibi = GENERAL && f.alibi_slopes != nullptr;

  const uint32_t sK_u = smem_u32 (sK), sV_u = smem_u32 (sV), sdS_u = smem_u32 (sdS);

  /* Workspace rows of (query head, first row of the step's block). */
  auto work_row = [&] (int hq, int m0) -> int64_t {
    return varlen ? (int64_t) hq * w.sq_pad + q_start + m0 : ((int64_t) b * f.heads_q + hq) * w.sq_pad + m0;
  };

  auto load_step = [&] (int it, int st) {
    const int hq = hk * group + it / n_mb;
    const int m0 = (mb_min + it % n_mb) * BM;
    const T *gq = static_cast<const T *> (f.q) + bs * f.q_strides[0] + hq * f.q_strides[1]
                  + (int64_t) (q_start + m0) * f.q_strides[2];
    const T *gdo = static_cast<const T *> (p.dout) + bs * p.do_strides[0] + hq * p.do_strides[1]
                   + (int64_t) (q_start + m0) * p.do_strides[2];
    load_tile<T, BM, D, NTH> (sQ + st * BM * D, gq, f.q_strides[2], Sq - m0, tid, dqk);
    load_tile<T, BM, D, NTH> (sdO + st * BM * D, gdo, p.do_strides[2], Sq - m0, tid, dv);
    const int64_t rb = work_row (hq, m0);
    if (varlen)
      {
        /* Packed rows start anywhere: 4-byte copies. */
        if (tid < BM)
          cp_async_4 (smem_u32 (sL + st * BM + tid), w.lse2 + rb + tid);
        else if (tid < 2 * BM)
          cp_async_4 (smem_u32 (sDs + st * BM + tid - BM), w.dsum + rb + tid - BM);
      }
    else if (tid < BM / 4)
      cp_async_16 (smem_u32 (sL + st * BM + tid * 4), w.lse2 + rb + tid * 4, 16);
    else if (tid < BM / 2)
      cp_async_16 (smem_u32 (sDs + st * BM + (tid - BM / 4) * 4), w.dsum + rb + (tid - BM / 4) * 4, 16);
  };

  float acc_dv[DO_DV ? ON : 1][4];
  float acc_dk[DO_DKDQ ? ON : 1][4];
#pragma unroll
  for (int dt = 0; dt < ON; dt++)
#pragma unroll
    for (int e = 0; e < 4; e++)
      {
        if (DO_DV)
          acc_dv[dt][e] = 0.f;
        if (DO_DKDQ)
          acc_dk[dt][e] = 0.f;
      }

  load_tile<T, BN, D, NTH> (sK, gk, f.k_strides[2], Sk - n0, tid, dqk);
  if (DO_DKDQ)
    load_tile<T, BN, D, NTH> (sV, gv, f.v_strides[2], Sk - n0, tid, dv);
  if (n_iter > 0)
    load_step (0, 0);
  cp_async_commit ();

  const int krow = warp * 16;   /* this warp's keys within the block */

  for (int it = 0; it < n_iter; it++)
    {
      const int st = it & 1;
      const int hq = hk * group + it / n_mb;
      const int m0 = (mb_min + it % n_mb) * BM;
      if (it + 1 < n_iter)
        {
          load_step (it + 1, st ^ 1);
          cp_async_commit ();
          cp_async_wait<1> ();
        }
      else
        cp_async_wait<0> ();
      __syncthreads ();

      const uint32_t sQ_u = smem_u32 (sQ + st * BM * D), sdO_u = smem_u32 (sdO + st * BM * D);
      const float *lse2 = sL + st * BM, *dsum = sDs + st * BM;

      /* S^T = K_w Q^T: rows are this warp's 16 keys, columns the BM queries. */
      float s[SN][4], dp[SN][4];
#pragma unroll
      for (int nt = 0; nt < SN; nt++)
#pragma unroll
        for (int e = 0; e < 4; e++)
          s[nt][e] = dp[nt][e] = 0.f;
      mma_abt<T, D, BM, 1, 2, GENERAL> (&s, sK_u, krow, sQ_u, lane, dqk);

      if (capped)
        {
#pragma unroll
          for (int nt = 0; nt < SN; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++)
              s[nt][e] = fast_tanh (s[nt][e] * cap_in) * cap_out;
        }
      /* ALiBi in the units of S (logit = S * sl / log2 (e) after the cap),
       * for this step's query head; element (key r, query c) has
       * p - j = m0 + c + off - n0 - r. */
      float alibi_mul = 0.f, alibi_rel = 0.f;
      if (alibi)
        {
          alibi_mul = -f.alibi_slopes[(int64_t) b * f.alibi_batch_stride + hq] * kLog2e / sl;
          alibi_rel = (float) (m0 + (lane & 3) * 2 + mi.off - n0 - krow - (lane >> 2));
#pragma unroll
          for (int nt = 0; nt < SN; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++)
              s[nt][e] = fmaf (fabsf (alibi_rel + (float) (nt * 8 + (e & 1) - (e >> 1) * 8)), alibi_mul, s[nt][e]);
        }
      /* P^T = exp2 (S^T * sl - lse2[query]); element (key r, query c).
       * varlen: the rows past the sequence are the next one's, masked. */
      const bool masked = tile_needs_mask (mi, m0, BM, n0, BN) || (varlen && m0 + BM > Sq);
#pragma unroll
      for (int nt = 0; nt < SN; nt++)
        {
          const int c = nt * 8 + (lane & 3) * 2;
          const float2 l2 = *reinterpret_cast<const float2 *> (lse2 + c);
#pragma unroll
          for (int e = 0; e < 4; e++)
            {
              float x = fmaf (s[nt][e], sl, -((e & 1) ? l2.y : l2.x));
              if (masked)
                {
                  int lo, hi;
                  const int key = n0 + krow + (lane >> 2) + (e >> 1) * 8;
                  row_limits (mi, m0 + c + (e & 1), key, lo, hi);
                  /* sinks are exempt from the left window only */
                  if (0 > hi || (0 < lo && (!GENERAL || key >= sinks)) || (varlen && m0 + c + (e & 1) >= Sq))
                    x = -INFINITY;
                }
              s[nt][e] = fast_exp2 (x);
            }
        }

      if constexpr (DO_DV)
        mma_pb<T, D, BM, 1, GENERAL> (&acc_dv, &s, sdO_u, lane, dv);   /* dV += P^T dO */

      if constexpr (DO_DKDQ)
        {
          /* dP^T = V_w dO^T */
          mma_abt<T, D, BM, 1, 2, GENERAL> (&dp, sV_u, krow, sdO_u, lane, dv);
          /* dS^T = P^T (dP^T - Dsum), times 1 - tanh^2 under the soft cap
           * (tanh recovered from P: s = log2 (P) + lse2). Staged in sdS as
           * [key][query] for dQ. */
#pragma unroll
          for (int nt = 0; nt < SN; nt++)
            {
              const int c = nt * 8 + (lane & 3) * 2;
              const float2 ds2 = *reinterpret_cast<const float2 *> (dsum + c);
#pragma unroll
              for (int e = 0; e < 4; e++)
                {
                  float d = s[nt][e] * (dp[nt][e] - ((e & 1) ? ds2.y : ds2.x));
                  if (capped && s[nt][e] > 0.f)
                    {
                      const float2 l2 = *reinterpret_cast<const float2 *> (lse2 + c);
                      float t = __log2f (s[nt][e]) + ((e & 1) ? l2.y : l2.x);
                      if (alibi)   /* the capped logit, without the bias */
                        t -= fabsf (alibi_rel + (float) (nt * 8 + (e & 1) - (e >> 1) * 8)) * alibi_mul;
                      t /= cap_out;
                      d *= 1.f - t * t;
                    }
                  dp[nt][e] = d;
                }
#pragma unroll
              for (int hh = 0; hh < 2; hh++)
                *reinterpret_cast<uint32_t *> (sdS + swz<BM> (krow + (lane >> 2) + hh * 8, c))
                  = TT::pack (dp[nt][2 * hh], dp[nt][2 * hh + 1]);
            }
          /* dK += dS^T Q */
          mma_pb<T, D, BM, 1, GENERAL> (&acc_dk, &dp, sQ_u, lane, dqk);
          __syncthreads ();

          /* dQ (BM x D) += dS K, in 16 x DQC tiles spread over the warps. */
          float *dqa = w.dq_accum + work_row (hq, m0) * D;
#pragma unroll 1
          for (int t = warp; t < DQ_TILES; t += NW)
            {
              const int tm = t % (BM / 16), tn = t / (BM / 16);
              if (GENERAL && tn * DQC >= dqk)
                continue;
              float acc[DQC / 8][4];
#pragma unroll
              for (int dt = 0; dt < DQC / 8; dt++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                  acc[dt][e] = 0.f;
#pragma unroll
              for (int kk = 0; kk < BN / 16; kk++)
                {
                  uint32_t a[4];
                  ldmatrix_x4_trans (sdS_u + 2 * swz<BM> (kk * 16 + (lane >> 4) * 8 + (lane & 7), tm * 16 + ((lane >> 3) & 1) * 8),
                                     a[0], a[1], a[2], a[3]);
#pragma unroll
                  for (int j = 0; j < DQC / 16; j++)
                    {
                      if (GENERAL && tn * DQC + j * 16 >= dqk)
                        break;
                      uint32_t b0, b1, b2, b3;
                      ldmatrix_x4_trans (sK_u + 2 * swz<D> (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7),
                                                            tn * DQC + j * 16 + (lane >> 4) * 8),
                                         b0, b1, b2, b3);
                      TT::mma (acc[2 * j], a, b0, b1);
                      TT::mma (acc[2 * j + 1], a, b2, b3);
                    }
                }
#pragma unroll
              for (int dt = 0; dt < DQC / 8; dt++)
#pragma unroll
                for (int hh = 0; hh < 2; hh++)
                  {
                    const int col = tn * DQC + dt * 8 + (lane & 3) * 2;
                    if (GENERAL && col >= dqk)
                      continue;
                    float *dst = dqa + (tm * 16 + (lane >> 2) + hh * 8) * D + col;
                    red_add_f32x2 (dst, acc[dt][2 * hh], acc[dt][2 * hh + 1]);
                  }
            }
        }
      else
        __syncthreads ();   /* the next step's loads overwrite this step's stage */
    }

  /* Store dK (times the scale) and dV through the warp's own rows of sK / sV.
   * A key block that no query sees ran no step, so its K and V copies may
   * still be landing in sK / sV: wait for them before writing over. */
  if (n_iter == 0)
    cp_async_wait<0> ();
  __syncthreads ();
  const int row = krow + (lane >> 2);
  if (DO_DV)
    {
#pragma unroll
      for (int dt = 0; dt < ON; dt++)
#pragma unroll
        for (int hh = 0; hh < 2; hh++)
          *reinterpret_cast<uint32_t *> (sV + swz<D> (row + hh * 8, dt * 8 + (lane & 3) * 2))
            = TT::pack (acc_dv[DO_DV ? dt : 0][2 * hh], acc_dv[DO_DV ? dt : 0][2 * hh + 1]);
    }
  if (DO_DKDQ)
    {
#pragma unroll
      for (int dt = 0; dt < ON; dt++)
#pragma unroll
        for (int hh = 0; hh < 2; hh++)
          *reinterpret_cast<uint32_t *> (sK + swz<D> (row + hh * 8, dt * 8 + (lane & 3) * 2))
            = TT::pack (acc_dk[DO_DKDQ ? dt : 0][2 * hh] * scale, acc_dk[DO_DKDQ ? dt : 0][2 * hh + 1] * scale);
    }
  __syncwarp ();
  constexpr int CH = D / 8;
  T *gdk = static_cast<T *> (p.dk) + bs * p.dk_strides[0] + hk * p.dk_strides[1] + (int64_t) (k_start + n0) * p.dk_strides[2];
  T *gdv = static_cast<T *> (p.dv) + bs * p.dv_strides[0] + hk * p.dv_strides[1] + (int64_t) (k_start + n0) * p.dv_strides[2];
  for (int idx = lane; idx < 16 * CH; idx += 32)
    {
      const int r = krow + idx / CH, c = idx % CH;
      if (n0 + r >= Sk)
        continue;
      if (DO_DV && c * 8 < dv)
        *reinterpret_cast<uint4 *> (gdv + r * p.dv_strides[2] + c * 8) = *reinterpret_cast<const uint4 *> (sV + swz<D> (r, c * 8));
      if (DO_DKDQ && c * 8 < dqk)
        *reinterpret_cast<uint4 *> (gdk + r * p.dk_strides[2] + c * 8) = *reinterpret_cast<const uint4 *> (sK + swz<D> (r, c * 8));
    }
}

template <typename T, int D, int BN, int NW, bool DO_DV, bool DO_DKDQ, bool GENERAL>
static int
launch_bwd_kernel (const AccelFlashAttnBwdParams &p, const BwdWork &w, float scale, cudaStream_t stream)
{
  using Cfg = BwdConfig<T, D, kBwdBM, BN, NW>;
  constexpr auto kernel = bwd_kernel<T, D, kBwdBM, BN, NW, DO_DV, DO_DKDQ, GENERAL>;
  int err = accel_cuda_smem_once<kernel> (Cfg::kSmem);
  if (err != cudaSuccess)
    return err;
  /* varlen: an upper bound of the key blocks, sum ceil (len_b / BN) <=
   * ceil (Tk / BN) + B; the blocks past the last one return at once. */
  dim3 grid = p.fwd.cu_seqlens_q ? dim3 ((p.fwd.seqlen_k + BN - 1) / BN + p.fwd.batch, p.fwd.heads_kv, 1)
                                 : dim3 ((p.fwd.seqlen_k + BN - 1) / BN, p.fwd.heads_kv, p.fwd.batch);
  kernel<<<grid, Cfg::kThreads, Cfg::kSmem, stream>>> (p, w, scale);
  return cudaGetLastError ();
}

template <typename T, int D, int BN, int NW, bool DO_DV, bool DO_DKDQ>
static int
launch_bwd_main (const AccelFlashAttnBwdParams &p, const BwdWork &w, float scale, cudaStream_t stream)
{
  if (accel_fa_is_general (&p.fwd))
    return launch_bwd_kernel<T, D, BN, NW, DO_DV, DO_DKDQ, true> (p, w, scale, stream);
  return launch_bwd_kernel<T, D, BN, NW, DO_DV, DO_DKDQ, false> (p, w, scale, stream);
}

template <typename T, int D>
static int
launch_bwd (const AccelFlashAttnBwdParams &p, const BwdWork &w, float scale, cudaStream_t stream)
{
  const bool varlen = p.fwd.cu_seqlens_q != nullptr;
  dim3 rows (w.sq_pad / kBwdBM, p.fwd.heads_q, varlen ? 1 : p.fwd.batch);
  /* varlen: the pre- and postprocess see one batch of the packed rows. */
  AccelFlashAttnBwdParams pp = p;
  if (varlen)
    {
      pp.fwd.batch = 1;
      pp.fwd.cu_seqlens_q = pp.fwd.cu_seqlens_k = nullptr;
    }
  bwd_preprocess_kernel<T, D><<<rows, 256, 0, stream>>> (pp, w);
  int err = cudaGetLastError ();
  if (err != cudaSuccess)
    return err;
  bool perm = false;
  if (p.fwd.seqlen_k > 0 || varlen)
    {
      err = ACCEL_FA_UNSUPPORTED;
#ifdef ACCEL_FA_HAVE_SM90
      if (p.fwd.path != ACCEL_FA_PATH_SM80)
        {
          err = accel_fa_bwd_sm90 (&p, &w, scale, stream);
          perm = err == cudaSuccess;
        }
#endif
      if (err == ACCEL_FA_UNSUPPORTED)
        {
          if constexpr (D <= 128)
            err = launch_bwd_main<T, D, 128, 8, true, true> (p, w, scale, stream);
          else
            {
              err = launch_bwd_main<T, D, 64, 4, true, false> (p, w, scale, stream);
              if (err == cudaSuccess)
                err = launch_bwd_main<T, D, 64, 4, false, true> (p, w, scale, stream);
            }
        }
      if (err != cudaSuccess)
        return err;
    }
  if (perm)
    bwd_postprocess_kernel<T, D, true><<<rows, 256, 0, stream>>> (pp, w, scale);
  else
    bwd_postprocess_kernel<T, D, false><<<rows, 256, 0, stream>>> (pp, w, scale);
  return cudaGetLastError ();
}

template <typename T>
static int
dispatch_bwd (const AccelFlashAttnBwdParams &p, const BwdWork &w, float scale, cudaStream_t stream)
{
  switch (accel_fa_dim_class (&p.fwd))
    {
    case 64:
      return launch_bwd<T, 64> (p, w, scale, stream);
    case 128:
      return launch_bwd<T, 128> (p, w, scale, stream);
    case 256:
      return launch_bwd<T, 256> (p, w, scale, stream);
    default:
      return ACCEL_FA_UNSUPPORTED;
    }
}

/* Zero-filled dK and dV where there are no queries (Sq = 0). */
static int
zero_rows (void *base, const int64_t *strides, int batch, int heads, int rows, int d, int esize, cudaStream_t stream)
{
  for (int b = 0; b < batch; b++)
    for (int h = 0; h < heads; h++)
      {
        char *p = static_cast<char *> (base) + esize * (b * strides[0] + h * strides[1]);
        cudaError_t err = cudaMemset2DAsync (p, esize * strides[2], 0, esize * d, rows, stream);
        if (err != cudaSuccess)
          return err;
      }
  return cudaSuccess;
}

} /* namespace accel_fa */

using namespace accel_fa;

extern "C" const char *
accel_flashattn_bwd_check (const AccelFlashAttnBwdParams *p)
{
  const char *why = accel_fa_check_common (&p->fwd);
  if (why)
    return why;
  if (p->fwd.lse == nullptr)
    return "the backward pass needs the forward pass's lse";
  if (!p->dout || !p->dq || !p->dk || !p->dv)
    return "dout, dq, dk and dv must all be set";
  const int es = accel_fa_elem_size (&p->fwd);
  if (!accel_fa_strides_ok (p->do_strides, p->dout, es) || !accel_fa_strides_ok (p->dq_strides, p->dq, es)
      || !accel_fa_strides_ok (p->dk_strides, p->dk, es) || !accel_fa_strides_ok (p->dv_strides, p->dv, es))
    return "a gradient buffer or stride is not 16-byte aligned";
  return nullptr;
}

extern "C" size_t
accel_flashattn_bwd_workspace_size (const AccelFlashAttnBwdParams *p)
{
  size_t total = 0;
  accel_fa_bwd_work_layout (p, nullptr, &total);
  return total;
}

extern "C" int
accel_flashattn_bwd (const AccelFlashAttnBwdParams *p, void *workspace, void *stream)
{
  if (accel_flashattn_bwd_check (p) != nullptr)
    return ACCEL_FA_UNSUPPORTED;
  const AccelFlashAttnFwdParams &f = p->fwd;
  cudaStream_t st = static_cast<cudaStream_t> (stream);
  if (f.batch == 0)
    return cudaSuccess;
  /* varlen runs with no query rows too: its cu_seqlens are checked there,
   * and its key blocks write the zeros. */
  if (f.seqlen_q == 0 && f.cu_seqlens_q == nullptr)
    {
      const int es = accel_fa_elem_size (&f);
      int err = zero_rows (p->dk, p->dk_strides, f.batch, f.heads_kv, f.seqlen_k, f.head_dim, es, st);
      return err != cudaSuccess ? err
                                : zero_rows (p->dv, p->dv_strides, f.batch, f.heads_kv, f.seqlen_k, accel_fa_dv (&f), es, st);
    }
  const float scale = accel_fa_scale (&f);
  if (f.dtype == ACCEL_FA_F32)
    return f.path == ACCEL_FA_PATH_SM90 ? ACCEL_FA_UNSUPPORTED : accel_fa_bwd_f32 (p, workspace, scale, st);
  BwdWork w = accel_fa_bwd_work_layout (p, workspace, nullptr);
#ifndef ACCEL_FA_ONLY_BF16
  if (f.dtype == ACCEL_FA_F16)
    return dispatch_bwd<__half> (*p, w, scale, st);
#endif
  return dispatch_bwd<__nv_bfloat16> (*p, w, scale, st);
}
