/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelScan:
 * @input: the input, `[..., n]`
 * @output: the prefix sums, the shape of @input
 * @kind: inclusive or exclusive
 *
 * Prefix sums along the last axis (each row of a rank 2+ buffer on its own),
 * inclusive or exclusive. Types: i32, u32, i64 (wrapping on overflow, as two's
 * complement), f32 and f64 (the order of the additions is the backend's, so
 * float results differ in rounding between backends). @output has the type
 * and dims of @input and may be @input itself (in place).
 *
 * Op name: `scan`.
 */

G_DEFINE_FINAL_TYPE (AccelScan, accel_scan, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_INPUT,
  PROP_OUTPUT,
  PROP_KIND,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const AccelDType scan_dtypes[] = {
  ACCEL_DTYPE_I32, ACCEL_DTYPE_U32, ACCEL_DTYPE_I64, ACCEL_DTYPE_F32, ACCEL_DTYPE_F64,
};

static void
accel_scan_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelScan *self = ACCEL_SCAN (object);

  switch (prop_id)
    {
    case PROP_INPUT:
      accel_op_set_buffer_ (object, &self->input, value, pspec);
      break;
    case PROP_OUTPUT:
      accel_op_set_buffer_ (object, &self->output, value, pspec);
      break;
    case PROP_KIND:
      accel_op_set_enum_ (object, (int *) &self->kind, value, pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_scan_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelScan *self = ACCEL_SCAN (object);

  switch (prop_id)
    {
    case PROP_INPUT:
      g_value_set_object (value, self->input);
      break;
    case PROP_OUTPUT:
      g_value_set_object (value, self->output);
      break;
    case PROP_KIND:
      g_value_set_enum (value, self->kind);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_scan_dispose (GObject *object)
{
  AccelScan *self = ACCEL_SCAN (object);

  g_clear_object (&self->input);
  g_clear_object (&self->output);

  G_OBJECT_CLASS (accel_scan_parent_class)->dispose (object);
}

static gboolean
accel_scan_validate (AccelOp *op, GError **error)
{
  AccelScan *self = ACCEL_SCAN (op);

  if (!accel_op_require_ ("scan", "input", self->input, error)
      || !accel_op_require_ ("scan", "output", self->output, error))
    return FALSE;

  if (self->kind != ACCEL_SCAN_INCLUSIVE && self->kind != ACCEL_SCAN_EXCLUSIVE)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "scan: property “kind” has the unknown value %d", self->kind);
      return FALSE;
    }
  return accel_op_check_dtype (op, "input", scan_dtypes, G_N_ELEMENTS (scan_dtypes), error)
         && accel_op_check_same_dtype (op, "input", "output", error)
         && accel_op_check_rank (op, "input", 1, ACCEL_SHAPE_MAX_RANK, error)
         && accel_op_check_contiguous (op, "input", error)
         && accel_op_check_contiguous (op, "output", error)
         && accel_op_check_same_dims_ ("scan", "input", self->input, "output", self->output, error)
         && accel_op_check_in_place_ (error, "scan", "output", self->output, "input", self->input);
}

static void
accel_scan_class_init (AccelScanClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_scan_set_property;
  object_class->get_property = accel_scan_get_property;
  object_class->dispose = accel_scan_dispose;
  op_class->validate = accel_scan_validate;

  accel_op_class_set_metadata (op_class, "scan",
                               "Inclusive or exclusive prefix sum along the last axis");

  accel_op_class_install_buffer (op_class, PROP_INPUT, "input",
                                 "Input [..., n]: i32, u32, i64, f32 or f64",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_OUTPUT, "output",
                                 "Prefix sums, type and dims of input; may be input",
                                 ACCEL_ACCESS_WRITE, TRUE);

  /**
   * AccelScan:kind:
   *
   * Inclusive or exclusive sums.
   */
  properties[PROP_KIND] =
    g_param_spec_enum ("kind", NULL, "inclusive or exclusive",
                       ACCEL_TYPE_SCAN_KIND, ACCEL_SCAN_INCLUSIVE, ACCEL_OP_PARAM_FLAGS);

  for (guint i = PROP_KIND; i < N_PROPS; i++)
    g_object_class_install_property (object_class, i, properties[i]);
}

static void
accel_scan_init (AccelScan *self)
{
  self->kind = ACCEL_SCAN_INCLUSIVE;
}

/**
 * accel_scan_new:
 * @input: (transfer none) (nullable): the input, `[..., n]`
 * @output: (transfer none) (nullable): the prefix sums, the shape of @input
 * @kind: inclusive or exclusive
 *
 * Makes a `scan` op.
 *
 * Returns: (transfer full): a new #AccelScan
 */
AccelOp *
accel_scan_new (AccelBuffer *input, AccelBuffer *output, AccelScanKind kind)
{
  g_return_val_if_fail (input == NULL || ACCEL_IS_BUFFER (input), NULL);
  g_return_val_if_fail (output == NULL || ACCEL_IS_BUFFER (output), NULL);

  return g_object_new (ACCEL_TYPE_SCAN, "input", input,
                       "output", output,
                       "kind", kind, NULL);
}
