/* accel-test-values.h: buffers of any dtype as arrays of doubles, for the
 * op test harnesses (cpu, libs, cuda): one double per real component
 * (complex elements are (re, im) pairs), stored as the dtype stores it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>
#include "accel-test-buffers.h"

G_BEGIN_DECLS

/* 2 for complex dtypes, else 1. */
guint accel_test_components (AccelDType dtype);

/* One component at @p, as @dtype stores it (integers truncated; negative
 * values into unsigned ones wrap as through a 64-bit integer). */
void accel_test_store (AccelDType dtype, guint8 *p, double v);
double accel_test_load (AccelDType dtype, const guint8 *p);

/* @v as @dtype keeps it. */
double accel_test_round_to (AccelDType dtype, double v);

/* The machine epsilon of a floating dtype (complex: of its components),
 * the gap from 1 to the next value, twice the unit roundoff; 0 for
 * integer dtypes. */
double accel_test_eps (AccelDType dtype);
/* The spacing of a floating dtype's subnormals: below its smallest normal
 * value a rounding error is that, not a relative one; 0 for integers. */
double accel_test_denorm_min (AccelDType dtype);

/* Writes one double per component, densely, as @buffer's bytes (a
 * contiguous buffer's elements). */
void accel_test_write_values (AccelBuffer *buffer, const double *values);
/* @buffer's components as doubles, read densely (g_free()); its bytes are
 * accel_test_read_bytes() of accel-test-buffers.h. */
double *accel_test_read_values (AccelBuffer *buffer);

/* @n values drawn from [@lo, @hi) by the test's generator, as @dtype keeps
 * them, none of them 0 (a zero hides a wrong scale). */
double *accel_test_random_values (AccelDType dtype, gsize n, double lo, double hi);

/* 0 .. @n - 1 in an order drawn by the test's generator (g_free()). */
gint32 *accel_test_random_permutation (gint64 n);

G_END_DECLS
