/* fa_harness.cu: standalone check and timing of the FlashAttention kernels,
 * with no GLib. Built with nvcc against ../accel-flashattn-{fwd,bwd}.cu
 * (see build.sh).
 *
 *   fa_harness check            correctness against a float32 reference
 *                               computed on the GPU by naive kernels
 *   fa_harness check-general    the same for the general head dims (Dv
 *                               != D included) and f32
 *   fa_harness check-varlen     the varlen forward and backward against
 *                               the padded kernels run per sequence
 *   fa_harness bench [json]     TFLOP/s over the benchmark shapes
 *                               (16k tokens, hidden 2048, d 64/128/256,
 *                               seqlen 512..16k, causal and not, fwd and bwd)
 *   fa_harness dims             TFLOP/s of every head dim at seqlen 4096
 *   fa_harness one B Hq Hkv Sq Sk D [causal [dtype [Dv]]]   one shape, checked and timed
 *
 * FLOPs follow the FlashAttention papers: forward 4 B H Sq Sk D, halved when
 * causal; backward 2.5 times the forward.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include "../accel-flashattn.h"

#define CK(x)                                                                 \
  do {                                                                        \
    cudaError_t e_ = (x);                                                     \
    if (e_ != cudaSuccess) {                                                  \
      fprintf (stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,              \
               cudaGetErrorString (e_));                                      \
      exit (2);                                                               \
    }                                                                         \
  } while (0)

static int g_failures = 0;

/* ---- inputs -------------------------------------------------------------- */

__device__ __forceinline__ uint32_t
hash32 (uint64_t x)
{
  x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
  return (uint32_t) x;
}

template <typename T>
__global__ void
fill_random (T *p, size_t n, uint64_t seed, float amp)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    {
      /* Sum of two uniforms: a cheap bell shape in (-amp, amp). */
      float u = hash32 (seed * 0x9e3779b97f4a7c15ull + 2 * i) * (1.f / 4294967296.f);
      float v = hash32 (seed * 0x9e3779b97f4a7c15ull + 2 * i + 1) * (1.f / 4294967296.f);
      p[i] = (T) ((u + v - 1.f) * amp);
    }
}

template <typename T> __device__ __forceinline__ float to_f (T x) { return (float) x; }
template <> __device__ __forceinline__ float to_f (__nv_bfloat16 x) { return __bfloat162float (x); }
template <> __device__ __forceinline__ float to_f (__half x) { return __half2float (x); }

/* ---- naive float32 reference --------------------------------------------- */

struct Shape {
  int B, Hq, Hkv, Sq, Sk, D;
  int causal, wl, wr;
  float scale, softcap;
  int sinks;      /* keys below are exempt from the left window */
  int alibi;      /* 1: slopes alibi_slope (h), as the kernels get them */
  int Dv;         /* head dim of v and out; 0: D */
};

static inline int
dv_of (const Shape &s)
{
  return s.Dv > 0 ? s.Dv : s.D;
}

/* The harness's ALiBi slopes: per head, the same for every batch. */
__host__ __device__ __forceinline__ float
alibi_slope (int h)
{
  return 0.03f * (float) (h + 1);
}

__device__ __forceinline__ bool
visible (const Shape &s, int i, int j)
{
  int base = i + s.Sk - s.Sq;
  if ((s.causal || s.wr >= 0) && j > base + (s.causal ? 0 : s.wr))
    return false;
  if (s.wl >= 0 && j < base - s.wl && j >= s.sinks)
    return false;
  return true;
}

/* -slope * |p - j|, added after the scale and the soft cap. */
__device__ __forceinline__ float
alibi_bias (const Shape &s, int h, int i, int j)
{
  return s.alibi ? -alibi_slope (h) * fabsf ((float) (i + s.Sk - s.Sq - j)) : 0.f;
}

__device__ __forceinline__ float
logit (const Shape &s, float dot)
{
  float x = dot * s.scale;
  return s.softcap > 0.f ? s.softcap * tanhf (x / s.softcap) : x;
}

/* One block per query row: contiguous [B, H, S, D] inputs. */
template <typename T>
__global__ void
ref_fwd (Shape s, const T *q, const T *k, const T *v, float *o, float *lse)
{
  extern __shared__ float sh[];   /* Sk scores, then D query values */
  float *sc = sh, *qr = sh + s.Sk;
  __shared__ float red[32];
  const int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int hk = h / (s.Hq / s.Hkv);
  const int Dv = s.Dv;
  const T *qp = q + (((size_t) b * s.Hq + h) * s.Sq + i) * s.D;
  const T *kp = k + ((size_t) b * s.Hkv + hk) * s.Sk * s.D;
  const T *vp = v + ((size_t) b * s.Hkv + hk) * s.Sk * Dv;
  for (int d = threadIdx.x; d < s.D; d += blockDim.x)
    qr[d] = to_f (qp[d]);
  __syncthreads ();
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < s.Sk; j += blockDim.x)
    {
      float x = -INFINITY;
      if (visible (s, i, j))
        {
          float acc = 0.f;
          for (int d = 0; d < s.D; d++)
            acc += qr[d] * to_f (kp[(size_t) j * s.D + d]);
          x = logit (s, acc) + alibi_bias (s, h, i, j);
        }
      sc[j] = x;
      mx = fmaxf (mx, x);
    }
  for (int m = 16; m; m >>= 1) mx = fmaxf (mx, __shfl_xor_sync (~0u, mx, m));
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = mx;
  __syncthreads ();
  mx = -INFINITY;
  for (int w = 0; w < (int) blockDim.x / 32; w++) mx = fmaxf (mx, red[w]);
  __syncthreads ();
  float sum = 0.f;
  for (int j = threadIdx.x; j < s.Sk; j += blockDim.x)
    {
      float p = sc[j] == -INFINITY ? 0.f : expf (sc[j] - mx);
      sc[j] = p;
      sum += p;
    }
  for (int m = 16; m; m >>= 1) sum += __shfl_xor_sync (~0u, sum, m);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = sum;
  __syncthreads ();
  sum = 0.f;
  for (int w = 0; w < (int) blockDim.x / 32; w++) sum += red[w];
  float *op = o + (((size_t) b * s.Hq + h) * s.Sq + i) * Dv;
  for (int d = threadIdx.x; d < Dv; d += blockDim.x)
    {
      float acc = 0.f;
      for (int j = 0; j < s.Sk; j++)
        acc += sc[j] * to_f (vp[(size_t) j * Dv + d]);
      op[d] = sum > 0.f ? acc / sum : 0.f;
    }
  if (threadIdx.x == 0)
    lse[((size_t) b * s.Hq + h) * s.Sq + i] = sum > 0.f ? mx + logf (sum) : -INFINITY;
}

/* dsum_i = dO_i . O_i with the reference O. */
template <typename T>
__global__ void
ref_dsum (Shape s, const T *dout, const float *o, float *dsum)
{
  size_t row = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
  if (row >= (size_t) s.B * s.Hq * s.Sq)
    return;
  float acc = 0.f;
  for (int d = 0; d < s.Dv; d++)
    acc += to_f (dout[row * s.Dv + d]) * o[row * s.Dv + d];
  dsum[row] = acc;
}

/* dS_ij (w.r.t. the raw dot product q.k) for row i, key j. */
template <typename T>
__device__ float
ref_ds (const Shape &s, const T *q, const T *k, const T *v, const T *dout, const float *lse, const float *dsum,
        int b, int h, int i, int j, float *p_out)
{
  const int hk = h / (s.Hq / s.Hkv);
  const T *qp = q + (((size_t) b * s.Hq + h) * s.Sq + i) * s.D;
  const T *dp = dout + (((size_t) b * s.Hq + h) * s.Sq + i) * s.Dv;
  const T *kp = k + (((size_t) b * s.Hkv + hk) * s.Sk + j) * s.D;
  const T *vp = v + (((size_t) b * s.Hkv + hk) * s.Sk + j) * s.Dv;
  size_t row = ((size_t) b * s.Hq + h) * s.Sq + i;
  if (!visible (s, i, j) || lse[row] == -INFINITY)
    {
      *p_out = 0.f;
      return 0.f;
    }
  float qk = 0.f, dov = 0.f;
  for (int d = 0; d < s.D; d++)
    qk += to_f (qp[d]) * to_f (kp[d]);
  for (int d = 0; d < s.Dv; d++)
    dov += to_f (dp[d]) * to_f (vp[d]);
  float x = qk * s.scale, deriv = s.scale;
  if (s.softcap > 0.f)
    {
      float t = tanhf (x / s.softcap);
      x = s.softcap * t;
      deriv *= 1.f - t * t;
    }
  x += alibi_bias (s, h, i, j);
  float p = expf (x - lse[row]);
  *p_out = p;
  return p * (dov - dsum[row]) * deriv;
}

/* dQ: one thread per (row, d). */
template <typename T>
__global__ void
ref_dq (Shape s, const T *q, const T *k, const T *v, const T *dout, const float *lse, const float *dsum, float *dq)
{
  const int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int hk = h / (s.Hq / s.Hkv);
  extern __shared__ float ds[];
  for (int j = threadIdx.x; j < s.Sk; j += blockDim.x)
    {
      float p;
      ds[j] = ref_ds (s, q, k, v, dout, lse, dsum, b, h, i, j, &p);
    }
  __syncthreads ();
  const T *kp = k + ((size_t) b * s.Hkv + hk) * s.Sk * s.D;
  for (int d = threadIdx.x; d < s.D; d += blockDim.x)
    {
      float acc = 0.f;
      for (int j = 0; j < s.Sk; j++)
        acc += ds[j] * to_f (kp[(size_t) j * s.D + d]);
      dq[(((size_t) b * s.Hq + h) * s.Sq + i) * s.D + d] = acc;
    }
}

/* dK, dV: one block per key row, over every query row of the group. */
template <typename T>
__global__ void
ref_dkdv (Shape s, const T *q, const T *k, const T *v, const T *dout, const float *lse, const float *dsum,
          float *dk, float *dv)
{
  const int j = blockIdx.x, hk = blockIdx.y, b = blockIdx.z;
  const int group = s.Hq / s.Hkv;
  extern __shared__ float sh[];
  float *ds = sh, *pp = sh + s.Sq;
  float *dkp = dk + (((size_t) b * s.Hkv + hk) * s.Sk + j) * s.D;
  float *dvp = dv + (((size_t) b * s.Hkv + hk) * s.Sk + j) * s.Dv;
  for (int d = threadIdx.x; d < s.D; d += blockDim.x)
    dkp[d] = 0.f;
  for (int d = threadIdx.x; d < s.Dv; d += blockDim.x)
    dvp[d] = 0.f;
  for (int g = 0; g < group; g++)
    {
      const int h = hk * group + g;
      __syncthreads ();
      for (int i = threadIdx.x; i < s.Sq; i += blockDim.x)
        ds[i] = ref_ds (s, q, k, v, dout, lse, dsum, b, h, i, j, &pp[i]);
      __syncthreads ();
      const T *qp = q + ((size_t) b * s.Hq + h) * s.Sq * s.D;
      const T *dp = dout + ((size_t) b * s.Hq + h) * s.Sq * s.Dv;
      for (int d = threadIdx.x; d < s.D; d += blockDim.x)
        {
          float ak = 0.f;
          for (int i = 0; i < s.Sq; i++)
            ak += ds[i] * to_f (qp[(size_t) i * s.D + d]);
          dkp[d] += ak;
        }
      for (int d = threadIdx.x; d < s.Dv; d += blockDim.x)
        {
          float av = 0.f;
          for (int i = 0; i < s.Sq; i++)
            av += pp[i] * to_f (dp[(size_t) i * s.Dv + d]);
          dvp[d] += av;
        }
    }
}

/* ---- comparison ---------------------------------------------------------- */

template <typename T>
__global__ void
compare (const T *x, const float *ref, size_t n, double *acc /* [err2, ref2, maxabs, nan] */)
{
  double e2 = 0, r2 = 0, mx = 0, nan = 0;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    {
      float a = to_f (x[i]), r = ref[i];
      if (isnan (a) || isinf (a))
        nan += 1;
      else
        {
          double d = (double) a - r;
          e2 += d * d;
          r2 += (double) r * r;
          mx = fmax (mx, fabs (d));
        }
    }
  atomicAdd (&acc[0], e2);
  atomicAdd (&acc[1], r2);
  atomicAdd (&acc[3], nan);
  /* max of non-negative doubles through their bit patterns */
  atomicMax (reinterpret_cast<unsigned long long *> (&acc[2]), (unsigned long long) __double_as_longlong (mx));
}

template <typename T>
__global__ void
to_f32 (const T *x, float *y, size_t n)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
    y[i] = to_f (x[i]);
}

struct Err { double rel, maxabs, nan; };

template <typename T>
static Err
compare_host (const T *x, const float *ref, size_t n, double *dacc)
{
  CK (cudaMemset (dacc, 0, 4 * sizeof (double)));
  compare<T><<<512, 256>>> (x, ref, n, dacc);
  CK (cudaGetLastError ());
  double h[4];
  CK (cudaMemcpy (h, dacc, sizeof h, cudaMemcpyDeviceToHost));
  Err e = { h[1] > 0 ? sqrt (h[0] / h[1]) : sqrt (h[0]), h[2], h[3] };
  return e;
}

/* ---- one problem --------------------------------------------------------- */

struct Problem {
  Shape s;
  int dtype;   /* ACCEL_FA_* */
  int path;
};

static double
fwd_flops (const Shape &s)
{
  double f = 2.0 * s.B * s.Hq * (double) s.Sq * s.Sk * (s.D + dv_of (s));
  return s.causal ? f / 2 : f;
}

static void
fill_params (const Problem &pr, AccelFlashAttnBwdParams *bp, void *q, void *k, void *v, void *o, float *lse,
             void *dout, void *dq, void *dk, void *dv)
{
  const Shape &s = pr.s;
  memset (bp, 0, sizeof *bp);
  AccelFlashAttnFwdParams *p = &bp->fwd;
  p->q = q; p->k = k; p->v = v; p->out = o; p->lse = lse;
  const int Dv = dv_of (s);
  int64_t qs[3] = { (int64_t) s.Hq * s.Sq * s.D, (int64_t) s.Sq * s.D, s.D };
  int64_t ks[3] = { (int64_t) s.Hkv * s.Sk * s.D, (int64_t) s.Sk * s.D, s.D };
  int64_t os[3] = { (int64_t) s.Hq * s.Sq * Dv, (int64_t) s.Sq * Dv, Dv };
  int64_t vs[3] = { (int64_t) s.Hkv * s.Sk * Dv, (int64_t) s.Sk * Dv, Dv };
  memcpy (p->q_strides, qs, sizeof qs);
  memcpy (p->o_strides, os, sizeof os);
  memcpy (p->k_strides, ks, sizeof ks);
  memcpy (p->v_strides, vs, sizeof vs);
  p->batch = s.B; p->heads_q = s.Hq; p->heads_kv = s.Hkv; p->seqlen_q = s.Sq; p->seqlen_k = s.Sk; p->head_dim = s.D;
  p->head_dim_v = s.Dv;
  p->dtype = pr.dtype; p->causal = s.causal; p->window_left = s.wl; p->window_right = s.wr;
  p->scale = 0.f; p->softcap = s.softcap; p->path = pr.path;
  p->sinks = s.sinks;
  if (s.alibi)
    {
      /* [Hq] slopes, made once (the harness has at most 64 heads). */
      static float *slopes = nullptr;
      if (slopes == nullptr)
        {
          float h[64];
          for (int i = 0; i < 64; i++)
            h[i] = alibi_slope (i);
          CK (cudaMalloc (&slopes, sizeof h));
          CK (cudaMemcpy (slopes, h, sizeof h, cudaMemcpyHostToDevice));
        }
      p->alibi_slopes = slopes;
    }
  bp->dout = dout; bp->dq = dq; bp->dk = dk; bp->dv = dv;
  memcpy (bp->do_strides, os, sizeof os);
  memcpy (bp->dq_strides, qs, sizeof qs);
  memcpy (bp->dk_strides, ks, sizeof ks);
  memcpy (bp->dv_strides, vs, sizeof vs);
}

static float
median_ms (std::vector<float> &v)
{
  std::sort (v.begin (), v.end ());
  return v[v.size () / 2];
}

struct Result {
  double fwd_ms = 0, bwd_ms = 0, fwd_tflops = 0, bwd_tflops = 0;
  Err eo = {}, el = {}, edq = {}, edk = {}, edv = {};
  bool checked = false, ok = true;
  const char *skip = nullptr;
};

template <typename T>
static Result
run_problem (const Problem &pr, bool check, bool time_it, bool do_bwd, int reps)
{
  Result res;
  Shape s = pr.s;
  s.scale = 1.f / sqrtf ((float) s.D);
  s.Dv = dv_of (s);
  size_t nq = (size_t) s.B * s.Hq * s.Sq * s.D, nk = (size_t) s.B * s.Hkv * s.Sk * s.D;
  size_t no = (size_t) s.B * s.Hq * s.Sq * s.Dv, nv = (size_t) s.B * s.Hkv * s.Sk * s.Dv;
  size_t nl = (size_t) s.B * s.Hq * s.Sq;
  T *q, *k, *v, *o, *dout, *dq, *dk, *dv;
  float *lse;
  CK (cudaMalloc (&q, nq * sizeof (T)));
  CK (cudaMalloc (&k, nk * sizeof (T)));
  CK (cudaMalloc (&v, nv * sizeof (T)));
  CK (cudaMalloc (&o, no * sizeof (T)));
  CK (cudaMalloc (&dout, no * sizeof (T)));
  CK (cudaMalloc (&dq, nq * sizeof (T)));
  CK (cudaMalloc (&dk, nk * sizeof (T)));
  CK (cudaMalloc (&dv, nv * sizeof (T)));
  CK (cudaMalloc (&lse, nl * sizeof (float)));
  static uint64_t seed = 1234;
  fill_random<<<1024, 256>>> (q, nq, seed++, 2.0f);
  fill_random<<<1024, 256>>> (k, nk, seed++, 2.0f);
  fill_random<<<1024, 256>>> (v, nv, seed++, 1.0f);
  fill_random<<<1024, 256>>> (dout, no, seed++, 1.0f);
  /* Poison the outputs: NaN everywhere (0xff bytes). */
  CK (cudaMemset (o, 0xff, no * sizeof (T)));
  CK (cudaMemset (lse, 0xff, nl * sizeof (float)));
  CK (cudaMemset (dq, 0xff, nq * sizeof (T)));
  CK (cudaMemset (dk, 0xff, nk * sizeof (T)));
  CK (cudaMemset (dv, 0xff, nv * sizeof (T)));

  AccelFlashAttnBwdParams bp;
  fill_params (pr, &bp, q, k, v, o, lse, dout, dq, dk, dv);
  res.skip = accel_flashattn_bwd_check (&bp);
  if (res.skip)
    goto out;
  {
    int r = accel_flashattn_fwd (&bp.fwd, 0);
    if (r == ACCEL_FA_UNSUPPORTED)
      {
        res.skip = "path unsupported";
        goto out;
      }
    CK ((cudaError_t) r);
    CK (cudaDeviceSynchronize ());
    size_t ws_size = accel_flashattn_bwd_workspace_size (&bp);
    void *ws = nullptr;
    if (do_bwd)
      {
        CK (cudaMalloc (&ws, ws_size));
        CK ((cudaError_t) accel_flashattn_bwd (&bp, ws, 0));
        CK (cudaDeviceSynchronize ());
      }

    if (check)
      {
        float *ro, *rl, *rds, *rdq, *rdk, *rdv;
        double *dacc;
        CK (cudaMalloc (&ro, no * 4));
        CK (cudaMalloc (&rl, nl * 4));
        CK (cudaMalloc (&dacc, 64));
        dim3 rows (s.Sq, s.Hq, s.B);
        size_t sh = (s.Sk + s.D) * sizeof (float);
        if (sh > 48 * 1024)
          CK (cudaFuncSetAttribute (ref_fwd<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) sh));
        ref_fwd<T><<<rows, 128, sh>>> (s, q, k, v, ro, rl);
        CK (cudaGetLastError ());
        res.eo = compare_host (o, ro, no, dacc);
        res.el = compare_host (lse, rl, nl, dacc);
        /* lse of rows that see no key is -inf in both: compare counts them as NaN. */
        res.checked = true;
        if (do_bwd)
          {
            CK (cudaMalloc (&rds, nl * 4));
            CK (cudaMalloc (&rdq, nq * 4));
            CK (cudaMalloc (&rdk, nk * 4));
            CK (cudaMalloc (&rdv, nv * 4));
            ref_dsum<T><<<(unsigned) ((nl + 255) / 256), 256>>> (s, dout, ro, rds);
            ref_dq<T><<<rows, 128, s.Sk * sizeof (float)>>> (s, q, k, v, dout, rl, rds, rdq);
            dim3 keys (s.Sk, s.Hkv, s.B);
            ref_dkdv<T><<<keys, 128, 2 * s.Sq * sizeof (float)>>> (s, q, k, v, dout, rl, rds, rdk, rdv);
            CK (cudaGetLastError ());
            res.edq = compare_host (dq, rdq, nq, dacc);
            res.edk = compare_host (dk, rdk, nk, dacc);
            res.edv = compare_host (dv, rdv, nv, dacc);
            cudaFree (rds); cudaFree (rdq); cudaFree (rdk); cudaFree (rdv);
          }
        cudaFree (ro); cudaFree (rl); cudaFree (dacc);
      }

    if (time_it)
      {
        cudaEvent_t e0, e1;
        CK (cudaEventCreate (&e0));
        CK (cudaEventCreate (&e1));
        /* The median of @reps timed calls after 3 untimed ones. */
        auto time_ms = [&] (auto call) {
          std::vector<float> t;
          for (int i = 0; i < reps + 3; i++)
            {
              CK (cudaEventRecord (e0));
              call ();
              CK (cudaEventRecord (e1));
              CK (cudaEventSynchronize (e1));
              float ms;
              CK (cudaEventElapsedTime (&ms, e0, e1));
              if (i >= 3)
                t.push_back (ms);
            }
          return median_ms (t);
        };
        res.fwd_ms = time_ms ([&] { accel_flashattn_fwd (&bp.fwd, 0); });
        res.fwd_tflops = fwd_flops (s) / (res.fwd_ms * 1e-3) / 1e12;
        if (do_bwd)
          {
            res.bwd_ms = time_ms ([&] { accel_flashattn_bwd (&bp, ws, 0); });
            res.bwd_tflops = 2.5 * fwd_flops (s) / (res.bwd_ms * 1e-3) / 1e12;
          }
        CK (cudaGetLastError ());
        cudaEventDestroy (e0);
        cudaEventDestroy (e1);
      }
    if (ws)
      cudaFree (ws);
  }
out:
  cudaFree (q); cudaFree (k); cudaFree (v); cudaFree (o); cudaFree (dout);
  cudaFree (dq); cudaFree (dk); cudaFree (dv); cudaFree (lse);
  return res;
}

static Result
run_any (const Problem &pr, bool check, bool time_it, bool do_bwd, int reps)
{
  if (pr.dtype == ACCEL_FA_F32)
    return run_problem<float> (pr, check, time_it, do_bwd, reps);
  if (pr.dtype == ACCEL_FA_F16)
    return run_problem<__half> (pr, check, time_it, do_bwd, reps);
  return run_problem<__nv_bfloat16> (pr, check, time_it, do_bwd, reps);
}

static void
describe (char *buf, size_t n, const Problem &pr)
{
  const Shape &s = pr.s;
  snprintf (buf, n, "%s B=%d Hq=%d Hkv=%d Sq=%d Sk=%d D=%d/%d%s wl=%d wr=%d cap=%g sinks=%d%s path=%d",
            pr.dtype == ACCEL_FA_F16 ? "f16 " : pr.dtype == ACCEL_FA_F32 ? "f32 " : "bf16", s.B, s.Hq, s.Hkv, s.Sq,
            s.Sk, s.D, dv_of (s),
            s.causal ? " causal" : "", s.wl, s.wr, s.softcap, s.sinks, s.alibi ? " alibi" : "", pr.path);
}

static void
check_one (const Problem &pr, bool do_bwd)
{
  char name[200];
  describe (name, sizeof name, pr);
  Result r = run_any (pr, true, false, do_bwd, 0);
  if (r.skip)
    {
      printf ("SKIP %s (%s)\n", name, r.skip);
      return;
    }
  const double tol = pr.dtype == ACCEL_FA_F32 ? 1e-4 : pr.dtype == ACCEL_FA_F16 ? 5e-3 : 1e-2;
  /* lse of rows that see nothing is -inf in both: compare counts them as
   * non-finite, so only O's NaN count matters here. */
  bool ok = r.eo.nan == 0 && r.eo.rel <= tol && r.el.rel <= 1e-3;
  if (do_bwd)
    ok = ok && r.edq.nan == 0 && r.edk.nan == 0 && r.edv.nan == 0
         && r.edq.rel <= 2 * tol && r.edk.rel <= 2 * tol && r.edv.rel <= 2 * tol;
  if (!ok)
    g_failures++;
  printf ("%s %s | O rel %.2e max %.2e nan %.0f | lse rel %.2e", ok ? "ok  " : "FAIL", name, r.eo.rel, r.eo.maxabs,
          r.eo.nan, r.el.rel);
  if (do_bwd)
    printf (" | dQ %.2e dK %.2e dV %.2e nan %.0f/%.0f/%.0f", r.edq.rel, r.edk.rel, r.edv.rel, r.edq.nan, r.edk.nan,
            r.edv.nan);
  printf ("\n");
  fflush (stdout);
}

/* FA_DTYPES (a comma list of bf16, f16, f32) limits the checks. */
static bool
dtype_wanted (int dt)
{
  const char *want = getenv ("FA_DTYPES");
  const char *name = dt == ACCEL_FA_F16 ? "f16" : dt == ACCEL_FA_F32 ? "f32" : "bf16";
  return want == nullptr || strstr (want, name) != nullptr;
}

static void
run_checks (int path)
{
  struct { int B, Hq, Hkv, Sq, Sk, causal, wl, wr; float cap; int sinks, alibi; } cases[] = {
    { 2, 4, 4, 128, 128, 0, -1, -1, 0 },
    { 1, 2, 2, 77, 77, 0, -1, -1, 0 },
    { 2, 4, 2, 257, 255, 1, -1, -1, 0 },
    { 1, 6, 2, 300, 513, 1, -1, -1, 0 },      /* GQA, Sq < Sk, causal bottom-right */
    { 1, 4, 1, 513, 200, 1, -1, -1, 0 },      /* MQA, Sq > Sk: early rows see nothing */
    { 1, 2, 2, 333, 333, 0, 64, 17, 0 },      /* sliding window */
    { 1, 2, 2, 333, 400, 1, 100, -1, 0 },     /* causal + left window */
    { 2, 2, 2, 190, 191, 0, -1, -1, 30.f },   /* softcap */
    { 1, 2, 1, 1, 1000, 1, -1, -1, 0 },       /* single query (decode-like) */
    { 1, 2, 2, 1000, 1, 0, -1, -1, 0 },
    { 2, 4, 4, 190, 257, 0, -1, -1, 0, 0, 1 },        /* ALiBi */
    { 1, 6, 2, 300, 513, 1, -1, -1, 0, 0, 1 },        /* ALiBi, causal, GQA */
    { 1, 4, 2, 333, 400, 1, 40, -1, 0, 4, 0 },        /* sinks below a causal left window */
    { 1, 2, 2, 257, 400, 0, 30, 10, 0, 70, 0 },       /* sinks over two key blocks */
    { 1, 3, 1, 150, 190, 1, 50, -1, 20.f, 3, 1 },     /* ALiBi + soft cap + sinks */
  };
  const int dims[] = { 64, 128, 256 };
  const int dtypes[] = { ACCEL_FA_BF16, ACCEL_FA_F16 };
  for (int dt : dtypes)
    for (int d : dims)
      for (auto &c : cases)
        {
          if (!dtype_wanted (dt))
            continue;
          Problem pr = { { c.B, c.Hq, c.Hkv, c.Sq, c.Sk, d, c.causal, c.wl, c.wr, 0.f, c.cap, c.sinks, c.alibi }, dt, path };
          check_one (pr, true);
        }
}

/* The general head dims (Dv != D among them) in bf16 and f16, and f32 at
 * every kind of head dim, on a subset of the cases above. */
static void
run_checks_general (int path)
{
  struct { int B, Hq, Hkv, Sq, Sk, causal, wl, wr; float cap; int sinks, alibi; } cases[] = {
    { 1, 2, 2, 77, 77, 0, -1, -1, 0 },
    { 1, 6, 2, 300, 513, 1, -1, -1, 0 },
    { 1, 4, 1, 129, 1000, 1, -1, -1, 0 },
    { 1, 2, 2, 333, 400, 1, 100, -1, 0 },
    { 2, 2, 2, 190, 191, 0, -1, -1, 30.f },
    { 1, 2, 1, 1, 1000, 1, -1, -1, 0 },
    { 1, 2, 2, 7, 7, 0, -1, -1, 0 },
    { 1, 3, 1, 150, 190, 1, 50, -1, 20.f, 3, 1 },
  };
  struct { int d, dv; } dims16[] = { { 32, 32 }, { 40, 40 }, { 80, 80 }, { 96, 96 }, { 160, 160 }, { 192, 192 },
                                     { 192, 128 }, { 128, 64 }, { 64, 128 }, { 8, 256 } };
  struct { int d, dv; } dims32[] = { { 64, 64 }, { 80, 80 }, { 128, 128 }, { 192, 128 }, { 256, 256 } };
  for (int dt : { ACCEL_FA_BF16, ACCEL_FA_F16 })
    for (auto &dd : dims16)
      for (auto &c : cases)
        {
          if ((dt == ACCEL_FA_F16 && dd.d != 80 && dd.d != 192) || !dtype_wanted (dt))
            continue;
          Problem pr = { { c.B, c.Hq, c.Hkv, c.Sq, c.Sk, dd.d, c.causal, c.wl, c.wr, 0.f, c.cap, c.sinks, c.alibi, dd.dv },
                         dt, path };
          check_one (pr, true);
        }
  for (auto &dd : dims32)
    for (auto &c : cases)
      {
        if (!dtype_wanted (ACCEL_FA_F32))
          break;
        Problem pr = { { c.B, c.Hq, c.Hkv, c.Sq, c.Sk, dd.d, c.causal, c.wl, c.wr, 0.f, c.cap, c.sinks, c.alibi, dd.dv },
                       ACCEL_FA_F32, path };
        check_one (pr, true);
      }
}

/* ---- varlen: against the padded kernels run on each sequence --------- */

template <typename T>
static void
varlen_case (int dtype, int D, int Dv, int Hq, int Hkv, const std::vector<int> &lq, const std::vector<int> &lk,
             int causal, int wl, int wr, float cap, int path)
{
  const int B = (int) lq.size ();
  std::vector<int> cq (B + 1, 0), ck (B + 1, 0);
  for (int b = 0; b < B; b++)
    {
      cq[b + 1] = cq[b] + lq[b];
      ck[b + 1] = ck[b] + lk[b];
    }
  const int Tq = cq[B], Tk = ck[B];
  const size_t nq = (size_t) Tq * Hq * D, nk = (size_t) Tk * Hkv * D, no = (size_t) Tq * Hq * Dv;
  const size_t nv = (size_t) Tk * Hkv * Dv, nl = (size_t) Tq * Hq;
  T *q, *k, *v, *dout, *o[2], *dq[2], *dk[2], *dv[2];
  float *lse[2], *lse_b;
  int32_t *cu, *codes;
  CK (cudaMalloc (&q, nq * sizeof (T) + 16));
  CK (cudaMalloc (&k, nk * sizeof (T) + 16));
  CK (cudaMalloc (&v, nv * sizeof (T) + 16));
  CK (cudaMalloc (&dout, no * sizeof (T) + 16));
  for (int i = 0; i < 2; i++)
    {
      CK (cudaMalloc (&o[i], no * sizeof (T) + 16));
      CK (cudaMalloc (&dq[i], nq * sizeof (T) + 16));
      CK (cudaMalloc (&dk[i], nk * sizeof (T) + 16));
      CK (cudaMalloc (&dv[i], nv * sizeof (T) + 16));
      CK (cudaMalloc (&lse[i], nl * sizeof (float) + 16));
      CK (cudaMemset (o[i], 0xff, no * sizeof (T)));
      CK (cudaMemset (dq[i], 0xff, nq * sizeof (T)));
      CK (cudaMemset (dk[i], 0xff, nk * sizeof (T)));
      CK (cudaMemset (dv[i], 0xff, nv * sizeof (T)));
      CK (cudaMemset (lse[i], 0xff, nl * sizeof (float)));
    }
  CK (cudaMalloc (&lse_b, nl * sizeof (float) + 16));
  CK (cudaMalloc (&cu, 2 * (B + 1) * sizeof (int32_t)));
  CK (cudaMalloc (&codes, ACCEL_FA_VARLEN_N_CODES * sizeof (int32_t)));
  CK (cudaMemset (codes, 0, ACCEL_FA_VARLEN_N_CODES * sizeof (int32_t)));
  CK (cudaMemcpy (cu, cq.data (), (B + 1) * sizeof (int32_t), cudaMemcpyHostToDevice));
  CK (cudaMemcpy (cu + B + 1, ck.data (), (B + 1) * sizeof (int32_t), cudaMemcpyHostToDevice));
  static uint64_t seed = 777;
  fill_random<<<1024, 256>>> (q, nq, seed++, 2.0f);
  fill_random<<<1024, 256>>> (k, nk, seed++, 2.0f);
  fill_random<<<1024, 256>>> (v, nv, seed++, 1.0f);
  fill_random<<<1024, 256>>> (dout, no, seed++, 1.0f);

  /* One set of parameters over the packed buffers; @which picks the
   * outputs (0 varlen, 1 reference). */
  auto params = [&] (int which, AccelFlashAttnBwdParams *bp) {
    memset (bp, 0, sizeof *bp);
    AccelFlashAttnFwdParams *p = &bp->fwd;
    p->q = q; p->k = k; p->v = v; p->out = o[which]; p->lse = lse[which];
    int64_t qs[3] = { 0, D, (int64_t) Hq * D }, ks[3] = { 0, D, (int64_t) Hkv * D };
    int64_t os[3] = { 0, Dv, (int64_t) Hq * Dv }, vs[3] = { 0, Dv, (int64_t) Hkv * Dv };
    memcpy (p->q_strides, qs, sizeof qs);
    memcpy (p->k_strides, ks, sizeof ks);
    memcpy (p->v_strides, vs, sizeof vs);
    memcpy (p->o_strides, os, sizeof os);
    p->batch = B; p->heads_q = Hq; p->heads_kv = Hkv; p->seqlen_q = Tq; p->seqlen_k = Tk;
    p->head_dim = D; p->head_dim_v = Dv; p->dtype = dtype; p->causal = causal;
    p->window_left = wl; p->window_right = wr; p->softcap = cap; p->path = path;
    p->cu_seqlens_q = cu; p->cu_seqlens_k = cu + B + 1; p->codes = codes;
    bp->dout = dout; bp->dq = dq[which]; bp->dk = dk[which]; bp->dv = dv[which];
    memcpy (bp->do_strides, os, sizeof os);
    memcpy (bp->dq_strides, qs, sizeof qs);
    memcpy (bp->dk_strides, ks, sizeof ks);
    memcpy (bp->dv_strides, vs, sizeof vs);
  };
  AccelFlashAttnBwdParams bp;
  params (0, &bp);
  const char *why = accel_flashattn_bwd_check (&bp);
  char name[200];
  snprintf (name, sizeof name, "varlen %s B=%d Hq=%d Hkv=%d Tq=%d Tk=%d D=%d/%d%s wl=%d wr=%d cap=%g path=%d",
            dtype == ACCEL_FA_F16 ? "f16 " : dtype == ACCEL_FA_F32 ? "f32 " : "bf16", B, Hq, Hkv, Tq, Tk, D, Dv,
            causal ? " causal" : "", wl, wr, cap, path);
  if (why)
    printf ("SKIP %s (%s)\n", name, why);
  else
    {
      void *ws;
      CK (cudaMalloc (&ws, accel_flashattn_bwd_workspace_size (&bp) + 16));
      CK ((cudaError_t) accel_flashattn_fwd (&bp.fwd, 0));
      CK ((cudaError_t) accel_flashattn_bwd (&bp, ws, 0));
      CK (cudaDeviceSynchronize ());
      cudaFree (ws);
      /* The reference: each sequence as a batch of one, through strided
       * views of the same packed buffers. */
      for (int b = 0; b < B; b++)
        {
          AccelFlashAttnBwdParams r;
          params (1, &r);
          AccelFlashAttnFwdParams *f = &r.fwd;
          f->cu_seqlens_q = f->cu_seqlens_k = nullptr;
          f->codes = nullptr;
          f->batch = 1; f->seqlen_q = lq[b]; f->seqlen_k = lk[b];
          f->q = q + (size_t) cq[b] * Hq * D;
          f->k = k + (size_t) ck[b] * Hkv * D;
          f->v = v + (size_t) ck[b] * Hkv * Dv;
          f->out = o[1] + (size_t) cq[b] * Hq * Dv;
          f->lse = lse_b;
          r.dout = dout + (size_t) cq[b] * Hq * Dv;
          r.dq = dq[1] + (size_t) cq[b] * Hq * D;
          r.dk = dk[1] + (size_t) ck[b] * Hkv * D;
          r.dv = dv[1] + (size_t) ck[b] * Hkv * Dv;
          CK ((cudaError_t) accel_flashattn_fwd (f, 0));
          if (lq[b] > 0)
            CK (cudaMemcpy2D (lse[1] + cq[b], Tq * sizeof (float), lse_b, lq[b] * sizeof (float),
                              lq[b] * sizeof (float), Hq, cudaMemcpyDeviceToDevice));
          CK (cudaMalloc (&ws, accel_flashattn_bwd_workspace_size (&r) + 16));
          CK ((cudaError_t) accel_flashattn_bwd (&r, ws, 0));
          CK (cudaDeviceSynchronize ());
          cudaFree (ws);
        }
      /* Both sides in f32 for the comparison. */
      float *ref;
      double *dacc;
      CK (cudaMalloc (&ref, std::max (std::max (nq, nk), std::max (no, nv)) * sizeof (float) + 16));
      CK (cudaMalloc (&dacc, 64));
      auto cmp = [&] (const T *got, const T *want, size_t n) {
        to_f32<<<512, 256>>> (want, ref, n);
        return compare_host (got, ref, n, dacc);
      };
      Err eo = cmp (o[0], o[1], no), eq = cmp (dq[0], dq[1], nq), ek = cmp (dk[0], dk[1], nk), ev = cmp (dv[0], dv[1], nv);
      Err el = compare_host (lse[0], lse[1], nl, dacc);
      int32_t hc[ACCEL_FA_VARLEN_N_CODES];
      CK (cudaMemcpy (hc, codes, sizeof hc, cudaMemcpyDeviceToHost));
      const double tol = dtype == ACCEL_FA_F32 ? 1e-5 : dtype == ACCEL_FA_F16 ? 5e-3 : 1e-2;
      const bool ok = eo.nan == 0 && eq.nan == 0 && ek.nan == 0 && ev.nan == 0 && eo.rel <= tol && eq.rel <= 2 * tol
                      && ek.rel <= 2 * tol && ev.rel <= 2 * tol && el.rel <= 1e-4 && hc[0] == 0 && hc[3] == 0;
      if (!ok)
        g_failures++;
      printf ("%s %s | O %.2e nan %.0f | lse %.2e | dQ %.2e dK %.2e dV %.2e nan %.0f/%.0f/%.0f | codes %d %d\n",
              ok ? "ok  " : "FAIL", name, eo.rel, eo.nan, el.rel, eq.rel, ek.rel, ev.rel, eq.nan, ek.nan, ev.nan, hc[0],
              hc[3]);
      fflush (stdout);
      cudaFree (ref);
      cudaFree (dacc);
    }
  cudaFree (q); cudaFree (k); cudaFree (v); cudaFree (dout); cudaFree (lse_b); cudaFree (cu); cudaFree (codes);
  for (int i = 0; i < 2; i++)
    {
      cudaFree (o[i]); cudaFree (dq[i]); cudaFree (dk[i]); cudaFree (dv[i]); cudaFree (lse[i]);
    }
}

static void
run_varlen_checks (int path)
{
  struct { std::vector<int> lq, lk; int Hq, Hkv, causal, wl, wr; float cap; } cases[] = {
    { { 1, 7, 129, 1000 }, { 1, 7, 129, 1000 }, 4, 4, 0, -1, -1, 0.f },
    { { 1, 7, 129, 1000 }, { 1, 7, 129, 1000 }, 6, 2, 1, -1, -1, 0.f },
    { { 77, 0, 300, 5 }, { 100, 9, 0, 5 }, 4, 1, 1, -1, -1, 0.f },   /* keys without queries, queries without keys */
    { { 200, 17, 64 }, { 260, 30, 64 }, 2, 2, 1, 33, -1, 20.f },
  };
  struct { int dt, d, dv; } kinds[] = {
    { ACCEL_FA_BF16, 64, 64 }, { ACCEL_FA_BF16, 128, 128 }, { ACCEL_FA_BF16, 256, 256 }, { ACCEL_FA_BF16, 96, 96 },
    { ACCEL_FA_BF16, 192, 128 }, { ACCEL_FA_F16, 128, 128 }, { ACCEL_FA_F32, 128, 128 }, { ACCEL_FA_F32, 80, 80 },
  };
  for (auto &kd : kinds)
    for (auto &c : cases)
      {
        if (!dtype_wanted (kd.dt))
          continue;
        if (kd.dt == ACCEL_FA_F32)
          varlen_case<float> (kd.dt, kd.d, kd.dv, c.Hq, c.Hkv, c.lq, c.lk, c.causal, c.wl, c.wr, c.cap, path);
        else if (kd.dt == ACCEL_FA_F16)
          varlen_case<__half> (kd.dt, kd.d, kd.dv, c.Hq, c.Hkv, c.lq, c.lk, c.causal, c.wl, c.wr, c.cap, path);
        else
          varlen_case<__nv_bfloat16> (kd.dt, kd.d, kd.dv, c.Hq, c.Hkv, c.lq, c.lk, c.causal, c.wl, c.wr, c.cap, path);
      }
}

/* TFLOP/s of every kind of head dim at 16k tokens of seqlen 4096, 16
 * heads (FLOPs 2 B H S^2 (D + Dv), halved when causal). */
static void
run_dims (int path)
{
  struct { int d, dv, dt; } dims[] = {
    { 64, 64, ACCEL_FA_BF16 }, { 80, 80, ACCEL_FA_BF16 }, { 96, 96, ACCEL_FA_BF16 }, { 128, 128, ACCEL_FA_BF16 },
    { 160, 160, ACCEL_FA_BF16 }, { 192, 192, ACCEL_FA_BF16 }, { 192, 128, ACCEL_FA_BF16 }, { 256, 256, ACCEL_FA_BF16 },
    { 32, 32, ACCEL_FA_BF16 }, { 64, 64, ACCEL_FA_F32 }, { 128, 128, ACCEL_FA_F32 },
  };
  printf ("%-8s %-5s %-7s %10s %10s\n", "d/dv", "dtype", "causal", "fwd TF/s", "bwd TF/s");
  for (auto &x : dims)
    for (int causal = 0; causal < 2; causal++)
      {
        Problem pr = { { 4, 16, 16, 4096, 4096, x.d, causal, -1, -1, 0.f, 0.f, 0, 0, x.dv }, x.dt, path };
        Result r = run_any (pr, false, true, true, x.dt == ACCEL_FA_F32 ? 3 : 10);
        printf ("%3d/%-4d %-5s %-7d %10.1f %10.1f\n", x.d, x.dv, x.dt == ACCEL_FA_F32 ? "f32" : "bf16", causal,
                r.fwd_tflops, r.bwd_tflops);
        fflush (stdout);
      }
}

struct BenchRow {
  int D, S, causal;
  Result r;
};

static void
run_bench (const char *json_path, int path, int bwd)
{
  const int dims[] = { 64, 128, 256 };
  const int seqs[] = { 512, 1024, 2048, 4096, 8192, 16384 };
  std::vector<BenchRow> rows;
  printf ("%-5s %-6s %-7s %10s %10s %10s %10s\n", "d", "seq", "causal", "fwd ms", "fwd TF/s", "bwd ms", "bwd TF/s");
  for (int d : dims)
    for (int S : seqs)
      for (int causal = 0; causal < 2; causal++)
        {
          int B = 16384 / S, H = 2048 / d;
          Problem pr = { { B, H, H, S, S, d, causal, -1, -1, 0.f, 0.f }, ACCEL_FA_BF16, path };
          Result r = run_any (pr, false, true, bwd, 10);
          printf ("%-5d %-6d %-7d %10.3f %10.1f %10.3f %10.1f\n", d, S, causal, r.fwd_ms, r.fwd_tflops, r.bwd_ms,
                  r.bwd_tflops);
          fflush (stdout);
          rows.push_back ({ d, S, causal, r });
        }
  if (json_path)
    {
      FILE *f = fopen (json_path, "w");
      if (!f)
        return;
      fprintf (f, "[\n");
      for (size_t i = 0; i < rows.size (); i++)
        fprintf (f, "  {\"d\": %d, \"seqlen\": %d, \"causal\": %d, \"fwd_ms\": %.5f, \"fwd_tflops\": %.2f, "
                    "\"bwd_ms\": %.5f, \"bwd_tflops\": %.2f}%s\n",
                 rows[i].D, rows[i].S, rows[i].causal, rows[i].r.fwd_ms, rows[i].r.fwd_tflops, rows[i].r.bwd_ms,
                 rows[i].r.bwd_tflops, i + 1 < rows.size () ? "," : "");
      fprintf (f, "]\n");
      fclose (f);
    }
}

int
main (int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "check";
  int path = getenv ("FA_PATH") ? atoi (getenv ("FA_PATH")) : ACCEL_FA_PATH_AUTO;
  cudaDeviceProp prop;
  CK (cudaGetDeviceProperties (&prop, 0));
  printf ("device: %s (sm_%d%d, %d SMs), path %d\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount, path);
  if (!strcmp (mode, "check"))
    run_checks (path);
  else if (!strcmp (mode, "check-general"))
    run_checks_general (path);
  else if (!strcmp (mode, "check-varlen"))
    run_varlen_checks (path);
  else if (!strcmp (mode, "dims"))
    run_dims (path);
  else if (!strcmp (mode, "bench"))
    run_bench (argc > 2 ? argv[2] : nullptr, path, getenv ("FA_NO_BWD") ? 0 : 1);
  else if (!strcmp (mode, "one") && argc >= 8)
    {
      Problem pr = { { atoi (argv[2]), atoi (argv[3]), atoi (argv[4]), atoi (argv[5]), atoi (argv[6]), atoi (argv[7]),
                       argc > 8 ? atoi (argv[8]) : 0, -1, -1, 0.f, 0.f, 0, 0, argc > 10 ? atoi (argv[10]) : 0 },
                     argc > 9 ? atoi (argv[9]) : ACCEL_FA_BF16, path };
      /* The naive reference is O(B H Sq Sk D) per thread row: check only
       * problems it finishes in seconds. */
      if ((double) pr.s.B * pr.s.Hq * pr.s.Sq * pr.s.Sk <= 3e8)
        check_one (pr, true);
      Result r = run_any (pr, false, true, true, 10);
      printf ("fwd %.3f ms %.1f TFLOP/s, bwd %.3f ms %.1f TFLOP/s\n", r.fwd_ms, r.fwd_tflops, r.bwd_ms, r.bwd_tflops);
    }
  else
    {
      fprintf (stderr, "usage: %s check | check-general | check-varlen | dims | bench [json] | "
               "one B Hq Hkv Sq Sk D [causal [dtype [Dv]]]\n", argv[0]);
      return 2;
    }
  printf ("failures: %d\n", g_failures);
  return g_failures ? 1 : 0;
}
