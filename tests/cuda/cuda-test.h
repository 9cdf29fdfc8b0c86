/* cuda-test.h: what the gpu suite's programs share: a system with cpu:0 and
 * cuda:0 (tests skip where there is no cuda:0), pairs of buffers holding the
 * same fresh random data on both devices, and comparisons.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

AccelSystem *ct_system (void);
AccelDevice *ct_cpu (void);
/* cuda:0, or NULL after g_test_skip() with the backend's reason. */
AccelDevice *ct_gpu (void);
int ct_run (void);

/* Whether the device's context lives in an accel-device-host. */
gboolean ct_gpu_is_remote (void);
/* cuda:0 where its context lives in a device host; else NULL after
 * g_test_skip(), with the backend's reason or, for a device in this
 * process, @why_remote. */
AccelDevice *ct_remote_gpu (const char *why_remote);

typedef struct {
  AccelBuffer *cpu;
  AccelBuffer *gpu;
  double *values;     /* what was stored, widened to binary64 (complex interleaved) */
  gsize n_values;
} CtPair;

CtPair *ct_pair_new (AccelDType dtype, const gint64 *dims, guint rank, double lo, double hi);
CtPair *ct_pair_new_empty (AccelDType dtype, const gint64 *dims, guint rank);
void ct_pair_free (CtPair *pair);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CtPair, ct_pair_free)

AccelBuffer *ct_alloc (AccelDevice *device, AccelDType dtype, const gint64 *dims, guint rank);
guint ct_components (AccelDType dtype);
void ct_write (AccelBuffer *buffer, const double *values);
double *ct_read (AccelBuffer *buffer);
guint8 *ct_read_bytes (AccelBuffer *buffer);
void ct_submit (AccelDevice *device, AccelOp *op);
/* On lane 0, a launch of @slow, a kernel (float *x, float v, int n, int
 * spins) that spins a while on each of the @n elements of @x before it
 * writes there: the slow writer of the hazard tests. */
AccelOp *ct_slow_writer (AccelFunction *slow, AccelBuffer *x, AccelAccess access, float v, gint64 n);
/* Submits @op asynchronously; *@done becomes TRUE once it succeeded
 * (ct_wait() runs this thread's main context until then). */
void ct_submit_async (AccelDevice *device, AccelOp *op, gboolean *done);
void ct_wait (gboolean *done);
double ct_eps (AccelDType dtype);

/* Runs the same op built by @make on both devices of the pairs. */
typedef AccelOp *(*CtMakeOp) (gboolean on_gpu, gpointer data);
void ct_submit_both (CtMakeOp make, gpointer data);

void ct_assert_close (const char *what, const double *got, const double *want, const double *scale,
                      gsize n, double rtol, double atol);
void ct_assert_same_bytes (const char *what, AccelBuffer *a, AccelBuffer *b);
/* ct_assert_close() of what @pair's buffers hold: cuda:0's against cpu:0's. */
void ct_assert_pair_close (const char *what, CtPair *pair, const double *scale, double rtol, double atol);

/* Asynchronous submissions not answered yet, and the first error of those
 * that failed. */
typedef struct {
  gint pending;
  gint failed;
  GError *first_error;
} CtPending;

/* Submits @op asynchronously, counted in @p. */
void ct_pending_submit (CtPending *p, AccelDevice *device, AccelOp *op);
/* Runs this thread's main context until at most @most of @p are pending. */
void ct_pending_wait (CtPending *p, gint most);
/* Waits for every answer, and asserts that none was an error. */
void ct_pending_finish (CtPending *p);

/* Counts the answers of asynchronous submissions (a device's or a
 * communicator's), and their errors. */
typedef struct {
  gint done;
  gint failed;
  gint poisoned;    /* of them, CONTEXT_POISONED */
} CtTally;

void ct_tally (GObject *source, GAsyncResult *result, gpointer tally);
/* Waits for @n answers, then a little more for any answer that would come
 * twice, and checks there was none. */
void ct_tally_wait (CtTally *tally, gint n);

G_END_DECLS
