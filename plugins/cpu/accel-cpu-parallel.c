/* accel-cpu-parallel.c: a parallel-for over one process-wide GThreadPool.
 *
 * The calling thread (a device's dispatcher) takes part: it claims chunks
 * like the pool's threads do, so a parallel-for never waits on a busy pool
 * and nested or concurrent calls cannot deadlock. Small ranges run inline,
 * since waking a pool thread costs more than they do.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-cpu-parallel.h"

typedef struct {
  gint ref;               /* atomic */
  gint next_chunk;        /* atomic */
  gint n_chunks;
  gint64 n_items;
  gint64 chunk;
  AccelCpuRangeFunc func;
  gpointer data;

  GMutex lock;
  GCond cond;
  gint done;              /* chunks finished, under lock */
} Job;

static GThreadPool *pool;

/**
 * accel_cpu_default_threads:
 *
 * Returns: `ACCEL_CPU_THREADS` if set to a positive number, else the number
 *   of processors
 */
guint
accel_cpu_default_threads (void)
{
  static gsize once = 0;
  static guint value;

  if (g_once_init_enter (&once))
    {
      const char *env = g_getenv ("ACCEL_CPU_THREADS");
      gint64 v = env ? g_ascii_strtoll (env, NULL, 10) : 0;
      value = v > 0 ? (guint) MIN (v, 1024) : g_get_num_processors ();
      g_once_init_leave (&once, 1);
    }
  return value;
}

/**
 * accel_cpu_exec_get_threads:
 * @exec: (nullable): a run context
 *
 * Returns: the thread count a kernel may use under @exec
 */
guint
accel_cpu_exec_get_threads (const AccelCpuExec *exec)
{
  gint n = exec ? g_atomic_int_get (&exec->n_threads) : 0;
  return n > 0 ? (guint) n : accel_cpu_default_threads ();
}

static void
job_unref (Job *job)
{
  if (g_atomic_int_dec_and_test (&job->ref))
    {
      g_mutex_clear (&job->lock);
      g_cond_clear (&job->cond);
      g_free (job);
    }
}

static void
run_chunks (Job *job)
{
  gint finished = 0;
  gint c;

  while ((c = g_atomic_int_add (&job->next_chunk, 1)) < job->n_chunks)
    {
      gint64 begin = (gint64) c * job->chunk;
      gint64 end = MIN (job->n_items, begin + job->chunk);
      job->func (begin, end, job->data);
      finished++;
    }
  if (finished > 0)
    {
      g_mutex_lock (&job->lock);
      job->done += finished;
      if (job->done == job->n_chunks)
        g_cond_broadcast (&job->cond);
      g_mutex_unlock (&job->lock);
    }
}

static void
pool_worker (gpointer task, gpointer user_data)
{
  Job *job = task;
  run_chunks (job);
  job_unref (job);
}

static GThreadPool *
get_pool (void)
{
  static gsize once = 0;

  if (g_once_init_enter (&once))
    {
      /* The caller is one of the workers, so the pool has one thread fewer
       * than the processors. It lives as long as the process. */
      guint n = MAX (accel_cpu_default_threads (), g_get_num_processors ());
      g_autoptr(GError) error = NULL;
      pool = n > 1 ? g_thread_pool_new (pool_worker, NULL, (int) (n - 1), TRUE, &error) : NULL;
      if (error)
        g_warning ("CPU backend: no thread pool, kernels run on one thread: %s", error->message);
      g_once_init_leave (&once, 1);
    }
  return pool;
}

/**
 * accel_cpu_parallel_for:
 * @exec: (nullable): the kernel's run context
 * @n_items: how many items
 * @min_chunk: the fewest items worth handing to another thread
 * @func: processes a range of items
 * @data: closure data for @func
 *
 * Calls @func over disjoint ranges covering [0, @n_items), on up to the
 * context's thread count at once, and returns when all are done. Which
 * ranges there are depends on the thread count: kernels must give the same
 * result for any split.
 */
void
accel_cpu_parallel_for (const AccelCpuExec *exec,
                        gint64 n_items,
                        gint64 min_chunk,
                        AccelCpuRangeFunc func,
                        gpointer data)
{
  if (n_items <= 0)
    return;

  guint n_threads = accel_cpu_exec_get_threads (exec);
  min_chunk = MAX (min_chunk, 1);
  GThreadPool *p = n_threads > 1 && n_items > min_chunk ? get_pool () : NULL;
  if (p == NULL)
    {
      func (0, n_items, data);
      return;
    }

  /* A few chunks per thread even out uneven progress. */
  gint64 max_chunks = MIN ((gint64) n_threads * 4, n_items / min_chunk);
  max_chunks = MAX (max_chunks, 2);
  gint64 chunk = (n_items + max_chunks - 1) / max_chunks;
  gint n_chunks = (gint) ((n_items + chunk - 1) / chunk);
  if (n_chunks < 2)
    {
      func (0, n_items, data);
      return;
    }

  Job *job = g_new0 (Job, 1);
  job->ref = 1;
  job->n_chunks = n_chunks;
  job->n_items = n_items;
  job->chunk = chunk;
  job->func = func;
  job->data = data;
  g_mutex_init (&job->lock);
  g_cond_init (&job->cond);

  guint helpers = MIN (n_threads - 1, (guint) n_chunks - 1);
  for (guint i = 0; i < helpers; i++)
    {
      g_atomic_int_inc (&job->ref);
      if (!g_thread_pool_push (p, job, NULL))
        job_unref (job);
    }

  run_chunks (job);

  g_mutex_lock (&job->lock);
  while (job->done < job->n_chunks)
    g_cond_wait (&job->cond, &job->lock);
  g_mutex_unlock (&job->lock);
  job_unref (job);
}
