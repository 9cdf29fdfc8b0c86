/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_HISTOGRAM (accel_histogram_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelHistogram, accel_histogram, ACCEL, HISTOGRAM, AccelOp)

struct _AccelHistogram {
  AccelOp parent_instance;

  /*< public >*/
  AccelBuffer *samples;
  AccelBuffer *bins;
  double lower;
  double upper;
  int n_bins;
  gboolean include_upper;
};

ACCEL_API
AccelOp *accel_histogram_new (AccelBuffer *samples, AccelBuffer *bins, double lower, double upper, int n_bins);

G_END_DECLS
