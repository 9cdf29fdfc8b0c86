/* accel-cuda-completion.c: how a CUDA device learns that work has run.
 *
 * Each lane has a single-producer single-consumer ring of entries (work,
 * its event) in submission order; work on one lane finishes in that order,
 * so only the head of each ring needs watching. The device thread pushes;
 * one completion thread per context pops and completes, with one of three
 * strategies:
 *
 * - poll (the default): the GPU writes each lane's sequence number to
 *   mapped pinned host memory behind each entry's work
 *   (cuStreamWriteValue32: no event per op), and the thread reads that
 *   word, without calling into the driver, which the device thread needs
 *   for its launches; every 2 ms without progress it asks the streams
 *   (cudaStreamQuery), to notice sticky errors. Without stream memory
 *   operations in the driver, or with `ACCEL_CUDA_POLL_FLAGS=0`, it queries
 *   the event recorded behind each entry instead. When something is in
 *   flight the thread spins for `ACCEL_CUDA_POLL_SPIN_US` (default 100 µs),
 *   then sleeps in growing steps of up to 200 µs; when nothing is in flight
 *   it spins as long, then parks on a condition variable that the next push
 *   signals. No busy loop runs while the device is idle.
 * - callback: a host function (cudaLaunchHostFunc) after each op marks its
 *   entry done and wakes the thread, which completes it (host functions
 *   must not call CUDA, and completing work can free memory).
 * - sync: cudaEventSynchronize on the oldest entry in flight.
 *
 * A caller blocked on an op (accel_device_submit()) polls its entry
 * itself with lane flags (accel_work_set_poll()): once the flag says the
 * work ran, it claims the entry and completes the work on its own thread,
 * without waiting for this thread to hand it over. An entry is claimed by
 * one compare-and-swap of its position, by the caller or by the completion
 * thread; the completion thread still pops a claimed entry, in order.
 *
 * A sticky error seen on an event poisons the context: that entry and all
 * others fail with %ACCEL_ERROR_CONTEXT_POISONED, each exactly once.
 *
 * Completing work must never drop the last reference to a buffer on this
 * thread: the runtime frees buffer memory under the device's context lock,
 * which close_context holds while it waits for this thread to drain. So each
 * entry keeps its op (or transfer buffer) alive, and the completion thread
 * hands those references in batches to a reaper thread that may block.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <sys/prctl.h>
#include "accel-cuda-private.h"

#define REAP_BATCH 256
#define CLAIMED (G_GUINT64_CONSTANT (1) << 63)
#define MAX_SLEEP_US 200
#define CALLBACK_CHECK_US 2000

struct _AccelCudaCompleter {
  AccelCudaContext *ctx;
  AccelCudaCompletion strategy;
  GThread *thread;
  GMutex lock;
  GCond cond;
  gint sleeping;             /* atomic: parked, or waiting for a callback */
  gint closing;              /* atomic */
  gint64 spin_us;
  GPtrArray *reap;           /* completion thread only */
};

/* The reaper: drops references that may block. */

static GMutex reaper_lock;
static GCond reaper_cond;
static GPtrArray *reaper_queue;
static GThread *reaper_thread;

static gpointer
reaper_main (gpointer data)
{
  g_mutex_lock (&reaper_lock);
  for (;;)
    {
      while (reaper_queue->len == 0)
        g_cond_wait (&reaper_cond, &reaper_lock);
      GPtrArray *batch = reaper_queue;
      reaper_queue = g_ptr_array_new_with_free_func (g_object_unref);
      g_mutex_unlock (&reaper_lock);
      g_ptr_array_unref (batch);
      g_mutex_lock (&reaper_lock);
    }
  return NULL;
}

static void
reaper_take (GPtrArray *objects)
{
  if (objects->len == 0)
    return;
  g_mutex_lock (&reaper_lock);
  if (reaper_thread == NULL)
    {
      reaper_queue = g_ptr_array_new_with_free_func (g_object_unref);
      reaper_thread = g_thread_new ("accel-cuda-reap", reaper_main, NULL);
    }
  for (guint i = 0; i < objects->len; i++)
    g_ptr_array_add (reaper_queue, objects->pdata[i]);
  g_cond_signal (&reaper_cond);
  g_mutex_unlock (&reaper_lock);
  g_ptr_array_set_size (objects, 0);
}

/* Rings. */

static inline guint64
ring_head (AccelCudaLane *lane)
{
  return __atomic_load_n (&lane->head, __ATOMIC_ACQUIRE);
}

static inline guint64
ring_tail (AccelCudaLane *lane)
{
  return __atomic_load_n (&lane->tail, __ATOMIC_ACQUIRE);
}

guint
accel_cuda_lane_pending (AccelCudaLane *lane)
{
  return (guint) (ring_tail (lane) - ring_head (lane));
}

static gboolean
all_empty (AccelCudaContext *ctx)
{
  for (guint i = 0; i < ctx->n_lanes; i++)
    if (ring_tail (&ctx->lanes[i]) != ring_head (&ctx->lanes[i]))
      return FALSE;
  return TRUE;
}

static gboolean
any_head_done (AccelCudaContext *ctx)
{
  for (guint i = 0; i < ctx->n_lanes; i++)
    {
      AccelCudaLane *lane = &ctx->lanes[i];
      if (ring_head (lane) != ring_tail (lane)
          && __atomic_load_n (&lane->ring[lane->head % ACCEL_CUDA_RING_SIZE].done, __ATOMIC_ACQUIRE) != 0)
        return TRUE;
    }
  return FALSE;
}

static void
host_func_done (void *data)
{
  AccelCudaEntry *entry = data;
  AccelCudaCompleter *self = entry->completer;

  __atomic_store_n (&entry->done, 1, __ATOMIC_RELEASE);
  accel_cuda_completer_wake (self);
}

void
accel_cuda_completer_wake (AccelCudaCompleter *self)
{
  if (g_atomic_int_get (&self->sleeping))
    {
      g_mutex_lock (&self->lock);
      g_cond_signal (&self->cond);
      g_mutex_unlock (&self->lock);
    }
}

/* On the device thread: returns once the ring of @lane has room for one
 * more entry (a full ring means the GPU is far behind). */
void
accel_cuda_lane_wait_for_room (AccelCudaLane *lane)
{
  guint64 tail = lane->tail;

  if (G_UNLIKELY (tail - ring_head (lane) >= ACCEL_CUDA_RING_SIZE))
    {
      accel_cuda_completer_wake (lane->ctx->completer);
      while (tail - ring_head (lane) >= ACCEL_CUDA_RING_SIZE)
        g_usleep (20);
    }
}

static gboolean
claim (AccelCudaEntry *entry, guint64 position)
{
  guint64 expected = position;
  return __atomic_compare_exchange_n (&entry->claim, &expected, position | CLAIMED, FALSE, __ATOMIC_ACQ_REL,
                                      __ATOMIC_ACQUIRE);
}

/* The caller's own poll for the entry at @position of the lane @data. The
 * entry's fields are read before it is claimed: once claimed, the
 * completion thread may pop it and the device thread reuse its slot. A
 * stale position cannot claim a reused slot (the position differs). */
static gboolean
waiter_poll (AccelWork *work, gpointer data, guint64 position)
{
  AccelCudaLane *lane = data;
  AccelCudaContext *ctx = lane->ctx;

  if (ring_tail (lane) <= position)
    return FALSE;   /* not pushed yet */
  AccelCudaEntry *entry = &lane->ring[position % ACCEL_CUDA_RING_SIZE];
  AccelWork *entry_work = entry->work;
  AccelCudaMark mark = entry->mark;
  GObject *keep = entry->keep;
  if (entry_work != work || mark.event != NULL || entry->check != NULL || entry->trace_start != 0
      || __atomic_load_n (&entry->claim, __ATOMIC_ACQUIRE) != position
      || !accel_cuda_mark_reached (ctx, &mark) || g_atomic_int_get (&ctx->poisoned))
    return FALSE;
  if (!claim (entry, position))
    return FALSE;
  accel_device_complete_work (ACCEL_DEVICE (ctx->device), work, NULL);
  /* Not the last reference: the caller holds the op (or buffer). */
  g_object_unref (keep);
  return TRUE;
}

static void
waiter_poll_done (gpointer data)
{
  AccelCudaLane *lane = data;
  accel_cuda_context_unref (lane->ctx);
}

static gboolean
waiter_poll_wanted (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once))
    g_once_init_leave (&once, g_strcmp0 (g_getenv ("ACCEL_CUDA_WAITER_POLL"), "0") == 0 ? 2 : 1);
  return once == 1;
}

/* On the device thread: hands @work, whose GPU work ends at @mark, to the
 * completion thread. Takes @mark's event. */
void
accel_cuda_completer_push (AccelCudaCompleter *self, AccelCudaLane *lane, AccelWork *work, AccelCudaMark *mark)
{
  guint64 tail = lane->tail;

  accel_cuda_lane_wait_for_room (lane);

  AccelCudaEntry *entry = &lane->ring[tail % ACCEL_CUDA_RING_SIZE];
  AccelOp *op = accel_work_get_op (work);
  entry->work = work;
  entry->mark = *mark;
  mark->event = NULL;
  __atomic_store_n (&entry->claim, tail, __ATOMIC_RELAXED);
  entry->seq = lane->ctx->next_seq++;
  entry->done = 0;
  entry->completer = self;
  entry->keep = op ? g_object_ref (G_OBJECT (op)) : g_object_ref (G_OBJECT (accel_work_get_buffer (work)));

  entry->check = lane->check;
  entry->check_data = lane->check_data;
  entry->check_destroy = lane->check_destroy;
  entry->check_n = lane->check_n;
  entry->trace_start = lane->trace_start;
  lane->trace_start = 0;
  entry->nvtx_range = lane->nvtx_range;
  lane->nvtx_range = 0;
  lane->check = NULL;
  lane->check_data = NULL;
  lane->check_destroy = NULL;
  lane->check_n = 0;

  if (self->strategy == ACCEL_CUDA_COMPLETION_CALLBACK)
    {
      /* If the host function cannot be enqueued (a sticky error), the
       * periodic event check of the completion thread finds out why. */
      cudaError_t status = cudaLaunchHostFunc (lane->stream, host_func_done, entry);
      if (status != cudaSuccess && !accel_cuda_error_is_sticky (status))
        {
          (void) cudaGetLastError ();
          entry->done = 2;   /* complete once the event says so */
        }
    }

  /* A blocking caller watches the lane flag itself (not with checks, whose
   * codes this thread reads, nor while tracing or with NVTX ranges, which
   * this thread ends). */
  if (entry->mark.event == NULL && entry->check == NULL && entry->trace_start == 0 && entry->nvtx_range == 0
      && waiter_poll_wanted ()
      && accel_work_set_poll (work, waiter_poll, lane, tail, waiter_poll_done))
    accel_cuda_context_ref (lane->ctx);

  __atomic_store_n (&lane->tail, tail + 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n (&self->sleeping, __ATOMIC_SEQ_CST))
    {
      g_mutex_lock (&self->lock);
      g_cond_signal (&self->cond);
      g_mutex_unlock (&self->lock);
    }
}

/* Pops the head of @lane and completes its work with @status. */
static void
complete_head (AccelCudaCompleter *self, AccelCudaLane *lane, cudaError_t status)
{
  AccelCudaContext *ctx = self->ctx;
  guint64 head = lane->head;
  AccelCudaEntry *entry = &lane->ring[head % ACCEL_CUDA_RING_SIZE];

  if (!claim (entry, head))
    {
      /* Its waiting caller completed it and let go of what it held. */
      entry->work = NULL;
      entry->mark.event = NULL;
      entry->keep = NULL;
      __atomic_store_n (&lane->head, head + 1, __ATOMIC_RELEASE);
      return;
    }
  AccelWork *work = entry->work;
  AccelCudaMark mark = entry->mark;
  GObject *keep = entry->keep;
  AccelCudaCheckFunc check = entry->check;
  gpointer check_data = entry->check_data;
  GDestroyNotify check_destroy = entry->check_destroy;
  gint64 trace_start = entry->trace_start;
  guint64 nvtx_range = entry->nvtx_range;
  GError *error = NULL;

  if (G_UNLIKELY (trace_start))
    accel_cuda_trace_record (ACCEL_CUDA_TRACE_SEEN_DONE, trace_start);

  /* The codes of a check are read before the slot is handed back. */
  if (G_UNLIKELY (check != NULL) && status == cudaSuccess && !g_atomic_int_get (&ctx->poisoned))
    {
      const gint32 *codes = lane->check_codes + (head % ACCEL_CUDA_RING_SIZE) * ACCEL_CUDA_CHECK_CODES;
      if (!check (codes, entry->check_n, check_data, &error) && error == NULL)
        error = g_error_new (ACCEL_ERROR, ACCEL_ERROR_FAILED, "%s: an op's check failed without saying why",
                             accel_device_get_name (ACCEL_DEVICE (ctx->device)));
    }
  if (check_destroy && check_data)
    check_destroy (check_data);

  entry->work = NULL;
  entry->mark.event = NULL;
  entry->keep = NULL;
  entry->check = NULL;
  entry->check_data = NULL;
  entry->check_destroy = NULL;
  entry->trace_start = 0;
  entry->nvtx_range = 0;
  __atomic_store_n (&lane->head, head + 1, __ATOMIC_RELEASE);
  if (G_UNLIKELY (nvtx_range))
    accel_cuda_nvtx_end (nvtx_range);

  if (G_UNLIKELY (g_atomic_int_get (&ctx->poisoned)))
    {
      g_clear_error (&error);
      error = accel_cuda_context_poison_error (ctx);
    }
  else if (G_UNLIKELY (status != cudaSuccess))
    {
      error = accel_cuda_error_new (status, "a kernel or copy on the GPU");
      if (error->code == ACCEL_ERROR_CONTEXT_POISONED)
        {
          accel_cuda_context_poison (ctx, error);
          g_clear_error (&error);
          error = accel_cuda_context_poison_error (ctx);
        }
    }
  if (G_UNLIKELY (trace_start))
    accel_cuda_trace_record (ACCEL_CUDA_TRACE_CLEARED, trace_start);
  accel_device_complete_work (ACCEL_DEVICE (ctx->device), work, error);
  if (G_UNLIKELY (trace_start))
    accel_cuda_trace_record (ACCEL_CUDA_TRACE_COMPLETED, trace_start);

  /* Off the waiter's critical path: an event goes back to the pool. */
  accel_cuda_mark_clear (&mark);

  g_ptr_array_add (self->reap, keep);
  if (self->reap->len >= REAP_BATCH)
    reaper_take (self->reap);
}

/* Checks the head entry of @lane. Returns TRUE with @status once it is done. */
static gboolean
head_ready (AccelCudaCompleter *self, AccelCudaLane *lane, gboolean check_event, cudaError_t *status)
{
  AccelCudaEntry *entry = &lane->ring[lane->head % ACCEL_CUDA_RING_SIZE];

  if (self->strategy == ACCEL_CUDA_COMPLETION_CALLBACK && !check_event
      && __atomic_load_n (&entry->done, __ATOMIC_ACQUIRE) == 1)
    {
      *status = cudaSuccess;
      return TRUE;
    }
  if (self->strategy == ACCEL_CUDA_COMPLETION_CALLBACK && !check_event
      && __atomic_load_n (&entry->done, __ATOMIC_ACQUIRE) != 2)
    return FALSE;

  if (entry->mark.event == NULL)
    {
      /* A lane flag: the word first; every so often the stream, for a
       * sticky error that keeps the flag from ever getting there. */
      if (accel_cuda_mark_reached (self->ctx, &entry->mark))
        {
          *status = cudaSuccess;
          return TRUE;
        }
      if (!check_event)
        return FALSE;
      cudaError_t st = cudaStreamQuery (lane->stream);
      if (st == cudaErrorNotReady)
        {
          (void) cudaGetLastError ();
          return FALSE;
        }
      *status = st;
      return TRUE;
    }

  cudaError_t st = cudaEventQuery (entry->mark.event->event);
  if (st == cudaErrorNotReady)
    {
      (void) cudaGetLastError ();
      return FALSE;
    }
  if (self->strategy == ACCEL_CUDA_COMPLETION_CALLBACK && st == cudaSuccess
      && __atomic_load_n (&entry->done, __ATOMIC_ACQUIRE) == 0)
    return FALSE;            /* its host function still holds the entry */
  *status = st;
  return TRUE;
}

/* One pass over the rings. Returns whether anything completed; sets
 * @pending when something is still in flight. */
static gboolean
sweep (AccelCudaCompleter *self, gboolean check_events, gboolean *pending)
{
  AccelCudaContext *ctx = self->ctx;
  gboolean progressed = FALSE;

  *pending = FALSE;
  if (G_UNLIKELY (g_atomic_int_get (&ctx->poisoned)))
    {
      for (guint i = 0; i < ctx->n_lanes; i++)
        while (ring_head (&ctx->lanes[i]) != ring_tail (&ctx->lanes[i]))
          {
            complete_head (self, &ctx->lanes[i], cudaErrorUnknown);
            progressed = TRUE;
          }
      return progressed;
    }

  if (self->strategy == ACCEL_CUDA_COMPLETION_SYNC)
    {
      AccelCudaLane *oldest = NULL;
      for (guint i = 0; i < ctx->n_lanes; i++)
        {
          AccelCudaLane *lane = &ctx->lanes[i];
          if (ring_head (lane) == ring_tail (lane))
            continue;
          if (oldest == NULL
              || lane->ring[lane->head % ACCEL_CUDA_RING_SIZE].seq < oldest->ring[oldest->head % ACCEL_CUDA_RING_SIZE].seq)
            oldest = lane;
        }
      if (oldest == NULL)
        return FALSE;
      /* The sync strategy records events (no lane flags). */
      cudaError_t st = cudaEventSynchronize (oldest->ring[oldest->head % ACCEL_CUDA_RING_SIZE].mark.event->event);
      complete_head (self, oldest, st);
      return TRUE;
    }

  for (guint i = 0; i < ctx->n_lanes; i++)
    {
      AccelCudaLane *lane = &ctx->lanes[i];
      while (ring_head (lane) != ring_tail (lane))
        {
          cudaError_t st;
          if (!head_ready (self, lane, check_events, &st))
            {
              *pending = TRUE;
              break;
            }
          complete_head (self, lane, st);
          progressed = TRUE;
          if (g_atomic_int_get (&ctx->poisoned))
            return TRUE;
        }
    }
  return progressed;
}

static gpointer
completer_main (gpointer data)
{
  AccelCudaCompleter *self = data;
  AccelCudaContext *ctx = self->ctx;
  gint64 idle_since = 0;
  guint sleep_us = 1;
  gint64 last_check = 0;

  /* Short sleeps must be short: the default timer slack adds 50 µs. */
  (void) prctl (PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  (void) cudaSetDevice (ctx->ordinal);

  for (;;)
    {
      gboolean pending = FALSE;
      gboolean check_events = FALSE;

      if (self->strategy == ACCEL_CUDA_COMPLETION_CALLBACK || ctx->flags != NULL)
        {
          gint64 now = g_get_monotonic_time ();
          if (now - last_check >= CALLBACK_CHECK_US)
            {
              check_events = TRUE;
              last_check = now;
            }
        }

      if (sweep (self, FALSE, &pending) || (check_events && sweep (self, TRUE, &pending)))
        {
          idle_since = 0;
          sleep_us = 1;
          continue;
        }

      gboolean empty = !pending && all_empty (ctx);
      if (empty && g_atomic_int_get (&self->closing))
        break;

      gint64 now = g_get_monotonic_time ();
      if (idle_since == 0)
        idle_since = now;
      if (now - idle_since < self->spin_us && self->strategy != ACCEL_CUDA_COMPLETION_CALLBACK)
        continue;

      /* Nothing ready for a while: hand the references kept so far to the
       * reaper, then wait without spinning. */
      reaper_take (self->reap);

      if (empty || self->strategy == ACCEL_CUDA_COMPLETION_CALLBACK)
        {
          g_mutex_lock (&self->lock);
          __atomic_store_n (&self->sleeping, 1, __ATOMIC_SEQ_CST);
          if (all_empty (ctx) && !g_atomic_int_get (&self->closing))
            g_cond_wait_until (&self->cond, &self->lock, g_get_monotonic_time () + G_TIME_SPAN_SECOND);
          else if (self->strategy == ACCEL_CUDA_COMPLETION_CALLBACK && !any_head_done (ctx)
                   && !g_atomic_int_get (&self->closing))
            g_cond_wait_until (&self->cond, &self->lock, g_get_monotonic_time () + CALLBACK_CHECK_US);
          __atomic_store_n (&self->sleeping, 0, __ATOMIC_SEQ_CST);
          g_mutex_unlock (&self->lock);
          idle_since = 0;
        }
      else
        {
          g_usleep (sleep_us);
          sleep_us = MIN (sleep_us * 2, MAX_SLEEP_US);
        }
    }
  reaper_take (self->reap);
  return NULL;
}

static gint64
spin_from_env (void)
{
  const char *env = g_getenv ("ACCEL_CUDA_POLL_SPIN_US");
  gint64 v = env ? g_ascii_strtoll (env, NULL, 10) : 100;
  return CLAMP (v, 0, 100000);
}

AccelCudaCompleter *
accel_cuda_completer_new (AccelCudaContext *ctx, AccelCudaCompletion strategy, GError **error)
{
  AccelCudaCompleter *self = g_new0 (AccelCudaCompleter, 1);
  self->ctx = ctx;
  self->strategy = strategy;
  self->spin_us = spin_from_env ();
  self->reap = g_ptr_array_new ();
  g_mutex_init (&self->lock);
  g_cond_init (&self->cond);

  g_autofree char *name = g_strdup_printf ("accel-cuda%d-done", ctx->ordinal);
  self->thread = g_thread_try_new (name, completer_main, self, error);
  if (self->thread == NULL)
    {
      g_ptr_array_unref (self->reap);
      g_mutex_clear (&self->lock);
      g_cond_clear (&self->cond);
      g_free (self);
      return NULL;
    }
  return self;
}

/* On the device thread: completes everything in flight (waiting for the GPU,
 * or failing it all if the context is poisoned), then ends the thread. */
void
accel_cuda_completer_free (AccelCudaCompleter *self)
{
  g_mutex_lock (&self->lock);
  g_atomic_int_set (&self->closing, 1);
  g_cond_signal (&self->cond);
  g_mutex_unlock (&self->lock);
  g_thread_join (self->thread);

  g_ptr_array_unref (self->reap);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->cond);
  g_free (self);
}
