/* accel-cuda-error.c: CUDA and CUDA-library status codes as GErrors.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-private.h"

/**
 * accel_cuda_error_is_sticky:
 * @status: a CUDA runtime status
 *
 * Whether @status leaves the CUDA context unusable: every later call in
 * the process fails, and only a new process recovers (NVIDIA documents no
 * other cure; `cudaDeviceReset` does not help on the drivers we measured).
 *
 * Returns: %TRUE for sticky errors
 */
gboolean
accel_cuda_error_is_sticky (cudaError_t status)
{
  switch ((int) status)
    {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorExternalDevice:
      return TRUE;
    default:
      return FALSE;
    }
}

GError *
accel_cuda_error_new (cudaError_t status, const char *what)
{
  AccelError code;

  if (accel_cuda_error_is_sticky (status))
    code = ACCEL_ERROR_CONTEXT_POISONED;
  else if (status == cudaErrorMemoryAllocation)
    code = ACCEL_ERROR_OUT_OF_MEMORY;
  else if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver
           || status == cudaErrorInvalidDevice)
    code = ACCEL_ERROR_NO_DEVICE;
  else
    code = ACCEL_ERROR_LIBRARY;

  return g_error_new (ACCEL_ERROR, code, "CUDA: %s failed: %s (%s, error %d)",
                      what ? what : "a call", cudaGetErrorString (status),
                      cudaGetErrorName (status), (int) status);
}

/**
 * accel_cuda_check:
 * @status: what a CUDA runtime call returned
 * @what: the call, for the message (`cudaMemcpyAsync`)
 * @error: return location for a #GError
 *
 * Turns a CUDA runtime status into a #GError in %ACCEL_ERROR: sticky errors
 * (illegal address, launch failure, …) become
 * %ACCEL_ERROR_CONTEXT_POISONED, `cudaErrorMemoryAllocation`
 * %ACCEL_ERROR_OUT_OF_MEMORY, a missing driver or device
 * %ACCEL_ERROR_NO_DEVICE, and everything else %ACCEL_ERROR_LIBRARY; the
 * message names @what and the CUDA error's name and string. A non-sticky
 * error is also cleared from the thread's last-error slot, so it does not
 * resurface in a later, unrelated check.
 *
 * Returns: %TRUE if @status is `cudaSuccess`
 */
gboolean
accel_cuda_check (cudaError_t status, const char *what, GError **error)
{
  if (G_LIKELY (status == cudaSuccess))
    return TRUE;
  if (!accel_cuda_error_is_sticky (status))
    (void) cudaGetLastError ();
  g_propagate_error (error, accel_cuda_error_new (status, what));
  return FALSE;
}

/* A driver call's CUresult as a #GError. The driver's codes equal the
 * runtime's for the sticky errors, so a fault noticed in a driver call
 * poisons the context like one noticed anywhere else; other codes keep
 * their own number, as a runtime name would be wrong for them. */
gboolean
accel_cuda_check_driver (AccelCudaDrvResult result, const char *what, GError **error)
{
  if (G_LIKELY (result == 0))
    return TRUE;
  if (accel_cuda_error_is_sticky ((cudaError_t) result))
    g_propagate_error (error, accel_cuda_error_new ((cudaError_t) result, what));
  else
    g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_LIBRARY, "CUDA: %s failed (CUresult %d)", what, result);
  return FALSE;
}

/**
 * accel_cuda_check_library:
 * @status: the library's status; 0 is success in every CUDA library
 *   (`CUBLAS_STATUS_SUCCESS`, `CURAND_STATUS_SUCCESS`, `CUFFT_SUCCESS`, …)
 * @library: the library's name for the message (`cuBLAS`)
 * @status_name: (nullable): the status's name, from the library
 *   (`cublasGetStatusName`) or the caller's own table
 * @out_of_memory: whether @status is the library's allocation failure
 * @what: the call, for the message (`cublasGemmEx`)
 * @error: return location for a #GError
 *
 * Turns a CUDA library status into a #GError in %ACCEL_ERROR. Libraries
 * report a fault of the kernel they launched as a generic execution
 * failure, so the context's sticky error, if any, is looked up and wins:
 * %ACCEL_ERROR_CONTEXT_POISONED. Otherwise @out_of_memory gives
 * %ACCEL_ERROR_OUT_OF_MEMORY and anything else %ACCEL_ERROR_LIBRARY, with
 * a message naming @library, @what and the status.
 *
 * Returns: %TRUE if @status is 0
 */
gboolean
accel_cuda_check_library (int status,
                          const char *library,
                          const char *status_name,
                          gboolean out_of_memory,
                          const char *what,
                          GError **error)
{
  if (G_LIKELY (status == 0))
    return TRUE;

  cudaError_t sticky = cudaPeekAtLastError ();
  if (accel_cuda_error_is_sticky (sticky))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED,
                   "%s: %s failed with status %s (%d) after the CUDA context faulted: %s (%s)",
                   library, what ? what : "a call", status_name ? status_name : "?", status,
                   cudaGetErrorString (sticky), cudaGetErrorName (sticky));
      return FALSE;
    }
  if (sticky != cudaSuccess)
    (void) cudaGetLastError ();
  g_set_error (error, ACCEL_ERROR, out_of_memory ? ACCEL_ERROR_OUT_OF_MEMORY : ACCEL_ERROR_LIBRARY,
               "%s: %s failed with status %s (%d)", library, what ? what : "a call",
               status_name ? status_name : "?", status);
  return FALSE;
}
