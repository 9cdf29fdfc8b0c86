/* accel-cutlass-quant-mma.cu: quant-matmul on the tensor cores (mma.sync
 * m16n8k16, f16 or bf16 operands, f32 accumulators; sm_80 on), the codes
 * turned into f16/bf16 in registers on their way from device memory to the
 * MMA. Weight-only quantised GEMM is bound by the bytes of the weights for
 * small M, and at the few MMAs a chunk of codes feeds there, by the
 * instructions around them: each weight byte is read once per token tile,
 * several chunks ahead, and the work per chunk is kept small.
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
 * Two kernels. stream (M ≤ 16): 8 warps of 16 rows, each over one of up
 * to 8 parts of K chosen so that about 2048 warps stream at once, its
 * codes brought into shared memory by cp.async 3 chunks ahead, the
 * activations read through L1 one chunk ahead, the parts added in shared
 * memory. It replaced 4 warps over 64 rows times 2 halves of K with a ring
 * of loads in registers, 3 chunks deep, which ran at about 0.9 TB/s on the
 * H100 at K = N = 8192. What limits this kernel at M ≤ 8 is not the bytes
 * in flight (a ring 7 chunks deep, or L2 asked for the codes 8 or 16
 * chunks ahead, measured no faster) but the instructions around the 8 MMAs
 * a chunk and their latencies: an earlier version took ~340 instructions
 * a chunk; with every address a pointer stepped along, the int4 decode at
 * 13 instructions a word, no copies between iterations and the scales
 * loaded a chunk ahead but made floats only when used it takes ~240, and
 * the kernel alone runs 20 µs (1.7 TB/s, Nsight Compute at the GPU's own
 * clocks). Carrying the activations in the ring too was 2.5 times slower
 * at M = 16.
 *
 * tiled (M > 16): 8 warps over 128 rows share 64 tokens of activations
 * staged in shared memory by cp.async, two stages; a four-stage ring of
 * codes and activations measured slower there (111 against 120 TFLOP/s at
 * M = 128). Each code word is decoded once.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_pipeline_primitives.h>
#include <algorithm>
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

/* (a & MASK) | b, one instruction (the compiler writes two when both are
 * constants). */
template <uint32_t MASK>
__device__ __forceinline__ uint32_t
and_or (uint32_t a, uint32_t b)
{
  uint32_t r;
  asm ("lop3.b32 %0, %1, %2, %3, 0xEA;\n" : "=r"(r) : "r"(a), "n"(MASK), "r"(b));
  return r;
}

/* int4: two codes a byte, k even in the low nibble. 128 + q (bf16) or
 * 1024 + q (f16) by planting each nibble under an exponent byte, then the
 * offset and the zero point (8 unless the op gives zeros) subtracted:
 * exact. The nibbles of two bytes go into one word beside two exponent
 * bytes, and one byte permutation a pair picks a nibble and an exponent
 * for each half: 13 instructions a word of 8 codes. */
template <bool BF16>
struct Codes<ACCEL_CUTLASS_QUANT_INT4, BF16> {
  __device__ static __forceinline__ void
  pairs (uint32_t w, bool given_zeros, uint32_t (&out)[4])
  {
    const uint32_t e = BF16 ? 0x43u : 0x64u;   /* the exponent byte of 128 (bf16), 1024 (f16) */
    /* 136 or 128 (bf16), 1032 or 1024 (f16), in both halves */
    const uint32_t off = BF16 ? (given_zeros ? 0x43004300u : 0x43084308u)
                              : (given_zeros ? 0x64006400u : 0x64086408u);
    uint32_t s = w >> 4;
    uint32_t lo01 = and_or<0x00000F0Fu> (w, e * 0x01010000u), hi01 = and_or<0x00000F0Fu> (s, e * 0x01010000u);
    uint32_t lo23 = and_or<0x0F0F0000u> (w, e * 0x00000101u), hi23 = and_or<0x0F0F0000u> (s, e * 0x00000101u);
    out[0] = sub2<BF16> (__byte_perm (lo01, hi01, 0x6420), off);
    out[1] = sub2<BF16> (__byte_perm (lo01, hi01, 0x7531), off);
    out[2] = sub2<BF16> (__byte_perm (lo23, hi23, 0x4602), off);
    out[3] = sub2<BF16> (__byte_perm (lo23, hi23, 0x5713), off);
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

  /* The same from shared memory (kBytes is 4, 8 or 16 there). */
  __device__ __forceinline__ void
  load_shared (const uint8_t *p)
  {
    if constexpr (kBytes == 16)
      {
        uint4 v = *(const uint4 *) p;
        w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
      }
    else if constexpr (kBytes == 8)
      {
        uint2 v = *(const uint2 *) p;
        w[0] = v.x, w[1] = v.y;
      }
    else
      w[0] = *(const uint32_t *) p;
  }
};

/* R activations of one token as 32-bit words (pairs of halves); a token
 * past M is left as it was made, zeros. */
template <int R>
struct Acts {
  uint32_t w[R / 2] = {};

  __device__ __forceinline__ void
  load (const uint16_t *p, bool valid)
  {
    if (valid)
#pragma unroll
      for (int i = 0; i < R / 8; i++)
        {
          uint4 v = __ldg ((const uint4 *) p + i);
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

/* What finishing a group of rows g and g + 8 needs: the scales, and with
 * zero points the zeros and the activations' group sums of the lane's D
 * tokens (2c, 2c + 1 of each tile of 8). */
template <int NT>
struct GroupScales {
  float s0, s1, z0, z1;
  float sa[NT][2];

  __device__ __forceinline__ void
  fetch (const QParams &p, int64_t row0, int64_t row1, int64_t tok0, int gi)
  {
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
  finish (bool given_zeros, float (&out)[NT][4], float (&acc)[NT][4]) const
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

/* One chunk's codes for rows g and g + 8 with its group's scales, all
 * loaded together so that no load waits on another. */
template <int FMT, bool BF16, int R, int NT>
struct Slot {
  Run<FMT, BF16, R> w0, w1;
  GroupScales<NT> sc;

  __device__ __forceinline__ void
  fetch (const QParams &p, const uint8_t *row0_codes, const uint8_t *row1_codes, int64_t row0, int64_t row1,
         int64_t tok0, int ch, int chunks_per_group, int c)
  {
    int64_t k = (int64_t) ch * 4 * R + R * c;
    int64_t off = FMT == ACCEL_CUTLASS_QUANT_INT4 ? k / 2 : k;
    w0.load (row0_codes + off);
    w1.load (row1_codes + off);
    sc.fetch (p, row0, row1, tok0, ch / chunks_per_group);
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

__device__ __forceinline__ void
prefetch_l2 (const void *p)
{
  asm volatile ("prefetch.global.L2 [%0];\n" :: "l"(p));
}

/* The streaming kernel's block: 8 warps, each 16 rows over one of S parts
 * of K, so 8 / S groups of 16 rows a block; S is chosen at launch. */
constexpr int kStreamWarps = 8;
constexpr int kStreamDepth = 4;            /* chunks of codes a warp's ring holds: a power of 2 */
constexpr int kStreamWarpsWanted = 2048;   /* about 16 warps on each multiprocessor of an H100 */

/* Blocks a multiprocessor: two, but one for int4 at M > 8, whose registers
 * would spill at two (on the H100, 46–47 TFLOP/s at one block, 42 at two;
 * int8 at M > 8 does not spill and is a little faster at two). */
constexpr int
stream_blocks (int fmt, int nt)
{
  return fmt == ACCEL_CUTLASS_QUANT_INT4 && nt > 1 ? 1 : 2;
}

/* M ≤ 8 NT. Each warp keeps kStreamDepth − 1 chunks of its codes in flight
 * by cp.async into a ring in shared memory, which takes no registers while
 * they fly: each lane copies its own runs of rows g and g + 8 and reads
 * back only those, so no barrier is needed. The ring is laid out
 * [slot][2 rows][32 lanes] runs, so a warp's read of a row touches each
 * bank once. The next chunk's activations (the same for every row) come
 * through L1 one chunk ahead, and so do the scales of its group (L2 is
 * asked for all of the warp's at the start); every address is a pointer
 * stepped along, as the work per chunk is small. The S parts'
 * sums meet in shared memory. */
template <int FMT, bool BF16, int R, int NT>
__global__ void __launch_bounds__ (kStreamWarps * 32, stream_blocks (FMT, NT))
quant_stream (QParams p, int splits)
{
  using RunT = Run<FMT, BF16, R>;
  constexpr int D = kStreamDepth;
  static_assert ((D & (D - 1)) == 0, "the ring's depth is a power of 2");
  constexpr int kBytes = RunT::kBytes;
  constexpr uint32_t kRowBytes = 32 * kBytes, kSlotBytes = 2 * kRowBytes;
  extern __shared__ __align__ (16) uint8_t smem[];   /* the warps' rings; at the end, the parts' sums */
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, c = lane % 4;
  const int row_groups = kStreamWarps / splits, rg = warp % row_groups, ks = warp / row_groups;
  const int64_t row0 = ((int64_t) blockIdx.x * row_groups + rg) * 16 + g, row1 = row0 + 8;
  const int64_t row0c = min (row0, p.n - 1), row1c = min (row1, p.n - 1);
  const int64_t bytes_per_row = FMT == ACCEL_CUTLASS_QUANT_INT4 ? p.k / 2 : p.k;

  const int chunks_per_group = p.group_size / (4 * R);
  const int g_begin = (int) ((int64_t) p.groups * ks / splits);
  const int g_end = (int) ((int64_t) p.groups * (ks + 1) / splits);
  const int n_chunks = (g_end - g_begin) * chunks_per_group;
  const int64_t k0 = (int64_t) g_begin * p.group_size + R * c;   /* this lane's first k */
  const int64_t byte0 = FMT == ACCEL_CUTLASS_QUANT_INT4 ? k0 / 2 : k0;
  const uint8_t *src0 = p.b + row0c * bytes_per_row + byte0, *src1 = p.b + row1c * bytes_per_row + byte0;
  uint8_t *const ring = smem + warp * D * kSlotBytes + lane * kBytes;   /* this lane's run, slot 0, row g */

  const int ssize = p.scale_type == ACCEL_CUTLASS_F32 ? 4 : 2;
  const uint8_t *scales = (const uint8_t *) p.scales, *zeros = (const uint8_t *) p.zeros;
  const int64_t s_first0 = (row0c * p.groups + g_begin) * ssize, s_first1 = (row1c * p.groups + g_begin) * ssize;
  auto fill = [&] (int i) {
    uint8_t *s = ring + (i & (D - 1)) * kSlotBytes;
    __pipeline_memcpy_async (s, src0, kBytes);
    __pipeline_memcpy_async (s + kRowBytes, src1, kBytes);
    src0 += 4 * kBytes;
    src1 += 4 * kBytes;
  };
  /* L2 is asked at once for the scales of the warp's part of rows g and g + 8
   * (one or two 128-byte lines at the usual sizes). */
  if (c == 0)
    for (int64_t b = 0; b < (int64_t) (g_end - g_begin) * ssize; b += 128)
      {
        prefetch_l2 (scales + s_first0 + b);
        prefetch_l2 (scales + s_first1 + b);
      }

  const uint16_t *act[NT];
  bool act_ok[NT];
#pragma unroll
  for (int t = 0; t < NT; t++)
    {
      act_ok[t] = g + 8 * t < p.m;   /* this lane's B token of tile t */
      act[t] = (const uint16_t *) p.a + (act_ok[t] ? g + 8 * t : 0) * p.k + k0;
    }
  auto next_acts = [&] (Acts<R> (&x)[NT]) {
#pragma unroll
    for (int t = 0; t < NT; t++)
      {
        x[t].load (act[t], act_ok[t]);
        act[t] += 4 * R;
      }
  };

  /* A chunk's group's scales as loaded, bits to be made floats when the
   * group ends: they are asked for a chunk ahead, so that the loads are in
   * by then (made floats at once, the compiler waited for them before the
   * MMAs). la_* walk the groups of the chunks looked ahead to. */
  struct Bits {
    uint32_t s0, s1, z0, z1;
    float sa[NT][2];
  };
  const uint8_t *sp0 = scales + s_first0, *sp1 = scales + s_first1;
  int la_group = 0, la_in_group = 0;
  auto load_bits = [&] (Bits &x) {
    auto raw = [&] (const uint8_t *ptr) -> uint32_t {
      return ssize == 4 ? *(const uint32_t *) ptr : (uint32_t) *(const uint16_t *) ptr;
    };
    x.s0 = raw (sp0);
    x.s1 = raw (sp1);
    if (zeros)
      {
        x.z0 = raw (zeros + s_first0 + (int64_t) la_group * ssize);
        x.z1 = raw (zeros + s_first1 + (int64_t) la_group * ssize);
#pragma unroll
        for (int t = 0; t < NT; t++)
#pragma unroll
          for (int i = 0; i < 2; i++)
            {
              int64_t tok = 2 * c + 8 * t + i;
              x.sa[t][i] = tok < p.m ? p.asum[tok * p.groups + g_begin + la_group] : 0.0f;
            }
      }
    if (++la_in_group == chunks_per_group)
      {
        la_in_group = 0;
        la_group++;
        sp0 += ssize;
        sp1 += ssize;
      }
  };
  auto to_float = [&] (uint32_t bits) {
    return p.scale_type == ACCEL_CUTLASS_F32 ? __uint_as_float (bits)
           : p.scale_type == ACCEL_CUTLASS_F16 ? __half2float (__ushort_as_half ((unsigned short) bits))
                                               : __uint_as_float (bits << 16);
  };

  float out[NT][4] = {}, acc[NT][4] = {};
  Acts<R> a_cur[NT], a_nxt[NT];
  Bits b_cur = {}, b_nxt = {};
#pragma unroll
  for (int i = 0; i < D - 1; i++)
    {
      if (i < n_chunks)
        fill (i);
      __pipeline_commit ();
    }
  if (n_chunks > 0)
    {
      next_acts (a_cur);
      load_bits (b_cur);
    }
  /* One chunk: its codes from the ring, the next chunk's activations and
   * scales fetched meanwhile. The loop is unrolled by two, the arrays of
   * activations and scales changing places, so that none is copied. */
  int in_group = 0;
  auto step = [&] (int i, Acts<R> (&cur)[NT], Acts<R> (&nxt)[NT], const Bits &bits, Bits &bits_nxt) {
    __pipeline_wait_prior (D - 2);   /* chunk i has landed: its reads stay below (a compiler fence) */
    asm volatile ("" ::: "memory");
    if (i + D - 1 < n_chunks)
      fill (i + D - 1);    /* into the slot chunk i − 1 used */
    __pipeline_commit ();
    if (i + 1 < n_chunks)
      {
        next_acts (nxt);
        load_bits (bits_nxt);
      }
    RunT r0, r1;
    const uint8_t *s = ring + (i & (D - 1)) * kSlotBytes;
    r0.load_shared (s);
    r1.load_shared (s + kRowBytes);
    multiply_chunk<FMT, BF16, R, NT> (r0, r1, zeros != nullptr, acc,
                                      [&] (int t, int st, uint32_t &b0, uint32_t &b1) {
                                        b0 = cur[t].w[2 * st];
                                        b1 = cur[t].w[2 * st + 1];
                                      });
    if (++in_group == chunks_per_group)
      {
        GroupScales<NT> sc;
        sc.s0 = to_float (bits.s0);
        sc.s1 = to_float (bits.s1);
        if (zeros)
          {
            sc.z0 = to_float (bits.z0);
            sc.z1 = to_float (bits.z1);
#pragma unroll
            for (int t = 0; t < NT; t++)
              sc.sa[t][0] = bits.sa[t][0], sc.sa[t][1] = bits.sa[t][1];
          }
        sc.finish (zeros != nullptr, out, acc);
        in_group = 0;
      }
  };
  for (int i = 0; i < n_chunks; i += 2)
    {
      step (i, a_cur, a_nxt, b_cur, b_nxt);
      if (i + 1 < n_chunks)
        step (i + 1, a_nxt, a_cur, b_nxt, b_cur);
    }

  /* No copy is in flight (the last groups committed were empty): the rings
   * hold the parts' sums from here. */
  float (*partial)[NT][4][32] = (float (*)[NT][4][32]) smem;
  __syncthreads ();
  if (ks > 0)
#pragma unroll
    for (int t = 0; t < NT; t++)
#pragma unroll
      for (int i = 0; i < 4; i++)
        partial[(ks - 1) * row_groups + rg][t][i][lane] = out[t][i];
  __syncthreads ();
  if (ks > 0)
    return;
#pragma unroll
  for (int t = 0; t < NT; t++)
#pragma unroll
    for (int i = 0; i < 4; i++)
      {
        float v = out[t][i];
        for (int h = 1; h < splits; h++)
          v += partial[(h - 1) * row_groups + rg][t][i][lane];
        store_out<BF16> (p, 2 * c + 8 * t + (i & 1), i < 2 ? row0 : row1, v);
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
        cur.sc.finish (given_zeros, out, acc);
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

/* The parts of K the streaming kernel splits into: enough for about
 * kStreamWarpsWanted warps, at most 8 and at most one a group. */
int
stream_splits (const QParams &q)
{
  int64_t row_groups = (q.n + 15) / 16;
  int s = 1;
  while (s < kStreamWarps && row_groups * s < kStreamWarpsWanted && 2 * s <= q.groups)
    s *= 2;
  return s;
}

template <class Kernel>
cudaError_t
allow_smem (Kernel kernel, size_t smem)
{
  return smem <= 48 * 1024 ? cudaSuccess
                           : cudaFuncSetAttribute (kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem);
}

template <int FMT, bool BF16, int R, int NT>
cudaError_t
launch_stream (const QParams &q, cudaStream_t stream)
{
  auto kernel = quant_stream<FMT, BF16, R, NT>;
  int splits = stream_splits (q), row_groups = kStreamWarps / splits;
  size_t smem = std::max ((size_t) kStreamWarps * kStreamDepth * 2 * 32 * Run<FMT, BF16, R>::kBytes,
                          (size_t) (kStreamWarps - 1) * NT * 4 * 32 * sizeof (float));
  cudaError_t status = allow_smem (kernel, smem);
  if (status != cudaSuccess)
    return status;
  unsigned blocks = (unsigned) (((q.n + 15) / 16 + row_groups - 1) / row_groups);
  kernel<<<blocks, kStreamWarps * 32, smem, stream>>> (q, splits);
  return cudaGetLastError ();
}

template <int FMT, bool BF16, int R>
cudaError_t
launch_fmt (const QParams &q, cudaStream_t stream)
{
  if (q.m <= 8)
    return launch_stream<FMT, BF16, R, 1> (q, stream);
  if (q.m <= 16)
    return launch_stream<FMT, BF16, R, 2> (q, stream);
  auto kernel = quant_tiled<FMT, BF16, R>;
  cudaError_t status = allow_smem (kernel, tiled_smem (R));
  if (status != cudaSuccess)
    return status;
  dim3 grid ((unsigned) ((q.n + 127) / 128), (unsigned) ((q.m + kTiledTokens - 1) / kTiledTokens));
  kernel<<<grid, kTiledWarps * 32, tiled_smem (R), stream>>> (q);
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
