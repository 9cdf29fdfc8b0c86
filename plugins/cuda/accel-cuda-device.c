/* accel-cuda-device.c: a CUDA device whose context lives in this process.
 *
 * The context (AccelCudaContext) is what open_context makes and
 * close_context drops, on the device thread: the lanes (a non-blocking
 * stream each, with their library handles), a stream-ordered memory pool,
 * an event pool, a pinned staging pool for pageable host memory, and the
 * completion thread.
 *
 * execute() runs on the device thread. It picks a lane, makes the lane wait
 * for the last writers (and, before a write, the readers) of the op's
 * buffers on other lanes, lets the kernel enqueue its work, marks the end
 * of that work (the lane flag's next value, written by the GPU; an event
 * where there are no lane flags), makes the mark the last writer or a
 * reader of each buffer, and hands the work to the completion thread.
 * Nothing here waits for the GPU, and nothing is allocated per op.
 *
 * A sticky error (illegal address, …) cannot be cured in the process that
 * owns the context, so it poisons the context for good: the device goes to
 * FAILED, saying that isolation=process would have restarted it, and every
 * work item in flight fails once with %ACCEL_ERROR_CONTEXT_POISONED.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdint.h>
#include <string.h>
#include "accel-cuda-private.h"

/**
 * AccelCudaDevice:
 *
 * A CUDA GPU driven from this process (`isolation = none`, or the device
 * inside an `accel-device-host`). Its properties describe the GPU as the
 * CUDA runtime reports it.
 */
struct _AccelCudaDevice {
  AccelDevice parent_instance;

  AccelCudaGpuInfo gpu;
  gboolean use_pool;        /* of the last context: how detached memory is freed */

  /* Swapped by open/close_context on the device thread, under the runtime's
   * context lock held for writing; read by mem_alloc/mem_free under it for
   * reading. */
  AccelCudaContext *ctx;

  /* execute_op's scratch: the roots of an op's buffers and whether it
   * writes each; device thread only. */
  GPtrArray *roots;
  GArray *writes;
};

ACCEL_CUDA_GPU_GLUE (accel_cuda_device, ACCEL_CUDA_DEVICE)

G_DEFINE_FINAL_TYPE_WITH_CODE (AccelCudaDevice, accel_cuda_device, ACCEL_TYPE_DEVICE,
                               G_IMPLEMENT_INTERFACE (ACCEL_CUDA_TYPE_GPU, accel_cuda_device_gpu_init))

AccelCudaContext *
accel_cuda_device_peek_context (AccelCudaDevice *self)
{
  return self->ctx;
}

/* Completes @work with @error, poisoning the context first if @error says
 * the context is gone. Takes @error. */
void
accel_cuda_device_fail_work (AccelCudaDevice *self, AccelCudaContext *ctx, AccelWork *work, GError *error)
{
  if (g_error_matches (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED))
    {
      accel_cuda_context_poison (ctx, error);
      g_clear_error (&error);
      error = accel_cuda_context_poison_error (ctx);
    }
  accel_device_complete_work (ACCEL_DEVICE (self), work, error);
}

/* Lanes. */

static AccelCudaLane *
pick_lane (AccelCudaContext *ctx, int asked, AccelBuffer *hint)
{
  if (asked >= 0)
    return &ctx->lanes[(guint) asked % ctx->n_lanes];
  if (ctx->n_lanes == 1)
    return &ctx->lanes[0];

  /* Keep dependent work on the lane that wrote its input: no waits. */
  if (hint)
    {
      AccelCudaBufferTrack *track = accel_cuda_track_peek (ctx, hint);
      /* (A peer copy's writer is on no lane.) */
      if (track && track->writer.lane >= 0 && (guint) track->writer.lane < ctx->n_lanes)
        return &ctx->lanes[track->writer.lane];
      for (guint i = 0; track && i < ctx->n_lanes; i++)
        if (track->readers[i].lane >= 0)
          return &ctx->lanes[i];
    }

  /* Otherwise the least busy lane, starting after the last one picked. */
  guint best = ctx->next_lane % ctx->n_lanes;
  guint best_pending = G_MAXUINT;
  for (guint k = 0; k < ctx->n_lanes; k++)
    {
      guint i = (ctx->next_lane + k) % ctx->n_lanes;
      guint pending = accel_cuda_lane_pending (&ctx->lanes[i]);
      if (pending < best_pending)
        {
          best = i;
          best_pending = pending;
          if (pending == 0)
            break;
        }
    }
  ctx->next_lane = best + 1;
  return &ctx->lanes[best];
}

/* AccelDevice */

static void
context_destroy (AccelCudaContext *ctx)
{
  if (ctx->completer)
    accel_cuda_completer_free (g_steal_pointer (&ctx->completer));
  for (guint i = 0; i < ctx->n_lanes; i++)
    accel_cuda_lane_clear (&ctx->lanes[i]);
  if (ctx->peer_stream)
    {
      /* A peer copy whose source will not come must not hold the stream. */
      for (guint i = 0; ctx->peer_flags && i < ACCEL_CUDA_PEER_FLAGS; i++)
        __atomic_store_n (&ctx->peer_flags[i], 1, __ATOMIC_RELEASE);
      (void) cudaStreamSynchronize (ctx->peer_stream);
      (void) cudaStreamDestroy (ctx->peer_stream);
      ctx->peer_stream = NULL;
    }
  if (ctx->peer_flags)
    {
      (void) cudaFreeHost (ctx->peer_flags);
      ctx->peer_flags = NULL;
    }
  accel_cuda_staging_clear (ctx);
  /* The lane flags stay until the record's last reference goes
   * (accel_cuda_context_unref): a blocking caller's poll, which holds one,
   * may still read them. Being portable, they do not go with the context. */

  g_mutex_lock (&ctx->event_lock);
  g_atomic_int_set (&ctx->alive, 0);
  GPtrArray *events = g_steal_pointer (&ctx->free_events);
  g_mutex_unlock (&ctx->event_lock);
  if (events)
    {
      for (guint i = 0; i < events->len; i++)
        accel_cuda_event_destroy (events->pdata[i]);
      g_ptr_array_unref (events);
    }
  if (ctx->pool)
    {
      /* Memory still held by buffers of this generation is released with
       * the pool once the last of it is freed. */
      (void) cudaMemPoolDestroy (ctx->pool);
      ctx->pool = NULL;
    }
  (void) cudaGetLastError ();
  accel_cuda_context_unref (ctx);
}

static gboolean
accel_cuda_device_open_context (AccelDevice *device, GError **error)
{
  AccelCudaDevice *self = ACCEL_CUDA_DEVICE (device);
  AccelCudaContext *ctx = g_atomic_rc_box_new0 (AccelCudaContext);
  guint n_lanes = MIN (accel_device_get_lanes (device), ACCEL_CUDA_MAX_LANES);

  ctx->alive = 1;
  ctx->device = self;
  ctx->ordinal = self->gpu.ordinal;
  ctx->free_events = g_ptr_array_new ();
  ctx->event_flags = cudaEventDisableTiming
                     | (self->gpu.completion == ACCEL_CUDA_COMPLETION_SYNC ? cudaEventBlockingSync : 0);
  g_mutex_init (&ctx->event_lock);
  g_mutex_init (&ctx->poison_lock);

  /* The device thread keeps this device current for good. */
  if (!ACCEL_CUDA_CHECK (cudaSetDevice (self->gpu.ordinal), error)
      || !ACCEL_CUDA_CHECK (cudaFree (NULL), error))
    goto fail;

  struct cudaMemPoolProps props = { 0 };
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = self->gpu.ordinal;
  if (!ACCEL_CUDA_CHECK (cudaMemPoolCreate (&ctx->pool, &props), error))
    goto fail;
  /* Keep freed memory cached in the pool, as framework allocators do; an
   * allocation that fails trims the pool and tries again. */
  guint64 threshold = UINT64_MAX;
  if (!ACCEL_CUDA_CHECK (cudaMemPoolSetAttribute (ctx->pool, cudaMemPoolAttrReleaseThreshold, &threshold),
                         error))
    goto fail;

  /* ACCEL_CUDA_MEMPOOL=0 gives buffers plain cudaMalloc memory, to compare
   * against; cudaFree synchronizes the device, so it is not the default. */
  ctx->use_pool = g_strcmp0 (g_getenv ("ACCEL_CUDA_MEMPOOL"), "0") != 0;
  self->use_pool = ctx->use_pool;

  ctx->n_lanes = 0;
  ctx->lanes = g_new0 (AccelCudaLane, MAX (n_lanes, 1));
  for (guint i = 0; i < MAX (n_lanes, 1); i++)
    {
      ctx->n_lanes = i + 1;
      if (!accel_cuda_lane_init (&ctx->lanes[i], ctx, i, error))
        goto fail;
    }

  /* Lane flags for the poll strategy: one cache line of mapped pinned
   * memory per lane. Without stream memory operations, or with
   * ACCEL_CUDA_POLL_FLAGS=0, an event per op instead. */
  if (self->gpu.completion == ACCEL_CUDA_COMPLETION_POLL && g_strcmp0 (g_getenv ("ACCEL_CUDA_POLL_FLAGS"), "0") != 0
      && accel_cuda_driver_get ()->have_stream_memops)
    {
      if (!ACCEL_CUDA_CHECK (cudaHostAlloc (&ctx->flags, 64 * ctx->n_lanes, cudaHostAllocMapped | cudaHostAllocPortable),
                             error))
        goto fail;
      memset (ctx->flags, 0, 64 * ctx->n_lanes);
      for (guint i = 0; i < ctx->n_lanes; i++)
        {
          void *device_ptr = NULL;
          AccelCudaLane *lane = &ctx->lanes[i];
          lane->flag = (volatile guint32 *) ((guint8 *) ctx->flags + 64 * i);
          if (!ACCEL_CUDA_CHECK (cudaHostGetDevicePointer (&device_ptr, (void *) lane->flag, 0), error))
            goto fail;
          lane->flag_device = (unsigned long long) (uintptr_t) device_ptr;
        }
    }

  ctx->completer = accel_cuda_completer_new (ctx, self->gpu.completion, error);
  if (ctx->completer == NULL)
    goto fail;

  self->ctx = ctx;
  return TRUE;

fail:
  g_prefix_error (error, "%s: cannot open the CUDA context: ", accel_device_get_name (device));
  context_destroy (ctx);
  return FALSE;
}

static void
accel_cuda_device_close_context (AccelDevice *device)
{
  AccelCudaDevice *self = ACCEL_CUDA_DEVICE (device);
  AccelCudaContext *ctx = g_steal_pointer (&self->ctx);

  if (ctx)
    context_destroy (ctx);
}

static gpointer
accel_cuda_device_mem_alloc (AccelDevice *device, gsize size, GError **error)
{
  AccelCudaDevice *self = ACCEL_CUDA_DEVICE (device);
  AccelCudaContext *ctx = self->ctx;
  void *memory = NULL;

  if (ctx == NULL)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED,
                   "%s: no open context to allocate in", accel_device_get_name (device));
      return NULL;
    }
  if (g_atomic_int_get (&ctx->poisoned))
    {
      g_propagate_error (error, accel_cuda_context_poison_error (ctx));
      return NULL;
    }

  /* Any thread: allocate in stream order on this thread's own stream and
   * wait for it, so the memory is ready for every lane. The caller's
   * current device is put back afterwards. */
  int previous = -1;
  (void) cudaGetDevice (&previous);
  cudaError_t status = previous == self->gpu.ordinal ? cudaSuccess : cudaSetDevice (self->gpu.ordinal);
  if (status == cudaSuccess && !ctx->use_pool)
    {
      status = cudaMalloc (&memory, size);
      if (previous >= 0 && previous != self->gpu.ordinal)
        (void) cudaSetDevice (previous);
      if (status == cudaSuccess)
        return memory;
    }
  else if (status == cudaSuccess)
    status = cudaMallocFromPoolAsync (&memory, size, ctx->pool, cudaStreamPerThread);
  if (status == cudaErrorMemoryAllocation && ctx->use_pool)
    {
      /* Give the pool's cached memory back and try once more. */
      (void) cudaGetLastError ();
      (void) cudaDeviceSynchronize ();
      (void) cudaMemPoolTrimTo (ctx->pool, 0);
      status = cudaMallocFromPoolAsync (&memory, size, ctx->pool, cudaStreamPerThread);
    }
  if (status == cudaSuccess && ctx->use_pool)
    status = cudaStreamSynchronize (cudaStreamPerThread);
  if (previous >= 0 && previous != self->gpu.ordinal)
    (void) cudaSetDevice (previous);
  if (status != cudaSuccess)
    {
      GError *local = accel_cuda_error_new (status, "cudaMallocFromPoolAsync");
      if (!accel_cuda_error_is_sticky (status))
        (void) cudaGetLastError ();
      if (local->code == ACCEL_ERROR_OUT_OF_MEMORY)
        {
          /* What the failed attempt reserved goes back before the figures
           * are read, for other users of the GPU too. */
          if (ctx->use_pool)
            (void) cudaMemPoolTrimTo (ctx->pool, 0);
          size_t free_b = 0, total_b = 0;
          (void) cudaMemGetInfo (&free_b, &total_b);
          (void) cudaGetLastError ();
          g_clear_error (&local);
          local = g_error_new (ACCEL_ERROR, ACCEL_ERROR_OUT_OF_MEMORY,
                               "%s: cannot allocate %" G_GSIZE_FORMAT " bytes of device memory "
                               "(%" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT " bytes free)",
                               accel_device_get_name (device), size, (gsize) free_b, (gsize) total_b);
        }
      else if (local->code == ACCEL_ERROR_CONTEXT_POISONED)
        accel_cuda_context_poison (ctx, local);
      g_propagate_error (error, local);
      return NULL;
    }
  return memory;
}

/* From any thread: the calling thread's current device is left as it was. */
static void
free_on_device (AccelCudaDevice *self, gpointer memory, gboolean from_pool)
{
  int previous = -1;
  (void) cudaGetDevice (&previous);
  if ((previous != self->gpu.ordinal && cudaSetDevice (self->gpu.ordinal) != cudaSuccess)
      || (from_pool ? cudaFreeAsync (memory, cudaStreamPerThread) : cudaFree (memory)) != cudaSuccess)
    (void) cudaGetLastError ();
  if (previous >= 0 && previous != self->gpu.ordinal)
    (void) cudaSetDevice (previous);
}

static void
accel_cuda_device_mem_free (AccelDevice *device, gpointer memory, gsize size)
{
  AccelCudaDevice *self = ACCEL_CUDA_DEVICE (device);

  if (self->ctx == NULL || memory == NULL || g_atomic_int_get (&self->ctx->poisoned))
    return;
  /* Every op that used the memory has completed: its buffer outlived them. */
  free_on_device (self, memory, self->ctx->use_pool);
}

static gboolean
accel_cuda_device_get_dlpack_device (AccelDevice *device, gint32 *device_type, gint32 *device_id)
{
  *device_type = ACCEL_DLPACK_DEVICE_CUDA;
  *device_id = ACCEL_CUDA_DEVICE (device)->gpu.ordinal;
  return TRUE;
}

/* Called under the runtime's context lock. Closing a context frees no
 * buffer memory (the pool, once destroyed, lets go of its memory as the
 * last of it is freed; cudaMalloc memory is freed by its buffer), so a
 * detached block only needs its buffer to free it in any generation. */
static gboolean
accel_cuda_device_detach_memory (AccelDevice *device, gpointer memory, gsize size)
{
  AccelCudaDevice *self = ACCEL_CUDA_DEVICE (device);
  return self->ctx != NULL && !g_atomic_int_get (&self->ctx->poisoned);
}

/* After a sticky error nothing can be freed: the calls fail harmlessly. */
static void
accel_cuda_device_free_detached_memory (AccelDevice *device, gpointer memory, gsize size)
{
  AccelCudaDevice *self = ACCEL_CUDA_DEVICE (device);
  free_on_device (self, memory, self->use_pool);
}

static void
execute_op (AccelCudaDevice *self, AccelCudaContext *ctx, AccelWork *work)
{
  AccelOp *op = accel_work_get_op (work);
  const AccelKernel *kernel = accel_work_get_kernel (work);
  GError *error = NULL;

  gint64 trace_start = G_UNLIKELY (accel_cuda_trace_enabled ()) ? accel_cuda_trace_now () : 0;

  if (kernel == NULL)
    {
      accel_device_complete_work (ACCEL_DEVICE (self), work,
                                  g_error_new (ACCEL_ERROR, ACCEL_ERROR_NO_KERNEL,
                                               "%s: no kernel was chosen for op “%s”",
                                               accel_device_get_name (ACCEL_DEVICE (self)),
                                               accel_op_get_type_name (op)));
      return;
    }

  /* The op's buffers, as it lists them: properties, then extra buffers
   * (the arguments of a launch, the buffers of a graph). */
  guint n_slots = accel_op_get_n_buffer_slots (op);
  g_ptr_array_set_size (self->roots, 0);
  g_array_set_size (self->writes, 0);
  AccelBuffer *hint = NULL, *write_hint = NULL;
  for (guint i = 0; i < n_slots; i++)
    {
      AccelAccess access = 0;
      AccelBuffer *b = accel_op_peek_buffer_slot (op, i, &access, NULL);
      if (b == NULL)
        continue;
      AccelBuffer *root = accel_cuda_root_buffer (b);
      gboolean writes = (access & ACCEL_ACCESS_WRITE) != 0;
      g_ptr_array_add (self->roots, root);
      g_array_append_val (self->writes, writes);
      if (accel_cuda_track_peek (ctx, root) != NULL)
        {
          if (hint == NULL && (access & ACCEL_ACCESS_READ))
            hint = root;
          if (write_hint == NULL)
            write_hint = root;
        }
    }
  guint n = self->roots->len;
  AccelBuffer **roots = (AccelBuffer **) self->roots->pdata;
  const gboolean *writes = (const gboolean *) self->writes->data;

  /* An input's writer first; else whoever touched an output last, so that
   * a run of ops on one buffer stays on one lane. */
  AccelCudaLane *lane = pick_lane (ctx, accel_work_get_lane (work), hint ? hint : write_hint);
  if (G_UNLIKELY (accel_cuda_nvtx_enabled ()))
    lane->nvtx_range = accel_cuda_nvtx_start (accel_op_get_type_name (op), lane->index);
  for (guint i = 0; i < n; i++)
    if (!accel_cuda_order_before (ctx, lane, roots[i], writes[i], &error))
      {
        accel_cuda_device_fail_work (self, ctx, work, error);
        return;
      }

  if (G_UNLIKELY (trace_start))
    accel_cuda_trace_record (ACCEL_CUDA_TRACE_ORDERED, trace_start);
  gboolean ok = accel_kernel_run (kernel, op, lane, &error);
  if (G_UNLIKELY (trace_start))
    accel_cuda_trace_record (ACCEL_CUDA_TRACE_LAUNCHED, trace_start);
  if (!ok && error == NULL)
    error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_FAILED,
                         "%s: the kernel of op “%s” failed without saying why",
                         accel_device_get_name (ACCEL_DEVICE (self)), accel_op_get_type_name (op));
  if (G_UNLIKELY (lane->check != NULL))
    {
      /* The codes' copy must be enqueued before their workspace goes back. */
      if (!ok)
        accel_cuda_lane_drop_check (lane);
      else if (!accel_cuda_lane_enqueue_check (lane, &error))
        ok = FALSE;
    }
  if (G_UNLIKELY (lane->workspaces->len > 0))
    {
      GError *ws_error = NULL;
      if (!accel_cuda_lane_release_workspaces (lane, &ws_error) && error == NULL)
        {
          ok = FALSE;
          error = ws_error;
        }
      else
        g_clear_error (&ws_error);
    }
  if (ok)
    {
      /* A launch error that the kernel did not check is still ours. */
      cudaError_t launch = cudaPeekAtLastError ();
      if (G_UNLIKELY (launch != cudaSuccess))
        {
          ok = FALSE;
          (void) accel_cuda_check (launch, accel_op_get_type_name (op), &error);
        }
    }

  /* Marked right behind the kernel: for a tiny op the flag's write is on
   * the critical path. */
  AccelCudaMark mark = ACCEL_CUDA_MARK_NONE;
  if (error == NULL || error->code != ACCEL_ERROR_CONTEXT_POISONED)
    {
      GError *mark_error = NULL;
      if (!accel_cuda_lane_mark (lane, &mark, &mark_error))
        {
          if (error == NULL)
            error = mark_error;
          else
            g_clear_error (&mark_error);
        }
    }
  if (mark.lane >= 0)
    {
      /* Even a failed kernel may have enqueued writes: order after them. */
      for (guint i = 0; i < n; i++)
        accel_cuda_record_after (ctx, lane, roots[i], writes[i], &mark);
    }

  if (error)
    {
      accel_cuda_lane_drop_check (lane);
      accel_cuda_mark_clear (&mark);
      accel_cuda_device_fail_work (self, ctx, work, error);
      return;
    }
  if (G_UNLIKELY (trace_start))
    accel_cuda_trace_record (ACCEL_CUDA_TRACE_RECORDED, trace_start);
  lane->trace_start = trace_start;
  accel_cuda_completer_push (ctx->completer, lane, work, &mark);
  if (G_UNLIKELY (trace_start))
    accel_cuda_trace_record (ACCEL_CUDA_TRACE_PUSHED, trace_start);
}

/* Work that failed before its entry was pushed ends its range here. */
static void
end_unpushed_range (AccelCudaLane *lane)
{
  if (G_UNLIKELY (lane->nvtx_range))
    {
      accel_cuda_nvtx_end (lane->nvtx_range);
      lane->nvtx_range = 0;
    }
}

static void
accel_cuda_device_execute (AccelDevice *device, AccelWork *work)
{
  AccelCudaDevice *self = ACCEL_CUDA_DEVICE (device);
  AccelCudaContext *ctx = self->ctx;

  if (G_UNLIKELY (ctx == NULL))
    {
      accel_device_complete_work (device, work,
                                  g_error_new (ACCEL_ERROR, ACCEL_ERROR_DEVICE_FAILED,
                                               "%s: no open CUDA context", accel_device_get_name (device)));
      return;
    }
  if (G_UNLIKELY (g_atomic_int_get (&ctx->poisoned)))
    {
      accel_device_complete_work (device, work, accel_cuda_context_poison_error (ctx));
      return;
    }

  switch (accel_work_get_kind (work))
    {
    case ACCEL_WORK_OP:
      execute_op (self, ctx, work);
      if (G_UNLIKELY (accel_cuda_nvtx_enabled ()))
        for (guint i = 0; i < ctx->n_lanes; i++)
          end_unpushed_range (&ctx->lanes[i]);
      break;
    case ACCEL_WORK_WRITE:
    case ACCEL_WORK_READ:
    case ACCEL_WORK_ZERO:
      {
        AccelBuffer *root = accel_cuda_root_buffer (accel_work_get_buffer (work));
        AccelCudaLane *lane = pick_lane (ctx, accel_work_get_lane (work), root);
        if (G_UNLIKELY (accel_cuda_nvtx_enabled ()))
          {
            AccelWorkKind kind = accel_work_get_kind (work);
            lane->nvtx_range = accel_cuda_nvtx_start (kind == ACCEL_WORK_WRITE ? "write"
                                                      : kind == ACCEL_WORK_READ ? "read" : "zero", lane->index);
          }
        accel_cuda_transfer_execute (self, ctx, lane, work);
        end_unpushed_range (lane);
      }
      break;
    default:
      accel_device_complete_work (device, work,
                                  g_error_new (ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                                               "%s: unknown kind of work %d", accel_device_get_name (device),
                                               accel_work_get_kind (work)));
    }
}

static void
accel_cuda_device_query_memory (AccelDevice *device, guint64 *total, guint64 *free_bytes)
{
  AccelCudaDevice *self = ACCEL_CUDA_DEVICE (device);
  size_t f = 0, t = 0;

  /* Not self->ctx: this runs on any thread, outside the context lock, and
   * a close may free it meanwhile. A poisoned context answers with its
   * sticky error, which leaves the figures unknown. */
  if (accel_device_get_state (device) == ACCEL_DEVICE_STATE_FAILED)
    return;
  int previous = -1;
  (void) cudaGetDevice (&previous);
  gboolean ok = (previous == self->gpu.ordinal || cudaSetDevice (self->gpu.ordinal) == cudaSuccess)
                && cudaMemGetInfo (&f, &t) == cudaSuccess;
  if (!ok)
    (void) cudaGetLastError ();
  if (previous >= 0 && previous != self->gpu.ordinal)
    (void) cudaSetDevice (previous);
  if (ok)
    {
      *total = t;
      *free_bytes = f;
    }
}

/* AccelActor: the one message a CUDA device understands is the host
 * process's announcement of its shared transfer memory, which is registered
 * as pinned so that transfers through it are direct DMA. */
static GVariant *
accel_cuda_device_receive (AccelActor *actor, GVariant *message, GError **error)
{
  AccelCudaDevice *self = ACCEL_CUDA_DEVICE (actor);
  const char *name = NULL;
  guint64 address = 0, size = 0;

  if (!g_variant_is_of_type (message, G_VARIANT_TYPE ("(stt)")))
    return NULL;
  g_variant_get (message, "(&stt)", &name, &address, &size);
  if (g_strcmp0 (name, ACCEL_REMOTE_DEVICE_HOST_MEMORY_MESSAGE) != 0)
    return NULL;

  /* Not being able to pin it only makes transfers slower (they go through
   * the staging chunks), so it is no failure of the device. */
  g_autoptr(GError) local = NULL;
  if (!ACCEL_CUDA_CHECK (cudaSetDevice (self->gpu.ordinal), &local)
      || !ACCEL_CUDA_CHECK (cudaHostRegister (GSIZE_TO_POINTER ((gsize) address), (size_t) size,
                                              cudaHostRegisterDefault), &local))
    {
      g_message ("%s: transfers go through staging memory: cannot pin the host process's transfer memory: %s",
                 accel_device_get_name (ACCEL_DEVICE (self)), local->message);
      return g_variant_ref_sink (g_variant_new_boolean (FALSE));
    }
  return g_variant_ref_sink (g_variant_new_boolean (TRUE));
}

/* GObject */

static void
accel_cuda_device_finalize (GObject *object)
{
  AccelCudaDevice *self = ACCEL_CUDA_DEVICE (object);

  accel_cuda_gpu_info_clear (&self->gpu);
  g_ptr_array_unref (self->roots);
  g_array_unref (self->writes);
  G_OBJECT_CLASS (accel_cuda_device_parent_class)->finalize (object);
}

static void
accel_cuda_device_constructed (GObject *object)
{
  accel_cuda_gpu_info_constructed (&ACCEL_CUDA_DEVICE (object)->gpu);
  G_OBJECT_CLASS (accel_cuda_device_parent_class)->constructed (object);
}

static void
accel_cuda_device_class_init (AccelCudaDeviceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelDeviceClass *device_class = ACCEL_DEVICE_CLASS (klass);

  object_class->constructed = accel_cuda_device_constructed;
  object_class->finalize = accel_cuda_device_finalize;
  object_class->set_property = accel_cuda_device_set_property;
  object_class->get_property = accel_cuda_device_get_property;

  ACCEL_ACTOR_CLASS (klass)->receive = accel_cuda_device_receive;

  device_class->open_context = accel_cuda_device_open_context;
  device_class->close_context = accel_cuda_device_close_context;
  device_class->mem_alloc = accel_cuda_device_mem_alloc;
  device_class->mem_free = accel_cuda_device_mem_free;
  device_class->execute = accel_cuda_device_execute;
  device_class->query_memory = accel_cuda_device_query_memory;
  device_class->get_dlpack_device = accel_cuda_device_get_dlpack_device;
  device_class->detach_memory = accel_cuda_device_detach_memory;
  device_class->free_detached_memory = accel_cuda_device_free_detached_memory;

  accel_cuda_gpu_override_properties (object_class);
}

static void
accel_cuda_device_init (AccelCudaDevice *self)
{
  self->roots = g_ptr_array_new ();
  self->writes = g_array_new (FALSE, FALSE, sizeof (gboolean));
}

/**
 * accel_cuda_device_get_ordinal:
 * @self: a CUDA device
 *
 * Returns: its CUDA device ordinal in this process
 */
int
accel_cuda_device_get_ordinal (AccelCudaDevice *self)
{
  g_return_val_if_fail (ACCEL_CUDA_IS_DEVICE (self), -1);
  return self->gpu.ordinal;
}

/**
 * accel_cuda_device_get_device_name:
 * @self: a CUDA device
 *
 * Returns: the GPU's name
 */
const char *
accel_cuda_device_get_device_name (AccelCudaDevice *self)
{
  g_return_val_if_fail (ACCEL_CUDA_IS_DEVICE (self), NULL);
  return self->gpu.device_name;
}

/**
 * accel_cuda_device_get_compute_capability:
 * @self: a CUDA device
 *
 * Returns: the compute capability as `major.minor`, such as `9.0`
 */
const char *
accel_cuda_device_get_compute_capability (AccelCudaDevice *self)
{
  g_return_val_if_fail (ACCEL_CUDA_IS_DEVICE (self), NULL);
  return self->gpu.compute_capability;
}

/**
 * accel_cuda_device_get_compute_capability_major:
 * @self: a CUDA device
 *
 * Returns: the major compute capability (9 on Hopper)
 */
int
accel_cuda_device_get_compute_capability_major (AccelCudaDevice *self)
{
  g_return_val_if_fail (ACCEL_CUDA_IS_DEVICE (self), 0);
  return self->gpu.cc_major;
}

/**
 * accel_cuda_device_get_compute_capability_minor:
 * @self: a CUDA device
 *
 * Returns: the minor compute capability
 */
int
accel_cuda_device_get_compute_capability_minor (AccelCudaDevice *self)
{
  g_return_val_if_fail (ACCEL_CUDA_IS_DEVICE (self), 0);
  return self->gpu.cc_minor;
}

/**
 * accel_cuda_device_get_sm_count:
 * @self: a CUDA device
 *
 * Returns: the number of streaming multiprocessors
 */
int
accel_cuda_device_get_sm_count (AccelCudaDevice *self)
{
  g_return_val_if_fail (ACCEL_CUDA_IS_DEVICE (self), 0);
  return self->gpu.sm_count;
}

/**
 * accel_cuda_device_get_isolation:
 * @self: a CUDA device
 *
 * Returns: where its context lives
 */
AccelCudaIsolation
accel_cuda_device_get_isolation (AccelCudaDevice *self)
{
  g_return_val_if_fail (ACCEL_CUDA_IS_DEVICE (self), ACCEL_CUDA_ISOLATION_NONE);
  return self->gpu.isolation;
}

/**
 * accel_cuda_device_get_completion:
 * @self: a CUDA device
 *
 * Returns: its completion strategy
 */
AccelCudaCompletion
accel_cuda_device_get_completion (AccelCudaDevice *self)
{
  g_return_val_if_fail (ACCEL_CUDA_IS_DEVICE (self), ACCEL_CUDA_COMPLETION_POLL);
  return self->gpu.completion;
}
