/* accel-cuda-peer.c: `copy` between two CUDA devices of this process,
 * device to device (cudaMemcpyPeerAsync, over NVLink or PCIe peer access
 * where the topology allows; the driver stages it otherwise).
 *
 * Each device orders the copy among its own work, on its own thread:
 *
 * 1. On the destination's thread: a lane waits for the last writer and
 *    readers of `dst` and records "dst ready". The context's peer stream
 *    then waits (cuStreamWaitValue32) for a word of pinned host memory that
 *    the copy will set, and records the event that becomes `dst`'s last
 *    writer: work queued on the destination after this, reading or
 *    writing `dst`, waits for the copy, although the copy is not enqueued
 *    yet.
 * 2. On the source's thread: a lane waits for the last writer of `src` and
 *    for "dst ready", copies, sets the word (cuStreamWriteValue32), and
 *    records the event that becomes a reader of `src`: later writers of
 *    `src` wait for the copy.
 *
 * The destination's wait is on a stream of its own, never on a lane, so
 * that two copies in opposite directions cannot wait on each other's lanes
 * in a cycle. A failure after step 1 sets the word from the host, so that
 * nothing waits for it for ever, and fails the copy. The copy completes
 * (a host function on the peer stream) once `dst` holds the data.
 *
 * Devices served by host processes are copied by the runtime through host
 * memory (can_copy says no); peer copies across processes would take CUDA
 * IPC handles of the peer's memory, which the device hosts do not export.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdint.h>
#include "accel-cuda-private.h"

#define CU_STREAM_WAIT_VALUE_EQ 0x1

typedef struct {
  GTask *task;
  int flag_slot;                 /* in the destination context's peer flags, or -1 */
  AccelCudaDevice *src_dev;
  AccelCudaDevice *dst_dev;
  AccelBuffer *src;
  AccelBuffer *dst;
  AccelCudaContext *src_ctx;     /* strong, once step 2 took it */
  AccelCudaContext *dst_ctx;     /* strong, once step 1 took it */
  volatile guint32 *flag;        /* a word of dst_ctx->peer_flags */
  unsigned long long flag_device;
  AccelCudaEvent *dst_ready;
  GError *error;                 /* the copy failed after step 1 */
} PeerCopy;

static void
peer_copy_free (PeerCopy *pc)
{
  g_clear_object (&pc->task);
  g_clear_object (&pc->src_dev);
  g_clear_object (&pc->dst_dev);
  g_clear_object (&pc->src);
  g_clear_object (&pc->dst);
  g_clear_pointer (&pc->dst_ready, accel_cuda_event_unref);
  g_clear_pointer (&pc->src_ctx, accel_cuda_context_unref);
  g_clear_pointer (&pc->dst_ctx, accel_cuda_context_unref);
  g_clear_error (&pc->error);
  g_free (pc);
}

/* The words the copies into a context wait on: one pinned block, made
 * once (allocating pinned memory may synchronise the device, which must
 * not happen while a collective waits on it), handed out and taken back on
 * the destination's thread. */
static int
take_flag (AccelCudaContext *ctx, GError **error)
{
  if (ctx->peer_flags == NULL)
    {
      void *block = NULL, *device = NULL;
      if (!ACCEL_CUDA_CHECK (cudaHostAlloc (&block, ACCEL_CUDA_PEER_FLAGS * sizeof (guint32),
                                            cudaHostAllocMapped | cudaHostAllocPortable), error))
        return -1;
      if (!ACCEL_CUDA_CHECK (cudaHostGetDevicePointer (&device, block, 0), error))
        {
          (void) cudaFreeHost (block);
          return -1;
        }
      ctx->peer_flags = block;
      ctx->peer_flags_device = (unsigned long long) (uintptr_t) device;
    }
  for (int i = 0; i < ACCEL_CUDA_PEER_FLAGS; i++)
    if (!(ctx->peer_flags_used[i / 64] & (G_GUINT64_CONSTANT (1) << (i % 64))))
      {
        ctx->peer_flags_used[i / 64] |= G_GUINT64_CONSTANT (1) << (i % 64);
        return i;
      }
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY,
               "copy: %d peer copies into device %d are in flight already", ACCEL_CUDA_PEER_FLAGS, ctx->ordinal);
  return -1;
}

static void
give_flag (AccelCudaContext *ctx, int slot)
{
  if (slot >= 0)
    ctx->peer_flags_used[slot / 64] &= ~(G_GUINT64_CONSTANT (1) << (slot % 64));
}

/* On the destination's thread, after the copy completed or failed. */
static void
cleanup_on_device (gpointer data)
{
  PeerCopy *pc = data;
  /* A context replaced meanwhile took its flags with it. */
  if (pc->dst_ctx && accel_cuda_device_peek_context (pc->dst_dev) == pc->dst_ctx)
    give_flag (pc->dst_ctx, pc->flag_slot);
  peer_copy_free (pc);
}

/* A host function on the peer stream: no CUDA call here. */
static void CUDART_CB
copy_done (void *data)
{
  PeerCopy *pc = data;
  /* Pairs with the release store of a step that failed after setting the error. */
  (void) __atomic_load_n (pc->flag, __ATOMIC_ACQUIRE);
  if (pc->error)
    g_task_return_error (pc->task, g_steal_pointer (&pc->error));
  else
    g_task_return_boolean (pc->task, TRUE);
  accel_dispatcher_post (accel_actor_get_dispatcher (ACCEL_ACTOR (pc->dst_dev)), cleanup_on_device, pc);
}

/* Before step 1 took anything: fail at once. */
static void
fail_early (PeerCopy *pc, GError *error)
{
  g_task_return_error (pc->task, error);
  peer_copy_free (pc);
}

static AccelCudaContext *
live_context (AccelCudaDevice *device, AccelBuffer *buffer, const char *what, GError **error)
{
  AccelCudaContext *ctx = accel_cuda_device_peek_context (device);
  if (ctx == NULL || g_atomic_int_get (&ctx->poisoned))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED, "copy: %s's device “%s” has no live context",
                   what, accel_device_get_name (ACCEL_DEVICE (device)));
      return NULL;
    }
  if (accel_buffer_is_stale (buffer))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_STALE_BUFFER,
                   "copy: “%s” was made in an older generation of “%s”", what,
                   accel_device_get_name (ACCEL_DEVICE (device)));
      return NULL;
    }
  return ctx;
}

/* Lets the source's context reach the destination's memory directly, once
 * per pair, where the topology allows. */
static void
enable_peer_access (AccelCudaContext *ctx, int peer)
{
  if (peer < 0 || peer >= 64 || (ctx->peers_tried & (G_GUINT64_CONSTANT (1) << peer)))
    return;
  ctx->peers_tried |= G_GUINT64_CONSTANT (1) << peer;
  int can = 0;
  if (cudaDeviceCanAccessPeer (&can, ctx->ordinal, peer) == cudaSuccess && can)
    {
      cudaError_t status = cudaDeviceEnablePeerAccess (peer, 0);
      if (status != cudaSuccess && status != cudaErrorPeerAccessAlreadyEnabled)
        g_debug ("cuda: peer access from %d to %d: %s", ctx->ordinal, peer, cudaGetErrorString (status));
    }
  (void) cudaGetLastError ();
}

/* Memory from the destination's pool is open to a peer only once the pool
 * says so (peer access of the contexts does not cover pools). On the
 * destination's thread, once per peer. */
static void
open_pool_to (AccelCudaContext *ctx, int peer)
{
  if (!ctx->use_pool || peer < 0 || peer >= 64 || (ctx->pool_peers & (G_GUINT64_CONSTANT (1) << peer)))
    return;
  ctx->pool_peers |= G_GUINT64_CONSTANT (1) << peer;
  int can = 0;
  if (cudaDeviceCanAccessPeer (&can, peer, ctx->ordinal) == cudaSuccess && can)
    {
      struct cudaMemAccessDesc desc = { 0 };
      desc.location.type = cudaMemLocationTypeDevice;
      desc.location.id = peer;
      desc.flags = cudaMemAccessFlagsProtReadWrite;
      cudaError_t status = cudaMemPoolSetAccess (ctx->pool, &desc, 1);
      if (status != cudaSuccess)
        g_debug ("cuda: opening the pool of %d to %d: %s", ctx->ordinal, peer, cudaGetErrorString (status));
    }
  (void) cudaGetLastError ();
}

/* Step 2, on the source's thread. */
static void
copy_on_source (gpointer data)
{
  PeerCopy *pc = data;
  GError *error = NULL;
  const AccelCudaDriver *drv = accel_cuda_driver_get ();
  AccelCudaContext *ctx = live_context (pc->src_dev, pc->src, "src", &error);
  AccelCudaLane *lane = ctx ? &ctx->lanes[0] : NULL;
  AccelBuffer *root = accel_cuda_root_buffer (pc->src);
  AccelCudaEvent *read = NULL;

  if (ctx)
    pc->src_ctx = accel_cuda_context_ref (ctx);
  if (ctx)
    enable_peer_access (ctx, pc->dst_ctx->ordinal);
  if (ctx == NULL
      || !accel_cuda_order_before (ctx, lane, root, FALSE, &error)
      || !ACCEL_CUDA_CHECK (cudaStreamWaitEvent (lane->stream, pc->dst_ready->event, 0), &error)
      || !ACCEL_CUDA_CHECK (cudaMemcpyPeerAsync (accel_buffer_get_data (pc->dst), pc->dst_ctx->ordinal,
                                                 accel_buffer_get_data (pc->src), ctx->ordinal,
                                                 accel_buffer_get_size (pc->src), lane->stream), &error)
      || (read = accel_cuda_event_acquire (ctx, lane->index, &error)) == NULL
      || !ACCEL_CUDA_CHECK (cudaEventRecord (read->event, lane->stream), &error))
    goto fail;
  if (drv->cuStreamWriteValue32 (lane->stream, pc->flag_device, 1, 0) != 0)
    {
      error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_LIBRARY, "copy: cuStreamWriteValue32 failed");
      goto fail;
    }
  AccelCudaMark read_mark = { read, 0, (gint) lane->index };
  accel_cuda_record_after (ctx, lane, root, FALSE, &read_mark);
  accel_cuda_event_unref (read);
  return;

fail:
  if (read)
    accel_cuda_event_unref (read);
  if (error && g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED) && ctx)
    accel_cuda_context_poison (ctx, error);
  pc->error = error;
  /* Nothing will set the word on the GPU: the host does. */
  __atomic_store_n (pc->flag, 1, __ATOMIC_RELEASE);
}

/* Step 1, on the destination's thread. */
static void
wait_on_destination (gpointer data)
{
  PeerCopy *pc = data;
  GError *error = NULL;
  const AccelCudaDriver *drv = accel_cuda_driver_get ();
  AccelCudaContext *ctx = live_context (pc->dst_dev, pc->dst, "dst", &error);
  if (ctx == NULL)
    {
      fail_early (pc, error);
      return;
    }
  AccelCudaLane *lane = &ctx->lanes[0];
  AccelBuffer *root = accel_cuda_root_buffer (pc->dst);
  AccelCudaEvent *written = NULL;

  open_pool_to (ctx, accel_cuda_device_get_ordinal (pc->src_dev));

  if (ctx->peer_stream == NULL
      && !ACCEL_CUDA_CHECK (cudaStreamCreateWithFlags (&ctx->peer_stream, cudaStreamNonBlocking), &error))
    goto fail;
  if (!accel_cuda_order_before (ctx, lane, root, TRUE, &error)
      || (pc->dst_ready = accel_cuda_event_acquire (ctx, lane->index, &error)) == NULL
      || !ACCEL_CUDA_CHECK (cudaEventRecord (pc->dst_ready->event, lane->stream), &error)
      || (pc->flag_slot = take_flag (ctx, &error)) < 0)
    goto fail;
  pc->flag = ctx->peer_flags + pc->flag_slot;
  __atomic_store_n (pc->flag, 0, __ATOMIC_RELEASE);
  pc->flag_device = ctx->peer_flags_device + pc->flag_slot * sizeof (guint32);
  /* The event the destination's later work waits for: its "lane" is none
   * of the lanes, so every lane waits for it. */
  if (drv->cuStreamWaitValue32 (ctx->peer_stream, pc->flag_device, 1, CU_STREAM_WAIT_VALUE_EQ) != 0)
    {
      error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_LIBRARY, "copy: cuStreamWaitValue32 failed");
      goto fail;
    }
  if ((written = accel_cuda_event_acquire (ctx, ctx->n_lanes, &error)) == NULL
      || !ACCEL_CUDA_CHECK (cudaEventRecord (written->event, ctx->peer_stream), &error)
      || !ACCEL_CUDA_CHECK (cudaLaunchHostFunc (ctx->peer_stream, copy_done, pc), &error))
    {
      /* The stream waits for the word: let it go, then fail. */
      __atomic_store_n (pc->flag, 1, __ATOMIC_RELEASE);
      g_clear_pointer (&written, accel_cuda_event_unref);
      goto fail;
    }
  /* A mark on no lane (the peer stream's): every lane waits for its event. */
  AccelCudaMark written_mark = { written, 0, (gint) ctx->n_lanes };
  accel_cuda_record_after (ctx, lane, root, TRUE, &written_mark);
  accel_cuda_event_unref (written);
  pc->dst_ctx = accel_cuda_context_ref (ctx);
  accel_dispatcher_post (accel_actor_get_dispatcher (ACCEL_ACTOR (pc->src_dev)), copy_on_source, pc);
  return;

fail:
  if (g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED))
    accel_cuda_context_poison (ctx, error);
  give_flag (ctx, pc->flag_slot);
  pc->flag = NULL;
  fail_early (pc, error);
}

gboolean
accel_cuda_backend_can_copy_ (AccelBackend *backend, AccelBuffer *src, AccelBuffer *dst)
{
  AccelDevice *a = accel_buffer_get_device (src), *b = accel_buffer_get_device (dst);
  if (!ACCEL_CUDA_IS_DEVICE (a) || !ACCEL_CUDA_IS_DEVICE (b) || a == b)
    return FALSE;
  const AccelCudaDriver *drv = accel_cuda_driver_get ();
  return drv->cuStreamWaitValue32 != NULL && drv->cuStreamWriteValue32 != NULL
         && accel_buffer_get_size (src) == accel_buffer_get_size (dst);
}

void
accel_cuda_backend_copy_async_ (AccelBackend *backend,
                                AccelBuffer *src,
                                AccelBuffer *dst,
                                GCancellable *cancellable,
                                GAsyncReadyCallback callback,
                                gpointer user_data)
{
  PeerCopy *pc = g_new0 (PeerCopy, 1);
  pc->flag_slot = -1;
  pc->task = g_task_new (backend, cancellable, callback, user_data);
  g_task_set_source_tag (pc->task, accel_cuda_backend_copy_async_);
  pc->src = g_object_ref (src);
  pc->dst = g_object_ref (dst);
  pc->src_dev = g_object_ref (ACCEL_CUDA_DEVICE (accel_buffer_get_device (src)));
  pc->dst_dev = g_object_ref (ACCEL_CUDA_DEVICE (accel_buffer_get_device (dst)));
  accel_dispatcher_post (accel_actor_get_dispatcher (ACCEL_ACTOR (pc->dst_dev)), wait_on_destination, pc);
}

gboolean
accel_cuda_backend_copy_finish_ (AccelBackend *backend, GAsyncResult *result, GError **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}
