/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_SPMV (accel_spmv_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelSpmv, accel_spmv, ACCEL, SPMV, AccelOp)

struct _AccelSpmv {
  AccelOp parent_instance;

  /*< public >*/
  AccelBuffer *row_ptr; /*< family=AccelCsrFields >*/
  AccelBuffer *col_ind; /*< family=AccelCsrFields >*/
  AccelBuffer *values; /*< family=AccelCsrFields >*/
  /* The dense vector, `[n_cols]`. */
  AccelBuffer *x; /*< read required >*/
  /* Result [m]; read when beta is not 0 */
  AccelBuffer *y; /*< readwrite required >*/
  gint64 n_cols; /*< family=AccelCsrFields >*/
  double alpha; /*< family=AccelCsrFields >*/
  double beta; /*< family=AccelCsrFields >*/
  gboolean check_structure; /*< family=AccelCsrFields >*/
};

ACCEL_API
AccelOp *accel_spmv_new (AccelBuffer *row_ptr, AccelBuffer *col_ind, AccelBuffer *values, AccelBuffer *x, AccelBuffer *y, gint64 n_cols);

G_END_DECLS
