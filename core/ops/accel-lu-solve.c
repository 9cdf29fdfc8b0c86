/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelLuSolve:
 * @lu: the factors written by `lu`, `[n, n]` or `[batch, n, n]`
 * @pivots: i32 `[n]` or `[batch, n]`: the pivots written by `lu`
 * @b: the right-hand side, `[n]` or `[n, nrhs]`
 * @x: the solution, the shape of @b
 *
 * Solves `a x = b` given the factors of a square `a` made by `lu` (LAPACK
 * `getrs`). @b is `[n]` or `[n, nrhs]` (with a leading batch axis when @lu has
 * one); @x has the shape of @b and may be @b itself. f32 or f64.
 *
 * An exactly zero diagonal entry of `u` fails with %ACCEL_ERROR_INVALID_ARGUMENT
 * on backends that check it before solving (cpu). cuSOLVER's `getrs` does not
 * check: there @x then holds infinities or NaNs; the `lu` op reports singular
 * matrices on every backend.
 *
 * Op name: `lu-solve`.
 */

G_DEFINE_FINAL_TYPE (AccelLuSolve, accel_lu_solve, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_LU,
  PROP_PIVOTS,
  PROP_B,
  PROP_X,
  N_PROPS
};

static const AccelDType linalg_dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64 };

static void
accel_lu_solve_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelLuSolve *self = ACCEL_LU_SOLVE (object);

  switch (prop_id)
    {
    case PROP_LU:
      accel_op_set_buffer_ (object, &self->lu, value, pspec);
      break;
    case PROP_PIVOTS:
      accel_op_set_buffer_ (object, &self->pivots, value, pspec);
      break;
    case PROP_B:
      accel_op_set_buffer_ (object, &self->b, value, pspec);
      break;
    case PROP_X:
      accel_op_set_buffer_ (object, &self->x, value, pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_lu_solve_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelLuSolve *self = ACCEL_LU_SOLVE (object);

  switch (prop_id)
    {
    case PROP_LU:
      g_value_set_object (value, self->lu);
      break;
    case PROP_PIVOTS:
      g_value_set_object (value, self->pivots);
      break;
    case PROP_B:
      g_value_set_object (value, self->b);
      break;
    case PROP_X:
      g_value_set_object (value, self->x);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_lu_solve_dispose (GObject *object)
{
  AccelLuSolve *self = ACCEL_LU_SOLVE (object);

  g_clear_object (&self->lu);
  g_clear_object (&self->pivots);
  g_clear_object (&self->b);
  g_clear_object (&self->x);

  G_OBJECT_CLASS (accel_lu_solve_parent_class)->dispose (object);
}

static gboolean
accel_lu_solve_validate (AccelOp *op, GError **error)
{
  AccelLuSolve *self = ACCEL_LU_SOLVE (op);

  if (!accel_op_require_ ("lu-solve", "lu", self->lu, error)
      || !accel_op_require_ ("lu-solve", "pivots", self->pivots, error)
      || !accel_op_require_ ("lu-solve", "b", self->b, error)
      || !accel_op_require_ ("lu-solve", "x", self->x, error))
    return FALSE;

  static const AccelDType pivot_dtypes[] = { ACCEL_DTYPE_I32 };
  AccelOpMatrixDims d;
  if (!accel_op_check_dtype (op, "lu", linalg_dtypes, G_N_ELEMENTS (linalg_dtypes), error)
      || !accel_op_check_dtype (op, "pivots", pivot_dtypes, G_N_ELEMENTS (pivot_dtypes), error)
      || !accel_op_matrix_dims_ (op, "lu", self->lu, &d, error)
      || !accel_op_check_contiguous (op, "pivots", error))
    return FALSE;
  if (d.rows != d.cols)
    return accel_op_shape_error_ (error, "lu-solve", "lu", self->lu, "a square matrix [n, n]");

  gint64 pivot_dims[1] = { d.rows };
  return accel_op_expect_batched_ (error, "lu-solve", "pivots", self->pivots, &d, pivot_dims, 1, "n for “lu” n x n")
         && accel_op_check_rhs_ (op, "lu", &d, self->b, self->x, error)
         && accel_op_check_no_alias_ (error, "lu-solve", "x", self->x, "pivots", self->pivots);
}

static void
accel_lu_solve_class_init (AccelLuSolveClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_lu_solve_set_property;
  object_class->get_property = accel_lu_solve_get_property;
  object_class->dispose = accel_lu_solve_dispose;
  op_class->validate = accel_lu_solve_validate;

  accel_op_class_set_metadata (op_class, "lu-solve",
                               "Solves a x = b from the LU factors of a square a (LAPACK getrs)");

  accel_op_class_install_buffer (op_class, PROP_LU, "lu",
                                 "LU factors [n, n] (or [b, n, n]) as written by lu",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_PIVOTS, "pivots",
                                 "i32 [n] (or [b, n]): the pivots written by lu",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_B, "b",
                                 "Right-hand side [n] or [n, nrhs] (batched like lu)",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_X, "x",
                                 "The solution, shape of b; may be b",
                                 ACCEL_ACCESS_WRITE, TRUE);

}

static void
accel_lu_solve_init (AccelLuSolve *self)
{
}

/**
 * accel_lu_solve_new:
 * @lu: (transfer none) (nullable): the factors written by `lu`, `[n, n]` or `[batch, n, n]`
 * @pivots: (transfer none) (nullable): i32 `[n]` or `[batch, n]`: the pivots written by `lu`
 * @b: (transfer none) (nullable): the right-hand side, `[n]` or `[n, nrhs]`
 * @x: (transfer none) (nullable): the solution, the shape of @b
 *
 * Makes an `lu-solve` op.
 *
 * Returns: (transfer full): a new #AccelLuSolve
 */
AccelOp *
accel_lu_solve_new (AccelBuffer *lu, AccelBuffer *pivots, AccelBuffer *b, AccelBuffer *x)
{
  g_return_val_if_fail (lu == NULL || ACCEL_IS_BUFFER (lu), NULL);
  g_return_val_if_fail (pivots == NULL || ACCEL_IS_BUFFER (pivots), NULL);
  g_return_val_if_fail (b == NULL || ACCEL_IS_BUFFER (b), NULL);
  g_return_val_if_fail (x == NULL || ACCEL_IS_BUFFER (x), NULL);

  return g_object_new (ACCEL_TYPE_LU_SOLVE, "lu", lu,
                       "pivots", pivots,
                       "b", b,
                       "x", x, NULL);
}
