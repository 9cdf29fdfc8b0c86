/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_FFT (accel_fft_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelFft, accel_fft, ACCEL, FFT, AccelOp)

struct _AccelFft {
  AccelOp parent_instance;

  /*< public >*/
  /* Input: c64/c128 (c2c, c2r) or f32/f64 (r2c), contiguous */
  AccelBuffer *input; /*< read required >*/
  /* Output: c64/c128 (c2c, r2c) or f32/f64 (c2r), contiguous */
  AccelBuffer *output; /*< write required >*/
  /* Complex to complex, real to complex or complex to real. */
  AccelFftKind kind; /*< default=ACCEL_FFT_C2C >*/
  /* Forward (`exp(-2πi jk/n)`) or inverse (unnormalised). */
  AccelFftDirection direction; /*< default=ACCEL_FFT_FORWARD >*/
  /* How many trailing dimensions are transformed; the others are a batch. */
  guint n_axes; /*< min=1 max=3 default=1 >*/
};

ACCEL_API
AccelOp *accel_fft_new (AccelBuffer *input, AccelBuffer *output, AccelFftKind kind, AccelFftDirection direction, guint n_axes);

G_END_DECLS
