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

G_DEFINE_FINAL_TYPE (AccelTestScribble, accel_test_scribble, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_DST,
};

static void
accel_test_scribble_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelTestScribble *self = ACCEL_TEST_SCRIBBLE (object);
  if (prop_id == PROP_DST)
    g_set_object (&self->dst, g_value_get_object (value));
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
accel_test_scribble_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelTestScribble *self = ACCEL_TEST_SCRIBBLE (object);
  if (prop_id == PROP_DST)
    g_value_set_object (value, self->dst);
  else
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
accel_test_scribble_dispose (GObject *object)
{
  g_clear_object (&ACCEL_TEST_SCRIBBLE (object)->dst);
  G_OBJECT_CLASS (accel_test_scribble_parent_class)->dispose (object);
}

static gboolean
accel_test_scribble_validate (AccelOp *op, GError **error)
{
  static const AccelDType f32 = ACCEL_DTYPE_F32;
  return accel_op_check_dtype (op, "dst", &f32, 1, error) && accel_op_check_contiguous (op, "dst", error);
}

static void
accel_test_scribble_class_init (AccelTestScribbleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_test_scribble_set_property;
  object_class->get_property = accel_test_scribble_get_property;
  object_class->dispose = accel_test_scribble_dispose;
  op_class->validate = accel_test_scribble_validate;
  accel_op_class_set_metadata (op_class, "scribble", "Test only: fills dst with $ACCEL_TEST_SCRIBBLE");
  accel_op_class_install_buffer (op_class, PROP_DST, "dst", "The f32 buffer filled",
                                 ACCEL_ACCESS_WRITE, TRUE);
}

static void
accel_test_scribble_init (AccelTestScribble *self)
{
}

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
