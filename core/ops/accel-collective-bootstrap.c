/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-private.h"
#include "accel-collective-private.h"

/**
 * AccelCollectiveBootstrap:
 *
 * Makes the bytes every rank of a new communicator incarnation starts from
 * (an NCCL unique id), in the process that owns the device: an
 * #AccelCommunicator submits it once per incarnation to its first rank's
 * device and hands the result to every rank (the `comm-id` of its parts).
 * A backend whose collectives need no such bytes registers no kernel for
 * it.
 *
 * Op name: `collective-bootstrap`.
 */

static gboolean
accel_collective_bootstrap_validate (AccelOp *op, GError **error)
{
  AccelCollectiveBootstrap *self = ACCEL_COLLECTIVE_BOOTSTRAP (op);
  static const AccelDType u8[] = { ACCEL_DTYPE_U8 };

  if (!accel_op_check_dtype (op, "id", u8, 1, error)
      || !accel_op_check_contiguous (op, "id", error))
    return FALSE;
  if (accel_buffer_get_n_elements (self->id) != ACCEL_COLLECTIVE_ID_SIZE)
    return accel_op_shape_error_ (error, "collective-bootstrap", "id", self->id,
                                  G_STRINGIFY (ACCEL_COLLECTIVE_ID_SIZE) " elements");
  return TRUE;
}

ACCEL_DEFINE_OP_TYPE (AccelCollectiveBootstrap, accel_collective_bootstrap, "collective-bootstrap",
                      "Make the bytes a new communicator incarnation starts from (an NCCL unique id)",
                      _accel_collective_bootstrap_params, accel_collective_bootstrap_validate)
