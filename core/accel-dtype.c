/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-private.h"

static const struct {
  const char *name;
  gsize size;
} dtype_info[ACCEL_DTYPE_N_TYPES] = {
  [ACCEL_DTYPE_F16] = { "f16", 2 },
  [ACCEL_DTYPE_BF16] = { "bf16", 2 },
  [ACCEL_DTYPE_F32] = { "f32", 4 },
  [ACCEL_DTYPE_F64] = { "f64", 8 },
  [ACCEL_DTYPE_C64] = { "c64", 8 },
  [ACCEL_DTYPE_C128] = { "c128", 16 },
  [ACCEL_DTYPE_I8] = { "i8", 1 },
  [ACCEL_DTYPE_U8] = { "u8", 1 },
  [ACCEL_DTYPE_I32] = { "i32", 4 },
  [ACCEL_DTYPE_U32] = { "u32", 4 },
  [ACCEL_DTYPE_I64] = { "i64", 8 },
  [ACCEL_DTYPE_FP8_E4M3] = { "fp8-e4m3", 1 },
  [ACCEL_DTYPE_FP8_E5M2] = { "fp8-e5m2", 1 },
};

/**
 * accel_dtype_get_name:
 * @dtype: an #AccelDType
 *
 * Gets the short name (`f32`, `fp8-e4m3`), or "invalid".
 *
 * Returns: the short name (`f32`, `fp8-e4m3`), or "invalid"
 */
const char *
accel_dtype_get_name (AccelDType dtype)
{
  if ((guint) dtype >= ACCEL_DTYPE_N_TYPES)
    return "invalid";
  return dtype_info[dtype].name;
}

/**
 * accel_dtype_get_size:
 * @dtype: an #AccelDType
 *
 * Gets the size of one element in bytes, or 0 for an invalid value.
 *
 * Returns: the size of one element in bytes, or 0 for an invalid value
 */
gsize
accel_dtype_get_size (AccelDType dtype)
{
  if ((guint) dtype >= ACCEL_DTYPE_N_TYPES)
    return 0;
  return dtype_info[dtype].size;
}

/**
 * accel_dtype_parse:
 * @name: a dtype name such as `f32`, `bf16` or `fp8-e4m3` (`float32`,
 *   `float16`, `float64`, `complex64` and `complex128` are accepted too)
 * @dtype: (out): the parsed type
 *
 * Looks up a dtype by its short name.
 *
 * Returns: %TRUE if @name names a dtype
 */
gboolean
accel_dtype_parse (const char *name, AccelDType *dtype)
{
  static const struct { const char *alias; AccelDType dtype; } aliases[] = {
    { "float16", ACCEL_DTYPE_F16 }, { "half", ACCEL_DTYPE_F16 },
    { "bfloat16", ACCEL_DTYPE_BF16 }, { "float32", ACCEL_DTYPE_F32 },
    { "float", ACCEL_DTYPE_F32 }, { "float64", ACCEL_DTYPE_F64 },
    { "double", ACCEL_DTYPE_F64 }, { "complex64", ACCEL_DTYPE_C64 },
    { "complex128", ACCEL_DTYPE_C128 }, { "int8", ACCEL_DTYPE_I8 },
    { "uint8", ACCEL_DTYPE_U8 }, { "int32", ACCEL_DTYPE_I32 },
    { "uint32", ACCEL_DTYPE_U32 }, { "int64", ACCEL_DTYPE_I64 },
    { "fp8_e4m3", ACCEL_DTYPE_FP8_E4M3 }, { "fp8_e5m2", ACCEL_DTYPE_FP8_E5M2 },
    { "e4m3", ACCEL_DTYPE_FP8_E4M3 }, { "e5m2", ACCEL_DTYPE_FP8_E5M2 },
  };

  g_return_val_if_fail (name != NULL, FALSE);

  for (guint i = 0; i < ACCEL_DTYPE_N_TYPES; i++)
    if (g_ascii_strcasecmp (name, dtype_info[i].name) == 0)
      {
        if (dtype)
          *dtype = i;
        return TRUE;
      }
  for (guint i = 0; i < G_N_ELEMENTS (aliases); i++)
    if (g_ascii_strcasecmp (name, aliases[i].alias) == 0)
      {
        if (dtype)
          *dtype = aliases[i].dtype;
        return TRUE;
      }
  return FALSE;
}

/**
 * accel_dtype_is_float:
 * @dtype: an #AccelDType
 *
 * Whether @dtype is a real floating-point type.
 *
 * Returns: %TRUE for real floating-point types (fp8 to f64)
 */
gboolean
accel_dtype_is_float (AccelDType dtype)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F16: case ACCEL_DTYPE_BF16: case ACCEL_DTYPE_F32:
    case ACCEL_DTYPE_F64: case ACCEL_DTYPE_FP8_E4M3: case ACCEL_DTYPE_FP8_E5M2:
      return TRUE;
    default:
      return FALSE;
    }
}

/**
 * accel_dtype_is_complex:
 * @dtype: an #AccelDType
 *
 * Whether @dtype is a complex type.
 *
 * Returns: %TRUE for c64 and c128
 */
gboolean
accel_dtype_is_complex (AccelDType dtype)
{
  return dtype == ACCEL_DTYPE_C64 || dtype == ACCEL_DTYPE_C128;
}

/**
 * accel_dtype_is_integer:
 * @dtype: an #AccelDType
 *
 * Whether @dtype is an integer type.
 *
 * Returns: %TRUE for the integer types
 */
gboolean
accel_dtype_is_integer (AccelDType dtype)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_I8: case ACCEL_DTYPE_U8: case ACCEL_DTYPE_I32:
    case ACCEL_DTYPE_U32: case ACCEL_DTYPE_I64:
      return TRUE;
    default:
      return FALSE;
    }
}
