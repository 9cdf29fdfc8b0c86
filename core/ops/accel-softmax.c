/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"

/**
 * AccelSoftmax:
 * @src: the input
 * @dst: the result, same shape and dtype as @src
 *
 * Softmax along the last axis: `dst[..., j] = exp (src[..., j] - m) / Σ exp
 * (src[..., k] - m)` with `m` the row's maximum. Types: f32, f64, f16, bf16;
 * contiguous. @dst may be @src itself (in place).
 *
 * Op name: `softmax`.
 */

G_DEFINE_FINAL_TYPE (AccelSoftmax, accel_softmax, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_SRC,
  PROP_DST,
  N_PROPS
};

static const AccelDType softmax_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

static void
accel_softmax_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelSoftmax *self = ACCEL_SOFTMAX (object);

  switch (prop_id)
    {
    case PROP_SRC:
      accel_op_set_buffer_ (object, &self->src, value, pspec);
      break;
    case PROP_DST:
      accel_op_set_buffer_ (object, &self->dst, value, pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_softmax_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelSoftmax *self = ACCEL_SOFTMAX (object);

  switch (prop_id)
    {
    case PROP_SRC:
      g_value_set_object (value, self->src);
      break;
    case PROP_DST:
      g_value_set_object (value, self->dst);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_softmax_dispose (GObject *object)
{
  AccelSoftmax *self = ACCEL_SOFTMAX (object);

  g_clear_object (&self->src);
  g_clear_object (&self->dst);

  G_OBJECT_CLASS (accel_softmax_parent_class)->dispose (object);
}

static gboolean
accel_softmax_validate (AccelOp *op, GError **error)
{
  AccelSoftmax *self = ACCEL_SOFTMAX (op);

  if (!accel_op_require_ ("softmax", "src", self->src, error)
      || !accel_op_require_ ("softmax", "dst", self->dst, error))
    return FALSE;
  if (!accel_op_check_dtype (op, "src", softmax_dtypes, G_N_ELEMENTS (softmax_dtypes), error)
      || !accel_op_check_same_dtype (op, "src", "dst", error)
      || !accel_op_check_rank (op, "src", 1, ACCEL_SHAPE_MAX_RANK, error)
      || !accel_op_check_contiguous (op, "src", error)
      || !accel_op_check_contiguous (op, "dst", error))
    return FALSE;
  if (!accel_op_check_same_dims_ ("softmax", "src", self->src, "dst", self->dst, error))
    return FALSE;
  if (accel_op_buffers_overlap_partly_ (self->src, self->dst))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "softmax: “src” and “dst” overlap partly");
      return FALSE;
    }
  return TRUE;
}

static void
accel_softmax_class_init (AccelSoftmaxClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_softmax_set_property;
  object_class->get_property = accel_softmax_get_property;
  object_class->dispose = accel_softmax_dispose;
  op_class->validate = accel_softmax_validate;

  accel_op_class_set_metadata (op_class, "softmax", "Softmax along the last axis");
  accel_op_class_install_buffer (op_class, PROP_SRC, "src",
                                 "Input: f32, f64, f16 or bf16, contiguous",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_DST, "dst",
                                 "Result, same shape and dtype as src (may be src)",
                                 ACCEL_ACCESS_WRITE, TRUE);
}

static void
accel_softmax_init (AccelSoftmax *self)
{
}

/**
 * accel_softmax_new:
 * @src: (transfer none): the input
 * @dst: (transfer none): the result
 *
 * Makes a `softmax` op.
 *
 * Returns: (transfer full): a new #AccelSoftmax
 */
AccelOp *
accel_softmax_new (AccelBuffer *src, AccelBuffer *dst)
{
  g_return_val_if_fail (src == NULL || ACCEL_IS_BUFFER (src), NULL);
  g_return_val_if_fail (dst == NULL || ACCEL_IS_BUFFER (dst), NULL);

  return g_object_new (ACCEL_TYPE_SOFTMAX, "src", src, "dst", dst, NULL);
}
