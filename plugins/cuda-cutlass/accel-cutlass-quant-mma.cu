/* accel-cutlass-quant-mma.cu: quant-matmul on the tensor cores (mma.sync
 * m16n8k16, f16 or bf16 operands, f32 accumulators; sm_80 on), the codes
 * turned into f16/bf16 in registers on their way from device memory to the
 * MMA. Weight-only quantised GEMM is bound by the bytes of the weights for
 * small M: each weight byte is read once per token tile, straight into
 * registers, with the next chunk's loads in flight while this one
 * multiplies.
 *
 * Exactness: the MMA sees the codes themselves (int4 q − 8 or q, int8 q,
 * fp8 values: all exact in f16 and bf16), never code × scale; each group's
 * partial sum is scaled in f32, and a given zero point enters as
 * zero × (the group's sum of the activations), summed beforehand in f32.
 * So the result is the op's f32 definition up to the order of the sums.
 *
 * Operand layout. The MMA's M is 16 weight rows (output columns n), its N
 * is 8 tokens (rows of a), its K is 16. A sum over k does not care in which
 * order the k come, as long as the A and B fragments agree: lane (g, c)
 * (g = lane / 4, c = lane % 4) of a chunk of 4R consecutive k owns the run
 * k0 + R c .. k0 + R c + R − 1 and feeds its elements 4s .. 4s + 3 to the
 * four k slots it holds in step s (2c, 2c + 1, 2c + 8, 2c + 9), for the
 * weights of rows g and g + 8 and the activations of token g alike. So each
 * lane loads R contiguous codes and R contiguous activations per chunk
 * (16-byte loads), and a chunk lies inside one quantisation group when
 * 4R divides the group size.
 *
 * Two kernels: stream (M ≤ 16: 8 warps, 4 over 64 rows times 2 halves of
 * K, several chunks of codes in flight per warp, activations read through
 * L1, the halves added in shared memory) and tiled (M > 16: 8 warps over
 * 128 rows share 64 tokens of activations staged in shared memory by
 * cp.async, two stages). Each code word is decoded once, and the scales
 * of a chunk's group are loaded with its codes.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include "accel-cutlass-kernels.h"

namespace {

struct QParams {
  const uint8_t *b;
  const void *a, *scales, *zeros, *bias;
  const float *asum;   /* [M, K / group_size], with zeros */
  void *out;
  int64_t m, n, k;
  int group_size, groups;
  AccelCutlassType scale_type;
};

__device__ __forceinline__ float
load_scale (const void *p, int64_t i, AccelCutlassType t)
{
  if (t == ACCEL_CUTLASS_F32)
    return ((const float *) p)[i];
  if (t == ACCEL_CUTLASS_F16)
    return __half2float (((const __half *) p)[i]);
  return __bfloat162float (((const __nv_bfloat16 *) p)[i]);
}

template <bool BF16>
__device__ __forceinline__ void
mma (float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
  if constexpr (BF16)
    asm volatile ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                  "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                  : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                  : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                  "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                  : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                  : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* a - b on two packed halves of the operand type. */
template <bool BF16>
__device__ __forceinline__ uint32_t
sub2 (uint32_t a, uint32_t b)
{
  uint32_t r;
  if constexpr (BF16)
    {
      __nv_bfloat162 x = __hsub2 (*(__nv_bfloat162 *) &a, *(__nv_bfloat162 *) &b);
      r = *(uint32_t *) &x;
    }
  else
    {
      __half2 x = __hsub2 (*(__half2 *) &a, *(__half2 *) &b);
      r = *(uint32_t *) &x;
    }
  return r;
}

template <bool BF16>
__device__ __forceinline__ uint32_t
pack_floats (float lo, float hi)
{
  uint32_t r;
  if constexpr (BF16)
    {
      __nv_bfloat162 x = __floats2bfloat162_rn (lo, hi);
      r = *(uint32_t *) &x;
    }
  else
    {
      __half2 x = __floats2half2_rn (lo, hi);
      r = *(uint32_t *) &x;
    }
  return r;
}

/* The format's codes: how many bytes a run of R codes takes, and the pair
 * of operands (k, k + 1) of each pair index of a run, exactly. */
template <int FMT, bool BF16>
struct Codes;

/* int4: two codes a byte, k even in the low nibble. 128 + q (bf16) or
 * 1024 + q (f16) by planting the nibble under an exponent, then the offset
 * and the zero point (8 unless the op gives zeros) subtracted: exact. */
template <bool BF16>
struct Codes<ACCEL_CUTLASS_QUANT_INT4, BF16> {
  __device__ static __forceinline__ void
  pairs (uint32_t w, bool given_zeros, uint32_t (&out)[4])
  {
    const uint32_t magic = BF16 ? 0x43004300u : 0x64006400u;
    /* 136 or 128 (bf16), 1032 or 1024 (f16), in both halves */
    const uint32_t off = BF16 ? (given_zeros ? 0x43004300u : 0x43084308u)
                              : (given_zeros ? 0x64006400u : 0x64086408u);
    uint32_t lo = w & 0x0F0F0F0Fu, hi = (w >> 4) & 0x0F0F0F0Fu;
#pragma unroll
    for (int b = 0; b < 4; b++)
      {
        uint32_t t = __byte_perm (lo, hi, (b) | (b << 4) | ((4 + b) << 8) | ((4 + b) << 12));
        out[b] = sub2<BF16> ((t & 0x00FF00FFu) | magic, off);
      }
  }
};

/* int8: signed bytes. f16: 1024 + (q + 128) under the exponent, less 1152;
 * bf16 has too few mantissa bits for that, so through f32 (8388608 + u). */
template <bool BF16>
struct Codes<ACCEL_CUTLASS_QUANT_INT8, BF16> {
  __device__ static __forceinline__ void
  pairs (uint32_t w, bool, uint32_t (&out)[2])
  {
    uint32_t u = w ^ 0x80808080u;
    if constexpr (BF16)
      {
        float f[4];
#pragma unroll
        for (int b = 0; b < 4; b++)
          f[b] = __uint_as_float (__byte_perm (u, 0x4B000000u, 0x7440 | b)) - 8388736.0f;
        out[0] = pack_floats<true> (f[0], f[1]);
        out[1] = pack_floats<true> (f[2], f[3]);
      }
    else
      {
        out[0] = sub2<false> (__byte_perm (u, 0x64646464u, 0x4140), 0x64806480u);
        out[1] = sub2<false> (__byte_perm (u, 0x64646464u, 0x4342), 0x64806480u);
      }
  }
};

/* fp8 e4m3: converted to f16 (one instruction on sm_89 and later), then to
 * bf16 through f32 where the activations are bf16; exact both ways. */
template <bool BF16>
struct Codes<ACCEL_CUTLASS_QUANT_FP8, BF16> {
  __device__ static __forceinline__ void
  pairs (uint32_t w, bool, uint32_t (&out)[2])
  {
#pragma unroll
    for (int j = 0; j < 2; j++)
      {
        __half2_raw h = __nv_cvt_fp8x2_to_halfraw2 ((__nv_fp8x2_storage_t) (w >> (16 * j)), __NV_E4M3);
        if constexpr (BF16)
          {
            float2 f = __half22float2 (*(__half2 *) &h);
            out[j] = pack_floats<true> (f.x, f.y);
          }
        else
          out[j] = *(uint32_t *) &h;
      }
  }
};

/* R codes of one row as 32-bit words, and the operand pairs of a step. */
template <int FMT, bool BF16, int R>
struct Run {
  static constexpr int kBytes = FMT == ACCEL_CUTLASS_QUANT_INT4 ? R / 2 : R;
  static constexpr int kWords = kBytes / 4;
  uint32_t w[kWords];

  __device__ __forceinline__ void
  load (const uint8_t *p)
  {
    if constexpr (kBytes % 16 == 0)
      {
#pragma unroll
        for (int i = 0; i < kBytes / 16; i++)
          {
            uint4 v = __ldg ((const uint4 *) p + i);
            w[4 * i] = v.x, w[4 * i + 1] = v.y, w[4 * i + 2] = v.z, w[4 * i + 3] = v.w;
          }
      }
    else if constexpr (kBytes == 8)
      {
        uint2 v = __ldg ((const uint2 *) p);
        w[0] = v.x, w[1] = v.y;
      }
    else
      w[0] = __ldg ((const uint32_t *) p);
  }
};

/* R activations of one token as 32-bit words (pairs of halves), zeros past M. */
template <int R>
struct Acts {
  uint32_t w[R / 2];

  __device__ __forceinline__ void
  load (const uint16_t *p, bool valid)
  {
#pragma unroll
    for (int i = 0; i < R / 8; i++)
      {
        uint4 v = valid ? __ldg ((const uint4 *) p + i) : make_uint4 (0, 0, 0, 0);
        w[4 * i] = v.x, w[4 * i + 1] = v.y, w[4 * i + 2] = v.z, w[4 * i + 3] = v.w;
      }
  }
};

/* The MMAs of one chunk: each code word of both rows decoded once, its
 * steps (two a word for int4, one for 8-bit codes) multiplied against every
 * token tile; bfrag (t, s, b0, b1) gives the B registers of tile t, step s.
 * A registers: (row g, slots 2c, 2c + 1), (row g + 8, same), (row g, slots
 * 2c + 8, 2c + 9), (row g + 8, same). */
template <int FMT, bool BF16, int R, int NT, class BFrag>
__device__ __forceinline__ void
multiply_chunk (const Run<FMT, BF16, R> &r0, const Run<FMT, BF16, R> &r1, bool given_zeros, float (&acc)[NT][4],
                const BFrag &bfrag)
{
  constexpr int kSteps = FMT == ACCEL_CUTLASS_QUANT_INT4 ? 2 : 1;
#pragma unroll
  for (int w = 0; w < Run<FMT, BF16, R>::kWords; w++)
    {
      uint32_t p0[2 * kSteps], p1[2 * kSteps];
      Codes<FMT, BF16>::pairs (r0.w[w], given_zeros, p0);
      Codes<FMT, BF16>::pairs (r1.w[w], given_zeros, p1);
#pragma unroll
      for (int h = 0; h < kSteps; h++)
        {
          const uint32_t a[4] = { p0[2 * h], p1[2 * h], p0[2 * h + 1], p1[2 * h + 1] };
#pragma unroll
          for (int t = 0; t < NT; t++)
            {
              uint32_t b0, b1;
              bfrag (t, w * kSteps + h, b0, b1);
              mma<BF16> (acc[t], a, b0, b1);
            }
        }
    }
}

/* One chunk's codes for rows g and g + 8, with what finishing its group
 * needs (the scales, and with zero points the zeros and the activations'
 * group sums of the lane's D tokens), all loaded together so that no load
 * waits on another. */
template <int FMT, bool BF16, int R, int NT>
struct Slot {
  Run<FMT, BF16, R> w0, w1;
  float s0, s1, z0, z1;
  float sa[NT][2];

  __device__ __forceinline__ void
  fetch (const QParams &p, const uint8_t *row0_codes, const uint8_t *row1_codes, int64_t row0, int64_t row1,
         int64_t tok0, int ch, int chunks_per_group, int c)
  {
    int64_t k = (int64_t) ch * 4 * R + R * c;
    int64_t off = FMT == ACCEL_CUTLASS_QUANT_INT4 ? k / 2 : k;
    int gi = ch / chunks_per_group;
    w0.load (row0_codes + off);
    w1.load (row1_codes + off);
    s0 = load_scale (p.scales, row0 * p.groups + gi, p.scale_type);
    s1 = load_scale (p.scales, row1 * p.groups + gi, p.scale_type);
    if (p.zeros)
      {
        z0 = load_scale (p.zeros, row0 * p.groups + gi, p.scale_type);
        z1 = load_scale (p.zeros, row1 * p.groups + gi, p.scale_type);
#pragma unroll
        for (int t = 0; t < NT; t++)
#pragma unroll
          for (int i = 0; i < 2; i++)
            {
              int64_t tok = tok0 + 8 * t + i;
              sa[t][i] = tok < p.m ? p.asum[tok * p.groups + gi] : 0.0f;
            }
      }
  }

  /* Adds the finished group's partial sums, scaled, to the results: rows
   * (g, g + 8), tokens (2c, 2c + 1) of each tile of 8. */
  __device__ __forceinline__ void
  finish_group (bool given_zeros, float (&out)[NT][4], float (&acc)[NT][4]) const
  {
#pragma unroll
    for (int t = 0; t < NT; t++)
      {
        float sa0 = given_zeros ? sa[t][0] : 0.0f, sa1 = given_zeros ? sa[t][1] : 0.0f;
        float zz0 = given_zeros ? z0 : 0.0f, zz1 = given_zeros ? z1 : 0.0f;
        out[t][0] += s0 * (acc[t][0] - zz0 * sa0);
        out[t][1] += s0 * (acc[t][1] - zz0 * sa1);
        out[t][2] += s1 * (acc[t][2] - zz1 * sa0);
        out[t][3] += s1 * (acc[t][3] - zz1 * sa1);
#pragma unroll
        for (int i = 0; i < 4; i++)
          acc[t][i] = 0.0f;
      }
  }
};

template <bool BF16>
__device__ __forceinline__ void
store_out (const QParams &p, int64_t tok, int64_t row, float v)
{
  if (tok >= p.m || row >= p.n)
    return;
  if constexpr (BF16)
    {
      if (p.bias)
        v += __bfloat162float (((const __nv_bfloat16 *) p.bias)[row]);
      ((__nv_bfloat16 *) p.out)[tok * p.n + row] = __float2bfloat16_rn (v);
    }
  else
    {
      if (p.bias)
        v += __half2float (((const __half *) p.bias)[row]);
      ((__half *) p.out)[tok * p.n + row] = __float2half_rn (v);
    }
}

/* The streaming kernel's block: 4 warps over 64 rows, times 2 halves of K. */
constexpr int kRowWarps = 4;
constexpr int kKSplit = 2;

/* M ≤ 8 NT: block (64 rows, 8 NT tokens), one per multiprocessor at
 * N = 8192. Each warp keeps kDepth chunks of codes in flight in a register
 * ring (loop unrolled by the ring's depth, so that it is indexed by
 * constants), and the next chunk's activations, read through L1 (the four
 * warps of a K half read the same ones). The two halves' sums meet in
 * shared memory. */
template <int FMT, bool BF16, int R, int NT>
__global__ void __launch_bounds__ (kRowWarps * kKSplit * 32, 1)
quant_stream (QParams p)
{
  using RunT = Run<FMT, BF16, R>;
  using SlotT = Slot<FMT, BF16, R, NT>;
  constexpr int kDepth = RunT::kBytes >= 16 ? 3 : RunT::kBytes >= 8 ? 4 : 6;
  __shared__ float partial[kKSplit - 1][kRowWarps][NT][4][32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, c = lane % 4;
  const int rw = warp % kRowWarps, ks = warp / kRowWarps;
  const int64_t row0 = (int64_t) blockIdx.x * 16 * kRowWarps + rw * 16 + g, row1 = row0 + 8;
  const int64_t row0c = min (row0, p.n - 1), row1c = min (row1, p.n - 1);
  const int64_t tok_b = (int64_t) blockIdx.y * 8 * NT + g;     /* this lane's B token, tile 0 */
  const int64_t tok_d = (int64_t) blockIdx.y * 8 * NT + 2 * c; /* its first D token, tile 0 */
  const int64_t bytes_per_row = FMT == ACCEL_CUTLASS_QUANT_INT4 ? p.k / 2 : p.k;
  const uint8_t *w0 = p.b + row0c * bytes_per_row, *w1 = p.b + row1c * bytes_per_row;
  const uint16_t *act[NT];
  bool act_ok[NT];
#pragma unroll
  for (int t = 0; t < NT; t++)
    {
      act_ok[t] = tok_b + 8 * t < p.m;
      act[t] = (const uint16_t *) p.a + (act_ok[t] ? tok_b + 8 * t : 0) * p.k;
    }

  const int chunks_per_group = p.group_size / (4 * R);
  const int g_begin = (int) ((int64_t) p.groups * ks / kKSplit);
  const int g_end = (int) ((int64_t) p.groups * (ks + 1) / kKSplit);
  const int c_begin = g_begin * chunks_per_group, c_end = g_end * chunks_per_group;
  const bool given_zeros = p.zeros != nullptr;

  float out[NT][4] = {}, acc[NT][4] = {};
  SlotT slots[kDepth];
  Acts<R> a_cur[NT], a_nxt[NT];
  auto load_acts = [&] (int ch, Acts<R> (&x)[NT]) {
    int64_t k = (int64_t) ch * 4 * R + R * c;
#pragma unroll
    for (int t = 0; t < NT; t++)
      x[t].load (act[t] + k, act_ok[t]);
  };
#pragma unroll
  for (int j = 0; j < kDepth; j++)
    if (c_begin + j < c_end)
      slots[j].fetch (p, w0, w1, row0c, row1c, tok_d, c_begin + j, chunks_per_group, c);
  if (c_begin < c_end)
    load_acts (c_begin, a_cur);
  for (int base = c_begin; base < c_end; base += kDepth)
    {
#pragma unroll
      for (int j = 0; j < kDepth; j++)
        {
          int ch = base + j;
          if (ch >= c_end)
            break;
          if (ch + 1 < c_end)
            load_acts (ch + 1, a_nxt);
          multiply_chunk<FMT, BF16, R, NT> (slots[j].w0, slots[j].w1, given_zeros, acc,
                                            [&] (int t, int s, uint32_t &b0, uint32_t &b1) {
                                              b0 = a_cur[t].w[2 * s];
                                              b1 = a_cur[t].w[2 * s + 1];
                                            });
          if ((ch + 1) % chunks_per_group == 0)
            slots[j].finish_group (given_zeros, out, acc);
          if (ch + kDepth < c_end)
            slots[j].fetch (p, w0, w1, row0c, row1c, tok_d, ch + kDepth, chunks_per_group, c);
#pragma unroll
          for (int t = 0; t < NT; t++)
            a_cur[t] = a_nxt[t];
        }
    }

  if (ks > 0)
#pragma unroll
    for (int t = 0; t < NT; t++)
#pragma unroll
      for (int i = 0; i < 4; i++)
        partial[ks - 1][rw][t][i][lane] = out[t][i];
  __syncthreads ();
  if (ks > 0)
    return;
#pragma unroll
  for (int t = 0; t < NT; t++)
#pragma unroll
    for (int i = 0; i < 4; i++)
      {
        float v = out[t][i];
#pragma unroll
        for (int h = 0; h < kKSplit - 1; h++)
          v += partial[h][rw][t][i][lane];
        store_out<BF16> (p, tok_d + 8 * t + (i & 1), i < 2 ? row0 : row1, v);
      }
}

constexpr int kTiledWarps = 8;
constexpr int kTiledTokens = 64;   /* 8 tiles of 8 */

/* M > 16: block (128 rows, 64 tokens), each warp 16 rows over all of K;
 * the block's activations go through shared memory, two chunks deep. */
template <int FMT, bool BF16, int R>
__global__ void __launch_bounds__ (kTiledWarps * 32)
quant_tiled (QParams p)
{
  constexpr int NT = kTiledTokens / 8;
  constexpr int kRow = 4 * R + 8;   /* halves per token row of a stage, padded against bank conflicts */
  extern __shared__ uint16_t stage[];   /* [2][kTiledTokens][kRow] */
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, c = lane % 4;
  const int64_t row0 = (int64_t) blockIdx.x * 128 + warp * 16 + g, row1 = row0 + 8;
  const int64_t tok_base = (int64_t) blockIdx.y * kTiledTokens;
  const int64_t bytes_per_row = FMT == ACCEL_CUTLASS_QUANT_INT4 ? p.k / 2 : p.k;
  const uint8_t *w0 = p.b + min (row0, p.n - 1) * bytes_per_row;
  const uint8_t *w1 = p.b + min (row1, p.n - 1) * bytes_per_row;
  const int chunks_per_group = p.group_size / (4 * R);
  const int chunks = (int) (p.k / (4 * R));
  const bool given_zeros = p.zeros != nullptr;

  /* One chunk of activations: kTiledTokens x 4R halves, 16 bytes a copy. */
  auto stage_chunk = [&] (int ch, int buf) {
    constexpr int kPieces = kTiledTokens * 4 * R / 8;
    for (int i = threadIdx.x; i < kPieces; i += kTiledWarps * 32)
      {
        int tok = i / (R / 2), piece = i % (R / 2);
        int64_t src_tok = tok_base + tok;
        const uint16_t *src = (const uint16_t *) p.a + (src_tok < p.m ? src_tok : 0) * p.k + (int64_t) ch * 4 * R
                              + piece * 8;
        uint32_t dst = (uint32_t) __cvta_generic_to_shared (stage + (buf * kTiledTokens + tok) * kRow + piece * 8);
        int bytes = src_tok < p.m ? 16 : 0;
        asm volatile ("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(src), "r"(bytes));
      }
    asm volatile ("cp.async.commit_group;\n" ::);
  };

  float out[NT][4] = {}, acc[NT][4] = {};
  const int64_t row0c = min (row0, p.n - 1), row1c = min (row1, p.n - 1);
  Slot<FMT, BF16, R, NT> cur, nxt;
  if (chunks > 0)
    {
      stage_chunk (0, 0);
      cur.fetch (p, w0, w1, row0c, row1c, tok_base + 2 * c, 0, chunks_per_group, c);
    }
  for (int ch = 0; ch < chunks; ch++)
    {
      int buf = ch % 2;
      if (ch + 1 < chunks)
        {
          stage_chunk (ch + 1, buf ^ 1);
          nxt.fetch (p, w0, w1, row0c, row1c, tok_base + 2 * c, ch + 1, chunks_per_group, c);
          asm volatile ("cp.async.wait_group 1;\n" ::);
        }
      else
        asm volatile ("cp.async.wait_group 0;\n" ::);
      __syncthreads ();
      const uint16_t *base = stage + (buf * kTiledTokens + g) * kRow + R * c;
      multiply_chunk<FMT, BF16, R, NT> (cur.w0, cur.w1, given_zeros, acc,
                                        [&] (int t, int s, uint32_t &b0, uint32_t &b1) {
                                          uint2 bv = *(const uint2 *) (base + t * 8 * kRow + 4 * s);
                                          b0 = bv.x;
                                          b1 = bv.y;
                                        });
      if ((ch + 1) % chunks_per_group == 0)
        cur.finish_group (given_zeros, out, acc);
      cur = nxt;
      __syncthreads ();   /* the stage this chunk read is refilled next */
    }

#pragma unroll
  for (int t = 0; t < NT; t++)
#pragma unroll
    for (int i = 0; i < 4; i++)
      store_out<BF16> (p, tok_base + 2 * c + 8 * t + (i & 1), i < 2 ? row0 : row1, out[t][i]);
}

/* asum[m, g] = the sum of a[m, k] over group g, in f32: one warp each. */
template <bool BF16>
__global__ void
group_sums (const void *a, float *asum, int64_t m, int64_t k, int group_size, int groups)
{
  int64_t warp = ((int64_t) blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x % 32;
  if (warp >= m * groups)
    return;
  int64_t row = warp / groups, gi = warp % groups;
  float s = 0.0f;
  for (int i = lane; i < group_size; i += 32)
    {
      int64_t idx = row * k + gi * group_size + i;
      s += BF16 ? __bfloat162float (((const __nv_bfloat16 *) a)[idx]) : __half2float (((const __half *) a)[idx]);
    }
  for (int off = 16; off > 0; off /= 2)
    s += __shfl_xor_sync (0xffffffffu, s, off);
  if (lane == 0)
    asum[warp] = s;
}

/* The run length: the longest of 32 (int4) or 16 (8-bit) codes a lane
 * whose chunk (4 runs) still divides the group. */
int
run_length (const AccelCutlassQuantParams *p)
{
  int longest = p->format == ACCEL_CUTLASS_QUANT_INT4 ? 32 : 16;
  for (int r = longest; r >= 8; r /= 2)
    if (p->group_size % (4 * r) == 0)
      return r;
  return 0;
}

size_t
tiled_smem (int r)
{
  return 2 * kTiledTokens * (4 * r + 8) * sizeof (uint16_t);
}

template <int FMT, bool BF16, int R>
cudaError_t
launch_fmt (const QParams &q, cudaStream_t stream)
{
  if (q.m <= 8)
    quant_stream<FMT, BF16, R, 1><<<dim3 ((unsigned) ((q.n + 16 * kRowWarps - 1) / (16 * kRowWarps)), 1),
                                    kRowWarps * kKSplit * 32, 0, stream>>> (q);
  else if (q.m <= 16)
    quant_stream<FMT, BF16, R, 2><<<dim3 ((unsigned) ((q.n + 16 * kRowWarps - 1) / (16 * kRowWarps)), 1),
                                    kRowWarps * kKSplit * 32, 0, stream>>> (q);
  else
    {
      auto kernel = quant_tiled<FMT, BF16, R>;
      size_t smem = tiled_smem (R);
      cudaError_t status = cudaFuncSetAttribute (kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem);
      if (status != cudaSuccess)
        return status;
      dim3 grid ((unsigned) ((q.n + 127) / 128), (unsigned) ((q.m + kTiledTokens - 1) / kTiledTokens));
      kernel<<<grid, kTiledWarps * 32, smem, stream>>> (q);
    }
  return cudaGetLastError ();
}

template <int FMT, bool BF16>
cudaError_t
launch_act (const QParams &q, int r, cudaStream_t stream)
{
  if (r == 8)
    return launch_fmt<FMT, BF16, 8> (q, stream);
  if (r == 16)
    return launch_fmt<FMT, BF16, 16> (q, stream);
  if constexpr (FMT == ACCEL_CUTLASS_QUANT_INT4)
    if (r == 32)
      return launch_fmt<FMT, BF16, 32> (q, stream);
  return cudaErrorInvalidValue;
}

template <int FMT>
cudaError_t
launch (const QParams &q, bool bf16, int r, cudaStream_t stream)
{
  return bf16 ? launch_act<FMT, true> (q, r, stream) : launch_act<FMT, false> (q, r, stream);
}

bool
aligned (const void *ptr)
{
  return ptr == nullptr || (uintptr_t) ptr % 16 == 0;
}

}  // namespace

extern "C" int
accel_cutlass_quant_mma_supported (const AccelCutlassQuantParams *p)
{
  int r = run_length (p);
  return (p->act_type == ACCEL_CUTLASS_F16 || p->act_type == ACCEL_CUTLASS_BF16) && r != 0
         && p->k % p->group_size == 0 && p->k / p->group_size < (1LL << 30) && (p->n + 15) / 16 < (1LL << 31)
         && (p->m + kTiledTokens - 1) / kTiledTokens <= 65535 && aligned (p->a) && aligned (p->b)
         && (p->format != ACCEL_CUTLASS_QUANT_FP8 || p->zeros == nullptr);
}

extern "C" size_t
accel_cutlass_quant_mma_workspace (const AccelCutlassQuantParams *p)
{
  return p->zeros ? (size_t) p->m * (size_t) (p->k / p->group_size) * sizeof (float) : 0;
}

extern "C" int
accel_cutlass_quant_mma (const AccelCutlassQuantParams *p, void *workspace, cudaStream_t stream)
{
  if (!accel_cutlass_quant_mma_supported (p))
    return ACCEL_CUTLASS_UNSUPPORTED;
  if (p->m == 0 || p->n == 0)
    return cudaSuccess;
  int r = run_length (p);
  bool bf16 = p->act_type == ACCEL_CUTLASS_BF16;
  QParams q = { (const uint8_t *) p->b, p->a, p->scales, p->zeros, p->bias, (const float *) workspace, p->out,
                p->m, p->n, p->k, p->group_size, (int) (p->k / p->group_size), p->scale_type };
  if (p->zeros && q.groups > 0)
    {
      int64_t warps = p->m * q.groups;
      unsigned blocks = (unsigned) ((warps * 32 + 255) / 256);
      if (bf16)
        group_sums<true><<<blocks, 256, 0, stream>>> (p->a, (float *) workspace, p->m, p->k, p->group_size, q.groups);
      else
        group_sums<false><<<blocks, 256, 0, stream>>> (p->a, (float *) workspace, p->m, p->k, p->group_size, q.groups);
    }
  switch (p->format)
    {
    case ACCEL_CUTLASS_QUANT_INT4: return launch<ACCEL_CUTLASS_QUANT_INT4> (q, bf16, r, stream);
    case ACCEL_CUTLASS_QUANT_INT8: return launch<ACCEL_CUTLASS_QUANT_INT8> (q, bf16, r, stream);
    default: return launch<ACCEL_CUTLASS_QUANT_FP8> (q, bf16, r, stream);
    }
}
