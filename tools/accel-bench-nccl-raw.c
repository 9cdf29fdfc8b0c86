/* accel-bench-nccl-raw.c: ncclAllReduce and ncclAllGather called directly
 * on the buffers accel-bench-nccl gives Accel, as nccl-tests calls them:
 * one thread, one group call per collective spanning every local GPU.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <accel.h>
#include "accel-bench-nccl.h"

struct _BenchNcclRaw {
  int n;
  int *ordinals;
  ncclComm_t *comms;
  cudaStream_t *streams;
};

static gboolean
nccl_ok (ncclResult_t status, const char *what, GError **error)
{
  if (status == ncclSuccess)
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_LIBRARY, "%s: %s", what, ncclGetErrorString (status));
  return FALSE;
}

static gboolean
cuda_ok (cudaError_t status, const char *what, GError **error)
{
  if (status == cudaSuccess)
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_LIBRARY, "%s: %s", what, cudaGetErrorString (status));
  return FALSE;
}

BenchNcclRaw *
bench_nccl_raw_new (const int *ordinals, int n, GError **error)
{
  BenchNcclRaw *raw = g_new0 (BenchNcclRaw, 1);
  raw->n = n;
  raw->ordinals = g_memdup2 (ordinals, sizeof (int) * n);
  raw->comms = g_new0 (ncclComm_t, n);
  raw->streams = g_new0 (cudaStream_t, n);
  for (int i = 0; i < n; i++)
    if (!cuda_ok (cudaSetDevice (ordinals[i]), "cudaSetDevice", error)
        || !cuda_ok (cudaStreamCreateWithFlags (&raw->streams[i], cudaStreamNonBlocking), "cudaStreamCreate", error))
      {
        bench_nccl_raw_free (raw);
        return NULL;
      }
  if (!nccl_ok (ncclCommInitAll (raw->comms, n, ordinals), "ncclCommInitAll", error))
    {
      bench_nccl_raw_free (raw);
      return NULL;
    }
  return raw;
}

void
bench_nccl_raw_free (BenchNcclRaw *raw)
{
  for (int i = 0; i < raw->n; i++)
    {
      if (raw->comms[i])
        ncclCommDestroy (raw->comms[i]);
      if (raw->streams[i])
        {
          cudaSetDevice (raw->ordinals[i]);
          cudaStreamDestroy (raw->streams[i]);
        }
    }
  g_free (raw->ordinals);
  g_free (raw->comms);
  g_free (raw->streams);
  g_free (raw);
}

static gboolean
launch (BenchNcclRaw *raw, BenchCollective what, void *const *send, void *const *recv, gsize bytes, GError **error)
{
  if (!nccl_ok (ncclGroupStart (), "ncclGroupStart", error))
    return FALSE;
  ncclResult_t status = ncclSuccess;
  for (int i = 0; i < raw->n && status == ncclSuccess; i++)
    status = what == BENCH_ALL_REDUCE
               ? ncclAllReduce (send[i], recv[i], bytes / 4, ncclFloat32, ncclSum, raw->comms[i], raw->streams[i])
               : ncclAllGather (send[i], recv[i], bytes / 4, ncclFloat32, raw->comms[i], raw->streams[i]);
  ncclResult_t end = ncclGroupEnd ();
  return nccl_ok (status != ncclSuccess ? status : end, what == BENCH_ALL_REDUCE ? "ncclAllReduce" : "ncclAllGather",
                  error);
}

static gboolean
sync_all (BenchNcclRaw *raw, GError **error)
{
  for (int i = 0; i < raw->n; i++)
    if (!cuda_ok (cudaSetDevice (raw->ordinals[i]), "cudaSetDevice", error)
        || !cuda_ok (cudaStreamSynchronize (raw->streams[i]), "cudaStreamSynchronize", error))
      return FALSE;
  return TRUE;
}

double
bench_nccl_raw_time (BenchNcclRaw *raw, BenchCollective what, void *const *send, void *const *recv, gsize bytes,
                     int warmup, int iters, GError **error)
{
  for (int k = 0; k < warmup; k++)
    if (!launch (raw, what, send, recv, bytes, error))
      return -1;
  if (!sync_all (raw, error))
    return -1;
  gint64 t0 = g_get_monotonic_time ();
  for (int k = 0; k < iters; k++)
    if (!launch (raw, what, send, recv, bytes, error))
      return -1;
  if (!sync_all (raw, error))
    return -1;
  return (g_get_monotonic_time () - t0) / 1e6 / iters;
}

double
bench_nccl_raw_peer_time (int src_ordinal, void *src, int dst_ordinal, void *dst, gsize bytes, int warmup,
                          int iters, GError **error)
{
  cudaStream_t stream = NULL;
  int can = 0;
  if (!cuda_ok (cudaSetDevice (src_ordinal), "cudaSetDevice", error))
    return -1;
  if (cudaDeviceCanAccessPeer (&can, src_ordinal, dst_ordinal) == cudaSuccess && can)
    (void) cudaDeviceEnablePeerAccess (dst_ordinal, 0);
  (void) cudaGetLastError ();
  if (!cuda_ok (cudaSetDevice (dst_ordinal), "cudaSetDevice", error)
      || !cuda_ok (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking), "cudaStreamCreate", error))
    return -1;
  double t = -1;
  for (int k = 0; k < warmup; k++)
    if (!cuda_ok (cudaMemcpyPeerAsync (dst, dst_ordinal, src, src_ordinal, bytes, stream), "cudaMemcpyPeerAsync",
                  error))
      goto out;
  if (!cuda_ok (cudaStreamSynchronize (stream), "cudaStreamSynchronize", error))
    goto out;
  gint64 t0 = g_get_monotonic_time ();
  for (int k = 0; k < iters; k++)
    if (!cuda_ok (cudaMemcpyPeerAsync (dst, dst_ordinal, src, src_ordinal, bytes, stream), "cudaMemcpyPeerAsync",
                  error))
      goto out;
  if (cuda_ok (cudaStreamSynchronize (stream), "cudaStreamSynchronize", error))
    t = (g_get_monotonic_time () - t0) / 1e6 / iters;
out:
  cudaStreamDestroy (stream);
  return t;
}
