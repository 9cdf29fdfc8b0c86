/* collective-test.h: what the collective tests share: rank devices, ranks'
 * buffers of fresh random data with their values kept, and the reference
 * results, computed here from those values and nothing of the library's.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "cpu-test.h"

G_BEGIN_DECLS

#define CT_MAX_RANKS 8

/* cpu:0 … cpu:N-1 of the test's system (ACCEL_CPU_DEVICES is set by meson). */
AccelDevice *coll_device (guint index);
AccelCommunicator *coll_comm (guint n_ranks);
AccelBuffer *coll_alloc (AccelDevice *device, AccelDType dtype, gint64 count);

/* Fresh random values representable in @dtype: never zero; small integers
 * (in 1..3 for products, so that nothing wraps); for floats, uniform in
 * [-2, 2). */
double *coll_random_values (AccelDType dtype, gsize n, AccelReduction reduction);
/* Writes fresh random values (as above) and returns them. */
double *coll_fill (AccelBuffer *buffer, AccelReduction reduction);

/* The reduction of @values[r][offset + i] over @n_ranks, i < n, in rank
 * order: floats in binary64 then rounded to @dtype once; integers exactly
 * (no test input wraps), avg truncated towards zero. Complex components
 * are reals here (@n counts components). */
void coll_reference_reduce (AccelDType dtype, AccelReduction reduction, double *const *values, guint n_ranks,
                            gsize offset, gsize n, double *out);

/* One op per rank, with its buffers and the values written that the
 * check needs; coll_ranks_clear() drops all of them. */
typedef struct {
  guint n;
  AccelBuffer *src[CT_MAX_RANKS];
  AccelBuffer *dst[CT_MAX_RANKS];
  double *values[CT_MAX_RANKS];
  AccelOp *ops[CT_MAX_RANKS];
} CollRanks;

void coll_ranks_clear (CollRanks *r);

/* Submits and checks success. */
void coll_submit (AccelCommunicator *comm, AccelOp **ops, guint n_ops);
/* Submits and checks the error code; returns the message. */
char *coll_submit_expect (AccelCommunicator *comm, AccelOp **ops, guint n_ops, AccelError code);

/* Fails unless @got equals @want exactly, naming @what and the index. */
void coll_assert_equal (const char *what, const double *got, const double *want, gsize n);

extern const AccelDType coll_all_dtypes[];
extern const guint coll_n_all_dtypes;

G_END_DECLS
