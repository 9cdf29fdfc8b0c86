/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"
#include "accel-op-enums.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_COPY (accel_copy_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelCopy, accel_copy, ACCEL, COPY, AccelOp)

struct _AccelCopy {
  AccelOp parent_instance;

  /*< public >*/
  /* Source buffer */
  AccelBuffer *src; /*< read required >*/
  /* Destination buffer, same dtype and element count as src */
  AccelBuffer *dst; /*< write required >*/
};

ACCEL_API
AccelOp *accel_copy_new (AccelBuffer *src, AccelBuffer *dst);

G_END_DECLS
