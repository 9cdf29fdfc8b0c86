/* accel-flashattn-fwd.cu: the forward pass for sm_80 and up.
 *
 * One block computes BM query rows of one (batch, head) against every key
 * block its mask lets through, walking the key blocks from the last to the
 * first so that the masked blocks on the diagonal come first. Each warp owns
 * 16*MT query rows: S = Q K^T and O += P V run on mma.sync m16n8k16 with
 * f32 accumulators, the softmax is online in registers (exp2 with the scale
 * and log2(e) folded into one multiply-add), and P never leaves registers.
 *
 * Loads: Q once; K and V through one buffer each with cp.async, so that the
 * load of V overlaps Q K^T and the load of the next K overlaps the softmax
 * and P V (the schedule of FlashAttention-2).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include "accel-flashattn-common.cuh"
#include "accel-flashattn-private.h"

namespace accel_fa {

template <typename T, int D, int BM, int BN, int NW>
struct FwdConfig {
  static constexpr int kThreads = NW * 32;
  static constexpr int kSmem = (BM * D + 2 * BN * D) * (int) sizeof (T);
};

template <typename T, int D, int BM, int BN, int NW, int MINB>
__global__ void __launch_bounds__ (NW * 32, MINB)
fwd_kernel (const AccelFlashAttnFwdParams p, float scale)
{
  using TT = TypeTraits<T>;
  constexpr int NTH = NW * 32;
  constexpr int MT = BM / (16 * NW);    /* 16-row tiles per warp */
  constexpr int SN = BN / 8;            /* 8-column tiles of S */
  constexpr int ON = D / 8;             /* 8-column tiles of O */
  /* Q K^T accumulates into the same registers at every k-step; unrolling it
   * fully lets ptxas hoist every ldmatrix and spill at D = 128. */
  constexpr int KQ_UNROLL = (D == 128 && BN * MT >= 128) ? 2 : D / 16;
  static_assert (MT >= 1 && BM == MT * 16 * NW, "BM must be a multiple of 16 * warps");

  extern __shared__ __align__ (128) unsigned char smem_raw[];
  T *sQ = reinterpret_cast<T *> (smem_raw);
  T *sK = sQ + BM * D;
  T *sV = sK + BN * D;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int m_block = gridDim.x - 1 - blockIdx.x;
  const int h = blockIdx.y, b = blockIdx.z;
  const int hk = h / (p.heads_q / p.heads_kv);
  const int m0 = m_block * BM;
  const int Sq = p.seqlen_q, Sk = p.seqlen_k;

  MaskInfo mi;
  mi.seqlen_q = Sq;
  mi.seqlen_k = Sk;
  mi.off = Sk - Sq;
  mi.left = p.window_left;
  mi.right = p.causal ? 0 : p.window_right;

  int n_hi = Sk;
  if (mi.right >= 0)
    n_hi = min (n_hi, m0 + BM + mi.off + mi.right);
  int n_lo = 0;
  if (mi.left >= 0)
    n_lo = max (0, m0 + mi.off - mi.left);

  const T *gq = static_cast<const T *> (p.q) + b * p.q_strides[0] + h * p.q_strides[1] + (int64_t) m0 * p.q_strides[2];
  const T *gk = static_cast<const T *> (p.k) + b * p.k_strides[0] + hk * p.k_strides[1];
  const T *gv = static_cast<const T *> (p.v) + b * p.v_strides[0] + hk * p.v_strides[1];
  T *go = static_cast<T *> (p.out) + b * p.o_strides[0] + h * p.o_strides[1] + (int64_t) m0 * p.o_strides[2];
  float *glse = p.lse ? p.lse + ((int64_t) b * p.heads_q + h) * Sq + m0 : nullptr;
  const int64_t qs = p.q_strides[2], ks = p.k_strides[2], vs = p.v_strides[2], os = p.o_strides[2];

  if (n_hi <= n_lo)
    {
      /* No query of this block sees any key. */
      constexpr int CH = D / 8;
      for (int idx = tid; idx < BM * CH; idx += NTH)
        {
          int r = idx / CH, c = idx % CH;
          if (m0 + r < Sq)
            *reinterpret_cast<uint4 *> (go + r * os + c * 8) = make_uint4 (0, 0, 0, 0);
        }
      if (glse)
        for (int r = tid; r < BM; r += NTH)
          if (m0 + r < Sq)
            glse[r] = -INFINITY;
      return;
    }
  const int nb_min = n_lo / BN;
  const int nb_max = (n_hi + BN - 1) / BN;

  const bool capped = p.softcap > 0.f;
  const float sl = capped ? 1.f : scale * kLog2e;
  const float cap_in = capped ? scale / p.softcap : 0.f;
  const float cap_out = p.softcap * kLog2e;

  load_tile<T, BM, D, NTH> (sQ, gq, qs, Sq - m0, tid);
  int nb = nb_max - 1;
  load_tile<T, BN, D, NTH> (sK, gk + (int64_t) nb * BN * ks, ks, Sk - nb * BN, tid);
  cp_async_commit ();

  float acc_o[MT][ON][4];
  float row_max[MT][2], row_sum[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; mt++)
    {
#pragma unroll
      for (int dt = 0; dt < ON; dt++)
#pragma unroll
        for (int e = 0; e < 4; e++)
          acc_o[mt][dt][e] = 0.f;
      row_max[mt][0] = row_max[mt][1] = -INFINITY;
      row_sum[mt][0] = row_sum[mt][1] = 0.f;
    }

  const int wrow = warp * 16 * MT;
  const uint32_t sQ_u = smem_u32 (sQ), sK_u = smem_u32 (sK), sV_u = smem_u32 (sV);

  for (; nb >= nb_min; --nb)
    {
      cp_async_wait<0> ();
      __syncthreads ();
      load_tile<T, BN, D, NTH> (sV, gv + (int64_t) nb * BN * vs, vs, Sk - nb * BN, tid);
      cp_async_commit ();

      float s[MT][SN][4];
#pragma unroll
      for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int nt = 0; nt < SN; nt++)
#pragma unroll
          for (int e = 0; e < 4; e++)
            s[mt][nt][e] = 0.f;

#pragma unroll (KQ_UNROLL)
      for (int kq = 0; kq < D / 16; kq++)
        {
          uint32_t a[MT][4];
#pragma unroll
          for (int mt = 0; mt < MT; mt++)
            ldmatrix_x4 (sQ_u + 2 * swz<D> (wrow + mt * 16 + (lane & 15), kq * 16 + (lane >> 4) * 8),
                         a[mt][0], a[mt][1], a[mt][2], a[mt][3]);
#pragma unroll
          for (int j = 0; j < SN / 2; j++)
            {
              uint32_t b0, b1, b2, b3;
              ldmatrix_x4 (sK_u + 2 * swz<D> (j * 16 + (lane >> 4) * 8 + (lane & 7), kq * 16 + ((lane >> 3) & 1) * 8),
                           b0, b1, b2, b3);
#pragma unroll
              for (int mt = 0; mt < MT; mt++)
                {
                  TT::mma (s[mt][2 * j], a[mt], b0, b1);
                  TT::mma (s[mt][2 * j + 1], a[mt], b2, b3);
                }
            }
        }

      cp_async_wait<0> ();
      __syncthreads ();
      if (nb > nb_min)
        {
          load_tile<T, BN, D, NTH> (sK, gk + (int64_t) (nb - 1) * BN * ks, ks, Sk - (nb - 1) * BN, tid);
          cp_async_commit ();
        }

      if (capped)
        {
#pragma unroll
          for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int nt = 0; nt < SN; nt++)
#pragma unroll
              for (int e = 0; e < 4; e++)
                s[mt][nt][e] = fast_tanh (s[mt][nt][e] * cap_in) * cap_out;
        }
      if (tile_needs_mask (mi, m0, BM, nb * BN, BN))
        {
#pragma unroll
          for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int hh = 0; hh < 2; hh++)
              {
                int lo, hi;
                row_limits (mi, m0 + wrow + mt * 16 + (lane >> 2) + hh * 8, nb * BN + (lane & 3) * 2, lo, hi);
#pragma unroll
                for (int nt = 0; nt < SN; nt++)
#pragma unroll
                  for (int e = 0; e < 2; e++)
                    if (nt * 8 + e > hi || nt * 8 + e < lo)
                      s[mt][nt][2 * hh + e] = -INFINITY;
              }
        }

      /* Online softmax: rows (lane/4) and (lane/4 + 8) of each 16-row tile. */
#pragma unroll
      for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int hh = 0; hh < 2; hh++)
          {
            float mx = row_max[mt][hh];
#pragma unroll
            for (int nt = 0; nt < SN; nt++)
              mx = fmaxf (mx, fmaxf (s[mt][nt][2 * hh], s[mt][nt][2 * hh + 1]));
            mx = fmaxf (mx, __shfl_xor_sync (0xffffffffu, mx, 1));
            mx = fmaxf (mx, __shfl_xor_sync (0xffffffffu, mx, 2));
            const float m_use = mx == -INFINITY ? 0.f : mx * sl;
            const float corr = fast_exp2 (row_max[mt][hh] * sl - m_use);
            row_max[mt][hh] = mx;
            row_sum[mt][hh] *= corr;
#pragma unroll
            for (int dt = 0; dt < ON; dt++)
              {
                acc_o[mt][dt][2 * hh] *= corr;
                acc_o[mt][dt][2 * hh + 1] *= corr;
              }
            float sum = 0.f;
#pragma unroll
            for (int nt = 0; nt < SN; nt++)
              {
                float p0 = fast_exp2 (fmaf (s[mt][nt][2 * hh], sl, -m_use));
                float p1 = fast_exp2 (fmaf (s[mt][nt][2 * hh + 1], sl, -m_use));
                s[mt][nt][2 * hh] = p0;
                s[mt][nt][2 * hh + 1] = p1;
                sum += p0 + p1;
              }
            row_sum[mt][hh] += sum;
          }

      /* O += P V, P straight from the accumulators. */
#pragma unroll
      for (int kk = 0; kk < BN / 16; kk++)
        {
          uint32_t a[MT][4];
#pragma unroll
          for (int mt = 0; mt < MT; mt++)
            {
              a[mt][0] = TT::pack (s[mt][2 * kk][0], s[mt][2 * kk][1]);
              a[mt][1] = TT::pack (s[mt][2 * kk][2], s[mt][2 * kk][3]);
              a[mt][2] = TT::pack (s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
              a[mt][3] = TT::pack (s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
            }
#pragma unroll
          for (int j = 0; j < ON / 2; j++)
            {
              uint32_t b0, b1, b2, b3;
              ldmatrix_x4_trans (sV_u + 2 * swz<D> (kk * 16 + ((lane >> 3) & 1) * 8 + (lane & 7), j * 16 + (lane >> 4) * 8),
                                 b0, b1, b2, b3);
#pragma unroll
              for (int mt = 0; mt < MT; mt++)
                {
                  TT::mma (acc_o[mt][2 * j], a[mt], b0, b1);
                  TT::mma (acc_o[mt][2 * j + 1], a[mt], b2, b3);
                }
            }
        }
    }

  /* Epilogue: normalise, stage the warp's own rows of O in its rows of sQ,
   * then 16-byte stores. */
#pragma unroll
  for (int mt = 0; mt < MT; mt++)
#pragma unroll
    for (int hh = 0; hh < 2; hh++)
      {
        float sum = row_sum[mt][hh];
        sum += __shfl_xor_sync (0xffffffffu, sum, 1);
        sum += __shfl_xor_sync (0xffffffffu, sum, 2);
        const float inv = sum > 0.f ? 1.f / sum : 0.f;
        const int row = wrow + mt * 16 + (lane >> 2) + hh * 8;
#pragma unroll
        for (int dt = 0; dt < ON; dt++)
          *reinterpret_cast<uint32_t *> (sQ + swz<D> (row, dt * 8 + (lane & 3) * 2))
            = TT::pack (acc_o[mt][dt][2 * hh] * inv, acc_o[mt][dt][2 * hh + 1] * inv);
        if (glse && (lane & 3) == 0 && m0 + row < Sq)
          glse[row] = sum > 0.f ? (row_max[mt][hh] * sl + __log2f (sum)) * kLn2 : -INFINITY;
      }
  __syncwarp ();
  constexpr int CH = D / 8;
#pragma unroll
  for (int idx = lane; idx < 16 * MT * CH; idx += 32)
    {
      int row = wrow + idx / CH, c = idx % CH;
      if (m0 + row < Sq)
        *reinterpret_cast<uint4 *> (go + row * os + c * 8) = *reinterpret_cast<const uint4 *> (sQ + swz<D> (row, c * 8));
    }
}

template <typename T, int D, int BM, int BN, int NW, int MINB>
static int
launch_fwd (const AccelFlashAttnFwdParams &p, float scale, cudaStream_t stream)
{
  using Cfg = FwdConfig<T, D, BM, BN, NW>;
  auto kernel = fwd_kernel<T, D, BM, BN, NW, MINB>;
  static bool configured = false;
  if (!configured)
    {
      cudaError_t err = cudaFuncSetAttribute (kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmem);
      if (err != cudaSuccess)
        return err;
      configured = true;
    }
  dim3 grid ((p.seqlen_q + BM - 1) / BM, p.heads_q, p.batch);
  kernel<<<grid, Cfg::kThreads, Cfg::kSmem, stream>>> (p, scale);
  return cudaGetLastError ();
}

#ifdef ACCEL_FA_FWD_VARIANTS
static int
fwd_variant ()
{
  static int v = -1;
  if (v < 0)
    {
      const char *e = getenv ("ACCEL_FA_FWD_CFG");
      v = e ? atoi (e) : 0;
    }
  return v;
}
#endif

template <typename T>
static int
dispatch_fwd (const AccelFlashAttnFwdParams &p, float scale, cudaStream_t stream)
{
  switch (p.head_dim)
    {
    case 64:
      return launch_fwd<T, 64, 128, 64, 4, 2> (p, scale, stream);
    case 128:
#ifdef ACCEL_FA_FWD_VARIANTS
      /* Tile-shape exploration for the benchmark harness only. */
      if (fwd_variant () == 1)
        return launch_fwd<T, 128, 128, 32, 4, 2> (p, scale, stream);
      if (fwd_variant () == 2)
        return launch_fwd<T, 128, 64, 64, 4, 3> (p, scale, stream);
      if (fwd_variant () == 3)
        return launch_fwd<T, 128, 128, 128, 8, 1> (p, scale, stream);
#endif
      return launch_fwd<T, 128, 128, 64, 4, 2> (p, scale, stream);
    case 256:
      return launch_fwd<T, 256, 128, 64, 8, 1> (p, scale, stream);
    default:
      return ACCEL_FA_UNSUPPORTED;
    }
}

} /* namespace accel_fa */

using namespace accel_fa;

extern "C" const char *
accel_flashattn_fwd_check (const AccelFlashAttnFwdParams *p)
{
  return accel_fa_check_common (p);
}

extern "C" int
accel_flashattn_fwd (const AccelFlashAttnFwdParams *p, void *stream)
{
  if (accel_flashattn_fwd_check (p) != nullptr)
    return ACCEL_FA_UNSUPPORTED;
  if (p->seqlen_q == 0 || p->batch == 0)
    return cudaSuccess;
  const float scale = accel_fa_scale (p);
  cudaStream_t st = static_cast<cudaStream_t> (stream);

#ifdef ACCEL_FA_HAVE_SM90
  if (p->path != ACCEL_FA_PATH_SM80)
    {
      int r = accel_fa_fwd_sm90 (p, scale, st);
      if (r != ACCEL_FA_UNSUPPORTED || p->path == ACCEL_FA_PATH_SM90)
        return r;
    }
#else
  if (p->path == ACCEL_FA_PATH_SM90)
    return ACCEL_FA_UNSUPPORTED;
#endif

#ifndef ACCEL_FA_ONLY_BF16
  if (p->dtype == ACCEL_FA_F16)
    return dispatch_fwd<__half> (*p, scale, st);
#endif
  return dispatch_fwd<__nv_bfloat16> (*p, scale, st);
}
