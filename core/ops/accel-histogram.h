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
  /* Samples of any shape: u8, i32, f32 or f64 */
  AccelBuffer *samples; /*< read required >*/
  /* The counts, i32 `[n_bins]`. */
  AccelBuffer *bins; /*< write required >*/
  /* The lower edge of the first bin, inclusive. */
  double lower; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=0.0 >*/
  /* The upper edge of the last bin: inclusive (numpy) unless `include-upper`
   * is off. */
  double upper; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=1.0 >*/
  /* The number of bins; `bins` has this many entries. */
  int n_bins; /*< min=1 max=G_MAXINT default=1 >*/
  /* Whether a sample equal to `upper` counts in the last bin, as
   * `numpy.histogram` counts it (the default); off, the range is half-open,
   * `[lower, upper)`. */
  gboolean include_upper; /*< default=TRUE >*/
};

ACCEL_API
AccelOp *accel_histogram_new (AccelBuffer *samples, AccelBuffer *bins, double lower, double upper, int n_bins);

G_END_DECLS
