/* accel-cuda-context.c: the parts of a CUDA device's context that outlive
 * the device thread's use of them: the refcounted context record, its
 * event pool, the per-buffer record of last writer and readers, and
 * poisoning.
 *
 * Events and buffer records may be released from any thread (a buffer is
 * finalized wherever its last reference goes); the pool is guarded by
 * event_lock, and an event released after its context closed is destroyed
 * instead of pooled.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-private.h"

/* Contexts and events. */

AccelCudaContext *
accel_cuda_context_ref (AccelCudaContext *ctx)
{
  g_atomic_int_inc (&ctx->ref_count);
  return ctx;
}

void
accel_cuda_context_unref (AccelCudaContext *ctx)
{
  if (!g_atomic_int_dec_and_test (&ctx->ref_count))
    return;
  g_mutex_clear (&ctx->event_lock);
  g_mutex_clear (&ctx->poison_lock);
  g_clear_error (&ctx->poison);
  g_free (ctx->lanes);
  g_free (ctx);
}

AccelCudaEvent *
accel_cuda_event_acquire (AccelCudaContext *ctx, guint lane, GError **error)
{
  AccelCudaEvent *event = NULL;

  g_mutex_lock (&ctx->event_lock);
  if (ctx->free_events->len > 0)
    event = g_ptr_array_steal_index_fast (ctx->free_events, ctx->free_events->len - 1);
  g_mutex_unlock (&ctx->event_lock);

  if (event == NULL)
    {
      event = g_new0 (AccelCudaEvent, 1);
      if (!ACCEL_CUDA_CHECK (cudaEventCreateWithFlags (&event->event, ctx->event_flags), error))
        {
          g_free (event);
          return NULL;
        }
      event->ctx = accel_cuda_context_ref (ctx);
    }
  event->ref_count = 1;
  event->lane = lane;
  return event;
}

AccelCudaEvent *
accel_cuda_event_ref (AccelCudaEvent *event)
{
  g_atomic_int_inc (&event->ref_count);
  return event;
}

void
accel_cuda_event_destroy (AccelCudaEvent *event)
{
  (void) cudaEventDestroy (event->event);
  accel_cuda_context_unref (event->ctx);
  g_free (event);
}

/* Any thread. */
void
accel_cuda_event_unref (AccelCudaEvent *event)
{
  if (event == NULL || !g_atomic_int_dec_and_test (&event->ref_count))
    return;
  AccelCudaContext *ctx = event->ctx;
  g_mutex_lock (&ctx->event_lock);
  if (g_atomic_int_get (&ctx->alive))
    {
      g_ptr_array_add (ctx->free_events, event);
      event = NULL;
    }
  g_mutex_unlock (&ctx->event_lock);
  if (event)
    accel_cuda_event_destroy (event);
}

void
accel_cuda_context_poison (AccelCudaContext *ctx, const GError *cause)
{
  gboolean first = FALSE;
  AccelDevice *device = ACCEL_DEVICE (ctx->device);

  g_mutex_lock (&ctx->poison_lock);
  if (ctx->poison == NULL)
    {
      ctx->poison = g_error_new (ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED,
                                 "%s: the CUDA context was poisoned by a sticky error (%s). CUDA cannot "
                                 "recover a poisoned context inside the process that owns it, so this "
                                 "in-process device has failed for good; with isolation=process "
                                 "(ACCEL_CUDA_ISOLATION=process) it would have restarted in a new host "
                                 "process with the work queued behind the fault",
                                 accel_device_get_name (device), cause ? cause->message : "unknown");
      first = TRUE;
    }
  g_mutex_unlock (&ctx->poison_lock);

  if (!first)
    return;
  /* FAILED first: the runtime must not try to reopen the context when the
   * poisoned work completes. */
  accel_device_set_state_failed (device, ctx->poison);
  g_atomic_int_set (&ctx->poisoned, 1);
  if (ctx->completer)
    accel_cuda_completer_wake (ctx->completer);
}

GError *
accel_cuda_context_poison_error (AccelCudaContext *ctx)
{
  g_mutex_lock (&ctx->poison_lock);
  GError *error = ctx->poison ? g_error_copy (ctx->poison)
                              : g_error_new_literal (ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED,
                                                     "cuda: the CUDA context was poisoned");
  g_mutex_unlock (&ctx->poison_lock);
  return error;
}

/* Buffer tracking. */

static void
track_free (gpointer data)
{
  AccelCudaBufferTrack *track = data;
  accel_cuda_event_unref (track->writer);
  for (guint i = 0; i < track->ctx->n_lanes; i++)
    accel_cuda_event_unref (track->readers[i]);
  accel_cuda_context_unref (track->ctx);
  g_free (track);
}

AccelCudaBufferTrack *
accel_cuda_track_peek (AccelCudaContext *ctx, AccelBuffer *root)
{
  AccelCudaBufferTrack *track = accel_buffer_get_backend_data (root);
  return track && track->ctx == ctx ? track : NULL;
}

gboolean
accel_cuda_order_before (AccelCudaContext *ctx, AccelCudaLane *lane, AccelBuffer *root,
                         gboolean writes, GError **error)
{
  AccelCudaBufferTrack *track = accel_cuda_track_peek (ctx, root);
  if (track == NULL)
    return TRUE;
  if (track->writer && track->writer->lane != lane->index
      && !ACCEL_CUDA_CHECK (cudaStreamWaitEvent (lane->stream, track->writer->event, 0), error))
    return FALSE;
  if (writes && ctx->n_lanes > 1)
    for (guint i = 0; i < ctx->n_lanes; i++)
      if (i != lane->index && track->readers[i]
          && !ACCEL_CUDA_CHECK (cudaStreamWaitEvent (lane->stream, track->readers[i]->event, 0), error))
        return FALSE;
  return TRUE;
}

void
accel_cuda_record_after (AccelCudaContext *ctx, AccelCudaLane *lane, AccelBuffer *root,
                         gboolean writes, AccelCudaEvent *event)
{
  AccelCudaBufferTrack *track = accel_cuda_track_peek (ctx, root);
  if (track == NULL)
    {
      track = g_malloc0 (sizeof (AccelCudaBufferTrack) + ctx->n_lanes * sizeof (AccelCudaEvent *));
      track->ctx = accel_cuda_context_ref (ctx);
      accel_buffer_set_backend_data (root, track, track_free);
    }
  if (writes)
    {
      track->write_serial = ++ctx->next_write_serial;
      accel_cuda_event_unref (track->writer);
      track->writer = accel_cuda_event_ref (event);
      for (guint i = 0; i < ctx->n_lanes; i++)
        g_clear_pointer (&track->readers[i], accel_cuda_event_unref);
    }
  else
    {
      accel_cuda_event_unref (track->readers[lane->index]);
      track->readers[lane->index] = accel_cuda_event_ref (event);
    }
}
