/* accel-flashattn-f32.cu: attention forward and backward for f32 inputs,
 * on the CUDA cores in f32 arithmetic (no TF32), for every head dim the
 * 16-bit kernels take (D and Dv multiples of 8 up to 256) and every variant
 * (masks, soft cap, ALiBi, sinks, GQA, varlen and its backward).
 *
 * The same FlashAttention schedule as the tensor-core kernels, with
 * register tiles in place of fragments. 256 threads as 16 x 16 (tx, ty);
 * shared tiles are row-major f32 with rows padded by 4 floats, so the
 * 16-byte reads of 8 consecutive rows (one quarter-warp) hit 8 different
 * bank groups and those of one row broadcast.
 *
 * Forward: a block takes 64 query rows of one (batch, head); per key block
 * of 64, thread (tx, ty) computes S for rows 4 ty .. 4 ty + 3 and keys tx +
 * 16 j, the online softmax (exp2 with the scale folded in, the row's 16
 * threads meeting by shuffles) leaves P in shared memory, and the thread
 * accumulates O for its 4 rows and the columns 64 c + 4 tx .. + 3.
 *
 * Backward: a block takes 64 keys of one (batch, kv head) and walks every
 * query block (32 rows) of every query head of its group. Per step: S and
 * dP for rows 2 ty + i and keys tx + 16 j, P and dS through shared memory,
 * then dV += P^T dO and dK += dS^T Q for keys 4 ty .. + 3 (registers), and
 * dQ += dS K added to the f32 accumulator of the workspace with atomics.
 * The pre- and postprocess (Dsum, lse in log2 units, dQ scaled) are the
 * 16-bit kernels' in f32; the workspace is accel_fa_bwd_work_layout().
 *
 * Error: the f32 sums (dot products of up to 256 terms, softmax sums over
 * the keys), exp2.approx (2^-22 relative) and tanhf give a relative L2
 * error of about 1e-6 against the binary64 oracle on unit-scale inputs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>
#include <math.h>
#include "accel-flashattn-common.cuh"
#include "accel-flashattn-private.h"

namespace accel_fa {

namespace f32 {

constexpr int kThreads = 256;
constexpr int kBM = 64, kBN = 64;       /* forward: query rows, keys per block */
constexpr int kBwdM = 32, kBwdN = 64;   /* backward: query rows per step, keys per block */
constexpr int kRows = ACCEL_FA_BWD_ROWS;
constexpr int kPLD = kBN + 4;           /* row length of the P and dS tiles */

template <int DM>
struct Ld {
  static constexpr int kLD = DM + 4;    /* row length of the Q, K, V, dO tiles */
  static constexpr int kFwdSmem = (kBM * kLD + 2 * kBN * kLD + kBM * kPLD) * 4;
  static constexpr int kBwdSmem = (2 * kBwdN * kLD + 2 * kBwdM * kLD + 2 * kBwdM * kPLD + 2 * kBwdM) * 4;
};

/* ROWS x @cols floats from global (row stride @stride) into a tile of row
 * length LD; rows at or past @valid are zeroed. */
template <int ROWS, int DM>
__device__ __forceinline__ void
load_rows (float *smem, const float *g, int64_t stride, int valid, int cols, int tid)
{
  constexpr int CH = DM / 4, LD = Ld<DM>::kLD;
  for (int idx = tid; idx < ROWS * CH; idx += kThreads)
    {
      const int r = idx / CH, c = idx % CH;
      if (c * 4 >= cols)
        continue;
      const bool ok = r < valid;
      cp_async_16 (smem_u32 (smem + r * LD + c * 4), ok ? g + r * stride + c * 4 : g, ok ? 16 : 0);
    }
}

__device__ __forceinline__ float
dot4 (float4 a, float4 b, float acc)
{
  return fmaf (a.x, b.x, fmaf (a.y, b.y, fmaf (a.z, b.z, fmaf (a.w, b.w, acc))));
}

__device__ __forceinline__ float
comp (float4 v, int u)
{
  return u == 0 ? v.x : u == 1 ? v.y : u == 2 ? v.z : v.w;
}

__device__ __forceinline__ void
fma4 (float4 &acc, float a, float4 b)
{
  acc.x = fmaf (a, b.x, acc.x);
  acc.y = fmaf (a, b.y, acc.y);
  acc.z = fmaf (a, b.z, acc.z);
  acc.w = fmaf (a, b.w, acc.w);
}

/* What the forward and backward kernels need of a key (q, k): whether the
 * mask lets it through, and the bias of ALiBi. */
struct Logits {
  MaskInfo mi;
  int sinks;
  float sl, cap_in, cap_out, alibi_mul;
  bool capped, alibi;

  __device__ void init (const AccelFlashAttnFwdParams &p, float scale, int Sq, int Sk, int b, int h)
  {
    mi = mask_info (p, Sq, Sk);
    sinks = mi.left >= 0 ? p.sinks : 0;
    capped = p.softcap > 0.f;
    sl = capped ? 1.f : scale * kLog2e;
    cap_in = capped ? scale / p.softcap : 0.f;
    cap_out = p.softcap * kLog2e;
    set_head (p, b, h);
  }
  __device__ void set_head (const AccelFlashAttnFwdParams &p, int b, int h)
  {
    alibi = p.alibi_slopes != nullptr;
    alibi_mul = alibi ? -p.alibi_slopes[(int64_t) b * p.alibi_batch_stride + h] * kLog2e / sl : 0.f;
  }
  /* The logit of dot product @x in units of S (times sl: log2 units). */
  __device__ __forceinline__ float logit (float x, int i, int j) const
  {
    if (capped)
      x = tanhf (x * cap_in) * cap_out;
    if (alibi)
      x = fmaf (fabsf ((float) (i + mi.off - j)), alibi_mul, x);
    return x;
  }
  __device__ __forceinline__ bool visible (int i, int j) const
  {
    int lo, hi;
    row_limits (mi, i, 0, lo, hi);
    return i < mi.seqlen_q && j <= hi && (j >= lo || j < sinks);
  }
};

template <int DM>
__global__ void __launch_bounds__ (kThreads, 1)
fwd_kernel (const AccelFlashAttnFwdParams p, float scale)
{
  constexpr int LD = Ld<DM>::kLD, NC = DM / 64;
  extern __shared__ __align__ (16) float sm[];
  float *sQ = sm, *sK = sQ + kBM * LD, *sV = sK + kBN * LD, *sP = sV + kBN * LD;

  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  FwdBlock<float> fb;
  if (!fwd_block<float, DM, true> (p, kBM, tid >> 5, fb))
    return;
  const int m0 = fb.m0, Sq = fb.Sq, Sk = fb.Sk, dqk = fb.dqk, dv = fb.dv;
  Logits lg;
  lg.init (p, scale, Sq, Sk, fb.b, fb.h);
  const KeyBlocks<true> kb = key_blocks<true> (lg.mi, m0, kBM, kBN, lg.sinks);
  fb.set_rows (p);
  const float *gk = fb.gk, *gv = fb.gv;
  float *go = fb.go, *glse = fb.glse;

  float4 o[4][NC];
  float row_max[4], row_sum[4];
#pragma unroll
  for (int i = 0; i < 4; i++)
    {
#pragma unroll
      for (int c = 0; c < NC; c++)
        o[i][c] = make_float4 (0.f, 0.f, 0.f, 0.f);
      row_max[i] = -INFINITY;
      row_sum[i] = 0.f;
    }

  load_rows<kBM, DM> (sQ, fb.gq, p.q_strides[2], Sq - m0, dqk, tid);
  cp_async_commit ();
  for (int nb = kb.first; !kb.empty && nb >= kb.stop; nb = kb.next (nb))
    {
      const int n0 = nb * kBN;
      __syncthreads ();   /* the last block's K, V and P are read */
      load_rows<kBN, DM> (sK, gk + (int64_t) n0 * p.k_strides[2], p.k_strides[2], Sk - n0, dqk, tid);
      load_rows<kBN, DM> (sV, gv + (int64_t) n0 * p.v_strides[2], p.v_strides[2], Sk - n0, dv, tid);
      cp_async_commit ();
      cp_async_wait<0> ();
      __syncthreads ();

      float s[4][4];
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
          s[i][j] = 0.f;
      for (int e = 0; e < dqk; e += 4)
        {
          float4 q4[4], k4[4];
#pragma unroll
          for (int i = 0; i < 4; i++)
            q4[i] = *reinterpret_cast<const float4 *> (sQ + (4 * ty + i) * LD + e);
#pragma unroll
          for (int j = 0; j < 4; j++)
            k4[j] = *reinterpret_cast<const float4 *> (sK + (tx + 16 * j) * LD + e);
#pragma unroll
          for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
              s[i][j] = dot4 (q4[i], k4[j], s[i][j]);
        }

      /* Online softmax per row; the row's 16 threads are one half-warp. */
#pragma unroll
      for (int i = 0; i < 4; i++)
        {
          const int qi = m0 + 4 * ty + i;
          float mx = row_max[i];
#pragma unroll
          for (int j = 0; j < 4; j++)
            {
              const int kj = n0 + tx + 16 * j;
              s[i][j] = lg.visible (qi, kj) ? lg.logit (s[i][j], qi, kj) : -INFINITY;
              mx = fmaxf (mx, s[i][j]);
            }
#pragma unroll
          for (int m = 1; m < 16; m <<= 1)
            mx = fmaxf (mx, __shfl_xor_sync (0xffffffffu, mx, m));
          const float m_use = mx == -INFINITY ? 0.f : mx * lg.sl;
          const float corr = fast_exp2 (row_max[i] * lg.sl - m_use);
          row_max[i] = mx;
          row_sum[i] *= corr;
#pragma unroll
          for (int c = 0; c < NC; c++)
            {
              o[i][c].x *= corr;
              o[i][c].y *= corr;
              o[i][c].z *= corr;
              o[i][c].w *= corr;
            }
#pragma unroll
          for (int j = 0; j < 4; j++)
            {
              const float pv = fast_exp2 (fmaf (s[i][j], lg.sl, -m_use));
              row_sum[i] += pv;
              sP[(4 * ty + i) * kPLD + tx + 16 * j] = pv;
            }
        }
      __syncthreads ();

      /* O += P V */
      for (int kk = 0; kk < kBN; kk += 4)
        {
          float4 p4[4];
#pragma unroll
          for (int i = 0; i < 4; i++)
            p4[i] = *reinterpret_cast<const float4 *> (sP + (4 * ty + i) * kPLD + kk);
#pragma unroll
          for (int u = 0; u < 4; u++)
#pragma unroll
            for (int c = 0; c < NC; c++)
              {
                if (c * 64 >= dv)
                  break;
                const float4 v4 = *reinterpret_cast<const float4 *> (sV + (kk + u) * LD + c * 64 + 4 * tx);
#pragma unroll
                for (int i = 0; i < 4; i++)
                  fma4 (o[i][c], comp (p4[i], u), v4);
              }
        }
    }
  cp_async_wait<0> ();   /* Q, where no key block ran */

  /* Epilogue: the row sums meet, then 16-byte stores of the Dv columns. */
#pragma unroll
  for (int i = 0; i < 4; i++)
    {
      float sum = row_sum[i];
#pragma unroll
      for (int m = 1; m < 16; m <<= 1)
        sum += __shfl_xor_sync (0xffffffffu, sum, m);
      const float inv = sum > 0.f ? 1.f / sum : 0.f;
      const int r = 4 * ty + i;
      if (m0 + r >= Sq)
        continue;
#pragma unroll
      for (int c = 0; c < NC; c++)
        if (c * 64 + 4 * tx < dv)
          *reinterpret_cast<float4 *> (go + r * p.o_strides[2] + c * 64 + 4 * tx)
            = make_float4 (o[i][c].x * inv, o[i][c].y * inv, o[i][c].z * inv, o[i][c].w * inv);
      if (glse && tx == 0)
        glse[r] = sum > 0.f ? (row_max[i] * lg.sl + __log2f (sum)) * kLn2 : -INFINITY;
    }
}

/* Per workspace row: Dsum = dO . O over the Dv columns, the lse in log2
 * units (+inf where the row saw no key, or past the rows), dQ accumulator
 * zeroed; 4 threads a row. varlen runs as one batch of the packed rows. */
template <int DM>
__global__ void __launch_bounds__ (kThreads)
bwd_preprocess_kernel (const AccelFlashAttnBwdParams p, AccelFaBwdWork w)
{
  const AccelFlashAttnFwdParams &f = p.fwd;
  const int h = blockIdx.y, b = blockIdx.z, sub = threadIdx.x & 3;
  const int i = blockIdx.x * kRows + (threadIdx.x >> 2);
  const int dv = f.head_dim_v > 0 ? f.head_dim_v : f.head_dim;
  const int64_t row = ((int64_t) b * f.heads_q + h) * w.sq_pad + i;
  float acc = 0.f;
  if (i < f.seqlen_q)
    {
      const float *o = static_cast<const float *> (f.out) + b * f.o_strides[0] + h * f.o_strides[1] + i * f.o_strides[2];
      const float *dO = static_cast<const float *> (p.dout) + b * p.do_strides[0] + h * p.do_strides[1]
                        + i * p.do_strides[2];
      for (int c = 4 * sub; c < dv; c += 16)
        acc = dot4 (*reinterpret_cast<const float4 *> (o + c), *reinterpret_cast<const float4 *> (dO + c), acc);
    }
  acc += __shfl_xor_sync (0xffffffffu, acc, 1);
  acc += __shfl_xor_sync (0xffffffffu, acc, 2);
  if (sub == 0)
    {
      w.dsum[row] = acc;
      const float l = i < f.seqlen_q ? f.lse[((int64_t) b * f.heads_q + h) * f.seqlen_q + i] : -INFINITY;
      w.lse2[row] = l == -INFINITY ? INFINITY : l * kLog2e;
    }
  for (int c = 4 * sub; c < DM; c += 16)
    *reinterpret_cast<float4 *> (w.dq_accum + row * DM + c) = make_float4 (0.f, 0.f, 0.f, 0.f);
}

template <int DM>
__global__ void __launch_bounds__ (kThreads)
bwd_postprocess_kernel (const AccelFlashAttnBwdParams p, AccelFaBwdWork w, float scale)
{
  const AccelFlashAttnFwdParams &f = p.fwd;
  const int h = blockIdx.y, b = blockIdx.z, sub = threadIdx.x & 3;
  const int i = blockIdx.x * kRows + (threadIdx.x >> 2);
  if (i >= f.seqlen_q)
    return;
  const int64_t row = ((int64_t) b * f.heads_q + h) * w.sq_pad + i;
  float *dq = static_cast<float *> (p.dq) + b * p.dq_strides[0] + h * p.dq_strides[1] + i * p.dq_strides[2];
  for (int c = 4 * sub; c < f.head_dim; c += 16)
    {
      const float4 a = *reinterpret_cast<const float4 *> (w.dq_accum + row * DM + c);
      *reinterpret_cast<float4 *> (dq + c) = make_float4 (a.x * scale, a.y * scale, a.z * scale, a.w * scale);
    }
}

template <int DM>
__global__ void __launch_bounds__ (kThreads, 1)
bwd_kernel (const AccelFlashAttnBwdParams p, AccelFaBwdWork w, float scale)
{
  constexpr int LD = Ld<DM>::kLD, NC = DM / 64;
  extern __shared__ __align__ (16) float sm[];
  float *sK = sm, *sV = sK + kBwdN * LD, *sQ = sV + kBwdN * LD, *sdO = sQ + kBwdM * LD;
  float *sP = sdO + kBwdM * LD, *sdS = sP + kBwdM * kPLD, *sL = sdS + kBwdM * kPLD, *sDs = sL + kBwdM;

  const AccelFlashAttnFwdParams &f = p.fwd;
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const int hk = blockIdx.y, group = f.heads_q / f.heads_kv;
  const bool varlen = f.cu_seqlens_q != nullptr;
  const int dqk = f.head_dim, dv = f.head_dim_v > 0 ? f.head_dim_v : f.head_dim;
  int b, n_block, Sq = f.seqlen_q, Sk = f.seqlen_k, q_start = 0, k_start = 0;
  if (varlen)
    {
      if (!varlen_block (f, kBwdN, tid >> 5, true, b, n_block, q_start, Sq, k_start, Sk))
        return;
    }
  else
    {
      n_block = blockIdx.x;
      b = blockIdx.z;
    }
  const int bs = varlen ? 0 : b, n0 = n_block * kBwdN;
  Logits lg;
  lg.init (f, scale, Sq, Sk, b, hk * group);

  /* The queries that see a key of the block (as the 16-bit kernel). */
  int mb_min, n_mb;
  query_blocks (lg.mi, n0, kBwdN, n0 < lg.sinks, kBwdM, mb_min, n_mb);
  const int n_iter = n_mb * group;

  const float *gk = static_cast<const float *> (f.k) + bs * f.k_strides[0] + hk * f.k_strides[1]
                    + (int64_t) (k_start + n0) * f.k_strides[2];
  const float *gv = static_cast<const float *> (f.v) + bs * f.v_strides[0] + hk * f.v_strides[1]
                    + (int64_t) (k_start + n0) * f.v_strides[2];
  load_rows<kBwdN, DM> (sK, gk, f.k_strides[2], Sk - n0, dqk, tid);
  load_rows<kBwdN, DM> (sV, gv, f.v_strides[2], Sk - n0, dv, tid);
  cp_async_commit ();

  float4 acc_dk[4][NC], acc_dv[4][NC];
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int c = 0; c < NC; c++)
      acc_dk[i][c] = acc_dv[i][c] = make_float4 (0.f, 0.f, 0.f, 0.f);

  for (int it = 0; it < n_iter; it++)
    {
      const int hq = hk * group + it / n_mb;
      const int m0 = (mb_min + it % n_mb) * kBwdM;
      const int64_t rb = varlen ? (int64_t) hq * w.sq_pad + q_start + m0 : ((int64_t) b * f.heads_q + hq) * w.sq_pad + m0;
      __syncthreads ();   /* the last step's tiles are read */
      load_rows<kBwdM, DM> (sQ, static_cast<const float *> (f.q) + bs * f.q_strides[0] + hq * f.q_strides[1]
                                  + (int64_t) (q_start + m0) * f.q_strides[2], f.q_strides[2], Sq - m0, dqk, tid);
      load_rows<kBwdM, DM> (sdO, static_cast<const float *> (p.dout) + bs * p.do_strides[0] + hq * p.do_strides[1]
                                   + (int64_t) (q_start + m0) * p.do_strides[2], p.do_strides[2], Sq - m0, dv, tid);
      if (tid < kBwdM)
        {
          sL[tid] = w.lse2[rb + tid];
          sDs[tid] = w.dsum[rb + tid];
        }
      if (lg.alibi)
        lg.set_head (f, b, hq);
      cp_async_commit ();
      cp_async_wait<0> ();
      __syncthreads ();

      /* S and dP for rows 2 ty + i, keys tx + 16 j. */
      float s[2][4], dp[2][4];
#pragma unroll
      for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
          s[i][j] = dp[i][j] = 0.f;
      for (int e = 0; e < dqk; e += 4)
        {
          float4 q4[2], k4[4];
#pragma unroll
          for (int i = 0; i < 2; i++)
            q4[i] = *reinterpret_cast<const float4 *> (sQ + (2 * ty + i) * LD + e);
#pragma unroll
          for (int j = 0; j < 4; j++)
            k4[j] = *reinterpret_cast<const float4 *> (sK + (tx + 16 * j) * LD + e);
#pragma unroll
          for (int i = 0; i < 2; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
              s[i][j] = dot4 (q4[i], k4[j], s[i][j]);
        }
      for (int e = 0; e < dv; e += 4)
        {
          float4 d4[2], v4[4];
#pragma unroll
          for (int i = 0; i < 2; i++)
            d4[i] = *reinterpret_cast<const float4 *> (sdO + (2 * ty + i) * LD + e);
#pragma unroll
          for (int j = 0; j < 4; j++)
            v4[j] = *reinterpret_cast<const float4 *> (sV + (tx + 16 * j) * LD + e);
#pragma unroll
          for (int i = 0; i < 2; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
              dp[i][j] = dot4 (d4[i], v4[j], dp[i][j]);
        }
      /* P = exp2 (logit - lse2), dS = P (dP - Dsum) c'(x), c' = 1 - tanh^2
       * under the soft cap. */
#pragma unroll
      for (int i = 0; i < 2; i++)
        {
          const int r = 2 * ty + i, qi = m0 + r;
#pragma unroll
          for (int j = 0; j < 4; j++)
            {
              const int kj = n0 + tx + 16 * j;
              float pv = 0.f, ds = 0.f;
              if (lg.visible (qi, kj))
                {
                  pv = fast_exp2 (fmaf (lg.logit (s[i][j], qi, kj), lg.sl, -sL[r]));
                  ds = pv * (dp[i][j] - sDs[r]);
                  if (lg.capped)
                    {
                      const float t = tanhf (s[i][j] * lg.cap_in);
                      ds *= 1.f - t * t;
                    }
                }
              sP[r * kPLD + tx + 16 * j] = pv;
              sdS[r * kPLD + tx + 16 * j] = ds;
            }
        }
      __syncthreads ();

      /* dV += P^T dO, dK += dS^T Q for keys 4 ty + i. */
      for (int r = 0; r < kBwdM; r++)
        {
          const float4 p4 = *reinterpret_cast<const float4 *> (sP + r * kPLD + 4 * ty);
          const float4 s4 = *reinterpret_cast<const float4 *> (sdS + r * kPLD + 4 * ty);
#pragma unroll
          for (int c = 0; c < NC; c++)
            {
              const int col = c * 64 + 4 * tx;
              if (col < dv)
                {
                  const float4 d4 = *reinterpret_cast<const float4 *> (sdO + r * LD + col);
#pragma unroll
                  for (int i = 0; i < 4; i++)
                    fma4 (acc_dv[i][c], comp (p4, i), d4);
                }
              if (col < dqk)
                {
                  const float4 q4 = *reinterpret_cast<const float4 *> (sQ + r * LD + col);
#pragma unroll
                  for (int i = 0; i < 4; i++)
                    fma4 (acc_dk[i][c], comp (s4, i), q4);
                }
            }
        }

      /* dQ += dS K for rows 2 ty + i, columns 64 c + 4 tx. */
      float *dqa = w.dq_accum + rb * DM;
#pragma unroll
      for (int c = 0; c < NC; c++)
        {
          const int col = c * 64 + 4 * tx;
          if (col >= dqk)
            break;
          float4 acc[2] = { make_float4 (0.f, 0.f, 0.f, 0.f), make_float4 (0.f, 0.f, 0.f, 0.f) };
          for (int kk = 0; kk < kBwdN; kk += 4)
            {
              float4 s4[2];
#pragma unroll
              for (int i = 0; i < 2; i++)
                s4[i] = *reinterpret_cast<const float4 *> (sdS + (2 * ty + i) * kPLD + kk);
#pragma unroll
              for (int u = 0; u < 4; u++)
                {
                  const float4 k4 = *reinterpret_cast<const float4 *> (sK + (kk + u) * LD + col);
#pragma unroll
                  for (int i = 0; i < 2; i++)
                    fma4 (acc[i], comp (s4[i], u), k4);
                }
            }
#pragma unroll
          for (int i = 0; i < 2; i++)
            if (m0 + 2 * ty + i < Sq)
              {
                float *dst = dqa + (2 * ty + i) * DM + col;
                red_add_f32x2 (dst, acc[i].x, acc[i].y);
                red_add_f32x2 (dst + 2, acc[i].z, acc[i].w);
              }
        }
    }

  /* dK (times the scale) and dV, 16-byte stores of the thread's keys. */
  if (n_iter == 0)
    cp_async_wait<0> ();
  float *gdk = static_cast<float *> (p.dk) + bs * p.dk_strides[0] + hk * p.dk_strides[1]
               + (int64_t) (k_start + n0) * p.dk_strides[2];
  float *gdv = static_cast<float *> (p.dv) + bs * p.dv_strides[0] + hk * p.dv_strides[1]
               + (int64_t) (k_start + n0) * p.dv_strides[2];
#pragma unroll
  for (int i = 0; i < 4; i++)
    {
      const int r = 4 * ty + i;
      if (n0 + r >= Sk)
        continue;
#pragma unroll
      for (int c = 0; c < NC; c++)
        {
          const int col = c * 64 + 4 * tx;
          if (col < dqk)
            *reinterpret_cast<float4 *> (gdk + r * p.dk_strides[2] + col)
              = make_float4 (acc_dk[i][c].x * scale, acc_dk[i][c].y * scale, acc_dk[i][c].z * scale,
                             acc_dk[i][c].w * scale);
          if (col < dv)
            *reinterpret_cast<float4 *> (gdv + r * p.dv_strides[2] + col) = acc_dv[i][c];
        }
    }
}

template <int DM>
static int
run_fwd (const AccelFlashAttnFwdParams &p, float scale, cudaStream_t stream)
{
  constexpr int smem = Ld<DM>::kFwdSmem;
  int err = accel_cuda_smem_once<fwd_kernel<DM>> (smem);
  if (err != cudaSuccess)
    return err;
  /* varlen: an upper bound of the query blocks, as the 16-bit kernels. */
  dim3 grid = p.cu_seqlens_q ? dim3 ((p.seqlen_q + kBM - 1) / kBM + p.batch, p.heads_q, 1)
                             : dim3 ((p.seqlen_q + kBM - 1) / kBM, p.heads_q, p.batch);
  fwd_kernel<DM><<<grid, kThreads, smem, stream>>> (p, scale);
  return cudaGetLastError ();
}

template <int DM>
static int
run_bwd (const AccelFlashAttnBwdParams &p, const AccelFaBwdWork &w, float scale, cudaStream_t stream)
{
  const bool varlen = p.fwd.cu_seqlens_q != nullptr;
  AccelFlashAttnBwdParams pp = p;   /* the pre- and postprocess: one batch of packed rows */
  if (varlen)
    {
      pp.fwd.batch = 1;
      pp.fwd.cu_seqlens_q = pp.fwd.cu_seqlens_k = nullptr;
    }
  dim3 rows (w.sq_pad / kRows, p.fwd.heads_q, pp.fwd.batch);
  bwd_preprocess_kernel<DM><<<rows, kThreads, 0, stream>>> (pp, w);
  int err = cudaGetLastError ();
  if (err != cudaSuccess)
    return err;

  constexpr int smem = Ld<DM>::kBwdSmem;
  err = accel_cuda_smem_once<bwd_kernel<DM>> (smem);
  if (err != cudaSuccess)
    return err;
  dim3 grid = varlen ? dim3 ((p.fwd.seqlen_k + kBwdN - 1) / kBwdN + p.fwd.batch, p.fwd.heads_kv, 1)
                     : dim3 ((p.fwd.seqlen_k + kBwdN - 1) / kBwdN, p.fwd.heads_kv, p.fwd.batch);
  if (grid.x > 0)
    bwd_kernel<DM><<<grid, kThreads, smem, stream>>> (p, w, scale);
  err = cudaGetLastError ();
  if (err != cudaSuccess)
    return err;
  bwd_postprocess_kernel<DM><<<rows, kThreads, 0, stream>>> (pp, w, scale);
  return cudaGetLastError ();
}

} /* namespace f32 */

} /* namespace accel_fa */

using namespace accel_fa;

int
accel_fa_fwd_f32 (const AccelFlashAttnFwdParams *p, float scale, cudaStream_t stream)
{
  switch (accel_fa_dim_class (p))
    {
    case 64:
      return f32::run_fwd<64> (*p, scale, stream);
    case 128:
      return f32::run_fwd<128> (*p, scale, stream);
    default:
      return f32::run_fwd<256> (*p, scale, stream);
    }
}

int
accel_fa_bwd_f32 (const AccelFlashAttnBwdParams *p, void *workspace, float scale, cudaStream_t stream)
{
  const AccelFaBwdWork w = accel_fa_bwd_work_layout (p, workspace, nullptr);
  switch (accel_fa_dim_class (&p->fwd))
    {
    case 64:
      return f32::run_bwd<64> (*p, w, scale, stream);
    case 128:
      return f32::run_bwd<128> (*p, w, scale, stream);
    default:
      return f32::run_bwd<256> (*p, w, scale, stream);
    }
}
