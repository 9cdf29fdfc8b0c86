/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelCholesky:
 * @a: the symmetric positive definite matrix, `[n, n]` or `[batch, n, n]`
 * @l: the triangular factor, the shape of @a
 * @lower: whether @l is lower (`a = l lᵀ`) or upper (`a = uᵀ u`) triangular
 *
 * Cholesky factorisation of a symmetric positive definite matrix: `a = l lᵀ`
 * with @l lower triangular (#AccelCholesky:lower, the default), or `a = uᵀ u`
 * with @l upper triangular. Only that triangle of @a is read, and the other
 * triangle of @l is set to zero. Row-major contiguous f32 or f64, `[n, n]` or
 * a batch `[batch, n, n]`; @l may be @a itself (in place).
 *
 * A matrix that is not positive definite fails with
 * %ACCEL_ERROR_INVALID_ARGUMENT naming the order of the first leading minor
 * that is not positive (and the batch entry).
 *
 * Op name: `cholesky`.
 */

G_DEFINE_FINAL_TYPE (AccelCholesky, accel_cholesky, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_A,
  PROP_L,
  PROP_LOWER,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static const AccelDType linalg_dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64 };

static void
accel_cholesky_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelCholesky *self = ACCEL_CHOLESKY (object);

  switch (prop_id)
    {
    case PROP_A:
      accel_op_set_buffer_ (object, &self->a, value, pspec);
      break;
    case PROP_L:
      accel_op_set_buffer_ (object, &self->l, value, pspec);
      break;
    case PROP_LOWER:
      accel_op_set_boolean_ (object, &self->lower, value, pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_cholesky_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelCholesky *self = ACCEL_CHOLESKY (object);

  switch (prop_id)
    {
    case PROP_A:
      g_value_set_object (value, self->a);
      break;
    case PROP_L:
      g_value_set_object (value, self->l);
      break;
    case PROP_LOWER:
      g_value_set_boolean (value, self->lower);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_cholesky_dispose (GObject *object)
{
  AccelCholesky *self = ACCEL_CHOLESKY (object);

  g_clear_object (&self->a);
  g_clear_object (&self->l);

  G_OBJECT_CLASS (accel_cholesky_parent_class)->dispose (object);
}

static gboolean
accel_cholesky_validate (AccelOp *op, GError **error)
{
  AccelCholesky *self = ACCEL_CHOLESKY (op);

  if (!accel_op_require_ ("cholesky", "a", self->a, error)
      || !accel_op_require_ ("cholesky", "l", self->l, error))
    return FALSE;

  AccelOpMatrixDims d;
  if (!accel_op_check_dtype (op, "a", linalg_dtypes, G_N_ELEMENTS (linalg_dtypes), error)
      || !accel_op_check_same_dtype (op, "a", "l", error)
      || !accel_op_matrix_dims_ (op, "a", self->a, &d, error)
      || !accel_op_check_contiguous (op, "l", error))
    return FALSE;
  if (d.rows != d.cols)
    return accel_op_shape_error_ (error, "cholesky", "a", self->a, "a square matrix [n, n]");
  return accel_op_check_same_dims_ ("cholesky", "a", self->a, "l", self->l, error)
         && accel_op_check_in_place_ (error, "cholesky", "l", self->l, "a", self->a);
}

static void
accel_cholesky_class_init (AccelCholeskyClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_cholesky_set_property;
  object_class->get_property = accel_cholesky_get_property;
  object_class->dispose = accel_cholesky_dispose;
  op_class->validate = accel_cholesky_validate;

  accel_op_class_set_metadata (op_class, "cholesky",
                               "Cholesky factorisation of a symmetric positive definite matrix (LAPACK potrf)");

  accel_op_class_install_buffer (op_class, PROP_A, "a",
                                 "Symmetric positive definite [n, n] (or [b, n, n]); f32 or f64",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_L, "l",
                                 "The triangular factor, shape of a; may be a",
                                 ACCEL_ACCESS_WRITE, TRUE);

  /**
   * AccelCholesky:lower:
   *
   * Whether the factor is lower triangular (`a = l lᵀ`, reading the lower
   * triangle of `a`) or upper triangular (`a = uᵀ u`, reading the upper
   * triangle).
   */
  properties[PROP_LOWER] =
    g_param_spec_boolean ("lower", NULL, "Lower factor a = l lT (else upper a = uT u)",
                          TRUE, ACCEL_OP_PARAM_FLAGS);

  for (guint i = PROP_LOWER; i < N_PROPS; i++)
    g_object_class_install_property (object_class, i, properties[i]);
}

static void
accel_cholesky_init (AccelCholesky *self)
{
  self->lower = TRUE;
}

/**
 * accel_cholesky_new:
 * @a: (transfer none) (nullable): the symmetric positive definite matrix, `[n, n]` or `[batch, n, n]`
 * @l: (transfer none) (nullable): the triangular factor, the shape of @a
 *
 * Makes a `cholesky` op computing the lower factor.
 *
 * Returns: (transfer full): a new #AccelCholesky
 */
AccelOp *
accel_cholesky_new (AccelBuffer *a, AccelBuffer *l)
{
  g_return_val_if_fail (a == NULL || ACCEL_IS_BUFFER (a), NULL);
  g_return_val_if_fail (l == NULL || ACCEL_IS_BUFFER (l), NULL);

  return g_object_new (ACCEL_TYPE_CHOLESKY, "a", a,
                       "l", l, NULL);
}
