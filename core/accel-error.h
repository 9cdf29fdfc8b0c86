/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "accel-types.h"

G_BEGIN_DECLS

/**
 * ACCEL_ERROR:
 *
 * The error domain of every error Accel reports.
 */
#define ACCEL_ERROR (accel_error_quark ())

/**
 * AccelError:
 * @ACCEL_ERROR_FAILED: an error that fits no other code
 * @ACCEL_ERROR_INVALID_ARGUMENT: a parameter or property has a bad value, or is missing
 * @ACCEL_ERROR_SHAPE_MISMATCH: buffer shapes do not fit together
 * @ACCEL_ERROR_DTYPE_UNSUPPORTED: no kernel handles this element type
 * @ACCEL_ERROR_OUT_OF_MEMORY: the device could not allocate; it stays usable
 * @ACCEL_ERROR_CONTEXT_POISONED: the backend context faulted and was rebuilt
 * @ACCEL_ERROR_STALE_BUFFER: a buffer belongs to an older generation of its device
 * @ACCEL_ERROR_WRONG_DEVICE: a buffer belongs to another device
 * @ACCEL_ERROR_NO_DEVICE: no such device, or the backend found none
 * @ACCEL_ERROR_NO_KERNEL: no kernel implements the op on this backend
 * @ACCEL_ERROR_LIBRARY: a vendor library call failed; the message names the library and status
 * @ACCEL_ERROR_PLUGIN: a plugin could not be loaded or initialised
 * @ACCEL_ERROR_CANCELLED: the operation was cancelled before it ran
 * @ACCEL_ERROR_UNKNOWN_TYPE: no op, actor or backend type of that name is registered
 * @ACCEL_ERROR_DEVICE_FAILED: the device stopped (restart budget spent, or a fault it cannot recover from)
 * @ACCEL_ERROR_TIMED_OUT: a deadline passed
 * @ACCEL_ERROR_NOT_SUPPORTED: the request is valid but this device or build cannot do it
 * @ACCEL_ERROR_BUSY: a queue is full (backpressure); the request may be sent again later
 *
 * Error codes in the %ACCEL_ERROR domain.
 */
typedef enum {
  ACCEL_ERROR_FAILED,
  ACCEL_ERROR_INVALID_ARGUMENT,
  ACCEL_ERROR_SHAPE_MISMATCH,
  ACCEL_ERROR_DTYPE_UNSUPPORTED,
  ACCEL_ERROR_OUT_OF_MEMORY,
  ACCEL_ERROR_CONTEXT_POISONED,
  ACCEL_ERROR_STALE_BUFFER,
  ACCEL_ERROR_WRONG_DEVICE,
  ACCEL_ERROR_NO_DEVICE,
  ACCEL_ERROR_NO_KERNEL,
  ACCEL_ERROR_LIBRARY,
  ACCEL_ERROR_PLUGIN,
  ACCEL_ERROR_CANCELLED,
  ACCEL_ERROR_UNKNOWN_TYPE,
  ACCEL_ERROR_DEVICE_FAILED,
  ACCEL_ERROR_TIMED_OUT,
  ACCEL_ERROR_NOT_SUPPORTED,
  ACCEL_ERROR_BUSY,
} AccelError;

ACCEL_API
GQuark accel_error_quark (void);

G_END_DECLS
