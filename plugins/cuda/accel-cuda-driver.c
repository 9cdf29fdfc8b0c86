/* accel-cuda-driver.c: the CUDA driver entry points the runtime API lacks,
 * resolved once through cudaGetDriverEntryPointByVersion into one table
 * generated from the X-macro list in accel-cuda-private.h, so the table,
 * its lookups and its checks cannot drift apart. A missing entry leaves its
 * pointer NULL and clears the capability flag of its group.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-private.h"

/* The driver ABI the signatures in the table were written against. */
#define ACCEL_CUDA_DRIVER_ABI 12000

static AccelCudaDriver driver;

static gpointer
resolve (const char *symbol)
{
  void *fn = NULL;
  enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  cudaError_t status = cudaGetDriverEntryPointByVersion (symbol, &fn, ACCEL_CUDA_DRIVER_ABI,
                                                         cudaEnableDefault, &found);
  if (status != cudaSuccess || found != cudaDriverEntryPointSuccess)
    {
      (void) cudaGetLastError ();
      g_debug ("CUDA driver entry point %s is unavailable (%s)", symbol,
               status != cudaSuccess ? cudaGetErrorString (status) : "symbol not found");
      return NULL;
    }
  return fn;
}

/*
 * accel_cuda_driver_get:
 *
 * Resolves the table on first use (which needs a driver: call it only after
 * a CUDA runtime call has succeeded).
 *
 * Returns: the table; entries that the driver lacks are %NULL
 */
const AccelCudaDriver *
accel_cuda_driver_get (void)
{
  static gsize once = 0;

  if (g_once_init_enter (&once))
    {
#define ACCEL_CUDA_DRIVER_RESOLVE(name, ret, args) driver.name = (ret (*) args) resolve (#name);
      ACCEL_CUDA_DRIVER_ENTRY_POINTS (ACCEL_CUDA_DRIVER_RESOLVE)
#undef ACCEL_CUDA_DRIVER_RESOLVE
      driver.have_stream_memops = driver.cuStreamWriteValue32 != NULL && driver.cuStreamWaitValue32 != NULL;
      g_once_init_leave (&once, 1);
    }
  return &driver;
}
