/* accel-philox.h: the counter-based generator behind `rng-fill`, and the
 * exact mapping from (seed, offset, element index, dtype, distribution) to a
 * value, shared by every backend.
 *
 * Header-only and free of GLib, so the CPU kernel, tests and CUDA kernels
 * compile the same code (`__host__ __device__` under nvcc). Include it
 * directly: `#include <accel-philox.h>`; it is not part of the introspected
 * API.
 *
 * The generator is Philox4x32-10 (Salmon et al., SC'11; the same as Random123
 * and cuRAND's `curand_Philox4x32_10`): a 128-bit counter and a 64-bit key
 * give four 32-bit words. For a buffer element of index `i`:
 *
 * - f32, f16, bf16: counter `c = offset + i / 4`, word `w = out[i % 4]`;
 *   f64: counter `c = offset + i / 2`, words `out[2 (i % 2)]` and
 *   `out[2 (i % 2) + 1]`.
 * - The counter is `{ lo32 (c), hi32 (c), 0, 0 }`, the key
 *   `{ lo32 (seed), hi32 (seed) }`.
 * - Uniform f32: `u = (float) (w >> 8) * 0x1p-24f`, value
 *   `low + (high - low) * u` in binary32 with no fused multiply-add
 *   (compile C with `-ffp-contract=off`; CUDA uses `__fmul_rn`/`__fadd_rn`);
 *   a value that rounds up to `high` is the float just below it, so that
 *   `high` stays exclusive.
 *   These values are bit-identical on every backend.
 * - Uniform f64: `u = ((w0 >> 5) * 67108864.0 + (w1 >> 6)) * 0x1p-53`, value
 *   `low + (high - low) * u` in binary64, no FMA, below `high` as for f32.
 * - Normal f32 (Box–Muller): element `i` uses the pair `(w[2p], w[2p+1])`,
 *   `p = (i % 4) / 2`: `u1 = ((w[2p] >> 8) + 1) * 2^-24` (in (0, 1]),
 *   `u2 = (w[2p+1] >> 8) * 2^-24`, `r = sqrt (-2 ln u1)`,
 *   `z = i even ? r cos (2π u2) : r sin (2π u2)`, value `mean + stddev z`,
 *   evaluated in binary64 and rounded once. Normal f64: the counter of
 *   element `i` is `offset + i / 2`; `(w0, w1)` give a 53-bit `u1` plus
 *   2^-53 (in (0, 1]), `(w2, w3)` a 53-bit `u2`. The transcendental functions
 *   of different math libraries may differ in the last bit, so normal values
 *   agree across backends to a few ulp, not bit for bit.
 * - f16 and bf16 draw the f32 value and round it to nearest even.
 *
 * Since every value depends only on its own index, any split of a buffer
 * into chunks (threads, blocks, or fills at matching offsets) gives the
 * same result: the element `4 k + j` of an f32 fill at offset `o` equals the
 * element `j` of a fill at offset `o + k`.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#ifndef __GI_SCANNER__

#include <stdint.h>
#include <math.h>
#include "accel-half.h"

#if defined(__CUDACC__)
#define ACCEL_PHILOX_FN static __host__ __device__ __forceinline__
#else
#define ACCEL_PHILOX_FN static inline
#endif

#if defined(__clang__) && !defined(__CUDACC__)
#pragma STDC FP_CONTRACT OFF
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* 2^-24 and 2^-53, spelled in decimal (exactly) for C++ dialects before
 * C++17, which lack hexadecimal float literals. */
#define ACCEL_PHILOX_2M24F 5.9604644775390625e-08f
#define ACCEL_PHILOX_2M24 5.9604644775390625e-08
#define ACCEL_PHILOX_2M53 1.1102230246251565404236316680908203125e-16

#define ACCEL_PHILOX_M0 0xD2511F53u
#define ACCEL_PHILOX_M1 0xCD9E8D57u
#define ACCEL_PHILOX_W0 0x9E3779B9u
#define ACCEL_PHILOX_W1 0xBB67AE85u

/**
 * AccelPhiloxDType: (skip)
 * @ACCEL_PHILOX_F32: binary32 (also the draw of f16 and bf16)
 * @ACCEL_PHILOX_F64: binary64
 *
 * The two ways elements map onto Philox counters.
 */
typedef enum {
  ACCEL_PHILOX_F32,
  ACCEL_PHILOX_F64,
} AccelPhiloxDType;

/**
 * accel_philox4x32_10: (skip)
 * @ctr: the 128-bit counter, least significant word first
 * @key: the 64-bit key, least significant word first
 * @out: (out caller-allocates): the four output words
 *
 * One Philox4x32 block with the standard ten rounds.
 */
ACCEL_PHILOX_FN void
accel_philox4x32_10 (const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
  uint32_t k0 = key[0], k1 = key[1];

  for (int r = 0; r < 10; r++)
    {
      if (r > 0)
        {
          k0 += ACCEL_PHILOX_W0;
          k1 += ACCEL_PHILOX_W1;
        }
      const uint64_t p0 = (uint64_t) ACCEL_PHILOX_M0 * c0;
      const uint64_t p1 = (uint64_t) ACCEL_PHILOX_M1 * c2;
      const uint32_t hi0 = (uint32_t) (p0 >> 32), lo0 = (uint32_t) p0;
      const uint32_t hi1 = (uint32_t) (p1 >> 32), lo1 = (uint32_t) p1;
      c0 = hi1 ^ c1 ^ k0;
      c1 = lo1;
      c2 = hi0 ^ c3 ^ k1;
      c3 = lo0;
    }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

/**
 * accel_philox_block: (skip)
 * @seed: the key
 * @counter: the 64-bit counter (`offset + i / 4` for f32, `offset + i / 2` for f64)
 * @out: (out caller-allocates): the four words
 *
 * The Philox block of one counter, as `rng-fill` uses it.
 */
ACCEL_PHILOX_FN void
accel_philox_block (uint64_t seed, uint64_t counter, uint32_t out[4])
{
  const uint32_t ctr[4] = { (uint32_t) counter, (uint32_t) (counter >> 32), 0u, 0u };
  const uint32_t key[2] = { (uint32_t) seed, (uint32_t) (seed >> 32) };
  accel_philox4x32_10 (ctr, key, out);
}

/**
 * accel_philox_uniform_f32: (skip)
 * @w: one word
 * @low: lower bound
 * @high: upper bound
 *
 * Returns: `low + (high - low) * u` with `u = (w >> 8) 2^-24`, unfused;
 *   where that rounds up to @high, the float just below @high
 */
ACCEL_PHILOX_FN float
accel_philox_uniform_f32 (uint32_t w, float low, float high)
{
  const float u = (float) (w >> 8) * ACCEL_PHILOX_2M24F;
#if defined(__CUDA_ARCH__)
  const float v = __fadd_rn (low, __fmul_rn (__fsub_rn (high, low), u));
#else
  const float span = high - low;
  const float scaled = span * u;
  const float v = low + scaled;
#endif
  /* Rounding can carry the largest u up to @high itself. */
  return v < high ? v : nextafterf (high, low);
}

/* The 53-bit uniform in [0, 1) of two words: the high 27 bits of @w0, then
 * the high 26 of @w1. Every step is exact (products by powers of two of
 * integers below 2^53), so a fused multiply-add could not change it. */
ACCEL_PHILOX_FN double
accel_philox_u53_ (uint32_t w0, uint32_t w1)
{
  return ((double) (w0 >> 5) * 67108864.0 + (double) (w1 >> 6)) * ACCEL_PHILOX_2M53;
}

/**
 * accel_philox_uniform_f64: (skip)
 * @w0: the word giving the high 27 bits
 * @w1: the word giving the low 26 bits
 * @low: lower bound
 * @high: upper bound
 *
 * Returns: `low + (high - low) * u` with a 53-bit `u` in [0, 1), unfused;
 *   where that rounds up to @high, the double just below @high
 */
ACCEL_PHILOX_FN double
accel_philox_uniform_f64 (uint32_t w0, uint32_t w1, double low, double high)
{
  const double u = accel_philox_u53_ (w0, w1);
#if defined(__CUDA_ARCH__)
  const double v = __dadd_rn (low, __dmul_rn (__dsub_rn (high, low), u));
#else
  const double span = high - low;
  const double scaled = span * u;
  const double v = low + scaled;
#endif
  /* Rounding can carry the largest u up to @high itself. */
  return v < high ? v : nextafter (high, low);
}

/* 2π rounded to binary64. */
#define ACCEL_PHILOX_TWO_PI 6.283185307179586476925286766559

/* Box–Muller's standard normal value from @u1 in (0, 1] and @u2 in
 * [0, 1): the sine for an @odd element index, else the cosine. */
ACCEL_PHILOX_FN double
accel_philox_box_muller_ (double u1, double u2, int odd)
{
  const double r = sqrt (-2.0 * log (u1));
  const double a = ACCEL_PHILOX_TWO_PI * u2;
  return odd ? r * sin (a) : r * cos (a);
}

/**
 * accel_philox_normal_f32: (skip)
 * @wa: the word giving u1
 * @wb: the word giving u2
 * @odd: %TRUE for an odd element index (sine), else cosine
 * @mean: mean
 * @stddev: standard deviation
 *
 * Returns: one Box–Muller value from 24-bit uniforms, rounded to binary32
 */
ACCEL_PHILOX_FN float
accel_philox_normal_f32 (uint32_t wa, uint32_t wb, int odd, double mean, double stddev)
{
  const double u1 = (double) ((wa >> 8) + 1u) * ACCEL_PHILOX_2M24;
  const double u2 = (double) (wb >> 8) * ACCEL_PHILOX_2M24;
  return (float) (mean + stddev * accel_philox_box_muller_ (u1, u2, odd));
}

/**
 * accel_philox_normal_f64: (skip)
 * @w: the four words of the element's counter
 * @odd: %TRUE for an odd element index (sine), else cosine
 * @mean: mean
 * @stddev: standard deviation
 *
 * Returns: one Box–Muller value from 53-bit uniforms
 */
ACCEL_PHILOX_FN double
accel_philox_normal_f64 (const uint32_t w[4], int odd, double mean, double stddev)
{
  const double u1 = accel_philox_u53_ (w[0], w[1]) + ACCEL_PHILOX_2M53;
  const double u2 = accel_philox_u53_ (w[2], w[3]);
  return mean + stddev * accel_philox_box_muller_ (u1, u2, odd);
}

/**
 * accel_philox_element_f32: (skip)
 * @seed: the seed
 * @offset: the counter offset
 * @i: the element index
 * @normal: %TRUE for the normal distribution, else uniform
 * @a: low (uniform) or mean (normal)
 * @b: high (uniform) or stddev (normal)
 *
 * The reference mapping for one element of an f32 buffer (f16 and bf16 round
 * this value). Kernels compute four elements per block instead; they must
 * agree with this function.
 *
 * Returns: the value
 */
ACCEL_PHILOX_FN float
accel_philox_element_f32 (uint64_t seed, uint64_t offset, uint64_t i, int normal, double a, double b)
{
  uint32_t w[4];
  accel_philox_block (seed, offset + i / 4u, w);
  const unsigned j = (unsigned) (i % 4u);
  if (!normal)
    return accel_philox_uniform_f32 (w[j], (float) a, (float) b);
  const unsigned p = j / 2u;
  return accel_philox_normal_f32 (w[2u * p], w[2u * p + 1u], (int) (i & 1u), a, b);
}

/**
 * accel_philox_element_f64: (skip)
 * @seed: the seed
 * @offset: the counter offset
 * @i: the element index
 * @normal: %TRUE for the normal distribution, else uniform
 * @a: low (uniform) or mean (normal)
 * @b: high (uniform) or stddev (normal)
 *
 * The reference mapping for one element of an f64 buffer.
 *
 * Returns: the value
 */
ACCEL_PHILOX_FN double
accel_philox_element_f64 (uint64_t seed, uint64_t offset, uint64_t i, int normal, double a, double b)
{
  uint32_t w[4];
  accel_philox_block (seed, offset + i / 2u, w);
  const unsigned j = (unsigned) (i % 2u);
  if (!normal)
    return accel_philox_uniform_f64 (w[2u * j], w[2u * j + 1u], a, b);
  return accel_philox_normal_f64 (w, (int) j, a, b);
}

#ifdef __cplusplus
}
#endif

#endif /* __GI_SCANNER__ */
