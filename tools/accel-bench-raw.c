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

AccelBuffer *
accel_bench_raw_random_buffer (AccelDevice *device, AccelDType dtype, const gint64 *dims, guint rank, double lo,
                               double hi, guint64 seed, GError **error)
{
  g_autoptr(AccelShape) shape = accel_shape_new (dims, rank);
  AccelBuffer *b = accel_device_alloc (device, dtype, shape, error);
  if (b == NULL)
    return NULL;
  g_autoptr(AccelOp) fill = accel_rng_fill_new (b, ACCEL_RNG_UNIFORM, seed);
  g_object_set (fill, "low", lo, "high", hi, NULL);
  if (!accel_device_submit (device, fill, NULL, error))
    g_clear_object (&b);
  return b;
}

void *
accel_bench_raw_copy_of (AccelBuffer *buffer, GError **error)
{
  gsize size = accel_buffer_get_size (buffer);
  void *p = NULL;
  if (!accel_cuda_check (cudaMalloc (&p, MAX (size, 1)), "cudaMalloc", error))
    return NULL;
  if (ACCEL_CUDA_IS_DEVICE (accel_buffer_get_device (buffer)))
    {
      if (accel_cuda_check (cudaMemcpy (p, accel_buffer_get_data (buffer), size, cudaMemcpyDeviceToDevice),
                            "cudaMemcpy", error))
        return p;
      cudaFree (p);
      return NULL;
    }
  g_autoptr(GBytes) bytes = accel_buffer_download (buffer, error);
  if (bytes == NULL
      || !accel_cuda_check (cudaMemcpy (p, g_bytes_get_data (bytes, NULL), size, cudaMemcpyHostToDevice), "cudaMemcpy",
                            error))
    {
      cudaFree (p);
      return NULL;
    }
  return p;
}

gboolean
accel_bench_raw_copy_init (AccelBenchRaw *raw, AccelBenchRawCopy *copy, gsize bytes, GError **error)
{
  copy->src = copy->dst = NULL;
  copy->bytes = bytes;
  return accel_cuda_check (cudaMalloc (&copy->src, bytes), "cudaMalloc", error)
         && accel_cuda_check (cudaMalloc (&copy->dst, bytes), "cudaMalloc", error)
         && accel_cuda_check (cudaMemsetAsync (copy->src, 0, bytes, raw->stream), "cudaMemsetAsync", error);
}

void
accel_bench_raw_copy_clear (AccelBenchRawCopy *copy)
{
  cudaFree (copy->src);
  cudaFree (copy->dst);
  copy->src = copy->dst = NULL;
}

gboolean
accel_bench_raw_copy_call (AccelBenchRaw *raw, gpointer data, GError **error)
{
  AccelBenchRawCopy *c = data;
  return accel_cuda_check (cudaMemcpyAsync (c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, raw->stream),
                           "cudaMemcpyAsync", error);
}
