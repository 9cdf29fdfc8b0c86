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
  /* The activations, `[M, K]`, f16 or bf16. */
  AccelBuffer *a; /*< read required >*/
  /* The quantised weights, one row per output column, `[N, K]` codes stored as
   * `format` says. */
  AccelBuffer *b; /*< read required >*/
  /* The scale of each group of `group_size` weights along K, `[N, K /
   * group_size]`, f16, bf16 or f32. */
  AccelBuffer *scales; /*< read required >*/
  /* The zero point of each group, as `scales` (int4 and int8 only). */
  AccelBuffer *zeros; /*< read >*/
  /* `[N]`, `a`'s dtype. */
  AccelBuffer *bias; /*< read >*/
  /* The result, `[M, N]`, `a`'s dtype. */
  AccelBuffer *out; /*< write required >*/
  /* How `b` stores the weights (AccelQuantFormat). */
  AccelQuantFormat format; /*< default=ACCEL_QUANT_FORMAT_INT4 >*/
  /* How many weights along K share a scale (and zero point): a multiple of 32
   * that divides K. */
  int group_size; /*< min=32 max=G_MAXINT default=128 >*/
};

ACCEL_API
AccelOp *accel_quant_matmul_new (AccelBuffer *a,
                                 AccelBuffer *b,
                                 AccelBuffer *scales,
                                 AccelBuffer *out,
                                 AccelQuantFormat format,
                                 int group_size);

G_END_DECLS
