/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_RNG_FILL (accel_rng_fill_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelRngFill, accel_rng_fill, ACCEL, RNG_FILL, AccelOp)

struct _AccelRngFill {
  AccelOp parent_instance;

  /*< public >*/
  /* Buffer to fill: f32, f64, f16 or bf16, contiguous */
  AccelBuffer *dst; /*< write required >*/
  /* Distribution of the values */
  AccelRngDistribution distribution; /*< default=ACCEL_RNG_UNIFORM >*/
  /* The generator's 64-bit key. */
  guint64 seed; /*< min=0 max=G_MAXUINT64 default=0 >*/
  /* The counter of the first element; each counter makes four f32/f16/bf16
   * values or two f64 values. */
  guint64 offset; /*< min=0 max=G_MAXUINT64 default=0 >*/
  /* Lower bound of the uniform distribution (inclusive). */
  double low; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=0.0 >*/
  /* Upper bound of the uniform distribution (exclusive for f32 and f64; f16
   * and bf16 may round up to it). */
  double high; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=1.0 >*/
  /* Mean of the normal distribution. */
  double mean; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=0.0 >*/
  /* Standard deviation of the normal distribution. */
  double stddev; /*< min=0.0 max=G_MAXDOUBLE default=1.0 >*/
};

ACCEL_API
AccelOp *accel_rng_fill_new (AccelBuffer *dst, AccelRngDistribution distribution, guint64 seed);

G_END_DECLS
