/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

/**
 * AccelScanKind:
 * @ACCEL_SCAN_INCLUSIVE: `output[i] = input[0] + … + input[i]`
 * @ACCEL_SCAN_EXCLUSIVE: `output[i] = input[0] + … + input[i - 1]`, `output[0] = 0`
 *
 * The prefix sums of `scan`.
 */
typedef enum {
  ACCEL_SCAN_INCLUSIVE,
  ACCEL_SCAN_EXCLUSIVE,
} AccelScanKind;

#define ACCEL_TYPE_SCAN (accel_scan_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelScan, accel_scan, ACCEL, SCAN, AccelOp)

struct _AccelScan {
  AccelOp parent_instance;

  /*< public >*/
  /* Input [..., n]: i32, u32, i64, f32 or f64 */
  AccelBuffer *input; /*< read required >*/
  /* Prefix sums, type and dims of input; may be input */
  AccelBuffer *output; /*< write required >*/
  /* Inclusive or exclusive sums. */
  AccelScanKind kind; /*< default=ACCEL_SCAN_INCLUSIVE >*/
};

ACCEL_API
AccelOp *accel_scan_new (AccelBuffer *input, AccelBuffer *output, AccelScanKind kind);

G_END_DECLS
