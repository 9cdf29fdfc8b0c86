/* accel-fault-plugin.c: a test-only plugin whose `fault` op makes the CPU
 * device act as a poisoned context (as a sticky CUDA error would), so the
 * supervision path can be exercised without a GPU.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <accel.h>
#include "accel-config.h"
#include "accel-test-scribble.h"

#define ACCEL_TYPE_TEST_FAULT (accel_test_fault_get_type ())
G_DECLARE_FINAL_TYPE (AccelTestFault, accel_test_fault, ACCEL, TEST_FAULT, AccelOp)

/**
 * AccelTestFault:
 *
 * The `fault` op: its kernel fails with %ACCEL_ERROR_CONTEXT_POISONED.
 * The optional `target` buffer lets a test tie the fault to a buffer.
 */
struct _AccelTestFault {
  AccelOp parent_instance;
  AccelBuffer *target;
};

G_DEFINE_FINAL_TYPE (AccelTestFault, accel_test_fault, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_TARGET,
};

static void
accel_test_fault_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelTestFault *self = ACCEL_TEST_FAULT (object);

  switch (prop_id)
    {
    case PROP_TARGET:
      g_set_object (&self->target, g_value_get_object (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_test_fault_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelTestFault *self = ACCEL_TEST_FAULT (object);

  switch (prop_id)
    {
    case PROP_TARGET:
      g_value_set_object (value, self->target);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_test_fault_dispose (GObject *object)
{
  AccelTestFault *self = ACCEL_TEST_FAULT (object);

  g_clear_object (&self->target);
  G_OBJECT_CLASS (accel_test_fault_parent_class)->dispose (object);
}

static void
accel_test_fault_class_init (AccelTestFaultClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_test_fault_set_property;
  object_class->get_property = accel_test_fault_get_property;
  object_class->dispose = accel_test_fault_dispose;

  accel_op_class_set_metadata (op_class, "fault",
                               "Test only: fails as a poisoned context would");
  accel_op_class_install_buffer (op_class, PROP_TARGET, "target",
                                 "Optional buffer the fault is tied to",
                                 ACCEL_ACCESS_READ_WRITE, FALSE);
}

static void
accel_test_fault_init (AccelTestFault *self)
{
}

static gboolean
fault_run (AccelOp *op, gpointer context, GError **error)
{
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_CONTEXT_POISONED,
               "fault: injected fault; the context is poisoned");
  return FALSE;
}

static const AccelKernelVTable fault_kernel = { .run = fault_run };

static gboolean
fault_plugin_init (AccelPlugin *plugin, GError **error)
{
  accel_plugin_register_op_type (plugin, ACCEL_TYPE_TEST_FAULT);
  accel_plugin_register_kernel (plugin, "fault", "cpu", 100, &fault_kernel);
  accel_plugin_register_op_type (plugin, ACCEL_TYPE_TEST_SCRIBBLE);
  accel_plugin_register_kernel (plugin, "scribble", "cpu", 100, &accel_test_scribble_kernel);
  return TRUE;
}

ACCEL_PLUGIN_DEFINE (fault,
                     "Test only: the `fault` op, a poisoned context on the CPU backend, and `scribble`",
                     fault_plugin_init,
                     ACCEL_VERSION,
                     "LGPL-2.1-or-later")
