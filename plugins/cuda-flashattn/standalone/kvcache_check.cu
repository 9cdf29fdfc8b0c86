/* kvcache_check.cu: the attention-kvcache kernels (accel-flashattn-kvcache.cu)
 * alone, without the runtime: random paged inputs against a binary64 host
 * reference, the device-side checks, and the decode bandwidth beside a
 * device-to-device copy.
 *
 *   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I.. \
 *     kvcache_check.cu ../accel-flashattn-kvcache.cu -o kvcache_check && ./kvcache_check
 *
 * Exit status 0 when every case is within tolerance (relative L2 1e-2 bf16,
 * 5e-3 f16, lse 1e-3) and the checks report what they should.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include <random>
#include <algorithm>
#include "accel-flashattn.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf (stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString (e_)); exit (2); } } while (0)

struct Case {
  const char *name;
  int B, Hq, Hkv, Sq, page, D;
  std::vector<int> lens;
  int causal, wl, wr, sinks, alibi;   /* alibi: 0 none, 1 [Hq], 2 [B, Hq] */
  float softcap;
  int splits;
  int dtype;
};

static std::mt19937 rng (1234);

static float
uni (float lo, float hi)
{
  return std::uniform_real_distribution<float> (lo, hi) (rng);
}

static uint16_t
to16 (float f, int dtype, float *rounded)
{
  uint16_t u;
  if (dtype == ACCEL_FA_BF16)
    {
      __nv_bfloat16 h = __float2bfloat16 (f);
      *rounded = __bfloat162float (h);
      memcpy (&u, &h, 2);
    }
  else
    {
      __half h = __float2half (f);
      *rounded = __half2float (h);
      memcpy (&u, &h, 2);
    }
  return u;
}

static float
from16 (uint16_t u, int dtype)
{
  if (dtype == ACCEL_FA_BF16)
    {
      __nv_bfloat16_raw r;
      r.x = u;
      return __bfloat162float (__nv_bfloat16 (r));
    }
  __half_raw r;
  r.x = u;
  return __half2float (__half (r));
}

template <typename X>
static X *
upload (const std::vector<X> &v)
{
  X *d = nullptr;
  CK (cudaMalloc (&d, std::max<size_t> (v.size (), 1) * sizeof (X)));
  CK (cudaMemcpy (d, v.data (), v.size () * sizeof (X), cudaMemcpyHostToDevice));
  return d;
}

struct Data {
  int P, max_blocks;
  std::vector<float> q, k, v, slopes;
  std::vector<uint16_t> q16, k16, v16;
  std::vector<int32_t> table, lens;
};

static Data
make_data (const Case &c)
{
  Data d;
  int used = 0;
  d.max_blocks = 1;
  for (int b = 0; b < c.B; b++)
    {
      int n = (c.lens[b] + c.page - 1) / c.page;
      used += n;
      d.max_blocks = std::max (d.max_blocks, n + 2);
    }
  d.P = used + 3;
  std::vector<int> perm (d.P);
  for (int i = 0; i < d.P; i++)
    perm[i] = i;
  std::shuffle (perm.begin (), perm.end (), rng);
  d.table.assign ((size_t) c.B * d.max_blocks, 0);
  int next = 0;
  for (int b = 0; b < c.B; b++)
    {
      int n = (c.lens[b] + c.page - 1) / c.page;
      for (int k = 0; k < d.max_blocks; k++)
        d.table[(size_t) b * d.max_blocks + k] = k < n ? perm[next++] : (k % 2 ? -5 : d.P + 1000);
      d.lens.push_back (c.lens[b]);
    }
  size_t nq = (size_t) c.B * c.Hq * c.Sq * c.D, nc = (size_t) d.P * c.page * c.Hkv * c.D;
  d.q.resize (nq); d.q16.resize (nq);
  d.k.resize (nc); d.k16.resize (nc);
  d.v.resize (nc); d.v16.resize (nc);
  for (size_t i = 0; i < nq; i++)
    d.q16[i] = to16 (uni (-2, 2), c.dtype, &d.q[i]);
  for (size_t i = 0; i < nc; i++)
    {
      d.k16[i] = to16 (uni (-2, 2), c.dtype, &d.k[i]);
      d.v16[i] = to16 (uni (-1, 1), c.dtype, &d.v[i]);
    }
  if (c.alibi)
    {
      d.slopes.resize (c.alibi == 2 ? (size_t) c.B * c.Hq : c.Hq);
      for (auto &s : d.slopes)
        s = uni (0.01f, 0.5f);
    }
  return d;
}

/* The reference: out [B, Hq, Sq, D], lse [B, Hq, Sq]. */
static void
reference (const Case &c, const Data &d, std::vector<double> &out, std::vector<double> &lse)
{
  const int G = c.Hq / c.Hkv;
  const double scale = 1.0 / sqrt ((double) c.D);
  out.assign ((size_t) c.B * c.Hq * c.Sq * c.D, 0.0);
  lse.assign ((size_t) c.B * c.Hq * c.Sq, -INFINITY);
  for (int b = 0; b < c.B; b++)
    for (int hq = 0; hq < c.Hq; hq++)
      for (int i = 0; i < c.Sq; i++)
        {
          const int L = d.lens[b], pos = L - c.Sq + i, h = hq / G;
          const float *q = &d.q[(((size_t) b * c.Hq + hq) * c.Sq + i) * c.D];
          std::vector<double> s (L, -INFINITY);
          double mx = -INFINITY;
          for (int j = 0; j < L; j++)
            {
              bool vis = true;
              if (c.causal && j > pos)
                vis = false;
              if (c.wr >= 0 && j > pos + c.wr)
                vis = false;
              if (c.wl >= 0 && j < pos - c.wl && j >= c.sinks)
                vis = false;
              if (!vis)
                continue;
              int pg = d.table[(size_t) b * d.max_blocks + j / c.page];
              const float *k = &d.k[(((size_t) pg * c.page + j % c.page) * c.Hkv + h) * c.D];
              double dot = 0;
              for (int e = 0; e < c.D; e++)
                dot += (double) q[e] * k[e];
              double x = dot * scale;
              if (c.softcap > 0)
                x = c.softcap * tanh (x / c.softcap);
              if (c.alibi)
                x -= d.slopes[(c.alibi == 2 ? (size_t) b * c.Hq : 0) + hq] * fabs ((double) (pos - j));
              s[j] = x;
              mx = std::max (mx, x);
            }
          if (mx == -INFINITY)
            continue;
          double sum = 0;
          double *o = &out[(((size_t) b * c.Hq + hq) * c.Sq + i) * c.D];
          for (int j = 0; j < L; j++)
            {
              if (s[j] == -INFINITY)
                continue;
              double w = exp (s[j] - mx);
              sum += w;
              int pg = d.table[(size_t) b * d.max_blocks + j / c.page];
              const float *v = &d.v[(((size_t) pg * c.page + j % c.page) * c.Hkv + h) * c.D];
              for (int e = 0; e < c.D; e++)
                o[e] += w * v[e];
            }
          for (int e = 0; e < c.D; e++)
            o[e] /= sum;
          lse[((size_t) b * c.Hq + hq) * c.Sq + i] = mx + log (sum);
        }
}

struct Device {
  void *q, *k, *v, *out, *ws;
  int32_t *table, *lens, *codes;
  float *lse, *slopes;
};

static AccelFlashAttnKvcacheParams
params (const Case &c, const Data &d, const Device &g)
{
  AccelFlashAttnKvcacheParams p;
  memset (&p, 0, sizeof p);
  p.q = g.q; p.k_cache = g.k; p.v_cache = g.v; p.block_table = g.table; p.seqlens_k = g.lens;
  p.out = g.out; p.lse = g.lse; p.alibi_slopes = c.alibi ? g.slopes : nullptr;
  p.alibi_batch_stride = c.alibi == 2 ? c.Hq : 0;
  p.batch = c.B; p.heads_q = c.Hq; p.heads_kv = c.Hkv; p.seqlen_q = c.Sq; p.head_dim = c.D;
  p.num_pages = d.P; p.page_size = c.page; p.max_blocks = d.max_blocks;
  p.dtype = c.dtype; p.causal = c.causal; p.window_left = c.wl; p.window_right = c.wr; p.sinks = c.sinks;
  p.softcap = c.softcap; p.num_splits = c.splits; p.codes = g.codes;
  return p;
}

/* Runs @c; returns whether it passed. @poison: which table entry to spoil
 * (b * max_blocks + n), -1 for none; @bad_len: which length to spoil. */
static bool
run_case (const Case &c, long poison = -1, int bad_len = -1)
{
  Data d = make_data (c);
  if (poison >= 0)
    d.table[poison] = d.P;
  if (bad_len >= 0)
    d.lens[bad_len] = d.max_blocks * c.page + 1;
  Device g;
  g.q = upload (d.q16); g.k = upload (d.k16); g.v = upload (d.v16);
  g.table = upload (d.table); g.lens = upload (d.lens);
  g.slopes = c.alibi ? upload (d.slopes) : nullptr;
  size_t nq = d.q16.size (), nl = (size_t) c.B * c.Hq * c.Sq;
  CK (cudaMalloc (&g.out, std::max<size_t> (nq, 1) * 2));
  CK (cudaMalloc (&g.lse, std::max<size_t> (nl, 1) * 4));
  CK (cudaMemset (g.out, 0x7f, std::max<size_t> (nq, 1) * 2));   /* NaN-ish garbage */
  CK (cudaMalloc (&g.codes, 64));
  CK (cudaMemset (g.codes, 0, 64));
  AccelFlashAttnKvcacheParams p = params (c, d, g);
  const char *why = accel_flashattn_kvcache_check (&p);
  if (why)
    {
      printf ("%-40s refused: %s\n", c.name, why);
      return false;
    }
  p.num_splits = accel_flashattn_kvcache_num_splits (&p);
  size_t ws = accel_flashattn_kvcache_workspace_size (&p);
  g.ws = nullptr;
  if (ws)
    CK (cudaMalloc (&g.ws, ws));
  CK ((cudaError_t) accel_flashattn_kvcache (&p, g.ws, nullptr));
  CK (cudaDeviceSynchronize ());
  int32_t codes[4];
  CK (cudaMemcpy (codes, g.codes, sizeof codes, cudaMemcpyDeviceToHost));
  bool ok = true;
  if (poison >= 0 || bad_len >= 0)
    {
      uint64_t len_code = (uint32_t) codes[0] | ((uint64_t) (uint32_t) codes[1] << 32);
      uint64_t blk_code = (uint32_t) codes[2] | ((uint64_t) (uint32_t) codes[3] << 32);
      if (bad_len >= 0)
        ok = len_code != 0 && 0x7fffffff - (int64_t) (len_code >> 32) == bad_len;
      else
        ok = blk_code != 0 && 0x7fffffff - (int64_t) (blk_code >> 32) == poison / d.max_blocks
             && 0x7fffffff - (int64_t) (uint32_t) blk_code == poison % d.max_blocks;
      printf ("%-40s codes %08x %08x %08x %08x: %s\n", c.name, codes[0], codes[1], codes[2], codes[3],
              ok ? "ok" : "WRONG");
    }
  else
    {
      std::vector<uint16_t> out16 (nq);
      std::vector<float> lse (nl);
      CK (cudaMemcpy (out16.data (), g.out, nq * 2, cudaMemcpyDeviceToHost));
      CK (cudaMemcpy (lse.data (), g.lse, nl * 4, cudaMemcpyDeviceToHost));
      std::vector<double> ro, rl;
      reference (c, d, ro, rl);
      double e2 = 0, r2 = 0, lse_err = 0;
      size_t bad = 0;
      for (size_t i = 0; i < nq; i++)
        {
          double x = from16 (out16[i], c.dtype);
          if (!std::isfinite (x))
            bad++;
          else
            e2 += (x - ro[i]) * (x - ro[i]);
          r2 += ro[i] * ro[i];
        }
      for (size_t i = 0; i < nl; i++)
        {
          if (std::isinf (rl[i]))
            {
              if (!(std::isinf (lse[i]) && lse[i] < 0))
                lse_err = INFINITY;
              continue;
            }
          lse_err = std::max (lse_err, fabs (lse[i] - rl[i]) / std::max (1.0, fabs (rl[i])));
        }
      double rel = r2 > 0 ? sqrt (e2 / r2) : sqrt (e2);
      double tol = c.dtype == ACCEL_FA_BF16 ? 1e-2 : 5e-3;
      ok = bad == 0 && rel <= tol && lse_err <= 1e-3;
      printf ("%-40s %s d%-3d splits %-2d rel %.2e lse %.1e nonfinite %zu: %s\n", c.name,
              c.dtype == ACCEL_FA_BF16 ? "bf16" : "f16 ", c.D, p.num_splits, rel, lse_err, bad, ok ? "ok" : "FAIL");
    }
  cudaFree (g.q); cudaFree (g.k); cudaFree (g.v); cudaFree (g.out); cudaFree (g.lse); cudaFree (g.ws);
  cudaFree (g.table); cudaFree (g.lens); cudaFree (g.codes); cudaFree (g.slopes);
  return ok;
}

/* Decode bandwidth: GB/s of K+V beside a copy moving as many bytes. */
static void
time_decode (int B, int Hq, int Hkv, int ctx, int page, int D)
{
  int blocks = ctx / page, P = B * blocks;
  size_t cache = (size_t) P * page * Hkv * D * 2;
  std::vector<int32_t> table (P), lens (B, ctx);
  for (int i = 0; i < P; i++)
    table[i] = i;
  std::shuffle (table.begin (), table.end (), rng);
  Device g;
  memset (&g, 0, sizeof g);
  CK (cudaMalloc (&g.q, (size_t) B * Hq * D * 2));
  CK (cudaMalloc (&g.k, cache));
  CK (cudaMalloc (&g.v, cache));
  CK (cudaMalloc (&g.out, (size_t) B * Hq * D * 2));
  CK (cudaMemset (g.q, 0, (size_t) B * Hq * D * 2));
  CK (cudaMemset (g.k, 0, cache));
  CK (cudaMemset (g.v, 0, cache));
  g.table = upload (table);
  g.lens = upload (lens);
  AccelFlashAttnKvcacheParams p;
  memset (&p, 0, sizeof p);
  p.q = g.q; p.k_cache = g.k; p.v_cache = g.v; p.block_table = g.table; p.seqlens_k = g.lens; p.out = g.out;
  p.batch = B; p.heads_q = Hq; p.heads_kv = Hkv; p.seqlen_q = 1; p.head_dim = D; p.num_pages = P;
  p.page_size = page; p.max_blocks = blocks; p.dtype = ACCEL_FA_BF16; p.window_left = p.window_right = -1;
  p.num_splits = accel_flashattn_kvcache_num_splits (&p);
  size_t ws = accel_flashattn_kvcache_workspace_size (&p);
  if (ws)
    CK (cudaMalloc (&g.ws, ws));
  cudaEvent_t e0, e1;
  CK (cudaEventCreate (&e0));
  CK (cudaEventCreate (&e1));
  const int reps = 20;
  float ms_k = 0, ms_c = 0;
  for (int w = 0; w < 2; w++)
    {
      CK (cudaEventRecord (e0));
      for (int r = 0; r < reps; r++)
        CK ((cudaError_t) accel_flashattn_kvcache (&p, g.ws, nullptr));
      CK (cudaEventRecord (e1));
      CK (cudaEventSynchronize (e1));
      CK (cudaEventElapsedTime (&ms_k, e0, e1));
      CK (cudaEventRecord (e0));
      for (int r = 0; r < reps; r++)
        CK (cudaMemcpyAsync (g.v, g.k, cache, cudaMemcpyDeviceToDevice));
      CK (cudaEventRecord (e1));
      CK (cudaEventSynchronize (e1));
      CK (cudaEventElapsedTime (&ms_c, e0, e1));
    }
  double gb = 2.0 * cache * 1e-9;
  printf ("decode B=%d Hq=%d Hkv=%d ctx=%d page=%d d=%d splits=%d: %.0f GB/s (%.3f ms); copy %.0f GB/s; ratio %.3f\n",
          B, Hq, Hkv, ctx, page, D, p.num_splits, gb / (ms_k / reps * 1e-3), ms_k / reps,
          gb / (ms_c / reps * 1e-3), ms_c / ms_k);
  cudaFree (g.q); cudaFree (g.k); cudaFree (g.v); cudaFree (g.out); cudaFree (g.ws);
  cudaFree (g.table); cudaFree (g.lens);
}

int
main ()
{
  std::vector<Case> base = {
    { "decode-mha-page16", 6, 4, 4, 1, 16, 0, { 0, 16, 17, 1, 203, 255 }, 0, -1, -1, 0, 0, 0, 0, 0 },
    { "decode-gqa-page256", 4, 8, 2, 1, 256, 0, { 256, 257, 511, 1000 }, 0, -1, -1, 0, 0, 0, 0, 0 },
    { "decode-mqa-page7", 3, 6, 1, 1, 7, 0, { 7, 50, 333 }, 0, -1, -1, 0, 0, 0, 0, 0 },
    { "decode-window-sinks", 3, 4, 2, 1, 16, 0, { 300, 41, 5 }, 1, 40, -1, 4, 0, 0, 0, 0 },
    { "decode-alibi-softcap", 3, 4, 4, 1, 16, 0, { 100, 190, 64 }, 1, -1, -1, 0, 2, 30.f, 0, 0 },
    { "decode-seven-splits", 2, 4, 2, 1, 16, 0, { 1000, 33 }, 0, -1, -1, 0, 0, 0, 7, 0 },
    { "decode-one-split", 2, 4, 2, 1, 16, 0, { 1000, 0 }, 0, -1, -1, 0, 0, 0, 1, 0 },
    { "prefill-causal", 3, 4, 2, 37, 16, 0, { 137, 37, 20 }, 1, -1, -1, 0, 0, 0, 0, 0 },
    { "prefill-causal-window-page7", 2, 8, 2, 37, 7, 0, { 200, 90 }, 1, 50, -1, 3, 0, 0, 0, 0 },
    { "prefill-right-window-page256", 2, 2, 2, 37, 256, 0, { 300, 37 }, 0, -1, 5, 0, 1, 0, 3, 0 },
  };
  int failed = 0, total = 0;
  for (int dtype : { ACCEL_FA_BF16, ACCEL_FA_F16 })
    for (int D : { 64, 128, 256 })
      for (Case c : base)
        {
          c.D = D;
          c.dtype = dtype;
          total++;
          failed += !run_case (c);
        }
  Case bad = { "bad-block (seq 1, block 5)", 3, 4, 2, 1, 16, 64, { 40, 100, 7 }, 0, -1, -1, 0, 0, 0, 0, ACCEL_FA_BF16 };
  total += 2;
  failed += !run_case (bad, 1 * 9 + 5);
  bad.name = "bad-length (seq 2)";
  failed += !run_case (bad, -1, 2);
  printf ("%d of %d cases passed\n", total - failed, total);

  time_decode (64, 16, 16, 8192, 256, 128);
  time_decode (64, 32, 8, 8192, 256, 128);
  return failed ? 1 : 0;
}
