/* accel-bench-raw.c: the raw side of the GPU groups (see accel-bench-raw.h).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>
#include "accel-cuda.h"
#include "accel-bench-raw.h"

gboolean
accel_bench_raw_open (AccelBench *bench, AccelBenchRaw *raw, const char *groups, GError **error)
{
  const char *name = accel_device_get_name (accel_bench_get_device (bench));
  memset (raw, 0, sizeof *raw);
  raw->bench = bench;
  raw->device = accel_bench_get_device (bench);
  if (!accel_cuda_is_cuda_device (raw->device) || !g_str_has_prefix (name, "cuda:"))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NO_DEVICE,
                   "the %s groups need a CUDA device (--device cuda:0), not “%s”", groups, name);
      return FALSE;
    }
  return accel_cuda_check (cudaSetDevice (atoi (name + 5)), "cudaSetDevice", error)
         && accel_cuda_check (cudaStreamCreateWithFlags (&raw->stream, cudaStreamNonBlocking), "cudaStreamCreate",
                              error)
         && accel_cuda_check (cudaEventCreate (&raw->e0), "cudaEventCreate", error)
         && accel_cuda_check (cudaEventCreate (&raw->e1), "cudaEventCreate", error);
}

void
accel_bench_raw_close (AccelBenchRaw *raw)
{
  if (raw->e0)
    cudaEventDestroy (raw->e0);
  if (raw->e1)
    cudaEventDestroy (raw->e1);
  if (raw->stream)
    cudaStreamDestroy (raw->stream);
}

double
accel_bench_raw_burst (AccelBenchRaw *raw, AccelBenchRawCall call, gpointer data, guint n, GError **error)
{
  float ms = 0;
  cudaEventRecord (raw->e0, raw->stream);
  for (guint i = 0; i < n; i++)
    if (!call (raw, data, error))
      return -1;
  cudaEventRecord (raw->e1, raw->stream);
  if (!accel_cuda_check (cudaEventSynchronize (raw->e1), "cudaEventSynchronize", error))
    return -1;
  cudaEventElapsedTime (&ms, raw->e0, raw->e1);
  return ms * 1e-3 / n;
}
