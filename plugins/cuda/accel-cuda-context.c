/* accel-cuda-context.c: the parts of a CUDA device's context that outlive
 * the device thread's use of them: the refcounted context record, its
 * event pool, marks (where a lane's work ends: a lane flag's value, or an
 * event), the per-buffer record of last writer and readers, and
 * poisoning.
 *
 * With lane flags, an op costs no event: the GPU writes the lane's next
 * sequence number into the lane's flag behind the op's work; the
 * completion thread polls the flags, and work on another lane that must
 * follow it waits for the flag on the GPU (cuStreamWaitValue32), or not at
 * all when the flag has already got there.
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
  return g_atomic_rc_box_acquire (ctx);
}

static void
context_clear (gpointer data)
{
  AccelCudaContext *ctx = data;
  g_mutex_clear (&ctx->event_lock);
  g_mutex_clear (&ctx->poison_lock);
  g_clear_error (&ctx->poison);
  if (ctx->flags)
    (void) cudaFreeHost (ctx->flags);
  for (guint i = 0; ctx->lanes && i < ctx->n_lanes; i++)
    g_free (ctx->lanes[i].ring);
  g_free (ctx->lanes);
}

void
accel_cuda_context_unref (AccelCudaContext *ctx)
{
  g_atomic_rc_box_release_full (ctx, context_clear);
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

/* Marks. */

/* On the device thread, right after work was enqueued on @lane. */
gboolean
accel_cuda_lane_mark (AccelCudaLane *lane, AccelCudaMark *mark, GError **error)
{
  mark->lane = lane->index;
  mark->event = NULL;
  mark->seq = 0;
  if (lane->flag != NULL)
    {
      guint32 seq = lane->flag_seq + 1;
      if (seq == 0)
        seq = 1;
      if (!accel_cuda_check_driver (accel_cuda_driver_get ()->cuStreamWriteValue32 (lane->stream, lane->flag_device, seq, 0),
                                    "cuStreamWriteValue32 of a lane's flag", error))
        {
          mark->lane = -1;
          return FALSE;
        }
      lane->flag_seq = seq;
      mark->seq = seq;
      return TRUE;
    }
  AccelCudaEvent *event = accel_cuda_event_acquire (lane->ctx, lane->index, error);
  if (event == NULL)
    {
      mark->lane = -1;
      return FALSE;
    }
  if (!ACCEL_CUDA_CHECK (cudaEventRecord (event->event, lane->stream), error))
    {
      accel_cuda_event_unref (event);
      mark->lane = -1;
      return FALSE;
    }
  mark->event = event;
  return TRUE;
}

/* Whether the GPU is known to be past @mark (flags only: an event is not
 * asked, which would cost a driver call). */
gboolean
accel_cuda_mark_reached (AccelCudaContext *ctx, const AccelCudaMark *mark)
{
  if (mark->lane < 0)
    return TRUE;
  if (mark->event != NULL)
    return FALSE;
  guint32 reached = __atomic_load_n (ctx->lanes[mark->lane].flag, __ATOMIC_ACQUIRE);
  return (gint32) (reached - mark->seq) >= 0;
}

void
accel_cuda_mark_clear (AccelCudaMark *mark)
{
  g_clear_pointer (&mark->event, accel_cuda_event_unref);
  mark->seq = 0;
  mark->lane = -1;
}

static void
mark_set (AccelCudaMark *dst, const AccelCudaMark *src)
{
  AccelCudaEvent *old = dst->event;
  dst->event = src->event ? accel_cuda_event_ref (src->event) : NULL;
  dst->seq = src->seq;
  dst->lane = src->lane;
  accel_cuda_event_unref (old);
}

/* Makes @lane's later work wait on the GPU for @mark, of another lane. */
static gboolean
wait_for_mark (AccelCudaContext *ctx, AccelCudaLane *lane, const AccelCudaMark *mark, GError **error)
{
  if (mark->lane < 0 || (guint) mark->lane == lane->index || accel_cuda_mark_reached (ctx, mark))
    return TRUE;
  if (mark->event != NULL)
    return ACCEL_CUDA_CHECK (cudaStreamWaitEvent (lane->stream, mark->event->event, 0), error);
  /* Flag values wrap: the wait compares them cyclically (GEQ, flags 0). */
  return accel_cuda_check_driver (accel_cuda_driver_get ()->cuStreamWaitValue32 (lane->stream,
                                                                                  ctx->lanes[mark->lane].flag_device,
                                                                                  mark->seq, 0),
                                  "cuStreamWaitValue32 on a lane's flag", error);
}

/* Buffer tracking. */

/* The buffer that owns @buffer's memory: a view's base, followed to the
 * end. Tracks hang off it, so every view of it orders alike. */
AccelBuffer *
accel_cuda_root_buffer (AccelBuffer *buffer)
{
  AccelBuffer *base;
  while ((base = accel_buffer_get_base (buffer)) != NULL)
    buffer = base;
  return buffer;
}

static void
track_free (gpointer data)
{
  AccelCudaBufferTrack *track = data;
  accel_cuda_mark_clear (&track->writer);
  for (guint i = 0; i < track->ctx->n_lanes; i++)
    accel_cuda_mark_clear (&track->readers[i]);
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
  if (!wait_for_mark (ctx, lane, &track->writer, error))
    return FALSE;
  if (writes && ctx->n_lanes > 1)
    for (guint i = 0; i < ctx->n_lanes; i++)
      if (!wait_for_mark (ctx, lane, &track->readers[i], error))
        return FALSE;
  return TRUE;
}

void
accel_cuda_record_after (AccelCudaContext *ctx, AccelCudaLane *lane, AccelBuffer *root,
                         gboolean writes, const AccelCudaMark *mark)
{
  AccelCudaBufferTrack *track = accel_cuda_track_peek (ctx, root);
  if (track == NULL)
    {
      /* Once per buffer and context, not per op. */
      track = g_malloc0 (sizeof (AccelCudaBufferTrack) + ctx->n_lanes * sizeof (AccelCudaMark));
      track->ctx = accel_cuda_context_ref (ctx);
      track->writer.lane = -1;
      for (guint i = 0; i < ctx->n_lanes; i++)
        track->readers[i].lane = -1;
      accel_buffer_set_backend_data (root, track, track_free);
    }
  if (writes)
    {
      track->write_serial = ++ctx->next_write_serial;
      mark_set (&track->writer, mark);
      for (guint i = 0; i < ctx->n_lanes; i++)
        accel_cuda_mark_clear (&track->readers[i]);
    }
  else
    mark_set (&track->readers[lane->index], mark);
}
