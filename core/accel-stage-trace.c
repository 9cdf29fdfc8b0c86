/* accel-stage-trace.c: medians of where the time of a remote op goes, for
 * finding the device-host path's overhead on a machine without a profiler.
 *
 * With ACCEL_REMOTE_TRACE=1 in the environment (a device host inherits
 * it), the application and the host each record the duration of their
 * stages of an op; every 4096 samples of a stage its median is printed
 * to stderr ("accel-trace: PID STAGE median NS ns"). Off, each stage costs
 * one predictable branch.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "accel-private.h"

#define N_SAMPLES 4096
#define MAX_STAGES 16

typedef struct {
  const char *name;          /* a string literal: compared by address */
  guint n;
  gint64 samples[N_SAMPLES];
} Stage;

int _accel_stage_trace_enabled_ = -1;
G_LOCK_DEFINE_STATIC (stages);
static Stage *stages[MAX_STAGES];

gboolean
_accel_stage_trace_init (void)
{
  const char *env = g_getenv ("ACCEL_REMOTE_TRACE");
  int on = env != NULL && env[0] != '\0' && env[0] != '0';
  g_atomic_int_set (&_accel_stage_trace_enabled_, on);
  return on;
}

gint64
_accel_stage_trace_now (void)
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

void
_accel_stage_trace_add (const char *stage, gint64 ns)
{
  G_LOCK (stages);
  Stage *s = NULL;
  for (guint i = 0; i < MAX_STAGES && s == NULL; i++)
    {
      if (stages[i] == NULL)
        {
          stages[i] = g_new0 (Stage, 1);
          stages[i]->name = stage;
        }
      if (stages[i]->name == stage)
        s = stages[i];
    }
  if (s != NULL)
    {
      s->samples[s->n++] = ns;
      if (s->n == N_SAMPLES)
        {
          qsort (s->samples, N_SAMPLES, sizeof (gint64), compare_gint64);
          fprintf (stderr, "accel-trace: %d %s median %" G_GINT64_FORMAT " ns\n", (int) getpid (), s->name,
                   s->samples[N_SAMPLES / 2]);
          s->n = 0;
        }
    }
  G_UNLOCK (stages);
}
