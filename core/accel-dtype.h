/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-types.h"

G_BEGIN_DECLS

/**
 * AccelDType:
 * @ACCEL_DTYPE_F16: IEEE 754 binary16
 * @ACCEL_DTYPE_BF16: bfloat16
 * @ACCEL_DTYPE_F32: IEEE 754 binary32
 * @ACCEL_DTYPE_F64: IEEE 754 binary64
 * @ACCEL_DTYPE_C64: complex of two binary32 (real, imaginary)
 * @ACCEL_DTYPE_C128: complex of two binary64
 * @ACCEL_DTYPE_I8: signed 8-bit integer
 * @ACCEL_DTYPE_U8: unsigned 8-bit integer
 * @ACCEL_DTYPE_I32: signed 32-bit integer
 * @ACCEL_DTYPE_U32: unsigned 32-bit integer
 * @ACCEL_DTYPE_I64: signed 64-bit integer
 * @ACCEL_DTYPE_FP8_E4M3: 8-bit float, 4 exponent bits, 3 mantissa bits (OCP "E4M3FN": no infinities)
 * @ACCEL_DTYPE_FP8_E5M2: 8-bit float, 5 exponent bits, 2 mantissa bits
 *
 * Element types of buffers.
 */
typedef enum {
  ACCEL_DTYPE_F16,
  ACCEL_DTYPE_BF16,
  ACCEL_DTYPE_F32,
  ACCEL_DTYPE_F64,
  ACCEL_DTYPE_C64,
  ACCEL_DTYPE_C128,
  ACCEL_DTYPE_I8,
  ACCEL_DTYPE_U8,
  ACCEL_DTYPE_I32,
  ACCEL_DTYPE_U32,
  ACCEL_DTYPE_I64,
  ACCEL_DTYPE_FP8_E4M3,
  ACCEL_DTYPE_FP8_E5M2,
} AccelDType;

/**
 * ACCEL_DTYPE_N_TYPES:
 *
 * The number of #AccelDType values, for tables indexed by dtype.
 */
#define ACCEL_DTYPE_N_TYPES (ACCEL_DTYPE_FP8_E5M2 + 1)

ACCEL_API
const char *accel_dtype_get_name (AccelDType dtype);
ACCEL_API
gsize accel_dtype_get_size (AccelDType dtype);
ACCEL_API
gboolean accel_dtype_parse (const char *name, AccelDType *dtype);
ACCEL_API
gboolean accel_dtype_is_float (AccelDType dtype);
ACCEL_API
gboolean accel_dtype_is_complex (AccelDType dtype);
ACCEL_API
gboolean accel_dtype_is_integer (AccelDType dtype);

G_END_DECLS
