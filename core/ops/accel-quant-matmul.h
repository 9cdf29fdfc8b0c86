/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

/**
 * AccelQuantFormat:
 * @ACCEL_QUANT_FORMAT_INT4: two 4-bit codes per byte (u8 storage, `[N, K / 2]`),
 *   the even `k` in the low nibble; codes 0 to 15, zero point 8 unless given
 * @ACCEL_QUANT_FORMAT_INT8: one signed byte per weight (i8, `[N, K]`), zero
 *   point 0 unless given
 * @ACCEL_QUANT_FORMAT_FP8_E4M3: one fp8-e4m3 value per weight (`[N, K]`),
 *   no zero point
 *
 * How `quant-matmul` stores its weights.
 */
typedef enum {
  ACCEL_QUANT_FORMAT_INT4,
  ACCEL_QUANT_FORMAT_INT8,
  ACCEL_QUANT_FORMAT_FP8_E4M3,
} AccelQuantFormat;

#define ACCEL_TYPE_QUANT_MATMUL (accel_quant_matmul_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelQuantMatmul, accel_quant_matmul, ACCEL, QUANT_MATMUL, AccelOp)

struct _AccelQuantMatmul {
  AccelOp parent_instance;

  /*< public >*/
  AccelBuffer *a;
  AccelBuffer *b;
  AccelBuffer *scales;
  AccelBuffer *zeros;
  AccelBuffer *bias;
  AccelBuffer *out;
  AccelQuantFormat format;
  int group_size;
};

ACCEL_API
AccelOp *accel_quant_matmul_new (AccelBuffer *a,
                                 AccelBuffer *b,
                                 AccelBuffer *scales,
                                 AccelBuffer *out,
                                 AccelQuantFormat format,
                                 int group_size);

G_END_DECLS
