/* accel-cuda-trace.c: where the time of an op goes between the device
 * thread and the completion thread, for finding dispatch overhead on a GPU
 * host where no profiler is installed.
 *
 * With ACCEL_CUDA_TRACE=1 in the environment, the device records, for each
 * op, the time from the start of execute_op to each later stage; at exit
 * the median of each stage is printed to stderr. Off, each stage costs one
 * predictable branch.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "accel-cuda-private.h"

#define MAX_SAMPLES 65536

static const char *const stage_names[ACCEL_CUDA_TRACE_N_STAGES] = {
  "lane picked, hazards ordered", "kernel run (launch)", "marked (lane flag or event) + hazards", "pushed to completion",
  "completion saw it done", "entry cleared, error decided",
  "work completed (waiter signalled)",
};

int accel_cuda_trace_enabled_ = -1;
static gint64 *samples[ACCEL_CUDA_TRACE_N_STAGES];
static guint n_samples[ACCEL_CUDA_TRACE_N_STAGES];

gint64
accel_cuda_trace_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int
compare_gint64 (const void *a, const void *b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return (x > y) - (x < y);
}

static void
print_trace (void)
{
  fprintf (stderr, "accel-cuda trace: median ns after execute_op began\n");
  for (guint s = 0; s < ACCEL_CUDA_TRACE_N_STAGES; s++)
    {
      if (n_samples[s] == 0)
        continue;
      qsort (samples[s], n_samples[s], sizeof (gint64), compare_gint64);
      fprintf (stderr, "  %-36s %8" G_GINT64_FORMAT " (%u ops)\n", stage_names[s],
               samples[s][n_samples[s] / 2], n_samples[s]);
    }
}

gboolean
accel_cuda_trace_init (void)
{
  const char *env = g_getenv ("ACCEL_CUDA_TRACE");
  gboolean on = env != NULL && env[0] == '1';
  if (on)
    {
      for (guint s = 0; s < ACCEL_CUDA_TRACE_N_STAGES; s++)
        samples[s] = g_new (gint64, MAX_SAMPLES);
      atexit (print_trace);
    }
  accel_cuda_trace_enabled_ = on;
  return on;
}

/* Racy by design between the two threads that record: a diagnostic. */
void
accel_cuda_trace_record (AccelCudaTraceStage stage, gint64 start)
{
  if (start == 0)
    return;
  guint i = n_samples[stage];
  if (i < MAX_SAMPLES)
    {
      samples[stage][i] = accel_cuda_trace_now () - start;
      n_samples[stage] = i + 1;
      /* A device host ends with _exit(): print along the way too. */
      if (stage == ACCEL_CUDA_TRACE_N_STAGES - 1 && (i + 1) % 8192 == 0)
        print_trace ();
    }
}
