/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"

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
  if (accel_op_buffers_overlap_partly_ (self->src, self->dst))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "copy: “src” and “dst” overlap partly");
      return FALSE;
    }
  return TRUE;
}

static const AccelOpParam copy_params[] = {
  ACCEL_OP_BUFFER (AccelCopy, src, "src", "Source buffer", ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelCopy, dst, "dst", "Destination buffer, same dtype and element count as src",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
};

ACCEL_DEFINE_OP_TYPE (AccelCopy, accel_copy, "copy",
                      "Copy src into dst (same dtype and element count; strided layouts allowed)",
                      copy_params, accel_copy_validate)

/**
 * accel_copy_new:
 * @src: (transfer none): the source
 * @dst: (transfer none): the destination
 *
 * Makes a `copy` op.
 *
 * Returns: (transfer full): a new #AccelCopy
 */
AccelOp *
accel_copy_new (AccelBuffer *src, AccelBuffer *dst)
{
  return g_object_new (ACCEL_TYPE_COPY, "src", src, "dst", dst, NULL);
}
