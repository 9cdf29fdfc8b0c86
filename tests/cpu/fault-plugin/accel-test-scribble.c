/* accel-test-scribble.c: the test-only `scribble` op: it fills an f32
 * buffer with $ACCEL_TEST_SCRIBBLE (1 when unset), read when it runs. Two
 * processes with different values are two backends that disagree, which
 * is what the journal's replay must find.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <accel.h>
#include "accel-test-scribble.h"

/**
 * AccelTestScribble:
 *
 * The `scribble` op: fills `dst` (f32) with $ACCEL_TEST_SCRIBBLE.
 */
struct _AccelTestScribble {
  AccelOp parent_instance;
  AccelBuffer *dst;
};

static const AccelOpParam accel_test_scribble_params[] = {
  ACCEL_OP_BUFFER (AccelTestScribble, dst, "dst", "The f32 buffer filled", ACCEL_ACCESS_WRITE,
                   ACCEL_OP_PARAM_REQUIRED),
};

static gboolean
accel_test_scribble_validate (AccelOp *op, GError **error)
{
  static const AccelDType f32 = ACCEL_DTYPE_F32;
  return accel_op_check_dtype (op, "dst", &f32, 1, error) && accel_op_check_contiguous (op, "dst", error);
}

ACCEL_DEFINE_OP_TYPE (AccelTestScribble, accel_test_scribble, "scribble",
                      "Test only: fills dst with $ACCEL_TEST_SCRIBBLE", accel_test_scribble_params,
                      accel_test_scribble_validate)

static gboolean
scribble_run (AccelOp *op, gpointer context, GError **error)
{
  AccelBuffer *dst = ACCEL_TEST_SCRIBBLE (op)->dst;
  const char *env = g_getenv ("ACCEL_TEST_SCRIBBLE");
  float value = env ? (float) g_ascii_strtod (env, NULL) : 1.0f;
  float *p = accel_buffer_get_data (dst);
  gint64 n = accel_buffer_get_n_elements (dst);
  for (gint64 i = 0; i < n; i++)
    p[i] = value;
  return TRUE;
}

const AccelKernelVTable accel_test_scribble_kernel = { .run = scribble_run };
