/* accel-cuda-lane.c: a lane of a CUDA device: its stream, the library
 * handles made for it, and the scratch memory of the op it runs.
 *
 * A lane belongs to one context: it is made by open_context and dropped by
 * close_context, on the device thread, which is the only thread that runs
 * kernels and so the only one that touches handles and workspaces.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cuda-private.h"

typedef struct {
  gpointer handle;
  GDestroyNotify destroy;
} LaneHandle;

static void
lane_handle_free (gpointer data)
{
  LaneHandle *h = data;
  if (h->destroy && h->handle)
    h->destroy (h->handle);
  g_free (h);
}

gboolean
accel_cuda_lane_init (AccelCudaLane *lane, AccelCudaContext *ctx, guint index, GError **error)
{
  lane->device = ctx->device;
  lane->ctx = ctx;
  lane->index = index;
  lane->ordinal = ctx->ordinal;
  lane->handles = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, lane_handle_free);
  lane->workspaces = g_ptr_array_new ();
  lane->ring = g_new0 (AccelCudaEntry, ACCEL_CUDA_RING_SIZE);
  lane->head = lane->tail = 0;
  /* Non-blocking: lanes must not serialise with the legacy default stream
   * that a library or the application may use. */
  return ACCEL_CUDA_CHECK (cudaStreamCreateWithFlags (&lane->stream, cudaStreamNonBlocking), error);
}

/* On the device thread, after the completion thread has drained the lane. */
void
accel_cuda_lane_clear (AccelCudaLane *lane)
{
  /* Handles go first: a library may enqueue work on the stream while it
   * tears its handle down. */
  g_clear_pointer (&lane->handles, g_hash_table_unref);
  if (lane->workspaces)
    {
      for (guint i = 0; i < lane->workspaces->len; i++)
        (void) cudaFreeAsync (lane->workspaces->pdata[i], lane->stream);
      g_clear_pointer (&lane->workspaces, g_ptr_array_unref);
    }
  if (lane->stream)
    {
      (void) cudaStreamSynchronize (lane->stream);
      (void) cudaStreamDestroy (lane->stream);
      lane->stream = NULL;
    }
  /* The ring goes with the context (accel_cuda_context_unref()): a caller
   * that polled for its work may still look at it. */
  if (lane->check_codes)
    (void) cudaFreeHost (lane->check_codes);
  lane->check_codes = NULL;
  accel_cuda_lane_drop_check (lane);
  (void) cudaGetLastError ();
}

/* Hands the scratch memory of the op that just ran back to the pool, in
 * stream order, so it is reused only after that op's work. */
gboolean
accel_cuda_lane_release_workspaces (AccelCudaLane *lane, GError **error)
{
  gboolean ok = TRUE;

  for (guint i = 0; i < lane->workspaces->len; i++)
    {
      cudaError_t status = cudaFreeAsync (lane->workspaces->pdata[i], lane->stream);
      if (ok && status != cudaSuccess)
        ok = accel_cuda_check (status, "cudaFreeAsync (workspace)", error);
    }
  g_ptr_array_set_size (lane->workspaces, 0);
  return ok;
}

/**
 * accel_cuda_lane_get_stream:
 * @lane: a lane
 *
 * The stream a kernel enqueues its work on. The kernel must not
 * synchronize it: the device completes the op when its work has run.
 *
 * Returns: the lane's stream
 */
cudaStream_t
accel_cuda_lane_get_stream (AccelCudaLane *lane)
{
  g_return_val_if_fail (lane != NULL, NULL);
  return lane->stream;
}

/**
 * accel_cuda_lane_get_ordinal:
 * @lane: a lane
 *
 * Returns: the CUDA device ordinal of the lane's device (the `N` of `cuda:N`
 *   as the CUDA runtime of this process numbers it)
 */
int
accel_cuda_lane_get_ordinal (AccelCudaLane *lane)
{
  g_return_val_if_fail (lane != NULL, -1);
  return lane->ordinal;
}

/**
 * accel_cuda_lane_get_index:
 * @lane: a lane
 *
 * Returns: the lane's index within its device, from 0 to the device's
 *   #AccelDevice:lanes less one
 */
guint
accel_cuda_lane_get_index (AccelCudaLane *lane)
{
  g_return_val_if_fail (lane != NULL, 0);
  return lane->index;
}

/**
 * accel_cuda_lane_get_device:
 * @lane: a lane
 *
 * Returns: (transfer none): the device the lane belongs to
 */
AccelCudaDevice *
accel_cuda_lane_get_device (AccelCudaLane *lane)
{
  g_return_val_if_fail (lane != NULL, NULL);
  return lane->device;
}

static gpointer
lane_add_handle (AccelCudaLane *lane, const char *key, gpointer handle, GDestroyNotify destroy)
{
  LaneHandle *h = g_new (LaneHandle, 1);
  h->handle = handle;
  h->destroy = destroy;
  g_hash_table_insert (lane->handles, g_strdup (key), h);
  return handle;
}

/**
 * accel_cuda_lane_open_handle:
 * @lane: a lane
 * @key: names the kind of handle (`"cudnn"`); one handle per key and lane
 * @open: (scope call): makes and sets up the handle when the lane has none
 *   for @key
 * @destroy: (nullable): frees the handle, when the lane's context is
 *   closed (on the device thread, with the context current) or when @open
 *   failed after storing it
 * @error: return location for a #GError from @open
 *
 * Returns the lane's handle for @key, made on first use with @open. A
 * handle lives as long as the lane's context: after the device rebuilds its
 * context, the next call makes a new one. Making one may take several
 * steps (create it, bind it to the lane's stream, set its modes): the lane
 * owns the handle from the moment @open stores it, so @open needs no
 * clean-up of its own when a later step fails. Call it from a kernel, on
 * the device thread.
 *
 * Returns: (transfer none): the handle, or %NULL with @error set
 */
gpointer
accel_cuda_lane_open_handle (AccelCudaLane *lane,
                             const char *key,
                             AccelCudaHandleOpen open,
                             GDestroyNotify destroy,
                             GError **error)
{
  GError *local = NULL;
  gpointer handle = NULL;

  g_return_val_if_fail (lane != NULL, NULL);
  g_return_val_if_fail (key != NULL, NULL);
  g_return_val_if_fail (open != NULL, NULL);
  LaneHandle *h = g_hash_table_lookup (lane->handles, key);
  if (G_LIKELY (h != NULL))
    return h->handle;

  if (!open (lane, &handle, &local))
    {
      if (destroy && handle)
        destroy (handle);
      handle = NULL;
    }
  if (handle == NULL)
    {
      if (local == NULL)
        local = g_error_new (ACCEL_ERROR, ACCEL_ERROR_LIBRARY,
                             "cuda: could not make the “%s” handle of lane %u", key, lane->index);
      g_propagate_error (error, local);
      return NULL;
    }
  return lane_add_handle (lane, key, handle, destroy);
}

/**
 * accel_cuda_lane_get_plan:
 * @lane: a lane
 * @kind: the kind of plan, with its cache's name, key size, capacity and
 *   make and free functions
 * @key: (not nullable): the plan's key, @kind's key_size bytes
 * @user_data: passed to @kind's make function on a miss (the library
 *   handle the plan is made with, say)
 * @error: return location for a #GError from the make function
 *
 * The plan for @key from the lane's cache of @kind (an #AccelCudaPlanCache
 * kept as the lane's handle named by @kind's name, made on first use and
 * freed with the lane's context), made on a miss. Call it from a kernel,
 * on the device thread. The caches of a lane are freed in no set order, so
 * freeing a plan must not need a library handle of the lane.
 *
 * Returns: (transfer none): the plan, valid until the next call for @kind
 *   on @lane may drop it, or %NULL with @error set
 */
gpointer
accel_cuda_lane_get_plan (AccelCudaLane *lane,
                          const AccelCudaPlanKind *kind,
                          gconstpointer key,
                          gpointer user_data,
                          GError **error)
{
  g_return_val_if_fail (lane != NULL, NULL);
  g_return_val_if_fail (kind != NULL && kind->name != NULL, NULL);

  LaneHandle *h = g_hash_table_lookup (lane->handles, kind->name);
  AccelCudaPlanCache *cache = h ? h->handle : NULL;
  if (G_UNLIKELY (cache == NULL))
    cache = lane_add_handle (lane, kind->name,
                             accel_cuda_plan_cache_new (kind->key_size, kind->capacity, kind->make, kind->free_plan),
                             (GDestroyNotify) accel_cuda_plan_cache_free);
  return accel_cuda_plan_cache_get (cache, key, user_data, error);
}

/**
 * accel_cuda_lane_alloc_workspace:
 * @lane: a lane
 * @size: bytes
 * @error: return location for a #GError
 *
 * Scratch device memory for the op the kernel is enqueuing, allocated in
 * stream order from the device's pool on the lane's stream. It is released
 * in stream order after the kernel returns, so it stays valid for all the
 * work the kernel enqueued on the lane; the kernel must not free it.
 *
 * Returns: (transfer none): the memory, or %NULL with
 *   %ACCEL_ERROR_OUT_OF_MEMORY (the device stays usable)
 */
gpointer
accel_cuda_lane_alloc_workspace (AccelCudaLane *lane, gsize size, GError **error)
{
  g_return_val_if_fail (lane != NULL, NULL);
  void *memory = NULL;

  if (!ACCEL_CUDA_CHECK (cudaMallocFromPoolAsync (&memory, MAX (size, 1), lane->ctx->pool, lane->stream),
                         error))
    return NULL;
  g_ptr_array_add (lane->workspaces, memory);
  return memory;
}

/* Forgets the check of the op being run, if its kernel asked for one and the
 * op failed before its work was pushed. */
void
accel_cuda_lane_drop_check (AccelCudaLane *lane)
{
  if (lane->check_destroy && lane->check_data)
    lane->check_destroy (lane->check_data);
  lane->check = NULL;
  lane->check_data = NULL;
  lane->check_destroy = NULL;
  lane->check_device = NULL;
  lane->check_n = 0;
}

/* After the kernel of an op that asked for a check returned: copies the
 * codes to the pinned slot of the ring entry the op is about to take. The
 * copy follows the op's work on the stream, so the completion thread reads
 * it once the op's event has fired. */
gboolean
accel_cuda_lane_enqueue_check (AccelCudaLane *lane, GError **error)
{
  gint32 *slot = lane->check_codes + (lane->tail % ACCEL_CUDA_RING_SIZE) * ACCEL_CUDA_CHECK_CODES;

  if (!ACCEL_CUDA_CHECK (cudaMemcpyAsync (slot, lane->check_device, lane->check_n * sizeof (gint32),
                                          cudaMemcpyDeviceToHost, lane->stream), error))
    {
      accel_cuda_lane_drop_check (lane);
      return FALSE;
    }
  lane->check_device = NULL;
  return TRUE;
}

/**
 * accel_cuda_lane_check_after:
 * @lane: a lane
 * @n_codes: how many codes the kernels may write, 1 to 16
 * @func: (scope notified): judges the codes once the op's work has run
 * @user_data: (closure func): for @func; the op itself is a good choice
 * @destroy: (nullable) (destroy user_data): frees @user_data after @func
 *   ran or the op failed before its work was enqueued
 * @error: return location for a #GError
 *
 * Lets a kernel report a problem it can only find on the GPU (an index out
 * of range in a table in device memory, a solver's info code) without
 * synchronising the stream: the kernel's device code writes non-zero codes
 * to the returned words, and when the op's work has completed the device
 * copies them to the host and calls @func, whose error fails the op. The
 * words are zeroed in stream order before the kernel's work. One check per
 * op; call it from a kernel's run function, before enqueuing the work that
 * writes the codes.
 *
 * Returns: (transfer none): @n_codes zeroed #gint32 of device memory, valid
 *   for the work the kernel enqueues on @lane, or %NULL with @error set
 *   (then @destroy has been called)
 */
gint32 *
accel_cuda_lane_check_after (AccelCudaLane *lane,
                             guint n_codes,
                             AccelCudaCheckFunc func,
                             gpointer user_data,
                             GDestroyNotify destroy,
                             GError **error)
{
  g_return_val_if_fail (lane != NULL, NULL);
  g_return_val_if_fail (n_codes >= 1 && n_codes <= ACCEL_CUDA_CHECK_CODES, NULL);
  g_return_val_if_fail (func != NULL, NULL);
  g_return_val_if_fail (lane->check == NULL, NULL);

  if (G_UNLIKELY (lane->check_codes == NULL)
      && !ACCEL_CUDA_CHECK (cudaMallocHost ((void **) &lane->check_codes,
                                            ACCEL_CUDA_RING_SIZE * ACCEL_CUDA_CHECK_CODES * sizeof (gint32)),
                            error))
    {
      lane->check_codes = NULL;
      goto fail;
    }

  gint32 *codes = accel_cuda_lane_alloc_workspace (lane, n_codes * sizeof (gint32), error);
  if (codes == NULL
      || !ACCEL_CUDA_CHECK (cudaMemsetAsync (codes, 0, n_codes * sizeof (gint32), lane->stream), error))
    goto fail;

  /* The slot this op's entry takes must not hold codes the completion
   * thread has yet to read: wait for room as the push would. */
  accel_cuda_lane_wait_for_room (lane);

  lane->check = func;
  lane->check_data = user_data;
  lane->check_destroy = destroy;
  lane->check_device = codes;
  lane->check_n = n_codes;
  return codes;

fail:
  if (destroy && user_data)
    destroy (user_data);
  return NULL;
}

/**
 * accel_cuda_lane_get_write_serial:
 * @lane: a lane
 * @buffer: a buffer of the lane's device
 *
 * Names the last write of @buffer's memory: a number, unique within the
 * device's context, taken each time work that writes the memory (an op, an
 * upload, a copy, a fill; through @buffer or any view of the same
 * allocation) is enqueued. Equal serials mean the contents are those a
 * kernel saw before, so a kernel may cache what it learnt from them (a
 * validated index structure, say). 0 means no write is known: assume
 * nothing. The work of the op being run is not counted until it has been
 * enqueued.
 *
 * Returns: the serial, or 0
 */
guint64
accel_cuda_lane_get_write_serial (AccelCudaLane *lane, AccelBuffer *buffer)
{
  g_return_val_if_fail (lane != NULL, 0);
  g_return_val_if_fail (ACCEL_IS_BUFFER (buffer), 0);

  AccelCudaBufferTrack *track = accel_cuda_track_peek (lane->ctx, accel_cuda_root_buffer (buffer));
  return track ? track->write_serial : 0;
}
