/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-private.h"
#include "accel-collective-private.h"

/**
 * AccelCollectiveAbort:
 *
 * Ends this device's rank of a communicator incarnation in the process
 * that owns the device (NCCL's `ncclCommAbort`): collectives of it that
 * are still running return, and fail. An #AccelCommunicator submits it to
 * every rank's device when one rank's device loses its context, when a
 * collective fails on some rank, and when the communicator goes away. It
 * reads and writes no buffer.
 *
 * Op name: `collective-abort`.
 */

static gboolean
accel_collective_abort_validate (AccelOp *op, GError **error)
{
  AccelCollectiveAbort *self = ACCEL_COLLECTIVE_ABORT (op);

  if (self->comm_key == NULL || *self->comm_key == '\0')
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "collective-abort: property “comm-key” is not set");
      return FALSE;
    }
  return TRUE;
}

ACCEL_DEFINE_OP_TYPE (AccelCollectiveAbort, accel_collective_abort, "collective-abort",
                      "End this device's rank of a communicator incarnation (ncclCommAbort)",
                      _accel_collective_abort_params, accel_collective_abort_validate)
