/* cpu-test.h: what the cpu suite's programs share: a device, buffers of
 * fresh random data with their exact values kept for the reference, and
 * comparisons.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <accel.h>

G_BEGIN_DECLS

/* The cpu:0 device of a system made for the test program; torn down by
 * cpu_test_run(). */
AccelDevice *cpu_test_device (void);
AccelSystem *cpu_test_system (void);

/* g_test_run() and the teardown of the shared system. */
int cpu_test_run (void);

/* Adds @func as "@prefix/NAME" for each of the floating dtypes f32, f64,
 * f16 and bf16 (NAME its accel_dtype_get_name()), the dtype as its data
 * (GINT_TO_POINTER). */
void cpu_test_add_per_float_dtype (const char *prefix, GTestDataFunc func);

AccelBuffer *cpu_test_alloc (AccelDType dtype, const gint64 *dims, guint rank);

/* Values per element: 2 for complex dtypes, else 1. */
guint cpu_test_components (AccelDType dtype);

/* Fills @buffer (contiguous) with uniform values in [lo, hi) that are never
 * zero, and returns what it stores, widened to binary64 (complex
 * interleaved). */
double *cpu_test_fill_random (AccelBuffer *buffer, double lo, double hi);

/* Writes @values (binary64, complex interleaved) rounded to the buffer's dtype. */
void cpu_test_write (AccelBuffer *buffer, const double *values);

/* The buffer's contents widened to binary64 (complex interleaved). */
double *cpu_test_read (AccelBuffer *buffer);

/* Raw bytes of the buffer. */
guint8 *cpu_test_read_bytes (AccelBuffer *buffer);

void cpu_test_submit (AccelOp *op);
void cpu_test_submit_expect_error (AccelOp *op, AccelError code);
/* Submits @op on cpu:0 and asserts it fails with @code and a message
 * containing @needle (a property name, quoted or not). */
void cpu_test_expect_error_naming (AccelOp *op, AccelError code, const char *needle);

/* Serialises @op, reads it back with its buffers found by handle among
 * @buffers, and fails the test unless the copy has @op's type and
 * serialises to the same form. Returns the copy (transfer full). */
AccelOp *cpu_test_round_trip (AccelOp *op, GPtrArray *buffers);

/* Relative precision of a dtype's storage (2^-mantissa bits). */
double cpu_test_eps (AccelDType dtype);

/* The spacing of a dtype's subnormals (its smallest positive value). */
double cpu_test_tiny (AccelDType dtype);

/* Fails, naming @what and the first bad index, if any |got - want| exceeds
 * atol + rtol * scale[i] (scale NULL: |want[i]|). */
void cpu_test_assert_close (const char *what,
                            const double *got,
                            const double *want,
                            const double *scale,
                            gsize n,
                            double rtol,
                            double atol);

/* Value conversions of the test side, independent of the library. */
double cpu_test_round_to (AccelDType dtype, double v);

G_END_DECLS
