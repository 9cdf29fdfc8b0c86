/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "../accel-op.h"

G_BEGIN_DECLS

#define ACCEL_TYPE_EIGH (accel_eigh_get_type ())
ACCEL_API
G_DECLARE_FINAL_TYPE (AccelEigh, accel_eigh, ACCEL, EIGH, AccelOp)

struct _AccelEigh {
  AccelOp parent_instance;

  /*< public >*/
  AccelBuffer *a;
  AccelBuffer *w;
  AccelBuffer *v;
  gboolean lower;
};

ACCEL_API
AccelOp *accel_eigh_new (AccelBuffer *a, AccelBuffer *w, AccelBuffer *v);

G_END_DECLS
