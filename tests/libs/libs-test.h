/* libs-test.h: what the programs of tests/libs share.
 *
 * Each program runs its checks on one device, named by the environment
 * variable ACCEL_TEST_DEVICE (default `cpu:0`): the `cpu` suite runs it on
 * cpu:0 against definitions, the `gpu` suite runs the same program on
 * cuda:0, where every check of a definition runs too and
 * lt_submit_compare() also runs each op on cpu:0 on the same data and
 * compares the results (ACCEL_TEST_FORCE_COMPARE=1 does that on cpu:0 too,
 * to check the harness without a GPU).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

/* A test of a libs program. Each program declares its tests in lt_tests,
 * ended by { NULL, NULL }; the main () of libs-test.c adds them (at their
 * paths, "/libs/PROGRAM/NAME") and runs them. */
typedef struct {
  const char *path;
  GTestFunc func;
} LtTest;

extern const LtTest lt_tests[];

/* The device under test, or %NULL after g_test_skip() when it is absent. */
AccelDevice *lt_device (void);
/* The same, but %NULL after g_test_skip() also when no kernel of its
 * backend implements one of the op types named (NULL-terminated). */
AccelDevice *lt_device_for (const char *first_op_type, ...) G_GNUC_NULL_TERMINATED;
gboolean lt_device_is_cpu (void);

AccelBuffer *lt_alloc (AccelDType dtype, const gint64 *dims, guint rank);
/* A buffer holding @values (binary64, rounded to @dtype; NULL: zeros). */
AccelBuffer *lt_new (AccelDType dtype, const gint64 *dims, guint rank, const double *values);

/* @n uniform values in [lo, hi), rounded to what @dtype stores. */
double *lt_random (AccelDType dtype, gint64 n, double lo, double hi);
double lt_round (AccelDType dtype, double v);

void lt_write (AccelBuffer *buffer, const double *values);
double *lt_read (AccelBuffer *buffer);

/* Submits @op on the device under test and asserts success. */
void lt_submit (AccelOp *op);
/* Same, and off the cpu also runs a twin of @op on cpu:0 (its buffers
 * copied there first) and compares the buffer properties named in the
 * NULL-terminated list (`"*"`: every buffer the op writes). */
void lt_submit_compare (AccelOp *op, double rtol, double atol, const char *first_property, ...) G_GNUC_NULL_TERMINATED;
/* Submits @op, asserts it fails with @code and a message containing
 * @substring (nullable), then that the device still runs an op. */
void lt_expect_error (AccelOp *op, AccelError code, const char *substring);

/* Relative precision of @dtype's storage. */
double lt_eps (AccelDType dtype);

/* Fails naming @what and the first bad index where |got - want| exceeds
 * atol + rtol |want|. */
void lt_assert_close (const char *what, const double *got, const double *want, gsize n, double rtol, double atol);

G_END_DECLS
