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
  AccelBuffer *input;
  AccelBuffer *output;
  AccelFftKind kind;
  AccelFftDirection direction;
  guint n_axes;
};

ACCEL_API
AccelOp *accel_fft_new (AccelBuffer *input, AccelBuffer *output, AccelFftKind kind, AccelFftDirection direction, guint n_axes);

G_END_DECLS
