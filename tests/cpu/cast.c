/* cast on cpu:0: every pair of dtypes on random bit patterns (NaN,
 * infinities and subnormals included), checked against a reference that
 * shares no code with the library: narrow floats decode through ldexp, and
 * rounding picks the nearest of all representable values (ties to the even
 * code), computed in long double. Then the edge cases one by one: ties,
 * subnormals, saturation, NaN, integer truncation, double rounding.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "cpu-test.h"

static const AccelDType all_types[] = {
  ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16, ACCEL_DTYPE_F32, ACCEL_DTYPE_F64,
  ACCEL_DTYPE_C64, ACCEL_DTYPE_C128, ACCEL_DTYPE_I8, ACCEL_DTYPE_U8,
  ACCEL_DTYPE_I32, ACCEL_DTYPE_U32, ACCEL_DTYPE_I64, ACCEL_DTYPE_FP8_E4M3,
  ACCEL_DTYPE_FP8_E5M2,
};

/* A narrow float format, and all its non-negative finite values. */
typedef struct {
  int ebits, mbits;
  gboolean ieee;          /* all-ones exponent = inf/NaN; else only all-ones code is NaN */
  guint n_values;
  long double *values;    /* by code, ascending */
} Format;

static Format formats[4];

static Format *
format_of (AccelDType dtype)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F16: return &formats[0];
    case ACCEL_DTYPE_BF16: return &formats[1];
    case ACCEL_DTYPE_FP8_E4M3: return &formats[2];
    case ACCEL_DTYPE_FP8_E5M2: return &formats[3];
    default: return NULL;
    }
}

/* Decodes @code; NaN comes back as NAN. */
static long double
format_decode (const Format *f, guint32 code)
{
  guint32 sign = (code >> (f->ebits + f->mbits)) & 1;
  guint32 eall = (1u << f->ebits) - 1, mall = (1u << f->mbits) - 1;
  guint32 E = (code >> f->mbits) & eall, M = code & mall;
  int bias = (1 << (f->ebits - 1)) - 1;
  long double v;

  if (f->ieee && E == eall)
    v = M ? NAN : INFINITY;
  else if (!f->ieee && E == eall && M == mall)
    v = NAN;
  else if (E == 0)
    v = ldexpl ((long double) M, 1 - bias - f->mbits);
  else
    v = ldexpl (1.0L + (long double) M / (long double) (1u << f->mbits), (int) E - bias);
  return sign ? -v : v;
}

static void
format_init (Format *f, int ebits, int mbits, gboolean ieee)
{
  f->ebits = ebits;
  f->mbits = mbits;
  f->ieee = ieee;
  guint32 eall = (1u << ebits) - 1;
  /* Largest finite code: below the inf exponent (IEEE) or below 0x..7F (FN). */
  guint32 max_code = ieee ? (eall << mbits) - 1 : ((eall << mbits) | ((1u << mbits) - 1)) - 1;
  f->n_values = max_code + 1;
  f->values = g_new (long double, f->n_values);
  for (guint32 c = 0; c <= max_code; c++)
    f->values[c] = format_decode (f, c);
}

/* Rounds @a to @f: nearest, ties to the even code; overflow to inf (IEEE)
 * or saturation (FN). Returns the value. */
static long double
format_round (const Format *f, long double a)
{
  if (isnan (a))
    return NAN;
  gboolean neg = signbit (a);
  long double x = fabsl (a);
  long double max = f->values[f->n_values - 1];
  long double r;

  if (x > max)
    {
      if (!f->ieee)
        r = max;
      else
        {
          int bias = (1 << (f->ebits - 1)) - 1;
          long double boundary = max + ldexpl (1.0L, bias - f->mbits) / 2;   /* half an ulp above max */
          r = x >= boundary ? INFINITY : max;
        }
    }
  else
    {
      guint lo = 0, hi = f->n_values - 1;   /* values[lo] <= x <= values[hi] */
      while (hi - lo > 1)
        {
          guint mid = (lo + hi) / 2;
          if (f->values[mid] <= x)
            lo = mid;
          else
            hi = mid;
        }
      if (f->values[hi] <= x)
        lo = hi;
      if (f->values[lo] == x)
        r = x;
      else
        {
          long double d1 = x - f->values[lo], d2 = f->values[hi] - x;
          r = d1 < d2 ? f->values[lo] : d2 < d1 ? f->values[hi]
              : (lo % 2 == 0 ? f->values[lo] : f->values[hi]);
        }
    }
  return neg ? -r : r;
}

/* An element's exact value. */
typedef struct {
  gboolean is_int;
  gint64 i;
  long double re, im;
} Val;

static Val
decode (AccelDType dtype, const guint8 *p)
{
  Val v = { FALSE, 0, 0, 0 };
  Format *f = format_of (dtype);

  if (f != NULL)
    {
      guint32 code = 0;
      memcpy (&code, p, accel_dtype_get_size (dtype));
      v.re = format_decode (f, code);
      return v;
    }
  switch (dtype)
    {
    case ACCEL_DTYPE_F32: { float x; memcpy (&x, p, 4); v.re = x; } break;
    case ACCEL_DTYPE_F64: { double x; memcpy (&x, p, 8); v.re = x; } break;
    case ACCEL_DTYPE_C64: { float x[2]; memcpy (x, p, 8); v.re = x[0]; v.im = x[1]; } break;
    case ACCEL_DTYPE_C128: { double x[2]; memcpy (x, p, 16); v.re = x[0]; v.im = x[1]; } break;
    case ACCEL_DTYPE_I8: v.is_int = TRUE; v.i = *(const gint8 *) p; break;
    case ACCEL_DTYPE_U8: v.is_int = TRUE; v.i = *p; break;
    case ACCEL_DTYPE_I32: { gint32 x; memcpy (&x, p, 4); v.is_int = TRUE; v.i = x; } break;
    case ACCEL_DTYPE_U32: { guint32 x; memcpy (&x, p, 4); v.is_int = TRUE; v.i = x; } break;
    case ACCEL_DTYPE_I64: { memcpy (&v.i, p, 8); v.is_int = TRUE; } break;
    default: g_assert_not_reached ();
    }
  return v;
}

static gint64
int_min (AccelDType t)
{
  switch (t)
    {
    case ACCEL_DTYPE_I8: return G_MININT8;
    case ACCEL_DTYPE_I32: return G_MININT32;
    case ACCEL_DTYPE_I64: return G_MININT64;
    default: return 0;
    }
}

static gint64
int_max (AccelDType t)
{
  switch (t)
    {
    case ACCEL_DTYPE_I8: return G_MAXINT8;
    case ACCEL_DTYPE_U8: return G_MAXUINT8;
    case ACCEL_DTYPE_I32: return G_MAXINT32;
    case ACCEL_DTYPE_U32: return G_MAXUINT32;
    default: return G_MAXINT64;
    }
}

/* What casting @src to @to must give. */
static Val
expected (Val src, AccelDType to)
{
  Val out = { FALSE, 0, 0, 0 };
  long double x = src.is_int ? (long double) src.i : src.re;
  Format *f = format_of (to);

  if (f != NULL)
    {
      out.re = format_round (f, x);
      return out;
    }
  switch (to)
    {
    case ACCEL_DTYPE_F32: case ACCEL_DTYPE_C64:
      out.re = src.is_int ? (float) src.i : (float) (double) src.re;
      out.im = to == ACCEL_DTYPE_C64 && !src.is_int ? (float) (double) src.im : 0;
      break;
    case ACCEL_DTYPE_F64: case ACCEL_DTYPE_C128:
      out.re = src.is_int ? (double) src.i : (double) src.re;
      out.im = to == ACCEL_DTYPE_C128 && !src.is_int ? (double) src.im : 0;
      break;
    default:
      out.is_int = TRUE;
      if (src.is_int)
        out.i = CLAMP (src.i, int_min (to), int_max (to));
      else if (isnan (x))
        out.i = 0;
      else
        {
          long double t = truncl (x);
          /* The bounds are exact in long double (64-bit significand). */
          out.i = t <= (long double) int_min (to) ? int_min (to)
                : t >= (long double) int_max (to) ? int_max (to) : (gint64) t;
        }
    }
  return out;
}

static gboolean
same (Val a, Val b)
{
  if (a.is_int != b.is_int)
    return FALSE;
  if (a.is_int)
    return a.i == b.i;
  for (int k = 0; k < 2; k++)
    {
      long double x = k ? a.im : a.re, y = k ? b.im : b.re;
      if (isnan (x) || isnan (y))
        {
          if (!(isnan (x) && isnan (y)))
            return FALSE;
        }
      else if (x != y || !signbit (x) != !signbit (y))
        return FALSE;
    }
  return TRUE;
}

static char *
describe (Val v)
{
  if (v.is_int)
    return g_strdup_printf ("%" G_GINT64_FORMAT, v.i);
  return g_strdup_printf ("%.21Lg%+.21Lgi", v.re, v.im);
}

/* Random source bytes: every bit pattern for narrow types; for f32 and f64
 * half raw patterns, half moderate values around the narrow formats' ranges. */
static void
random_source (AccelDType dtype, guint8 *bytes, gsize n)
{
  gsize es = accel_dtype_get_size (dtype);
  for (gsize i = 0; i < n; i++)
    {
      guint8 *p = bytes + i * es;
      for (gsize b = 0; b < es; b++)
        p[b] = (guint8) g_test_rand_int_range (0, 256);
      if (i % 2 == 0 && (dtype == ACCEL_DTYPE_F32 || dtype == ACCEL_DTYPE_F64
                         || dtype == ACCEL_DTYPE_C64 || dtype == ACCEL_DTYPE_C128))
        {
          for (guint k = 0; k < cpu_test_components (dtype); k++)
            {
              double v = ldexp (g_test_rand_double_range (1.0, 2.0), g_test_rand_int_range (-30, 25));
              if (g_test_rand_bit ())
                v = -v;
              if (dtype == ACCEL_DTYPE_F32 || dtype == ACCEL_DTYPE_C64)
                {
                  float fv = (float) v;
                  memcpy (p + 4 * k, &fv, 4);
                }
              else
                memcpy (p + 8 * k, &v, 8);
            }
        }
    }
}

static void
run_cast (AccelDType from, AccelDType to, const guint8 *src_bytes, gsize n)
{
  g_autoptr(GError) error = NULL;
  gint64 dims = (gint64) n;
  g_autoptr(AccelBuffer) src = cpu_test_alloc (from, &dims, 1);
  g_autoptr(AccelBuffer) dst = cpu_test_alloc (to, &dims, 1);
  accel_buffer_write (src, src_bytes, n * accel_dtype_get_size (from), &error);
  g_assert_no_error (error);

  g_autoptr(AccelOp) op = accel_cast_new (src, dst);
  cpu_test_submit (op);
  g_autofree guint8 *got = cpu_test_read_bytes (dst);

  for (gsize i = 0; i < n; i++)
    {
      Val s = decode (from, src_bytes + i * accel_dtype_get_size (from));
      Val want = expected (s, to);
      Val have = decode (to, got + i * accel_dtype_get_size (to));
      if (!same (have, want))
        {
          g_autofree char *ds = describe (s), *dw = describe (want), *dh = describe (have);
          g_test_fail_printf ("cast %s -> %s: element %" G_GSIZE_FORMAT " %s gave %s, expected %s",
                              accel_dtype_get_name (from), accel_dtype_get_name (to), i, ds, dh, dw);
          return;
        }
    }
}

static void
test_all_pairs (void)
{
  const gsize n = 1031;
  for (guint a = 0; a < G_N_ELEMENTS (all_types); a++)
    {
      g_autofree guint8 *bytes = g_malloc (n * accel_dtype_get_size (all_types[a]));
      random_source (all_types[a], bytes, n);
      for (guint b = 0; b < G_N_ELEMENTS (all_types); b++)
        run_cast (all_types[a], all_types[b], bytes, n);
    }
}

/* A threaded-size cast gives the same as element-wise expectation. */
static void
test_large (void)
{
  const gsize n = 400009;
  g_autofree guint8 *bytes = g_malloc (n * 4);
  random_source (ACCEL_DTYPE_F32, bytes, n);
  run_cast (ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, bytes, n);
  run_cast (ACCEL_DTYPE_F32, ACCEL_DTYPE_BF16, bytes, n);
  run_cast (ACCEL_DTYPE_F32, ACCEL_DTYPE_FP8_E4M3, bytes, n);
}

/* One value cast one way, against a hand-computed result. */
typedef struct {
  AccelDType from, to;
  double value;           /* for float sources */
  gint64 ivalue;          /* for integer sources */
  double want;            /* for float targets (NaN: NaN) */
  gint64 iwant;           /* for integer targets */
} Edge;

static void
check_edge (const Edge *e)
{
  guint8 bytes[16] = { 0 };
  if (accel_dtype_is_integer (e->from))
    {
      Val v = { TRUE, e->ivalue };
      switch (e->from)
        {
        case ACCEL_DTYPE_I32: { gint32 x = (gint32) v.i; memcpy (bytes, &x, 4); } break;
        case ACCEL_DTYPE_U32: { guint32 x = (guint32) v.i; memcpy (bytes, &x, 4); } break;
        case ACCEL_DTYPE_I64: memcpy (bytes, &v.i, 8); break;
        default: g_assert_not_reached ();
        }
    }
  else if (e->from == ACCEL_DTYPE_F32)
    {
      float f = (float) e->value;
      g_assert_true (isnan (e->value) || (double) f == e->value);
      memcpy (bytes, &f, 4);
    }
  else
    {
      g_assert_true (e->from == ACCEL_DTYPE_F64);
      memcpy (bytes, &e->value, 8);
    }

  gint64 one = 1;
  g_autoptr(GError) error = NULL;
  g_autoptr(AccelBuffer) src = cpu_test_alloc (e->from, &one, 1);
  g_autoptr(AccelBuffer) dst = cpu_test_alloc (e->to, &one, 1);
  accel_buffer_write (src, bytes, accel_dtype_get_size (e->from), &error);
  g_assert_no_error (error);
  g_autoptr(AccelOp) op = accel_cast_new (src, dst);
  cpu_test_submit (op);
  g_autofree guint8 *got = cpu_test_read_bytes (dst);
  Val have = decode (e->to, got);

  if (accel_dtype_is_integer (e->to))
    {
      if (have.i != e->iwant)
        g_test_fail_printf ("cast %s -> %s of %.17g / %" G_GINT64_FORMAT ": got %" G_GINT64_FORMAT
                            ", expected %" G_GINT64_FORMAT, accel_dtype_get_name (e->from),
                            accel_dtype_get_name (e->to), e->value, e->ivalue, have.i, e->iwant);
    }
  else if (isnan (e->want) ? !isnan (have.re)
           : (have.re != e->want || !signbit (have.re) != !signbit (e->want)))
    g_test_fail_printf ("cast %s -> %s of %.17g / %" G_GINT64_FORMAT ": got %.17Lg, expected %.17g",
                        accel_dtype_get_name (e->from), accel_dtype_get_name (e->to),
                        e->value, e->ivalue, have.re, e->want);
}

#define F32 ACCEL_DTYPE_F32
#define F64 ACCEL_DTYPE_F64
#define F16 ACCEL_DTYPE_F16
#define BF16 ACCEL_DTYPE_BF16
#define E4M3 ACCEL_DTYPE_FP8_E4M3
#define E5M2 ACCEL_DTYPE_FP8_E5M2

static void
test_edges (void)
{
  static const Edge edges[] = {
    /* f16: ties go to the even mantissa. */
    { F32, F16, 1.0 + 0x1p-11, 0, 1.0 },
    { F32, F16, 1.0 + 3 * 0x1p-11, 0, 1.0 + 0x1p-9 },
    { F64, F16, 1.0 + 0x1p-11 + 0x1p-40, 0, 1.0 + 0x1p-10 },   /* just above the tie */
    { F32, F16, 65504.0, 0, 65504.0 },
    { F32, F16, 65519.0, 0, 65504.0 },
    { F32, F16, 65520.0, 0, INFINITY },                        /* the tie above max goes to inf */
    { F32, F16, -0x1p100, 0, -INFINITY },
    /* f16 subnormals: the smallest is 2^-24. */
    { F32, F16, 0x1p-25, 0, 0.0 },                              /* tie with 0: even */
    { F32, F16, 3 * 0x1p-26, 0, 0x1p-24 },
    { F32, F16, 5 * 0x1p-25, 0, 0x1p-23 },                      /* 2.5 units: tie, even 2 */
    { F32, F16, 7 * 0x1p-25, 0, 4 * 0x1p-24 },                  /* 3.5 units: tie, even 4 */
    { F32, F16, -0x1p-26, 0, -0.0 },
    { F32, F16, 0x1.ff8p-15, 0, 0x1.ff8p-15 },                  /* the largest subnormal stays */
    { F32, F16, 0x1.ffcp-15, 0, 0x1p-14 },                      /* tie with the smallest normal: even */
    { F32, F16, NAN, 0, NAN },
    { F32, F16, -INFINITY, 0, -INFINITY },
    /* bf16 */
    { F32, BF16, 1.0 + 0x1p-8, 0, 1.0 },
    { F32, BF16, 1.0 + 3 * 0x1p-8, 0, 1.0 + 0x1p-6 },
    { F32, BF16, 0x1.fffffep127, 0, INFINITY },
    { F32, BF16, 0x1p-133, 0, 0x1p-133 },                       /* bf16 subnormal */
    { F32, BF16, 0x1p-134, 0, 0.0 },                            /* tie with 0 */
    { F64, BF16, 1.0 + 0x1p-8 + 0x1p-30, 0, 1.0 + 0x1p-7 },
    { F32, BF16, NAN, 0, NAN },
    /* fp8 E4M3 (FN): max 448, no inf, saturating. */
    { F32, E4M3, 448.0, 0, 448.0 },
    { F32, E4M3, 464.0, 0, 448.0 },
    { F32, E4M3, 1e6, 0, 448.0 },
    { F32, E4M3, INFINITY, 0, 448.0 },
    { F32, E4M3, -INFINITY, 0, -448.0 },
    { F32, E4M3, 17.0, 0, 16.0 },                               /* tie 16/18: even 16 */
    { F32, E4M3, 19.0, 0, 20.0 },                               /* tie 18/20: even 20 */
    { F32, E4M3, 0x1p-10, 0, 0.0 },                             /* half the smallest subnormal 2^-9 */
    { F32, E4M3, 3 * 0x1p-11, 0, 0x1p-9 },
    { F32, E4M3, NAN, 0, NAN },
    /* fp8 E5M2: max 57344, keeps inf. */
    { F32, E5M2, 57344.0, 0, 57344.0 },
    { F32, E5M2, 61439.0, 0, 57344.0 },
    { F32, E5M2, 61440.0, 0, INFINITY },
    { F32, E5M2, INFINITY, 0, INFINITY },
    { F32, E5M2, 0x1p-17, 0, 0.0 },
    { F32, E5M2, 3 * 0x1p-18, 0, 0x1p-16 },
    { F32, E5M2, 1.125, 0, 1.0 },                               /* tie 1/1.25: even 1 */
    { F32, E5M2, 1.375, 0, 1.5 },                               /* tie 1.25/1.5: even 1.5 */
    /* f64 to f32 and the integers: truncation toward zero, saturation, NaN to 0. */
    { F64, F32, 1.0 + 0x1p-24, 0, 1.0 },
    { F64, F32, 1e300, 0, INFINITY },
    { F32, ACCEL_DTYPE_I32, 2.75, 0, 0, 2 },
    { F32, ACCEL_DTYPE_I32, -2.75, 0, 0, -2 },
    { F32, ACCEL_DTYPE_I8, 300.5, 0, 0, 127 },
    { F32, ACCEL_DTYPE_I8, -300.5, 0, 0, -128 },
    { F32, ACCEL_DTYPE_U8, -1.0, 0, 0, 0 },
    { F32, ACCEL_DTYPE_U8, 255.75, 0, 0, 255 },
    { F64, ACCEL_DTYPE_U32, 4294967295.9, 0, 0, 4294967295 },
    { F64, ACCEL_DTYPE_U32, -0.5, 0, 0, 0 },
    { F64, ACCEL_DTYPE_I64, 1e20, 0, 0, G_MAXINT64 },
    { F64, ACCEL_DTYPE_I64, -1e20, 0, 0, G_MININT64 },
    { F64, ACCEL_DTYPE_I64, -0x1p63, 0, 0, G_MININT64 },
    { F64, ACCEL_DTYPE_I64, 0x1p63, 0, 0, G_MAXINT64 },
    { F32, ACCEL_DTYPE_I64, NAN, 0, 0, 0 },
    { F32, ACCEL_DTYPE_U8, NAN, 0, 0, 0 },
    { F32, ACCEL_DTYPE_I32, INFINITY, 0, 0, G_MAXINT32 },
    /* integers to integers saturate */
    { ACCEL_DTYPE_I32, ACCEL_DTYPE_U8, 0, 300, 0, 255 },
    { ACCEL_DTYPE_I32, ACCEL_DTYPE_U32, 0, -5, 0, 0 },
    { ACCEL_DTYPE_I64, ACCEL_DTYPE_I32, 0, G_GINT64_CONSTANT (1) << 40, 0, G_MAXINT32 },
    { ACCEL_DTYPE_U32, ACCEL_DTYPE_I32, 0, G_MAXUINT32, 0, G_MAXINT32 },
    /* integers to narrow floats round once: 2^60 + 2^52 + 1 is above the
     * bf16 midpoint 2^60 + 2^52, though binary64 would round it onto it. */
    { ACCEL_DTYPE_I64, BF16, 0, (G_GINT64_CONSTANT (1) << 60) + (G_GINT64_CONSTANT (1) << 52) + 1, 0x1p60 + 0x1p53 },
    { ACCEL_DTYPE_I64, BF16, 0, (G_GINT64_CONSTANT (1) << 60) + (G_GINT64_CONSTANT (1) << 52), 0x1p60 },
    { ACCEL_DTYPE_I64, F16, 0, 65519, 65504.0 },
    { ACCEL_DTYPE_I64, F16, 0, 65520, INFINITY },
    { ACCEL_DTYPE_I64, F32, 0, (G_GINT64_CONSTANT (1) << 40) + 1, 0x1p40 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (edges); i++)
    check_edge (&edges[i]);
}

/* Complex to real keeps the real part; real to complex has a zero imaginary part. */
static void
test_complex (void)
{
  gint64 n = 33;
  g_autoptr(AccelBuffer) c = cpu_test_alloc (ACCEL_DTYPE_C64, &n, 1);
  g_autoptr(AccelBuffer) r = cpu_test_alloc (ACCEL_DTYPE_F64, &n, 1);
  g_autoptr(AccelBuffer) z = cpu_test_alloc (ACCEL_DTYPE_C128, &n, 1);
  g_autofree double *hc = cpu_test_fill_random (c, -10, 10);

  g_autoptr(AccelOp) to_real = accel_cast_new (c, r);
  cpu_test_submit (to_real);
  g_autoptr(AccelOp) to_complex = accel_cast_new (r, z);
  cpu_test_submit (to_complex);
  g_autofree double *hr = cpu_test_read (r);
  g_autofree double *hz = cpu_test_read (z);
  for (gint64 i = 0; i < n; i++)
    {
      g_assert_cmpfloat (hr[i], ==, hc[2 * i]);
      g_assert_cmpfloat (hz[2 * i], ==, hc[2 * i]);
      g_assert_cmpfloat (hz[2 * i + 1], ==, 0.0);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  format_init (&formats[0], 5, 10, TRUE);
  format_init (&formats[1], 8, 7, TRUE);
  format_init (&formats[2], 4, 3, FALSE);
  format_init (&formats[3], 5, 2, TRUE);

  g_test_add_func ("/cpu/cast/all-pairs", test_all_pairs);
  g_test_add_func ("/cpu/cast/large", test_large);
  g_test_add_func ("/cpu/cast/edges", test_edges);
  g_test_add_func ("/cpu/cast/complex", test_complex);

  int ret = cpu_test_run ();
  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    g_free (formats[i].values);
  return ret;
}
