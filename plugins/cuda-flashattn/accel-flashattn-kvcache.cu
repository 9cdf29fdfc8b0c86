/* accel-flashattn-kvcache.cu: attention over a paged KV cache (decode and
 * chunked prefill), split over the keys, then merged.
 *
 * Decode reads every cached key and value once and does a few flops per
 * byte (2·R per K/V element, R = query rows per KV head), so it is bound by
 * HBM bandwidth; the design is about keeping bytes in flight, not about
 * tensor cores:
 *
 * - Grid (split, row block × KV head, batch). A CTA of 128 threads takes one
 *   KV head of one sequence and up to RB ∈ {1, 2, 4, 8, 16} query rows: all
 *   the query heads of the KV group times the Sq queries (ρ = g·Sq + i), so
 *   each K/V byte is read once per group when G·Sq ≤ 16. Longer row sets
 *   (chunked prefill) take several row blocks, each reading the keys again.
 * - Keys go in tiles of BN = 8192/D rows (16 KB of K and 16 KB of V),
 *   copied with 16-byte cp.async into a swizzled shared tile, two tiles in
 *   flight: tile t+1 loads while tile t is computed, and the CTA needs only
 *   64 KB of shared memory, so 2–3 CTAs share an SM (64–96 KB in flight per
 *   SM, where ~25 KB covers the HBM latency at 3 TB/s).
 * - The page of every key row is looked up once per tile (threads < BN write
 *   its element offset, or -1, to shared memory one tile ahead), so the
 *   copying threads only add offsets: any page size works at the same cost.
 * - The keys a CTA visits are those its rows can see: the sink keys
 *   [0, min(sinks, …)) and [min lo, max hi], concatenated into one virtual
 *   range that the splits cut into equal runs of tiles.
 * - Q Kᵀ on the CUDA cores: thread (key j, part) dots D/P = 64 dims of key j
 *   with the RB query rows (f32, pre-scaled, in shared memory) and the P
 *   parts meet by shuffles; the online softmax (log2 domain, f32) is one warp
 *   per row; P V: thread (16-byte chunk c, row group, key group) keeps RPT
 *   rows × 8 f32 accumulators, and the key groups are summed at the end.
 * - One split writes out and lse directly; several write f32 partials
 *   (unnormalised accumulator, max, sum) to the workspace and a combine
 *   kernel merges them with log-sum-exp weights.
 * - seqlens_k and the block table are checked on the device: a bad length
 *   reads as 0 keys, a bad page is never read (its rows are zero-filled by
 *   cp.async with a source size of 0), and both leave codes for the caller
 *   (accel-flashattn.h, ACCEL_FA_KVCACHE_N_CODES).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <algorithm>
#include <atomic>
#include "accel-flashattn-common.cuh"
#include "accel-flashattn-private.h"

namespace accel_fa {

namespace kv {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxRows = 16;
constexpr int kMaxDevices = 64;
/* Partials beyond this many bytes are not worth the splits they buy. */
constexpr size_t kMaxPartialBytes = size_t (256) << 20;

template <int D>
struct Cfg {
  static constexpr int kBN = 8192 / D;           /* keys per tile: 16 KB of K (2-byte types) */
  static constexpr int kP = D / 64;              /* threads per key in Q Kᵀ */
  static constexpr int kCH = D / 8;              /* 16-byte chunks per row */
  static constexpr int kNS = kThreads / kCH;     /* rows one pass of the block copies */
  static constexpr int kTile = kBN * D;          /* elements per K or V tile */
  static constexpr int kStageBytes = 2 * kTile * 2;
  static_assert (kBN * kP == kThreads, "one thread per (key, part)");
  static_assert (kBN % 32 == 0 && kBN % kNS == 0, "tile shape");
};

template <int D, int RB>
struct Layout {
  using C = Cfg<D>;
  static constexpr int kQStride = 68;            /* floats per (row, part): 64 + 4 of padding */
  static constexpr int kRG = RB < C::kNS ? RB : C::kNS;   /* row groups in P V */
  static constexpr int kKG = C::kNS / kRG;       /* key groups in P V */
  static constexpr int kRPT = RB / kRG;          /* rows per thread in P V */
  static constexpr int kRowsPerWarp = (RB + kWarps - 1) / kWarps;
  static constexpr size_t kOffQ = 2 * size_t (C::kStageBytes);
  static constexpr size_t kOffS = kOffQ + size_t (RB) * C::kP * kQStride * 4;
  static constexpr size_t kOffOff = kOffS + size_t (RB) * C::kBN * 4;
  static constexpr size_t kOffRow = kOffOff + 2 * size_t (C::kBN) * 8;
  static constexpr size_t kSmem = kOffRow + 7 * size_t (RB) * 4;
  static_assert (RB % kRG == 0, "rows split evenly");
  static_assert (size_t (kKG) * RB * D * 4 <= kOffQ, "the key-group reduction fits in the tiles");
};

struct Args {
  AccelFlashAttnKvcacheParams p;
  float q_mult;          /* scale, or scale / softcap */
  int rows;              /* R = (Hq / Hkv) · Sq */
  int splits;
  int64_t rows_total;    /* B · Hq · Sq */
  float *o_part;         /* [splits][rows_total][D] */
  float *m_part;         /* [splits][rows_total], log2 units */
  float *l_part;         /* [splits][rows_total] */
};

template <typename T>
__device__ __forceinline__ void
unpack8 (const uint4 &u, float *f)
{
  float2 a = TypeTraits<T>::unpack (u.x), b = TypeTraits<T>::unpack (u.y);
  float2 c = TypeTraits<T>::unpack (u.z), d = TypeTraits<T>::unpack (u.w);
  f[0] = a.x; f[1] = a.y; f[2] = b.x; f[3] = b.y;
  f[4] = c.x; f[5] = c.y; f[6] = d.x; f[7] = d.y;
}

__device__ __forceinline__ float
warp_max (float x)
{
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    x = fmaxf (x, __shfl_xor_sync (0xffffffffu, x, o));
  return x;
}

__device__ __forceinline__ float
warp_sum (float x)
{
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    x += __shfl_xor_sync (0xffffffffu, x, o);
  return x;
}

/* The keys a CTA visits, as one virtual range: virtual index v < nA is key v
 * (the sinks that the left window would hide), the rest key bstart + v - nA. */
struct KeyRange {
  int nA, bstart, n;
};

__device__ __forceinline__ int
key_of (const KeyRange &kr, int v)
{
  return v >= kr.n ? INT32_MAX : v < kr.nA ? v : kr.bstart + (v - kr.nA);
}

/* Element offset of virtual key row @v in a cache (without the head and the
 * chunk), or -1 where there is nothing to read: past the range, or a page
 * index outside [0, P) (reported separately). */
__device__ __forceinline__ int64_t
row_offset (const KeyRange &kr, int v, const int32_t *bt, int page, int num_pages, int64_t row_stride)
{
  if (v >= kr.n)
    return -1;
  const int key = key_of (kr, v);
  const int blk = key / page;
  const int pg = __ldg (bt + blk);
  if ((unsigned) pg >= (unsigned) num_pages)
    return -1;
  return ((int64_t) pg * page + (key - blk * page)) * row_stride;
}

template <typename T, int D, int RB>
__global__ void __launch_bounds__ (kThreads, 3)   /* 3 CTAs of 64 KB tiles per SM */
kvcache_kernel (const Args a)
{
  using C = Cfg<D>;
  using Lay = Layout<D, RB>;
  constexpr int BN = C::kBN, P = C::kP, CH = C::kCH, NS = C::kNS;
  constexpr int RG = Lay::kRG, KG = Lay::kKG, RPT = Lay::kRPT, U = Lay::kRowsPerWarp;

  extern __shared__ __align__ (16) unsigned char smem[];
  T *kv_s = reinterpret_cast<T *> (smem);   /* stage s: K at 2s·tile, V at (2s+1)·tile */
  float *q_s = reinterpret_cast<float *> (smem + Lay::kOffQ);
  float *s_s = reinterpret_cast<float *> (smem + Lay::kOffS);
  int64_t *off_s = reinterpret_cast<int64_t *> (smem + Lay::kOffOff);
  float *alpha_s = reinterpret_cast<float *> (smem + Lay::kOffRow);
  float *m_s = alpha_s + RB, *l_s = m_s + RB, *slope_s = l_s + RB;
  int *lo_s = reinterpret_cast<int *> (slope_s + RB), *hi_s = lo_s + RB, *pos_s = hi_s + RB;

  const AccelFlashAttnKvcacheParams &p = a.p;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int split = blockIdx.x;
  const int h = blockIdx.y % p.heads_kv, rb = blockIdx.y / p.heads_kv;
  const int b = blockIdx.z;
  const int G = p.heads_q / p.heads_kv, Sq = p.seqlen_q;
  const int page = p.page_size;
  const int32_t *bt = p.block_table + (int64_t) b * p.max_blocks;

  /* The device-side checks. A bad length counts as no keys; the used
   * entries of the block table are checked by all the CTAs of the
   * sequence together, whether or not the mask lets anyone read them. */
  int L = p.seqlens_k[b];
  if (L < 0 || (int64_t) L > (int64_t) p.max_blocks * page)
    {
      if (p.codes != nullptr && split == 0 && blockIdx.y == 0 && tid == 0)
        atomicMax (reinterpret_cast<unsigned long long *> (p.codes),
                   ((unsigned long long) (0x7fffffff - b) << 32) | (unsigned) L);
      L = 0;
    }
  const int n_blocks = (L + page - 1) / page;
  if (p.codes != nullptr)
    {
      const int64_t n_cta = (int64_t) gridDim.x * gridDim.y, cta = (int64_t) blockIdx.y * gridDim.x + split;
      for (int64_t n = cta * kThreads + tid; n < n_blocks; n += n_cta * kThreads)
        {
          const int pg = __ldg (bt + n);
          if (pg < 0 || pg >= p.num_pages)
            atomicMax (reinterpret_cast<unsigned long long *> (p.codes + 2),
                       ((unsigned long long) (0x7fffffff - b) << 32) | (unsigned) (0x7fffffff - (int) n));
        }
    }

  /* Rows: the visible keys of each, [lo, hi] plus the sinks below sinks. */
  if (tid < RB)
    {
      const int rho = rb * RB + tid;
      int lo = INT32_MAX, hi = -1, pos = 0;
      float slope = 0.f;
      if (rho < a.rows)
        {
          const int g = rho / Sq, i = rho - g * Sq;
          const int hq = h * G + g;
          pos = L - Sq + i;
          int64_t hi64 = L - 1;
          if (p.causal)
            hi64 = min (hi64, (int64_t) pos);
          if (p.window_right >= 0)
            hi64 = min (hi64, (int64_t) pos + p.window_right);
          hi = (int) max (hi64, (int64_t) -1);
          lo = p.window_left >= 0 ? (int) max ((int64_t) pos - p.window_left, (int64_t) 0) : 0;
          if (p.alibi_slopes != nullptr)
            slope = p.alibi_slopes[(int64_t) b * p.alibi_batch_stride + hq];
        }
      lo_s[tid] = lo;
      hi_s[tid] = hi;
      pos_s[tid] = pos;
      slope_s[tid] = slope;
    }

  /* Queries, pre-scaled, as f32 [row][part][64 + pad]. */
  for (int it = tid; it < RB * CH; it += kThreads)
    {
      const int r = it / CH, c = it - r * CH;
      const int rho = rb * RB + r;
      float f[8] = { 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f };
      if (rho < a.rows)
        {
          const int g = rho / Sq, i = rho - g * Sq;
          const T *q = static_cast<const T *> (p.q) + (((int64_t) b * p.heads_q + h * G + g) * Sq + i) * D + c * 8;
          unpack8<T> (*reinterpret_cast<const uint4 *> (q), f);
        }
      float4 *dst = reinterpret_cast<float4 *> (q_s + (r * P + c / 8) * Lay::kQStride + (c % 8) * 8);
      dst[0] = make_float4 (f[0] * a.q_mult, f[1] * a.q_mult, f[2] * a.q_mult, f[3] * a.q_mult);
      dst[1] = make_float4 (f[4] * a.q_mult, f[5] * a.q_mult, f[6] * a.q_mult, f[7] * a.q_mult);
    }
  __syncthreads ();

  KeyRange kr;
  {
    int lo_min = INT32_MAX, hi_max = -1;
#pragma unroll
    for (int r = 0; r < RB; r++)
      {
        hi_max = max (hi_max, hi_s[r]);
        if (lo_s[r] <= hi_s[r])
          lo_min = min (lo_min, lo_s[r]);
      }
    const int n_b = lo_min <= hi_max ? hi_max + 1 - lo_min : 0;
    kr.bstart = n_b > 0 ? lo_min : INT32_MAX;
    kr.nA = max (0, min (min (p.sinks, hi_max + 1), kr.bstart));
    kr.n = kr.nA + n_b;
  }
  const int n_tiles = (kr.n + BN - 1) / BN;
  const int per_split = (n_tiles + a.splits - 1) / a.splits;
  const int t0 = split * per_split, t1 = min (n_tiles, t0 + per_split);

  const int64_t row_stride = (int64_t) p.heads_kv * D;
  const int c = tid % CH, r0 = tid / CH;
  const T *kc = static_cast<const T *> (p.k_cache), *vc = static_cast<const T *> (p.v_cache);
  const T *k_src = kc + (int64_t) h * D + c * 8, *v_src = vc + (int64_t) h * D + c * 8;
  const uint32_t tiles_u32 = smem_u32 (kv_s);

  auto lookup = [&] (int t, int slot) {
    if (tid < BN)
      off_s[slot * BN + tid] = row_offset (kr, t * BN + tid, bt, page, p.num_pages, row_stride);
  };
  auto issue = [&] (int slot) {
    const uint32_t k_dst = tiles_u32 + (uint32_t) (2 * slot * C::kTile * sizeof (T));
    const uint32_t v_dst = k_dst + (uint32_t) (C::kTile * sizeof (T));
#pragma unroll
    for (int i = 0; i < BN / NS; i++)
      {
        const int jj = r0 + i * NS;
        const int64_t o = off_s[slot * BN + jj];
        const bool ok = o >= 0;
        const uint32_t at = 2u * swz<D> (jj, c * 8);
        cp_async_16 (k_dst + at, ok ? k_src + o : kc, ok ? 16 : 0);
        cp_async_16 (v_dst + at, ok ? v_src + o : vc, ok ? 16 : 0);
      }
  };

  if (t0 < t1)
    lookup (t0, 0);
  if (t0 + 1 < t1)
    lookup (t0 + 1, 1);
  __syncthreads ();
  if (t0 < t1)
    issue (0);
  cp_async_commit ();
  if (t0 + 1 < t1)
    issue (1);
  cp_async_commit ();

  float acc[RPT][8];
#pragma unroll
  for (int i = 0; i < RPT; i++)
#pragma unroll
    for (int e = 0; e < 8; e++)
      acc[i][e] = 0.f;
  float m_r[U], l_r[U];
#pragma unroll
  for (int u = 0; u < U; u++)
    {
      m_r[u] = -INFINITY;
      l_r[u] = 0.f;
    }

  const int j_qk = tid / P, part = tid % P;
  const int s_pv = tid / CH, rg = s_pv % RG, kg = s_pv / RG;
  const float softcap = p.softcap;
  const bool have_alibi = p.alibi_slopes != nullptr;

  for (int t = t0; t < t1; t++)
    {
      const int slot = (t - t0) & 1;
      cp_async_wait<1> ();
      __syncthreads ();
      /* The page offsets of tile t + 2 go where those of tile t were. */
      if (t + 2 < t1)
        lookup (t + 2, slot);

      /* S = Q Kᵀ, masked, in log2 units. */
      {
        const T *ks = kv_s + (2 * slot) * C::kTile;
        float s[RB];
#pragma unroll
        for (int r = 0; r < RB; r++)
          s[r] = 0.f;
#pragma unroll
        for (int cc = 0; cc < 8; cc++)
          {
            /* Parts start at different chunks so that the lanes of a
             * quarter-warp hit eight different bank groups. */
            const int lc = cc ^ (part * (8 / P));
            float kf[8];
            unpack8<T> (*reinterpret_cast<const uint4 *> (ks + swz<D> (j_qk, (part * 8 + lc) * 8)), kf);
#pragma unroll
            for (int r = 0; r < RB; r++)
              {
                const float4 *qp = reinterpret_cast<const float4 *> (q_s + (r * P + part) * Lay::kQStride + lc * 8);
                const float4 x = qp[0], y = qp[1];
                s[r] = fmaf (x.x, kf[0], s[r]);
                s[r] = fmaf (x.y, kf[1], s[r]);
                s[r] = fmaf (x.z, kf[2], s[r]);
                s[r] = fmaf (x.w, kf[3], s[r]);
                s[r] = fmaf (y.x, kf[4], s[r]);
                s[r] = fmaf (y.y, kf[5], s[r]);
                s[r] = fmaf (y.z, kf[6], s[r]);
                s[r] = fmaf (y.w, kf[7], s[r]);
              }
          }
#pragma unroll
        for (int o = 1; o < P; o <<= 1)
#pragma unroll
          for (int r = 0; r < RB; r++)
            s[r] += __shfl_xor_sync (0xffffffffu, s[r], o);
        const int key = key_of (kr, t * BN + j_qk);
#pragma unroll
        for (int r = 0; r < RB; r++)
          if (r % P == part)
            {
              const bool visible = key <= hi_s[r] && (key >= lo_s[r] || key < p.sinks);
              float x = s[r];
              /* tanhf, not tanh.approx: its 2^-11 error times the cap
               * would be a visible logit error at f16. */
              if (softcap > 0.f)
                x = softcap * tanhf (x);
              if (have_alibi && visible)
                x -= slope_s[r] * fabsf ((float) (pos_s[r] - key));
              s_s[r * BN + j_qk] = visible ? x * kLog2e : -INFINITY;
            }
      }
      __syncthreads ();

      /* Online softmax, one warp per row. */
#pragma unroll
      for (int u = 0; u < U; u++)
        {
          const int r = warp + kWarps * u;
          if (r < RB)
            {
              float x[BN / 32];
              float mx = -INFINITY;
#pragma unroll
              for (int e = 0; e < BN / 32; e++)
                {
                  x[e] = s_s[r * BN + lane + 32 * e];
                  mx = fmaxf (mx, x[e]);
                }
              mx = warp_max (mx);
              const float m_new = fmaxf (m_r[u], mx);
              float alpha = 1.f, sum = 0.f;
              if (m_new != -INFINITY)
                {
                  alpha = fast_exp2 (m_r[u] - m_new);
#pragma unroll
                  for (int e = 0; e < BN / 32; e++)
                    {
                      x[e] = fast_exp2 (x[e] - m_new);
                      sum += x[e];
                    }
                }
              else
                {
#pragma unroll
                  for (int e = 0; e < BN / 32; e++)
                    x[e] = 0.f;
                }
              sum = warp_sum (sum);
              l_r[u] = l_r[u] * alpha + sum;
              m_r[u] = m_new;
#pragma unroll
              for (int e = 0; e < BN / 32; e++)
                s_s[r * BN + lane + 32 * e] = x[e];
              if (lane == 0)
                alpha_s[r] = alpha;
            }
        }
      __syncthreads ();

      /* O = O·alpha + P V. */
      {
        const T *vs = kv_s + (2 * slot + 1) * C::kTile;
#pragma unroll
        for (int i = 0; i < RPT; i++)
          {
            const float al = alpha_s[rg + RG * i];
#pragma unroll
            for (int e = 0; e < 8; e++)
              acc[i][e] *= al;
          }
#pragma unroll 4
        for (int j = kg; j < BN; j += KG)
          {
            float vf[8];
            unpack8<T> (*reinterpret_cast<const uint4 *> (vs + swz<D> (j, c * 8)), vf);
#pragma unroll
            for (int i = 0; i < RPT; i++)
              {
                const float pr = s_s[(rg + RG * i) * BN + j];
#pragma unroll
                for (int e = 0; e < 8; e++)
                  acc[i][e] = fmaf (pr, vf[e], acc[i][e]);
              }
          }
      }
      __syncthreads ();
      if (t + 2 < t1)
        issue (slot);
      cp_async_commit ();
    }
  cp_async_wait<0> ();
  __syncthreads ();

  /* Sum the key groups through shared memory (the tiles are free now). */
  float *red = reinterpret_cast<float *> (smem);
#pragma unroll
  for (int i = 0; i < RPT; i++)
    {
      float4 *dst = reinterpret_cast<float4 *> (red + ((size_t) kg * RB + rg + RG * i) * D + c * 8);
      dst[0] = make_float4 (acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
      dst[1] = make_float4 (acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
#pragma unroll
  for (int u = 0; u < U; u++)
    {
      const int r = warp + kWarps * u;
      if (r < RB && lane == 0)
        {
          m_s[r] = m_r[u];
          l_s[r] = l_r[u];
        }
    }
  __syncthreads ();

  for (int it = tid; it < RB * CH; it += kThreads)
    {
      const int r = it / CH, cw = it - r * CH;
      const int rho = rb * RB + r;
      if (rho >= a.rows)
        continue;
      const int g = rho / Sq, i = rho - g * Sq;
      const int64_t row = ((int64_t) b * p.heads_q + h * G + g) * Sq + i;
      float o[8];
#pragma unroll
      for (int e = 0; e < 8; e++)
        o[e] = 0.f;
#pragma unroll
      for (int k = 0; k < KG; k++)
        {
          const float4 *src = reinterpret_cast<const float4 *> (red + ((size_t) k * RB + r) * D + cw * 8);
          const float4 x = src[0], y = src[1];
          o[0] += x.x; o[1] += x.y; o[2] += x.z; o[3] += x.w;
          o[4] += y.x; o[5] += y.y; o[6] += y.z; o[7] += y.w;
        }
      const float m = m_s[r], l = l_s[r];
      if (a.splits == 1)
        {
          const float inv = l > 0.f ? 1.f / l : 0.f;
          uint4 packed;
          packed.x = TypeTraits<T>::pack (o[0] * inv, o[1] * inv);
          packed.y = TypeTraits<T>::pack (o[2] * inv, o[3] * inv);
          packed.z = TypeTraits<T>::pack (o[4] * inv, o[5] * inv);
          packed.w = TypeTraits<T>::pack (o[6] * inv, o[7] * inv);
          *reinterpret_cast<uint4 *> (static_cast<T *> (p.out) + row * D + cw * 8) = packed;
          if (p.lse != nullptr && cw == 0)
            p.lse[row] = l > 0.f ? (m + log2f (l)) * kLn2 : -INFINITY;
        }
      else
        {
          const int64_t at = (int64_t) split * a.rows_total + row;
          float4 *dst = reinterpret_cast<float4 *> (a.o_part + at * D + cw * 8);
          dst[0] = make_float4 (o[0], o[1], o[2], o[3]);
          dst[1] = make_float4 (o[4], o[5], o[6], o[7]);
          if (cw == 0)
            {
              a.m_part[at] = m;
              a.l_part[at] = l;
            }
        }
    }
}

/* Merges the splits of each row: weights 2^(m_s - M), lse = M + log2 Σ w l. */
template <typename T, int D>
__global__ void __launch_bounds__ (kThreads)
combine_kernel (const Args a)
{
  constexpr int TPR = D / 4, RPB = kThreads / TPR;
  const int64_t row = (int64_t) blockIdx.x * RPB + threadIdx.x / TPR;
  const int c4 = threadIdx.x % TPR;
  if (row >= a.rows_total)
    return;
  const int64_t n = a.rows_total;
  float M = -INFINITY;
  for (int s = 0; s < a.splits; s++)
    M = fmaxf (M, a.m_part[s * n + row]);
  float sum = 0.f;
  float4 o = make_float4 (0.f, 0.f, 0.f, 0.f);
  if (M != -INFINITY)
    for (int s = 0; s < a.splits; s++)
      {
        const float m = a.m_part[s * n + row];
        if (m == -INFINITY)
          continue;
        const float w = exp2f (m - M);
        sum = fmaf (w, a.l_part[s * n + row], sum);
        const float4 x = *reinterpret_cast<const float4 *> (a.o_part + (s * n + row) * D + c4 * 4);
        o.x = fmaf (w, x.x, o.x);
        o.y = fmaf (w, x.y, o.y);
        o.z = fmaf (w, x.z, o.z);
        o.w = fmaf (w, x.w, o.w);
      }
  const float inv = sum > 0.f ? 1.f / sum : 0.f;
  uint2 packed;
  packed.x = TypeTraits<T>::pack (o.x * inv, o.y * inv);
  packed.y = TypeTraits<T>::pack (o.z * inv, o.w * inv);
  *reinterpret_cast<uint2 *> (static_cast<T *> (a.p.out) + row * D + c4 * 4) = packed;
  if (a.p.lse != nullptr && c4 == 0)
    a.p.lse[row] = sum > 0.f ? (M + log2f (sum)) * kLn2 : -INFINITY;
}

/* What a run looks like, worked out on the host. */
struct Plan {
  int rb;            /* rows per CTA: 1, 2, 4, 8 or 16 */
  int row_blocks;
  int rows;          /* R */
  int splits;
  int occupancy;     /* CTAs per SM of the variant */
  int sms;
};

static int
device_index ()
{
  int dev = 0;
  if (cudaGetDevice (&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices)
    return -1;
  return dev;
}

/* Sets the variant's shared-memory limit on the current device once and
 * says how many of its CTAs fit on an SM. */
template <typename T, int D, int RB>
static int
prepare (int *occupancy)
{
  static std::atomic<int> cached[kMaxDevices];
  const int dev = device_index ();
  if (dev < 0)
    return cudaErrorInvalidDevice;
  int v = cached[dev].load (std::memory_order_relaxed);
  if (v == 0)
    {
      auto kernel = kvcache_kernel<T, D, RB>;
      cudaError_t err = cudaFuncSetAttribute (kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int) Layout<D, RB>::kSmem);
      if (err == cudaSuccess)
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor (&v, kernel, kThreads, Layout<D, RB>::kSmem);
      if (err != cudaSuccess)
        return err;
      v = max (v, 1);
      cached[dev].store (v, std::memory_order_relaxed);
    }
  *occupancy = v;
  return cudaSuccess;
}

static Args
make_args (const AccelFlashAttnKvcacheParams &p, const Plan &plan, void *workspace)
{
  Args a;
  a.p = p;
  const float scale = p.scale > 0.f ? p.scale : 1.f / sqrtf ((float) p.head_dim);
  a.q_mult = p.softcap > 0.f ? scale / p.softcap : scale;
  a.rows = plan.rows;
  a.splits = plan.splits;
  a.rows_total = (int64_t) p.batch * p.heads_q * p.seqlen_q;
  a.o_part = a.m_part = a.l_part = nullptr;
  if (plan.splits > 1)
    {
      a.o_part = static_cast<float *> (workspace);
      a.m_part = a.o_part + (size_t) plan.splits * a.rows_total * p.head_dim;
      a.l_part = a.m_part + (size_t) plan.splits * a.rows_total;
    }
  return a;
}

/* @plan NULL: only prepare the variant (its occupancy); else launch. */
template <typename T, int D, int RB>
static int
variant (const AccelFlashAttnKvcacheParams &p, const Plan *plan, int *occupancy, void *workspace,
         cudaStream_t stream)
{
  int err = prepare<T, D, RB> (occupancy);
  if (err != cudaSuccess || plan == nullptr)
    return err;
  const Args a = make_args (p, *plan, workspace);
  dim3 grid (plan->splits, p.heads_kv * plan->row_blocks, p.batch);
  kvcache_kernel<T, D, RB><<<grid, kThreads, Layout<D, RB>::kSmem, stream>>> (a);
  if (plan->splits > 1 && a.rows_total > 0)
    {
      constexpr int RPB = kThreads / (D / 4);
      const int64_t blocks = (a.rows_total + RPB - 1) / RPB;
      combine_kernel<T, D><<<(unsigned) blocks, kThreads, 0, stream>>> (a);
    }
  return cudaGetLastError ();
}

template <typename T, int D>
static int
by_rows (const AccelFlashAttnKvcacheParams &p, int rb, const Plan *plan, int *occ, void *ws, cudaStream_t stream)
{
  switch (rb)
    {
    case 1: return variant<T, D, 1> (p, plan, occ, ws, stream);
    case 2: return variant<T, D, 2> (p, plan, occ, ws, stream);
    case 4: return variant<T, D, 4> (p, plan, occ, ws, stream);
    case 8: return variant<T, D, 8> (p, plan, occ, ws, stream);
    case 16: return variant<T, D, 16> (p, plan, occ, ws, stream);
    default: return ACCEL_FA_UNSUPPORTED;
    }
}

template <typename T>
static int
by_dim (const AccelFlashAttnKvcacheParams &p, int rb, const Plan *plan, int *occ, void *ws, cudaStream_t stream)
{
  switch (p.head_dim)
    {
    case 64: return by_rows<T, 64> (p, rb, plan, occ, ws, stream);
    case 128: return by_rows<T, 128> (p, rb, plan, occ, ws, stream);
    case 256: return by_rows<T, 256> (p, rb, plan, occ, ws, stream);
    default: return ACCEL_FA_UNSUPPORTED;
    }
}

static int
dispatch (const AccelFlashAttnKvcacheParams &p, int rb, const Plan *plan, int *occ, void *ws, cudaStream_t stream)
{
#ifndef ACCEL_FA_ONLY_BF16
  if (p.dtype == ACCEL_FA_F16)
    return by_dim<__half> (p, rb, plan, occ, ws, stream);
#endif
  return by_dim<__nv_bfloat16> (p, rb, plan, occ, ws, stream);
}

static int
sm_count ()
{
  static std::atomic<int> cached[kMaxDevices];
  const int dev = device_index ();
  if (dev < 0)
    return 1;
  int n = cached[dev].load (std::memory_order_relaxed);
  if (n == 0)
    {
      if (cudaDeviceGetAttribute (&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n < 1)
        n = 1;
      cached[dev].store (n, std::memory_order_relaxed);
    }
  return n;
}

static size_t
partial_bytes (const AccelFlashAttnKvcacheParams &p, int splits)
{
  const size_t rows = (size_t) p.batch * p.heads_q * p.seqlen_q;
  return (size_t) splits * rows * (p.head_dim + 2) * sizeof (float);
}

/* The splits: with few CTAs (decode of a small batch, long contexts) the
 * keys are cut so that the grid covers the GPU in nearly whole waves;
 * each split keeps at least two tiles, and partials stay under
 * kMaxPartialBytes. A grid of four or more waves is left alone. */
static int
make_plan (const AccelFlashAttnKvcacheParams &p, Plan *plan)
{
  const int G = p.heads_q / p.heads_kv;
  const int64_t rows = (int64_t) G * p.seqlen_q;
  plan->rows = (int) rows;
  plan->rb = rows <= 1 ? 1 : rows <= 2 ? 2 : rows <= 4 ? 4 : rows <= 8 ? 8 : kMaxRows;
  plan->row_blocks = (int) std::max<int64_t> (1, (rows + plan->rb - 1) / plan->rb);
  plan->sms = sm_count ();
  int err = dispatch (p, plan->rb, nullptr, &plan->occupancy, nullptr, nullptr);
  if (err != cudaSuccess)
    return err;

  const int bn = 8192 / p.head_dim;
  const int64_t cap = (int64_t) p.max_blocks * p.page_size;
  const int64_t max_tiles = std::max<int64_t> (1, (cap + bn - 1) / bn);
  int limit = (int) std::min<int64_t> (max_tiles, 256);
  while (limit > 1 && partial_bytes (p, limit) > kMaxPartialBytes)
    limit /= 2;
  if (rows == 0 || p.batch == 0)
    limit = 1;
  if (p.num_splits > 0)
    {
      plan->splits = std::min (p.num_splits, limit);
      return cudaSuccess;
    }

  const double base = (double) p.batch * p.heads_kv * plan->row_blocks;
  const double slots = (double) plan->sms * plan->occupancy;
  plan->splits = 1;
  if (base >= 4 * slots)
    return cudaSuccess;
  const int max_s = (int) std::min<int64_t> (std::min<int64_t> (limit, 64), std::max<int64_t> (1, max_tiles / 2));
  double eff[65] = { 0 };
  double best = 0;
  for (int s = 1; s <= max_s; s++)
    {
      const double waves = base * s / slots;
      eff[s] = waves / ceil (waves);
      best = std::max (best, eff[s]);
    }
  for (int s = 1; s <= max_s; s++)
    if (eff[s] >= 0.9 * best)
      {
        plan->splits = s;
        break;
      }
  return cudaSuccess;
}

} /* namespace kv */

} /* namespace accel_fa */

using namespace accel_fa;

const char *
accel_flashattn_kvcache_check (const AccelFlashAttnKvcacheParams *p)
{
  if (p->dtype != ACCEL_FA_F16 && p->dtype != ACCEL_FA_BF16)
    return "dtype is not f16 or bf16";
#ifdef ACCEL_FA_ONLY_BF16
  if (p->dtype != ACCEL_FA_BF16)
    return "this build has bf16 kernels only";
#endif
  if (p->head_dim != 64 && p->head_dim != 128 && p->head_dim != 256)
    return "head dim is not 64, 128 or 256";
  if (p->batch < 0 || p->heads_q < 1 || p->heads_kv < 1 || p->seqlen_q < 0 || p->num_pages < 0
      || p->page_size < 1 || p->max_blocks < 0 || p->num_splits < 0)
    return "negative or zero sizes";
  if (p->heads_q % p->heads_kv != 0)
    return "query heads are not a multiple of key/value heads";
  if (p->batch > 65535)
    return "batch above 65535";
  const int64_t rows = (int64_t) (p->heads_q / p->heads_kv) * p->seqlen_q;
  if (rows > INT32_MAX / 2 || (int64_t) p->heads_kv * ((rows + kv::kMaxRows - 1) / kv::kMaxRows) > 65535)
    return "too many query rows per key/value head";
  if ((int64_t) p->max_blocks * p->page_size > INT32_MAX / 2)
    return "block table spans more than 2^30 keys";
  if (p->window_left < -1 || p->window_right < -1 || p->sinks < 0)
    return "window extents below -1 or negative sinks";
  if (!(p->softcap >= 0.f) || !(p->scale >= 0.f))
    return "negative scale or softcap";
  if (p->alibi_batch_stride != 0 && p->alibi_batch_stride != p->heads_q)
    return "alibi slopes are neither [Hq] nor [B, Hq]";
  if ((uintptr_t) p->q % 16 || (uintptr_t) p->k_cache % 16 || (uintptr_t) p->v_cache % 16
      || (uintptr_t) p->out % 16)
    return "a buffer is not 16-byte aligned";
  if ((uintptr_t) p->codes % 8)
    return "the codes are not 8-byte aligned";
  return nullptr;
}

int
accel_flashattn_kvcache_num_splits (const AccelFlashAttnKvcacheParams *p)
{
  kv::Plan plan;
  if (accel_flashattn_kvcache_check (p) != nullptr || kv::make_plan (*p, &plan) != cudaSuccess)
    return 1;
  return plan.splits;
}

size_t
accel_flashattn_kvcache_workspace_size (const AccelFlashAttnKvcacheParams *p)
{
  kv::Plan plan;
  if (accel_flashattn_kvcache_check (p) != nullptr || kv::make_plan (*p, &plan) != cudaSuccess
      || plan.splits <= 1)
    return 0;
  return (kv::partial_bytes (*p, plan.splits) + 255) & ~(size_t) 255;
}

int
accel_flashattn_kvcache (const AccelFlashAttnKvcacheParams *p, void *workspace, void *stream)
{
  if (accel_flashattn_kvcache_check (p) != nullptr)
    return ACCEL_FA_UNSUPPORTED;
  if (p->batch == 0)
    return cudaSuccess;
  kv::Plan plan;
  int err = kv::make_plan (*p, &plan);
  if (err != cudaSuccess)
    return err;
  if (plan.splits > 1 && workspace == nullptr)
    return cudaErrorInvalidValue;
  int occ;
  return kv::dispatch (*p, plan.rb, &plan, &occ, workspace, static_cast<cudaStream_t> (stream));
}
