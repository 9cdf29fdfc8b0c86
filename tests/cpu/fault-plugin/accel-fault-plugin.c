/* accel-fault-plugin.c: a test-only plugin whose `fault` op makes the CPU
 * device act as a poisoned context (as a sticky CUDA error would), so the
 * supervision path can be exercised without a GPU.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include "accel-config.h"
#include "accel-test-scribble.h"

#define ACCEL_TYPE_TEST_FAULT (accel_test_fault_get_type ())
G_DECLARE_FINAL_TYPE (AccelTestFault, accel_test_fault, ACCEL, TEST_FAULT, AccelOp)

/**
 * AccelTestFault:
 *
 * The `fault` op: its kernel fails with %ACCEL_ERROR_CONTEXT_POISONED.
 * The optional `target` buffer lets a test tie the fault to a buffer.
 */
struct _AccelTestFault {
  AccelOp parent_instance;
  AccelBuffer *target;
};

static const AccelOpParam accel_test_fault_params[] = {
  ACCEL_OP_BUFFER (AccelTestFault, target, "target", "Optional buffer the fault is tied to", ACCEL_ACCESS_READ_WRITE,
                   ACCEL_OP_PARAM_DEFAULT),
};

ACCEL_DEFINE_OP_TYPE (AccelTestFault, accel_test_fault, "fault", "Test only: fails as a poisoned context would",
                      accel_test_fault_params, NULL)

static gboolean
fault_run (AccelOp *op, gpointer context, GError **error)
{
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED,
               "fault: injected fault; the context is poisoned");
  return FALSE;
}

static const AccelKernelVTable fault_kernel = { .run = fault_run };

static gboolean
fault_plugin_init (AccelPlugin *plugin, GError **error)
{
  accel_plugin_register_op_type (plugin, ACCEL_TYPE_TEST_FAULT);
  accel_plugin_register_kernel (plugin, "fault", "cpu", 100, &fault_kernel);
  accel_plugin_register_op_type (plugin, ACCEL_TYPE_TEST_SCRIBBLE);
  accel_plugin_register_kernel (plugin, "scribble", "cpu", 100, &accel_test_scribble_kernel);
  return TRUE;
}

ACCEL_PLUGIN_DEFINE (fault,
                     "Test only: the `fault` op, a poisoned context on the CPU backend, and `scribble`",
                     fault_plugin_init,
                     ACCEL_VERSION,
                     "LGPL-2.1-or-later")
