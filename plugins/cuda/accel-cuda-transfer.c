/* accel-cuda-transfer.c: WRITE, READ and ZERO work of a CUDA device.
 *
 * Host memory that is already pinned (cudaMallocHost, cudaHostRegister, or
 * the shared memory an `accel-device-host` registers) is copied directly
 * with cudaMemcpyAsync and completed like an op. Pageable memory goes
 * through a small pool of pinned staging chunks, pipelined so the CPU copy
 * of one chunk overlaps the DMA of the previous ones; such a read finishes
 * on the device thread before the work completes.
 *
 * Transfers follow the same last-writer rules as ops.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include "accel-cuda-private.h"

gboolean
accel_cuda_staging_init (AccelCudaContext *ctx, GError **error)
{
  for (guint i = 0; i < ACCEL_CUDA_STAGING_SLOTS; i++)
    {
      AccelCudaStaging *slot = &ctx->staging[i];
      if (slot->host)
        continue;
      if (!ACCEL_CUDA_CHECK (cudaMallocHost (&slot->host, ACCEL_CUDA_STAGING_CHUNK), error))
        {
          slot->host = NULL;
          return FALSE;
        }
      if (!ACCEL_CUDA_CHECK (cudaEventCreateWithFlags (&slot->event, cudaEventDisableTiming), error))
        {
          (void) cudaFreeHost (slot->host);
          slot->host = NULL;
          return FALSE;
        }
      slot->busy = FALSE;
    }
  return TRUE;
}

void
accel_cuda_staging_clear (AccelCudaContext *ctx)
{
  for (guint i = 0; i < ACCEL_CUDA_STAGING_SLOTS; i++)
    {
      AccelCudaStaging *slot = &ctx->staging[i];
      if (slot->host == NULL)
        continue;
      (void) cudaEventSynchronize (slot->event);
      (void) cudaEventDestroy (slot->event);
      (void) cudaFreeHost (slot->host);
      slot->host = NULL;
    }
  (void) cudaGetLastError ();
}

static gboolean
is_pinned (const void *host)
{
  struct cudaPointerAttributes attr;

  if (cudaPointerGetAttributes (&attr, host) != cudaSuccess)
    {
      (void) cudaGetLastError ();
      return FALSE;
    }
  return attr.type == cudaMemoryTypeHost;
}

/* Pageable host -> device, through the staging slots. */
static gboolean
write_staged (AccelCudaContext *ctx, AccelCudaLane *lane, guint8 *dst, const guint8 *src, gsize size,
              GError **error)
{
  if (!accel_cuda_staging_init (ctx, error))
    return FALSE;
  for (gsize off = 0; off < size; off += ACCEL_CUDA_STAGING_CHUNK)
    {
      gsize len = MIN (ACCEL_CUDA_STAGING_CHUNK, size - off);
      AccelCudaStaging *slot = &ctx->staging[ctx->next_staging++ % ACCEL_CUDA_STAGING_SLOTS];
      if (slot->busy && !ACCEL_CUDA_CHECK (cudaEventSynchronize (slot->event), error))
        return FALSE;
      slot->busy = FALSE;
      memcpy (slot->host, src + off, len);
      if (!ACCEL_CUDA_CHECK (cudaMemcpyAsync (dst + off, slot->host, len, cudaMemcpyHostToDevice, lane->stream),
                             error)
          || !ACCEL_CUDA_CHECK (cudaEventRecord (slot->event, lane->stream), error))
        return FALSE;
      slot->busy = TRUE;
    }
  return TRUE;
}

/* Device -> pageable host, through the staging slots; done when it returns. */
static gboolean
read_staged (AccelCudaContext *ctx, AccelCudaLane *lane, guint8 *dst, const guint8 *src, gsize size,
             GError **error)
{
  guint8 *pending_dst[ACCEL_CUDA_STAGING_SLOTS] = { NULL, };
  gsize pending_len[ACCEL_CUDA_STAGING_SLOTS] = { 0, };
  guint first = 0, n_pending = 0;

  if (!accel_cuda_staging_init (ctx, error))
    return FALSE;
  /* Slots left busy by writes of other lanes are waited for as they come. */
  for (guint i = 0; i < ACCEL_CUDA_STAGING_SLOTS; i++)
    if (ctx->staging[i].busy)
      {
        if (!ACCEL_CUDA_CHECK (cudaEventSynchronize (ctx->staging[i].event), error))
          return FALSE;
        ctx->staging[i].busy = FALSE;
      }

  gsize off = 0;
  while (off < size || n_pending > 0)
    {
      if (off < size && n_pending < ACCEL_CUDA_STAGING_SLOTS)
        {
          guint s = (first + n_pending) % ACCEL_CUDA_STAGING_SLOTS;
          AccelCudaStaging *slot = &ctx->staging[s];
          gsize len = MIN (ACCEL_CUDA_STAGING_CHUNK, size - off);
          if (!ACCEL_CUDA_CHECK (cudaMemcpyAsync (slot->host, src + off, len, cudaMemcpyDeviceToHost,
                                                  lane->stream), error)
              || !ACCEL_CUDA_CHECK (cudaEventRecord (slot->event, lane->stream), error))
            return FALSE;
          pending_dst[s] = dst + off;
          pending_len[s] = len;
          n_pending++;
          off += len;
          continue;
        }
      AccelCudaStaging *slot = &ctx->staging[first];
      if (!ACCEL_CUDA_CHECK (cudaEventSynchronize (slot->event), error))
        return FALSE;
      memcpy (pending_dst[first], slot->host, pending_len[first]);
      first = (first + 1) % ACCEL_CUDA_STAGING_SLOTS;
      n_pending--;
    }
  return TRUE;
}

void
accel_cuda_transfer_execute (AccelCudaDevice *self, AccelCudaContext *ctx, AccelCudaLane *lane, AccelWork *work)
{
  AccelWorkKind kind = accel_work_get_kind (work);
  AccelBuffer *buffer = accel_work_get_buffer (work);
  AccelBuffer *root = accel_cuda_root_buffer (buffer);
  gsize host_size = 0;
  guint8 *host = accel_work_get_host_data (work, &host_size);
  guint8 *data = accel_buffer_get_data (buffer);
  gsize size = kind == ACCEL_WORK_ZERO ? accel_buffer_get_size (buffer)
                                       : MIN (host_size, accel_buffer_get_size (buffer));
  gboolean writes = kind != ACCEL_WORK_READ;
  gboolean done_here = FALSE;
  GError *error = NULL;

  if (!accel_cuda_order_before (ctx, lane, root, writes, &error))
    goto fail;

  if (size > 0)
    switch (kind)
      {
      case ACCEL_WORK_ZERO:
        if (!ACCEL_CUDA_CHECK (cudaMemsetAsync (data, 0, size, lane->stream), &error))
          goto fail;
        break;
      case ACCEL_WORK_WRITE:
        if (is_pinned (host))
          {
            if (!ACCEL_CUDA_CHECK (cudaMemcpyAsync (data, host, size, cudaMemcpyHostToDevice, lane->stream),
                                   &error))
              goto fail;
          }
        else if (!write_staged (ctx, lane, data, host, size, &error))
          goto fail;
        break;
      case ACCEL_WORK_READ:
        if (is_pinned (host))
          {
            if (!ACCEL_CUDA_CHECK (cudaMemcpyAsync (host, data, size, cudaMemcpyDeviceToHost, lane->stream),
                                   &error))
              goto fail;
          }
        else
          {
            if (!read_staged (ctx, lane, host, data, size, &error))
              goto fail;
            done_here = TRUE;
          }
        break;
      default:
        g_assert_not_reached ();
      }

  AccelCudaMark mark;
  if (!accel_cuda_lane_mark (lane, &mark, &error))
    goto fail;
  accel_cuda_record_after (ctx, lane, root, writes, &mark);
  if (done_here)
    {
      accel_cuda_mark_clear (&mark);
      accel_device_complete_work (ACCEL_DEVICE (self), work, NULL);
      return;
    }
  accel_cuda_completer_push (ctx->completer, lane, work, &mark);
  return;

fail:
  accel_cuda_device_fail_work (self, ctx, work, error);
}
