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
  AccelBuffer *dst;
  AccelRngDistribution distribution;
  guint64 seed;
  guint64 offset;
  double low;
  double high;
  double mean;
  double stddev;
};

ACCEL_API
AccelOp *accel_rng_fill_new (AccelBuffer *dst, AccelRngDistribution distribution, guint64 seed);

G_END_DECLS
