/* accel-cpu-parallel.h: the parallel-for the CPU kernels share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * AccelCpuExec:
 * @n_threads: how many threads a kernel may use, the caller's included;
 *   0 means one per processor (or `ACCEL_CPU_THREADS`)
 * @device: (nullable): the device running the kernel (unowned), which a
 *   kernel running other ops' kernels (a graph replay) chooses them for
 *
 * What a CPU kernel receives as its run context. A kernel run with a %NULL
 * context (a direct call, as accel-bench makes) uses the defaults.
 */
typedef struct {
  gint n_threads;   /* atomic: a device property may change it between ops */
  gpointer device;  /* AccelDevice */
} AccelCpuExec;

/**
 * AccelCpuRangeFunc:
 * @begin: first item
 * @end: one past the last item
 * @data: closure data
 *
 * Processes the items [@begin, @end) of a parallel-for.
 */
typedef void (*AccelCpuRangeFunc) (gint64 begin, gint64 end, gpointer data);

guint accel_cpu_exec_get_threads (const AccelCpuExec *exec);
guint accel_cpu_default_threads (void);

void accel_cpu_parallel_for (const AccelCpuExec *exec,
                             gint64 n_items,
                             gint64 min_chunk,
                             AccelCpuRangeFunc func,
                             gpointer data);

G_END_DECLS
