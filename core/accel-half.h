/* accel-half.h: conversions between binary32/binary64 and the narrow float
 * formats of Accel buffers (f16, bf16, fp8 E4M3, fp8 E5M2), and the
 * saturating truncation of a float to an integer type.
 *
 * Header-only, with no dependency beyond the C library, so the same code runs
 * in C programs, in plugins and in CUDA kernels (where every function is
 * `__host__ __device__`). Narrowing rounds to nearest, ties to even, in one
 * step (a binary64 value is never rounded through binary32 first):
 *
 * - f16, bf16 and E5M2 follow IEEE 754: a value at or beyond the rounding
 *   boundary above the largest finite value becomes infinity; NaN stays NaN
 *   (quiet, sign kept).
 * - E4M3 is the OCP "E4M3FN" format: no infinities, 0x7F/0xFF is NaN; values
 *   (infinities included) beyond ±448 saturate to ±448.
 *
 * Widening is exact. Include it directly: `#include <accel-half.h>`. It is not
 * part of the introspected API.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#ifndef __GI_SCANNER__

#include <stdint.h>
#if !defined(__CUDA_ARCH__)
#include <string.h>
#endif

#if defined(__CUDACC__)
#define ACCEL_HALF_FN static __host__ __device__ __forceinline__
#else
#define ACCEL_HALF_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Bit casts that work on both sides of nvcc. */
ACCEL_HALF_FN uint32_t
accel_half_f32_bits_ (float f)
{
#if defined(__CUDA_ARCH__)
  return __float_as_uint (f);
#else
  uint32_t u;
  memcpy (&u, &f, sizeof u);
  return u;
#endif
}

ACCEL_HALF_FN float
accel_half_f32_from_bits_ (uint32_t u)
{
#if defined(__CUDA_ARCH__)
  return __uint_as_float (u);
#else
  float f;
  memcpy (&f, &u, sizeof f);
  return f;
#endif
}

ACCEL_HALF_FN uint64_t
accel_half_f64_bits_ (double d)
{
#if defined(__CUDA_ARCH__)
  return (uint64_t) __double_as_longlong (d);
#else
  uint64_t u;
  memcpy (&u, &d, sizeof u);
  return u;
#endif
}

/* Rounds @d to a binary format with @ebits exponent bits and @mbits stored
 * mantissa bits, to nearest with ties to even. @ieee: the all-ones exponent
 * encodes infinities and NaNs (else only the all-ones code is NaN and
 * overflow saturates to the largest finite value). Returns the code with the
 * sign in bit ebits + mbits. */
ACCEL_HALF_FN uint32_t
accel_half_encode_ (double d, int ebits, int mbits, int ieee)
{
  const uint64_t bits = accel_half_f64_bits_ (d);
  const uint32_t sign = (uint32_t) (bits >> 63) << (ebits + mbits);
  const uint64_t x = bits & 0x7fffffffffffffffull;
  const uint32_t exp_all = (1u << ebits) - 1u;
  const uint32_t inf_code = exp_all << mbits;
  const uint32_t max_finite = ieee ? inf_code - 1u : (inf_code | ((1u << mbits) - 1u)) - 1u;
  const int bias = (1 << (ebits - 1)) - 1;

  if (x > 0x7ff0000000000000ull)            /* NaN: quiet, sign kept */
    return ieee ? (sign | inf_code | (1u << (mbits - 1))) : (sign | inf_code | ((1u << mbits) - 1u));
  if (x == 0x7ff0000000000000ull)
    return sign | (ieee ? inf_code : max_finite);
  if ((x >> 52) == 0)                       /* zero, or binary64 subnormal: far below any target's subnormals */
    return sign;

  const int e = (int) (x >> 52) - 1023;
  const uint64_t mant = (x & 0x000fffffffffffffull) | 0x0010000000000000ull;
  int shift;
  uint64_t base;

  if (e < 1 - bias)
    {
      /* Subnormal in the target: the units are 2^(1 - bias - mbits). */
      shift = 52 - mbits + (1 - bias - e);
      if (shift > 53)
        return sign;
      base = 0;
    }
  else
    {
      if (e > 2 * bias + 2)                 /* far above the largest finite value */
        return sign | (ieee ? inf_code : max_finite);
      shift = 52 - mbits;
      base = (uint64_t) (e + bias - 1) << mbits;   /* the implicit bit of mant adds the last 1 */
    }

  const uint64_t kept = mant >> shift;
  const uint64_t rest = mant & ((1ull << shift) - 1u);
  const uint64_t half = 1ull << (shift - 1);
  uint64_t code = base + kept;
  if (rest > half || (rest == half && (code & 1u)))
    code++;                                 /* a carry moves into the exponent, as it should */

  if (code > max_finite)
    code = ieee ? inf_code : max_finite;
  return sign | (uint32_t) code;
}

/* Exact widening of a code made by accel_half_encode_(). */
ACCEL_HALF_FN float
accel_half_decode_ (uint32_t code, int ebits, int mbits, int ieee)
{
  const uint32_t sign = ((code >> (ebits + mbits)) & 1u) << 31;
  const uint32_t exp_all = (1u << ebits) - 1u;
  const uint32_t m_all = (1u << mbits) - 1u;
  const uint32_t E = (code >> mbits) & exp_all;
  const uint32_t M = code & m_all;
  const int bias = (1 << (ebits - 1)) - 1;

  if (ieee && E == exp_all)
    return accel_half_f32_from_bits_ (sign | 0x7f800000u | (M ? 0x00400000u | (M << (23 - mbits)) : 0u));
  if (!ieee && E == exp_all && M == m_all)
    return accel_half_f32_from_bits_ (sign | 0x7fc00000u);
  if (E == 0)
    {
      /* M * 2^(1 - bias - mbits): a product of a small integer and a power
       * of two, both exact in binary32, so the product is exact too. */
      const int p = 1 - bias - mbits;
      const uint32_t pow2 = p >= -126 ? (uint32_t) (p + 127) << 23 : 1u << (p + 149);
      const float v = (float) M * accel_half_f32_from_bits_ (pow2);
      return accel_half_f32_from_bits_ (sign | accel_half_f32_bits_ (v));
    }
  return accel_half_f32_from_bits_ (sign | ((E - bias + 127) << 23) | (M << (23 - mbits)));
}

/**
 * accel_f16_from_f64: (skip)
 * @d: a binary64 value
 *
 * Returns: @d rounded to IEEE binary16, to nearest even
 */
ACCEL_HALF_FN uint16_t
accel_f16_from_f64 (double d)
{
  return (uint16_t) accel_half_encode_ (d, 5, 10, 1);
}

/**
 * accel_f16_from_f32: (skip)
 * @f: a binary32 value
 *
 * Returns: @f rounded to IEEE binary16, to nearest even
 */
ACCEL_HALF_FN uint16_t
accel_f16_from_f32 (float f)
{
  return (uint16_t) accel_half_encode_ ((double) f, 5, 10, 1);
}

/**
 * accel_f16_to_f32: (skip)
 * @h: a binary16 value
 *
 * Returns: @h as binary32 (exact)
 */
ACCEL_HALF_FN float
accel_f16_to_f32 (uint16_t h)
{
  return accel_half_decode_ (h, 5, 10, 1);
}

/**
 * accel_bf16_from_f32: (skip)
 * @f: a binary32 value
 *
 * Returns: @f rounded to bfloat16, to nearest even
 */
ACCEL_HALF_FN uint16_t
accel_bf16_from_f32 (float f)
{
  /* bfloat16 is binary32 with the low 16 bits cut, so rounding the bit
   * pattern is rounding the value (subnormals and overflow to inf included). */
  const uint32_t u = accel_half_f32_bits_ (f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t) ((u >> 16) | 0x0040u);
  return (uint16_t) ((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/**
 * accel_bf16_from_f64: (skip)
 * @d: a binary64 value
 *
 * Returns: @d rounded to bfloat16, to nearest even (in one rounding)
 */
ACCEL_HALF_FN uint16_t
accel_bf16_from_f64 (double d)
{
  return (uint16_t) accel_half_encode_ (d, 8, 7, 1);
}

/**
 * accel_bf16_to_f32: (skip)
 * @h: a bfloat16 value
 *
 * Returns: @h as binary32 (exact)
 */
ACCEL_HALF_FN float
accel_bf16_to_f32 (uint16_t h)
{
  return accel_half_f32_from_bits_ ((uint32_t) h << 16);
}

/**
 * accel_fp8_e4m3_from_f64: (skip)
 * @d: a binary64 value
 *
 * Returns: @d rounded to fp8 E4M3 (FN), to nearest even, saturating at ±448
 */
ACCEL_HALF_FN uint8_t
accel_fp8_e4m3_from_f64 (double d)
{
  return (uint8_t) accel_half_encode_ (d, 4, 3, 0);
}

/**
 * accel_fp8_e4m3_from_f32: (skip)
 * @f: a binary32 value
 *
 * Returns: @f rounded to fp8 E4M3 (FN), to nearest even, saturating at ±448
 */
ACCEL_HALF_FN uint8_t
accel_fp8_e4m3_from_f32 (float f)
{
  return (uint8_t) accel_half_encode_ ((double) f, 4, 3, 0);
}

/**
 * accel_fp8_e4m3_to_f32: (skip)
 * @h: an fp8 E4M3 value
 *
 * Returns: @h as binary32 (exact)
 */
ACCEL_HALF_FN float
accel_fp8_e4m3_to_f32 (uint8_t h)
{
  return accel_half_decode_ (h, 4, 3, 0);
}

/**
 * accel_fp8_e5m2_from_f64: (skip)
 * @d: a binary64 value
 *
 * Returns: @d rounded to fp8 E5M2, to nearest even (overflow gives infinity)
 */
ACCEL_HALF_FN uint8_t
accel_fp8_e5m2_from_f64 (double d)
{
  return (uint8_t) accel_half_encode_ (d, 5, 2, 1);
}

/**
 * accel_fp8_e5m2_from_f32: (skip)
 * @f: a binary32 value
 *
 * Returns: @f rounded to fp8 E5M2, to nearest even (overflow gives infinity)
 */
ACCEL_HALF_FN uint8_t
accel_fp8_e5m2_from_f32 (float f)
{
  return (uint8_t) accel_half_encode_ ((double) f, 5, 2, 1);
}

/**
 * accel_fp8_e5m2_to_f32: (skip)
 * @h: an fp8 E5M2 value
 *
 * Returns: @h as binary32 (exact)
 */
ACCEL_HALF_FN float
accel_fp8_e5m2_to_f32 (uint8_t h)
{
  return accel_half_decode_ (h, 5, 2, 1);
}

/**
 * accel_sat_trunc: (skip)
 * @v: a binary64 value
 * @lo: the largest value that saturates to @lo_i
 * @hi_excl: the smallest value that saturates to @hi_i
 * @lo_i: the integer type's smallest value
 * @hi_i: the integer type's largest value
 *
 * A float to an integer type as `cast` converts it on every backend:
 * truncation toward zero, saturating at the type's range; NaN gives 0.
 *
 * Returns: the integer, in [@lo_i, @hi_i]
 */
ACCEL_HALF_FN int64_t
accel_sat_trunc (double v, double lo, double hi_excl, int64_t lo_i, int64_t hi_i)
{
  if (v != v)
    return 0;
  if (v <= lo)
    return lo_i;
  if (v >= hi_excl)
    return hi_i;
  return (int64_t) v;
}

#ifdef __cplusplus
}
#endif

#endif /* __GI_SCANNER__ */
