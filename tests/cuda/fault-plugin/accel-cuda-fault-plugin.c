/* accel-cuda-fault-plugin.c: a test-only plugin giving the `fault` op (the
 * op type comes from tests/cpu/fault-plugin) a kernel on the `cuda` backend
 * that really faults: it writes through an invalid device pointer, so the
 * context is poisoned by a sticky cudaErrorIllegalAddress, exactly as a
 * buggy kernel would leave it. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-config.h"
#include "accel-cuda.h"

cudaError_t accel_cuda_test_launch_fault (cudaStream_t stream);

static gboolean
fault_run (AccelOp *op, gpointer context, GError **error)
{
  return accel_cuda_check (accel_cuda_test_launch_fault (accel_cuda_lane_get_stream (context)),
                           "fault kernel", error);
}

static const AccelKernelVTable fault_kernel = { .run = fault_run };

static gboolean
cuda_fault_plugin_init (AccelPlugin *plugin, GError **error)
{
  accel_plugin_register_kernel (plugin, "fault", ACCEL_CUDA_BACKEND_NAME, 100, &fault_kernel);
  return TRUE;
}

ACCEL_PLUGIN_DEFINE (cuda_fault,
                     "Test only: a `fault` kernel on the cuda backend that writes through an invalid pointer",
                     cuda_fault_plugin_init,
                     ACCEL_VERSION,
                     "LGPL-2.1-or-later")
