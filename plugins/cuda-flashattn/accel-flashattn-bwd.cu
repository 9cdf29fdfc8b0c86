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
 * value) and sinks (a key block holding sinks is seen by every query the
 * causal mask and the right window let through, whatever the left window).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include "accel-flashattn-common.cuh"
#include "accel-flashattn-private.h"

namespace accel_fa {

constexpr int kBwdBM = 64;   /* query rows per step, and the padding of the workspace rows */

struct BwdWork {
  float *dq_accum;   /* [B, Hq, Sq_pad, D] */
  float *lse2;       /* [B, Hq, Sq_pad] */
  float *dsum;       /* [B, Hq, Sq_pad] */
  int sq_pad;
};

static inline size_t
align256 (size_t n)
{
  return (n + 255) & ~(size_t) 255;
}

static BwdWork
bwd_work_layout (const AccelFlashAttnBwdParams *p, void *base, size_t *total)
{
  BwdWork w;
  const AccelFlashAttnFwdParams &f = p->fwd;
  w.sq_pad = (f.seqlen_q + kBwdBM - 1) / kBwdBM * kBwdBM;
  size_t rows = (size_t) f.batch * f.heads_q * w.sq_pad;
  size_t a = align256 (rows * f.head_dim * sizeof (float));
  size_t l = align256 (rows * sizeof (float));
  char *c = static_cast<char *> (base);
  w.dq_accum = reinterpret_cast<float *> (c);
  w.lse2 = reinterpret_cast<float *> (c + a);
  w.dsum = reinterpret_cast<float *> (c + a + l);
  if (total)
    *total = a + 2 * l;
  return w;
}

/* One group of D/8 threads per row: 16-byte loads of dO and O. */
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
  const int64_t row_base = ((int64_t) b * f.heads_q + h) * w.sq_pad;
  const T *o = static_cast<const T *> (f.out) + b * f.o_strides[0] + h * f.o_strides[1];
  const T *dO = static_cast<const T *> (p.dout) + b * p.do_strides[0] + h * p.do_strides[1];

  for (int r = threadIdx.x / TPR; r < kBwdBM; r += RPP)
    {
      const int i = blockIdx.x * kBwdBM + r;
      float acc = 0.f;
      if (i < f.seqlen_q)
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

template <typename T, int D>
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

  for (int r = threadIdx.x / TPR; r < kBwdBM; r += RPP)
    {
      const int i = blockIdx.x * kBwdBM + r;
      if (i >= f.seqlen_q)
        continue;
      const float4 *a = reinterpret_cast<const float4 *> (w.dq_accum + (row_base + i) * D + sub * 8);
      float4 x = a[0], y = a[1];
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

template <typename T, int D, int BM, int BN, int NW, bool DO_DV, bool DO_DKDQ, bool FUSED, bool GENERAL>
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
  const int n_block = blockIdx.x, hk = blockIdx.y, b = blockIdx.z;
  const int group = f.heads_q / f.heads_kv;
  const int n0 = n_block * BN;
  const int Sq = f.seqlen_q, Sk = f.seqlen_k;

  MaskInfo mi;
  mi.seqlen_q = Sq;
  mi.seqlen_k = Sk;
  mi.off = Sk - Sq;
  mi.left = f.window_left;
  mi.right = f.causal ? 0 : f.window_right;
  const int sinks = GENERAL && mi.left >= 0 ? f.sinks : 0;

  /* Queries that see at least one key of [n0, min (n0 + BN, Sk)); every
   * query the right limit lets through sees a sink. */
  int i_lo = 0, i_hi = Sq - 1;
  if (mi.right >= 0)
    i_lo = max (0, n0 - mi.off - mi.right);
  if (mi.left >= 0 && !(GENERAL && n0 < sinks))
    i_hi = min (i_hi, min (n0 + BN, Sk) - 1 - mi.off + mi.left);
  const int mb_min = i_lo / BM;
  const int n_mb = i_hi >= i_lo ? i_hi / BM + 1 - mb_min : 0;
  const int n_iter = n_mb * group;

  const T *gk = static_cast<const T *> (f.k) + b * f.k_strides[0] + hk * f.k_strides[1] + (int64_t) n0 * f.k_strides[2];
  const T *gv = static_cast<const T *> (f.v) + b * f.v_strides[0] + hk * f.v_strides[1] + (int64_t) n0 * f.v_strides[2];

  const bool capped = f.softcap > 0.f;
  const float sl = capped ? 1.f : scale * kLog2e;
  const float cap_in = capped ? scale / f.softcap : 0.f;
  const float cap_out = f.softcap * kLog2e;
  const bool alibi = GENERAL && f.alibi_slopes != nullptr;

  const uint32_t sK_u = smem_u32 (sK), sV_u = smem_u32 (sV), sdS_u = smem_u32 (sdS);

  auto load_step = [&] (int it, int st) {
    const int hq = hk * group + it / n_mb;
    const int m0 = (mb_min + it % n_mb) * BM;
    const T *gq = static_cast<const T *> (f.q) + b * f.q_strides[0] + hq * f.q_strides[1] + (int64_t) m0 * f.q_strides[2];
    const T *gdo = static_cast<const T *> (p.dout) + b * p.do_strides[0] + hq * p.do_strides[1] + (int64_t) m0 * p.do_strides[2];
    load_tile<T, BM, D, NTH> (sQ + st * BM * D, gq, f.q_strides[2], Sq - m0, tid);
    load_tile<T, BM, D, NTH> (sdO + st * BM * D, gdo, p.do_strides[2], Sq - m0, tid);
    const int64_t rb = ((int64_t) b * f.heads_q + hq) * w.sq_pad + m0;
    if (tid < BM / 4)
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

  load_tile<T, BN, D, NTH> (sK, gk, f.k_strides[2], Sk - n0, tid);
  load_tile<T, BN, D, NTH> (sV, gv, f.v_strides[2], Sk - n0, tid);
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
      /* With FUSED, dP^T = V_w dO^T runs in the same loop: two independent
       * accumulator sets per ldmatrix phase instead of one. */
      constexpr bool kFuse = FUSED && DO_DKDQ;
      float s[SN][4], dp[SN][4];
#pragma unroll
      for (int nt = 0; nt < SN; nt++)
#pragma unroll
        for (int e = 0; e < 4; e++)
          s[nt][e] = dp[nt][e] = 0.f;
#pragma unroll 2
      for (int kq = 0; kq < D / 16; kq++)
        {
          uint32_t a[4], av[4];
          ldmatrix_x4 (sK_u + 2 * swz<D> (krow + (lane & 15), kq * 16 + (lane >> 4) * 8), a[0], a[1], a[2], a[3]);
          if (kFuse)
            ldmatrix_x4 (sV_u + 2 * swz<D> (krow + (lane & 15), kq * 16 + (lane >> 4) * 8), av[0], av[1], av[2], av[3]);
#pragma unroll
          for (int j = 0; j < SN / 2; j++)
            {
              const int boff = 2 * swz<D> (j * 16 + (lane >> 4) * 8 + (lane & 7), kq * 16 + ((lane >> 3) & 1) * 8);
              uint32_t b0, b1, b2, b3;
              ldmatrix_x4 (sQ_u + boff, b0, b1, b2, b3);
              TT::mma (s[2 * j], a, b0, b1);
              TT::mma (s[2 * j + 1], a, b2, b3);
              if (kFuse)
                {
                  ldmatrix_x4 (sdO_u + boff, b0, b1, b2, b3);
                  TT::mma (dp[2 * j], av, b0, b1);
                  TT::mma (dp[2 * j + 1], av, b2, b3);
                }
            }
        }

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
      /* P^T = exp2 (S^T * sl - lse2[query]); element (key r, query c). */
      const bool masked = tile_needs_mask (mi, m0, BM, n0, BN);
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
                  if (0 > hi || (0 < lo && (!GENERAL || key >= sinks)))
                    x = -INFINITY;
                }
              s[nt][e] = fast_exp2 (x);
            }
        }

      if (DO_DV && !kFuse)
        {
          /* dV += P^T dO */
#pragma unroll
          for (int kk = 0; kk < BM / 16; kk++)
            {
              uint32_t a[4];
              a[0] = TT::pack (s[2 * kk][0], s[2 * kk][1]);
              a[1] = TT::pack (s[2 * kk][2], s[2 * kk][3]);
              a[2] = TT::pack (s[2 * kk + 1][0], s[2 * kk + 1][1]);
              a[3] = TT::pack (s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
              for (int j = 0; j < ON / 2; j++)
                {
                  uint32_t b0, b1, b2, b3;
                  ldmatrix_x4_trans (sdO_u + 2 * swz<D> (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7), j * 16 + (lane >> 4) * 8),
                                     b0, b1, b2, b3);
                  TT::mma (acc_dv[DO_DV ? 2 * j : 0], a, b0, b1);
                  TT::mma (acc_dv[DO_DV ? 2 * j + 1 : 0], a, b2, b3);
                }
            }
        }

      if (DO_DKDQ)
        {
          /* dP^T = V_w dO^T */
#pragma unroll 2
          for (int kq = 0; kq < (kFuse ? 0 : D / 16); kq++)
            {
              uint32_t a[4];
              ldmatrix_x4 (sV_u + 2 * swz<D> (krow + (lane & 15), kq * 16 + (lane >> 4) * 8), a[0], a[1], a[2], a[3]);
#pragma unroll
              for (int j = 0; j < SN / 2; j++)
                {
                  uint32_t b0, b1, b2, b3;
                  ldmatrix_x4 (sdO_u + 2 * swz<D> (j * 16 + (lane >> 4) * 8 + (lane & 7), kq * 16 + ((lane >> 3) & 1) * 8),
                               b0, b1, b2, b3);
                  TT::mma (dp[2 * j], a, b0, b1);
                  TT::mma (dp[2 * j + 1], a, b2, b3);
                }
            }
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
          /* dK += dS^T Q (with FUSED, dV += P^T dO beside it) */
#pragma unroll
          for (int kk = 0; kk < BM / 16; kk++)
            {
              uint32_t a[4], ap[4];
              a[0] = TT::pack (dp[2 * kk][0], dp[2 * kk][1]);
              a[1] = TT::pack (dp[2 * kk][2], dp[2 * kk][3]);
              a[2] = TT::pack (dp[2 * kk + 1][0], dp[2 * kk + 1][1]);
              a[3] = TT::pack (dp[2 * kk + 1][2], dp[2 * kk + 1][3]);
              if (kFuse && DO_DV)
                {
                  ap[0] = TT::pack (s[2 * kk][0], s[2 * kk][1]);
                  ap[1] = TT::pack (s[2 * kk][2], s[2 * kk][3]);
                  ap[2] = TT::pack (s[2 * kk + 1][0], s[2 * kk + 1][1]);
                  ap[3] = TT::pack (s[2 * kk + 1][2], s[2 * kk + 1][3]);
                }
#pragma unroll
              for (int j = 0; j < ON / 2; j++)
                {
                  const int boff = 2 * swz<D> (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7), j * 16 + (lane >> 4) * 8);
                  uint32_t b0, b1, b2, b3;
                  ldmatrix_x4_trans (sQ_u + boff, b0, b1, b2, b3);
                  TT::mma (acc_dk[DO_DKDQ ? 2 * j : 0], a, b0, b1);
                  TT::mma (acc_dk[DO_DKDQ ? 2 * j + 1 : 0], a, b2, b3);
                  if (kFuse && DO_DV)
                    {
                      ldmatrix_x4_trans (sdO_u + boff, b0, b1, b2, b3);
                      TT::mma (acc_dv[DO_DV ? 2 * j : 0], ap, b0, b1);
                      TT::mma (acc_dv[DO_DV ? 2 * j + 1 : 0], ap, b2, b3);
                    }
                }
            }
          __syncthreads ();

          /* dQ (BM x D) += dS K, in 16 x DQC tiles spread over the warps. */
          float *dqa = w.dq_accum + (((int64_t) b * f.heads_q + hq) * w.sq_pad + m0) * D;
#pragma unroll 1
          for (int t = warp; t < DQ_TILES; t += NW)
            {
              const int tm = t % (BM / 16), tn = t / (BM / 16);
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
                    float *dst = dqa + (tm * 16 + (lane >> 2) + hh * 8) * D + tn * DQC + dt * 8 + (lane & 3) * 2;
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
  T *gdk = static_cast<T *> (p.dk) + b * p.dk_strides[0] + hk * p.dk_strides[1] + (int64_t) n0 * p.dk_strides[2];
  T *gdv = static_cast<T *> (p.dv) + b * p.dv_strides[0] + hk * p.dv_strides[1] + (int64_t) n0 * p.dv_strides[2];
  for (int idx = lane; idx < 16 * CH; idx += 32)
    {
      const int r = krow + idx / CH, c = idx % CH;
      if (n0 + r >= Sk)
        continue;
      if (DO_DV)
        *reinterpret_cast<uint4 *> (gdv + r * p.dv_strides[2] + c * 8) = *reinterpret_cast<const uint4 *> (sV + swz<D> (r, c * 8));
      if (DO_DKDQ)
        *reinterpret_cast<uint4 *> (gdk + r * p.dk_strides[2] + c * 8) = *reinterpret_cast<const uint4 *> (sK + swz<D> (r, c * 8));
    }
}

template <typename T, int D, int BN, int NW, bool DO_DV, bool DO_DKDQ, bool FUSED, bool GENERAL>
static int
launch_bwd_kernel (const AccelFlashAttnBwdParams &p, const BwdWork &w, float scale, cudaStream_t stream)
{
  using Cfg = BwdConfig<T, D, kBwdBM, BN, NW>;
  auto kernel = bwd_kernel<T, D, kBwdBM, BN, NW, DO_DV, DO_DKDQ, FUSED, GENERAL>;
  static bool configured = false;
  if (!configured)
    {
      cudaError_t err = cudaFuncSetAttribute (kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmem);
      if (err != cudaSuccess)
        return err;
      configured = true;
    }
  dim3 grid ((p.fwd.seqlen_k + BN - 1) / BN, p.fwd.heads_kv, p.fwd.batch);
  kernel<<<grid, Cfg::kThreads, Cfg::kSmem, stream>>> (p, w, scale);
  return cudaGetLastError ();
}

template <typename T, int D, int BN, int NW, bool DO_DV, bool DO_DKDQ, bool FUSED>
static int
launch_bwd_main (const AccelFlashAttnBwdParams &p, const BwdWork &w, float scale, cudaStream_t stream)
{
  if (accel_fa_is_general (&p.fwd))
    return launch_bwd_kernel<T, D, BN, NW, DO_DV, DO_DKDQ, FUSED, true> (p, w, scale, stream);
  return launch_bwd_kernel<T, D, BN, NW, DO_DV, DO_DKDQ, FUSED, false> (p, w, scale, stream);
}

/* Whether the main kernel at D <= 128 fuses S^T with dP^T and dV with dK
 * (chosen from the H100 measurements in docs/flashattn.md). */
constexpr bool kBwdFused = false;

#ifdef ACCEL_FA_BWD_VARIANTS
static int
bwd_variant ()
{
  static int v = -1;
  if (v < 0)
    {
      const char *e = getenv ("ACCEL_FA_BWD_CFG");
      v = e ? atoi (e) : 0;
    }
  return v;
}
#endif

template <typename T, int D>
static int
launch_bwd (const AccelFlashAttnBwdParams &p, const BwdWork &w, float scale, cudaStream_t stream)
{
  dim3 rows (w.sq_pad / kBwdBM, p.fwd.heads_q, p.fwd.batch);
  bwd_preprocess_kernel<T, D><<<rows, 256, 0, stream>>> (p, w);
  int err = cudaGetLastError ();
  if (err != cudaSuccess)
    return err;
  if (p.fwd.seqlen_k > 0)
    {
      if constexpr (D <= 128)
        {
#ifdef ACCEL_FA_BWD_VARIANTS
          if (bwd_variant () == 1)
            err = launch_bwd_main<T, D, 128, 8, true, true, true> (p, w, scale, stream);
          else
#endif
          err = launch_bwd_main<T, D, 128, 8, true, true, kBwdFused> (p, w, scale, stream);
        }
      else
        {
          err = launch_bwd_main<T, D, 64, 4, true, false, false> (p, w, scale, stream);
          if (err == cudaSuccess)
            err = launch_bwd_main<T, D, 64, 4, false, true, false> (p, w, scale, stream);
        }
      if (err != cudaSuccess)
        return err;
    }
  bwd_postprocess_kernel<T, D><<<rows, 256, 0, stream>>> (p, w, scale);
  return cudaGetLastError ();
}

template <typename T>
static int
dispatch_bwd (const AccelFlashAttnBwdParams &p, const BwdWork &w, float scale, cudaStream_t stream)
{
  switch (p.fwd.head_dim)
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
zero_rows (void *base, const int64_t *strides, int batch, int heads, int rows, int d, cudaStream_t stream)
{
  for (int b = 0; b < batch; b++)
    for (int h = 0; h < heads; h++)
      {
        char *p = static_cast<char *> (base) + 2 * (b * strides[0] + h * strides[1]);
        cudaError_t err = cudaMemset2DAsync (p, 2 * strides[2], 0, 2 * d, rows, stream);
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
  if (p->fwd.cu_seqlens_q || p->fwd.cu_seqlens_k)
    return "no backward pass for varlen";
  if (!p->dout || !p->dq || !p->dk || !p->dv)
    return "dout, dq, dk and dv must all be set";
  if (!accel_fa_strides_ok (p->do_strides, p->dout) || !accel_fa_strides_ok (p->dq_strides, p->dq)
      || !accel_fa_strides_ok (p->dk_strides, p->dk) || !accel_fa_strides_ok (p->dv_strides, p->dv))
    return "a gradient buffer or stride is not 16-byte aligned";
  return nullptr;
}

extern "C" size_t
accel_flashattn_bwd_workspace_size (const AccelFlashAttnBwdParams *p)
{
  size_t total = 0;
  bwd_work_layout (p, nullptr, &total);
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
  if (f.seqlen_q == 0)
    {
      int err = zero_rows (p->dk, p->dk_strides, f.batch, f.heads_kv, f.seqlen_k, f.head_dim, st);
      return err != cudaSuccess ? err : zero_rows (p->dv, p->dv_strides, f.batch, f.heads_kv, f.seqlen_k, f.head_dim, st);
    }
  BwdWork w = bwd_work_layout (p, workspace, nullptr);
  const float scale = accel_fa_scale (&f);
#ifndef ACCEL_FA_ONLY_BF16
  if (f.dtype == ACCEL_FA_F16)
    return dispatch_bwd<__half> (*p, w, scale, st);
#endif
  return dispatch_bwd<__nv_bfloat16> (*p, w, scale, st);
}
