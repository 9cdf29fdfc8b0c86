/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_SPMM (accel_spmm_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelSpmm, accel_spmm, ACCEL, SPMM, AccelOp)

struct _AccelSpmm {
  AccelOp parent_instance;

  /*< public >*/
  AccelBuffer *row_ptr; /*< family=AccelCsrFields >*/
  AccelBuffer *col_ind; /*< family=AccelCsrFields >*/
  AccelBuffer *values; /*< family=AccelCsrFields >*/
  /* Dense matrix [n-cols, k], row-major */
  AccelBuffer *b; /*< read required >*/
  /* Result [m, k]; read when beta is not 0 */
  AccelBuffer *c; /*< readwrite required >*/
  gint64 n_cols; /*< family=AccelCsrFields >*/
  double alpha; /*< family=AccelCsrFields >*/
  double beta; /*< family=AccelCsrFields >*/
  gboolean check_structure; /*< family=AccelCsrFields >*/
};

ACCEL_API
AccelOp *accel_spmm_new (AccelBuffer *row_ptr, AccelBuffer *col_ind, AccelBuffer *values, AccelBuffer *b, AccelBuffer *c, gint64 n_cols);

G_END_DECLS
