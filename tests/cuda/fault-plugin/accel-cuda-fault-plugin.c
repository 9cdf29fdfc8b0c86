/* accel-cuda-fault-plugin.c: a test-only plugin giving the `fault` op (the
 * op type comes from tests/cpu/fault-plugin) a kernel on the `cuda` backend
 * that really faults: it writes through an invalid device pointer, so the
 * context is poisoned by a sticky cudaErrorIllegalAddress, exactly as a
 * buggy kernel would leave it. Not installed.
 *
 * It also has the `lane-handle` op, whose kernel takes a handle of its lane
 * with accel_cuda_lane_open_handle(): its open function stores a made-up
 * handle and then, when the op's `fail` is set, fails, as a library's set-up
 * step after the create call would; its error names the handle, the lane
 * and how many handles were destroyed until then. The kernel writes what the
 * plugin counted (opens, destroys, the serial of the lane's handle and of
 * the last handle destroyed, the lane's index) to the op's `dst`, so a test
 * reads them wherever the kernel ran, in this process or in a device host.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-config.h"
#include "accel-cuda.h"

cudaError_t accel_cuda_test_launch_fault (cudaStream_t stream);
cudaError_t accel_cuda_test_launch_store (gint32 *dst, gint32 a, gint32 b, gint32 c, gint32 d, gint32 e,
                                          cudaStream_t stream);

#define ACCEL_TYPE_TEST_LANE_HANDLE (accel_test_lane_handle_get_type ())
G_DECLARE_FINAL_TYPE (AccelTestLaneHandle, accel_test_lane_handle, ACCEL, TEST_LANE_HANDLE, AccelOp)

/**
 * AccelTestLaneHandle:
 *
 * The `lane-handle` op: takes the lane's `test-lane-handle` handle, then
 * writes the plugin's counts to `dst`.
 */
struct _AccelTestLaneHandle {
  AccelOp parent_instance;
  AccelBuffer *dst;
  gboolean fail;
};

static const AccelOpParam accel_test_lane_handle_params[] = {
  ACCEL_OP_BUFFER (AccelTestLaneHandle, dst, "dst",
                   "Five i32: opens, destroys, the handle's serial, the last destroyed serial, the lane",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BOOLEAN (AccelTestLaneHandle, fail, "fail",
                    "Whether a new handle's open fails after storing it", FALSE),
};

static gboolean
accel_test_lane_handle_validate (AccelOp *op, GError **error)
{
  static const AccelDType i32 = ACCEL_DTYPE_I32;

  if (!accel_op_check_dtype (op, "dst", &i32, 1, error) || !accel_op_check_contiguous (op, "dst", error))
    return FALSE;
  if (accel_buffer_get_n_elements (ACCEL_TEST_LANE_HANDLE (op)->dst) != 5)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH, "lane-handle: dst must hold 5 elements");
      return FALSE;
    }
  return TRUE;
}

ACCEL_DEFINE_OP_TYPE (AccelTestLaneHandle, accel_test_lane_handle, "lane-handle",
                      "Test only: opens a lane handle that may fail after it was stored",
                      accel_test_lane_handle_params, accel_test_lane_handle_validate)

/* The device thread alone runs kernels, so these need no lock. */
static gint32 n_opens, n_destroys, last_destroyed;
static gboolean open_fails;

static gboolean
lane_handle_open (AccelCudaLane *lane, gpointer *handle, GError **error)
{
  gint32 *serial = g_new (gint32, 1);

  *serial = ++n_opens;
  *handle = serial;
  if (open_fails)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_LIBRARY,
                   "lane-handle: set-up of handle %d on lane %u failed after it was stored (%d destroyed before)",
                   *serial, accel_cuda_lane_get_index (lane), n_destroys);
      return FALSE;
    }
  return TRUE;
}

static void
lane_handle_destroy (gpointer handle)
{
  n_destroys++;
  last_destroyed = *(gint32 *) handle;
  g_free (handle);
}

static gboolean
lane_handle_run (AccelOp *op, gpointer context, GError **error)
{
  AccelTestLaneHandle *self = ACCEL_TEST_LANE_HANDLE (op);

  open_fails = self->fail;
  gint32 *handle = accel_cuda_lane_open_handle (context, "test-lane-handle", lane_handle_open,
                                                lane_handle_destroy, error);
  if (handle == NULL)
    return FALSE;
  return accel_cuda_check (accel_cuda_test_launch_store (accel_buffer_get_data (self->dst), n_opens, n_destroys,
                                                         *handle, last_destroyed,
                                                         (gint32) accel_cuda_lane_get_index (context),
                                                         accel_cuda_lane_get_stream (context)),
                           "lane-handle store kernel", error);
}

static const AccelKernelVTable lane_handle_kernel = { .run = lane_handle_run };

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
  accel_plugin_register_op_type (plugin, ACCEL_TYPE_TEST_LANE_HANDLE);
  accel_plugin_register_kernel (plugin, "lane-handle", ACCEL_CUDA_BACKEND_NAME, 100, &lane_handle_kernel);
  return TRUE;
}

ACCEL_PLUGIN_DEFINE (cuda_fault,
                     "Test only: a `fault` kernel on the cuda backend that writes through an invalid pointer, "
                     "and `lane-handle`, a lane handle whose set-up fails",
                     cuda_fault_plugin_init,
                     ACCEL_VERSION,
                     "LGPL-2.1-or-later")
