/* accel-bench.h: how benchmark groups plug into accel-bench.
 *
 * A group is a {name, description, run} entry in a table that ends with a
 * zeroed entry. accel-bench.c lists the tables it knows in `group_tables`;
 * a group file of its own (say accel-bench-cuda.c, built where CUDA is)
 * defines its table and adds it there under its #ifdef. A run function
 * measures each figure beside its baseline in the same run and reports it
 * with accel_bench_report().
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

typedef struct _AccelBench AccelBench;

typedef gboolean (*AccelBenchRunFunc) (AccelBench *bench, GError **error);

typedef struct {
  const char *name;
  const char *description;
  AccelBenchRunFunc run;
} AccelBenchGroup;

/* The groups of accel-bench.c: dispatch and gemm. */
extern const AccelBenchGroup accel_bench_core_groups[];
/* accel-bench-remote.c: the same device served by a host process. */
extern const AccelBenchGroup accel_bench_remote_groups[];
/* accel-bench-journal.c: dispatch while recording into a journal. */
extern const AccelBenchGroup accel_bench_journal_groups[];
/* accel-bench-patterns.c: the serving actors of plugins/patterns. */
extern const AccelBenchGroup accel_bench_patterns_groups[];
/* accel-bench-interop.c: host arrays borrowed and lent through DLPack. */
extern const AccelBenchGroup accel_bench_interop_groups[];

AccelSystem *accel_bench_get_system (AccelBench *bench);
AccelDevice *accel_bench_get_device (AccelBench *bench);
gboolean accel_bench_is_quick (AccelBench *bench);

/* Records one figure. @baseline is NAN where there is none; the ratio is
 * value / baseline. */
void accel_bench_report (AccelBench *bench,
                         const char *name,
                         const char *unit,
                         double value,
                         double baseline);

/* A progress line on stderr when it is a terminal. */
void accel_bench_progress (AccelBench *bench, const char *format, ...) G_GNUC_PRINTF (2, 3);

/* Prints a backtrace on stderr when the process crashes (accel-bench-crash.c). */
void accel_bench_install_crash_report (void);

/* Monotonic time in seconds, with nanosecond resolution. */
double accel_bench_now (void);

/* The @q quantile (0..1) of @n samples; sorts them. */
double accel_bench_quantile (double *samples, gsize n, double q);

/* @n blocking submits of @op (after n / 10 to warm up): each one's
 * seconds into @samples. */
gboolean accel_bench_blocking_round_trips (AccelDevice *device, AccelOp *op, guint n, double *samples,
                                           GError **error);

/* @n async round trips of @op, one at a time through one main context of
 * this thread (after n / 10 to warm up): each from the submit to its
 * callback, in seconds, into @samples. */
gboolean accel_bench_async_round_trips (AccelDevice *device, AccelOp *op, guint n, double *samples, GError **error);

/* Seconds to run @total submissions of @op on @device, up to @in_flight
 * at once through submit_async; negative with @error set on failure. */
double accel_bench_run_in_flight (AccelDevice *device, AccelOp *op, guint total, guint in_flight, GError **error);
/* The same cycling through @n_ops ops (submission i runs ops[i % n_ops]),
 * for inputs that must not stay in the caches between runs. */
double accel_bench_run_ops_in_flight (AccelDevice *device, AccelOp **ops, guint n_ops, guint total, guint in_flight,
                                      GError **error);

G_END_DECLS
