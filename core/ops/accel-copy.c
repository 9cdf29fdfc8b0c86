/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"
#include "accel-op-check-private.h"

/**
 * AccelCopy:
 *
 * Copies `src` into `dst` element by element in row-major order. Both have
 * the same dtype and element count; either may be strided, and their shapes
 * may differ (a reshape).
 *
 * Op name: `copy`.
 */

static gboolean
accel_copy_validate (AccelOp *op, GError **error)
{
  AccelCopy *self = ACCEL_COPY (op);

  if (!accel_op_check_same_dtype (op, "src", "dst", error))
    return FALSE;
  if (!accel_op_check_same_count_ ("copy", "src", self->src, "dst", self->dst, error))
    return FALSE;
  return accel_op_check_in_place_ (error, "copy", "dst", self->dst, "src", self->src);
}

ACCEL_DEFINE_OP_TYPE (AccelCopy, accel_copy, "copy",
                      "Copy src into dst (same dtype and element count; strided layouts allowed)",
                      _accel_copy_params, accel_copy_validate)
