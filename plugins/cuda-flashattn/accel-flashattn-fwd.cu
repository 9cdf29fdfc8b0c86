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
 * GENERAL instances add what the plain case must not pay for: ALiBi (a
 * bias on S after the soft cap), attention sinks (the first key blocks are
 * visited even below a left window, see KeyBlocks), packed ragged
 * sequences (attention-varlen: each block finds its sequence and query
 * block by walking cu_seqlens_q on the device; one block checks the
 * cu_seqlens values and leaves codes for the host), and head dims below the
 * instance's D: q/k with Dqk columns and v/out with Dv, each a multiple of
 * 8 (the k16 steps past Dqk and the 16-column O tiles past Dv are skipped,
 * the columns up to the next multiple of 16 are zero in shared memory).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_fp8.h>
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

template <typename T, int D, int BM, int BN, int NW, int MINB, bool GENERAL>
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
  FwdBlock<T> fb;
  if (!fwd_block<T, D, GENERAL> (p, BM, warp, fb))
    return;
  const int m0 = fb.m0, Sq = fb.Sq, Sk = fb.Sk, dqk = fb.dqk, dv = fb.dv;
  const KeyBlocks<GENERAL> kb = key_blocks<GENERAL> (fb.mi, m0, BM, BN, fb.sinks);
  fb.set_rows (p);
  const T *gk = fb.gk, *gv = fb.gv;
  const int64_t qs = p.q_strides[2], ks = p.k_strides[2], vs = p.v_strides[2], os = p.o_strides[2];

  if (kb.empty)
    {
      /* No query of this block sees any key. */
      fwd_store_empty<T, BM, D, NTH> (fb.go, os, fb.glse, tid, m0, Sq, dv);
      return;
    }

  Scores<BM, BN, GENERAL> sc;
  sc.init (p, scale, fb, lane);

  load_tile<T, BM, D, NTH> (sQ, fb.gq, qs, Sq - m0, tid, dqk);
  int nb = kb.first;
  load_tile<T, BN, D, NTH> (sK, gk + (int64_t) nb * BN * ks, ks, Sk - nb * BN, tid, dqk);
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

  for (; nb >= kb.stop; nb = GENERAL ? kb.next (nb) : nb - 1)
    {
      cp_async_wait<0> ();
      __syncthreads ();
      load_tile<T, BN, D, NTH> (sV, gv + (int64_t) nb * BN * vs, vs, Sk - nb * BN, tid, dv);
      cp_async_commit ();

      float s[MT][SN][4];
#pragma unroll
      for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int nt = 0; nt < SN; nt++)
#pragma unroll
          for (int e = 0; e < 4; e++)
            s[mt][nt][e] = 0.f;

      mma_abt<T, D, BN, MT, KQ_UNROLL, GENERAL> (s, sQ_u, wrow, sK_u, lane, dqk);

      cp_async_wait<0> ();
      __syncthreads ();
      if constexpr (GENERAL)
        {
          const int nb1 = kb.next (nb);
          if (nb1 >= kb.stop)
            {
              load_tile<T, BN, D, NTH> (sK, gk + (int64_t) nb1 * BN * ks, ks, Sk - nb1 * BN, tid, dqk);
              cp_async_commit ();
            }
        }
      else if (nb > kb.stop)
        {
          /* The plain countdown, written as before: ptxas spills more at
           * d = 128 and 256 (sm_90a) with the form above. */
          load_tile<T, BN, D, NTH> (sK, gk + (int64_t) (nb - 1) * BN * ks, ks, Sk - (nb - 1) * BN, tid);
          cp_async_commit ();
        }

      /* Soft cap, ALiBi, mask and online softmax (O rescaled): rows
       * (lane/4) and (lane/4 + 8) of each 16-row tile. */
      float corr[MT * 2];
      sc.template scores<MT, ON> (&s[0][0][0], nb, wrow + (lane >> 2), &row_max[0][0], &row_sum[0][0], corr, &acc_o[0][0][0]);

      /* O += P V, P straight from the accumulators. */
      mma_pb<T, D, BN, MT, GENERAL> (acc_o, s, sV_u, lane, dv);
    }

  /* Epilogue: normalise, stage the warp's own rows of O in its rows of sQ,
   * then 16-byte stores. */
#pragma unroll
  for (int mt = 0; mt < MT; mt++)
#pragma unroll
    for (int hh = 0; hh < 2; hh++)
      fwd_finish_row<T, D> (sQ, &acc_o[mt][0][0], hh, wrow + mt * 16 + (lane >> 2) + hh * 8, lane, row_max[mt][hh],
                            row_sum[mt][hh], sc.sl, fb.glse, m0, Sq);
  __syncwarp ();
  fwd_store_rows<T, D, 16 * MT> (fb.go, os, sQ, wrow, lane, m0, Sq, dv);
}

template <typename T, int D, int BM, int BN, int NW, int MINB, bool GENERAL>
static int
launch_fwd_kernel (const AccelFlashAttnFwdParams &p, float scale, cudaStream_t stream)
{
  using Cfg = FwdConfig<T, D, BM, BN, NW>;
  constexpr auto kernel = fwd_kernel<T, D, BM, BN, NW, MINB, GENERAL>;
  int err = accel_cuda_smem_once<kernel> (Cfg::kSmem);
  if (err != cudaSuccess)
    return err;
  /* varlen: an upper bound of the query blocks, sum ceil (len_b / BM) <=
   * ceil (Tq / BM) + B; the blocks past the last one return at once. */
  dim3 grid = p.cu_seqlens_q ? dim3 ((p.seqlen_q + BM - 1) / BM + p.batch, p.heads_q, 1)
                             : dim3 ((p.seqlen_q + BM - 1) / BM, p.heads_q, p.batch);
  kernel<<<grid, Cfg::kThreads, Cfg::kSmem, stream>>> (p, scale);
  return cudaGetLastError ();
}

template <typename T, int D, int BM, int BN, int NW, int MINB>
static int
launch_fwd (const AccelFlashAttnFwdParams &p, float scale, cudaStream_t stream)
{
  if (accel_fa_is_general (&p))
    return launch_fwd_kernel<T, D, BM, BN, NW, MINB, true> (p, scale, stream);
  return launch_fwd_kernel<T, D, BM, BN, NW, MINB, false> (p, scale, stream);
}

#ifdef ACCEL_FA_FWD_VARIANTS
static int
fwd_variant ()
{
  static int v = -1;
  return accel_fa_env_variant ("ACCEL_FA_FWD_CFG", &v);
}
#endif

template <typename T>
static int
dispatch_fwd (const AccelFlashAttnFwdParams &p, float scale, cudaStream_t stream)
{
  switch (accel_fa_dim_class (&p))
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

/* fp8 e4m3 -> T, times @mul, into a contiguous [B, H, S, D] copy; each
 * thread converts 8 elements (one 8-byte load, one 16-byte store). e4m3 is
 * exact in f16 and bf16, so q and k (mul = 1) lose nothing. */
template <typename T>
__global__ void __launch_bounds__ (256)
fp8_convert_kernel (const uint8_t *src, int64_t s0, int64_t s1, int64_t s2, int heads, int rows, int d,
                    int64_t n_chunks, float mul, T *dst)
{
  using TT = TypeTraits<T>;
  const int64_t g = (int64_t) blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= n_chunks)
    return;
  const int chunks = d / 8;
  const int64_t r = g / chunks;
  const int c = (int) (g % chunks);
  const int i = (int) (r % rows);
  const int64_t bh = r / rows;
  const int h = (int) (bh % heads);
  const int64_t b = bh / heads;
  const uint2 in = *reinterpret_cast<const uint2 *> (src + b * s0 + h * s1 + i * s2 + c * 8);
  const uint32_t w[2] = { in.x, in.y };
  uint32_t o[4];
#pragma unroll
  for (int k = 0; k < 4; k++)
    {
      const __nv_fp8x2_storage_t pair = (__nv_fp8x2_storage_t) ((w[k / 2] >> (16 * (k % 2))) & 0xffffu);
      const __half2 hv = __half2 (__nv_cvt_fp8x2_to_halfraw2 (pair, __NV_E4M3));
      const float2 f = __half22float2 (hv);
      o[k] = TT::pack (f.x * mul, f.y * mul);
    }
  *reinterpret_cast<uint4 *> (dst + g * 8) = make_uint4 (o[0], o[1], o[2], o[3]);
}

struct Fp8Work {
  void *q, *k, *v;
};

static inline size_t
fp8_align (size_t n)
{
  return (n + 255) & ~(size_t) 255;
}

static Fp8Work
fp8_work_layout (const AccelFlashAttnFwdParams *p, void *base, size_t *total)
{
  const size_t nq = fp8_align ((size_t) p->batch * p->heads_q * p->seqlen_q * p->head_dim * 2);
  const size_t nk = fp8_align ((size_t) p->batch * p->heads_kv * p->seqlen_k * p->head_dim * 2);
  const size_t nv = fp8_align ((size_t) p->batch * p->heads_kv * p->seqlen_k * accel_fa_dv (p) * 2);
  char *c = static_cast<char *> (base);
  Fp8Work w = { c, c + nq, c + nq + nk };
  if (total)
    *total = nq + nk + nv;
  return w;
}

template <typename T>
static int
fp8_convert (const void *src, const int64_t *strides, int batch, int heads, int rows, int d, float mul, void *dst,
             cudaStream_t stream)
{
  const int64_t n_chunks = (int64_t) batch * heads * rows * (d / 8);
  if (n_chunks == 0)
    return cudaSuccess;
  const unsigned blocks = (unsigned) ((n_chunks + 255) / 256);
  fp8_convert_kernel<T><<<blocks, 256, 0, stream>>> (static_cast<const uint8_t *> (src), strides[0], strides[1],
                                                     strides[2], heads, rows, d, n_chunks, mul, static_cast<T *> (dst));
  return cudaGetLastError ();
}

template <typename T>
static int
fp8_convert_all (const AccelFlashAttnFwdParams &p, const Fp8Work &w, float v_mul, cudaStream_t stream)
{
  int err = fp8_convert<T> (p.q, p.q_strides, p.batch, p.heads_q, p.seqlen_q, p.head_dim, 1.f, w.q, stream);
  if (err == cudaSuccess)
    err = fp8_convert<T> (p.k, p.k_strides, p.batch, p.heads_kv, p.seqlen_k, p.head_dim, 1.f, w.k, stream);
  if (err == cudaSuccess)
    err = fp8_convert<T> (p.v, p.v_strides, p.batch, p.heads_kv, p.seqlen_k, accel_fa_dv (&p), v_mul, w.v, stream);
  return err;
}

static inline float
fp8_descale (float d)
{
  return d > 0.f ? d : 1.f;
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
  /* varlen runs even with no query rows: its cu_seqlens are checked there. */
  if (p->batch == 0 || (p->seqlen_q == 0 && p->cu_seqlens_q == nullptr))
    return cudaSuccess;
  const float scale = accel_fa_scale (p);
  cudaStream_t st = static_cast<cudaStream_t> (stream);
  if (p->dtype == ACCEL_FA_F32)
    return p->path == ACCEL_FA_PATH_SM90 ? ACCEL_FA_UNSUPPORTED : accel_fa_fwd_f32 (p, scale, st);

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

extern "C" const char *
accel_flashattn_fwd_fp8_check (const AccelFlashAttnFwdParams *p)
{
  const char *why = accel_fa_check_common (p);
  if (why)
    return why;
  if (p->cu_seqlens_q || p->cu_seqlens_k)
    return "fp8 inputs are not supported with varlen";
  if (p->dtype == ACCEL_FA_F32)
    return "fp8 inputs need an f16 or bf16 output";
  if (!(p->q_descale >= 0.f && p->k_descale >= 0.f && p->v_descale >= 0.f)
      || isinf (p->q_descale) || isinf (p->k_descale) || isinf (p->v_descale))
    return "fp8 descales must be finite and positive";
  return nullptr;
}

extern "C" size_t
accel_flashattn_fwd_fp8_workspace_size (const AccelFlashAttnFwdParams *p)
{
  size_t total = 0;
  fp8_work_layout (p, nullptr, &total);
  return total;
}

extern "C" int
accel_flashattn_fwd_fp8 (const AccelFlashAttnFwdParams *p, void *workspace, void *stream)
{
  if (accel_flashattn_fwd_fp8_check (p) != nullptr)
    return ACCEL_FA_UNSUPPORTED;
  if (p->seqlen_q == 0 || p->batch == 0)
    return cudaSuccess;
  cudaStream_t st = static_cast<cudaStream_t> (stream);
  const Fp8Work w = fp8_work_layout (p, workspace, nullptr);
  const float v_mul = fp8_descale (p->v_descale);
  int err;
#ifndef ACCEL_FA_ONLY_BF16
  if (p->dtype == ACCEL_FA_F16)
    err = fp8_convert_all<__half> (*p, w, v_mul, st);
  else
#endif
    err = fp8_convert_all<__nv_bfloat16> (*p, w, v_mul, st);
  if (err != cudaSuccess)
    return err;

  /* The copies are contiguous [B, H, S, D] in the output's type; the
   * descales of q and k go into the logit scale, so lse refers to the
   * descaled logits as the op asks. */
  AccelFlashAttnFwdParams c = *p;
  const int64_t d = p->head_dim, dv = accel_fa_dv (p);
  c.q = w.q;
  c.k = w.k;
  c.v = w.v;
  c.q_strides[2] = d;
  c.q_strides[1] = p->seqlen_q * d;
  c.q_strides[0] = (int64_t) p->heads_q * p->seqlen_q * d;
  c.k_strides[2] = d;
  c.k_strides[1] = p->seqlen_k * d;
  c.k_strides[0] = (int64_t) p->heads_kv * p->seqlen_k * d;
  c.v_strides[2] = dv;
  c.v_strides[1] = p->seqlen_k * dv;
  c.v_strides[0] = (int64_t) p->heads_kv * p->seqlen_k * dv;
  c.scale = accel_fa_scale (p) * fp8_descale (p->q_descale) * fp8_descale (p->k_descale);
  c.q_descale = c.k_descale = c.v_descale = 0.f;
  return accel_flashattn_fwd (&c, stream);
}
