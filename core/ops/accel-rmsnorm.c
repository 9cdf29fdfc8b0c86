/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelRmsnorm:
 * @x: the input, `[..., n]`
 * @gamma: the optional scale, `[n]`
 * @beta: the optional shift, `[n]`
 * @y: the result, the shape of @x
 * @eps: added under the square root
 *
 * Root-mean-square normalisation over the last axis: for each row `x[i, :]`
 * of `n` elements, `y = x / √(Σ x² / n + eps) · gamma + beta`. @gamma and
 * @beta are optional (1 and 0). Types: f32, f16 or bf16 for every buffer,
 * computed in f32; contiguous. @y may be @x itself (in place).
 *
 * Op name: `rmsnorm`.
 */

static const AccelDType norm_dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16 };

static gboolean
accel_rmsnorm_validate (AccelOp *op, GError **error)
{
  AccelRmsnorm *self = ACCEL_RMSNORM (op);

  if (!accel_op_require_ ("rmsnorm", "x", self->x, error)
      || !accel_op_require_ ("rmsnorm", "y", self->y, error))
    return FALSE;

  if (!accel_op_check_dtype (op, "x", norm_dtypes, G_N_ELEMENTS (norm_dtypes), error)
      || !accel_op_check_same_dtype (op, "x", "y", error)
      || !accel_op_check_rank (op, "x", 1, ACCEL_SHAPE_MAX_RANK, error)
      || !accel_op_check_contiguous (op, "x", error)
      || !accel_op_check_contiguous (op, "y", error)
      || !accel_op_check_same_dims_ ("rmsnorm", "x", self->x, "y", self->y, error)
      || !accel_op_check_in_place_ (error, "rmsnorm", "y", self->y, "x", self->x))
    return FALSE;

  const AccelShape *sx = accel_buffer_get_shape (self->x);
  gint64 n[1] = { accel_shape_get_dim (sx, accel_shape_get_rank (sx) - 1) };
  const char *names[2] = { "gamma", "beta" };
  AccelBuffer *params[2] = { self->gamma, self->beta };
  for (guint i = 0; i < 2; i++)
    if (params[i] != NULL
        && (!accel_op_check_same_dtype (op, "x", names[i], error)
            || !accel_op_check_contiguous (op, names[i], error)
            || !accel_op_expect_dims_ (error, "rmsnorm", names[i], params[i], n, 1, "the last axis of “x”")
            || !accel_op_check_no_alias_ (error, "rmsnorm", "y", self->y, names[i], params[i])))
      return FALSE;
  if (n[0] > G_MAXINT)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "rmsnorm: the last axis of “x” has %" G_GINT64_FORMAT " elements; at most %d", n[0], G_MAXINT);
      return FALSE;
    }
  if (!isfinite (self->eps) || self->eps < 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "rmsnorm: property “eps” is %g; it must be finite and not negative", self->eps);
      return FALSE;
    }
  return TRUE;
}

static const AccelOpParam rmsnorm_params[] = {
  ACCEL_OP_BUFFER (AccelRmsnorm, x, "x", "Input [..., n], normalised over the last axis; f32, f16 or bf16",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelRmsnorm, gamma, "gamma", "Optional scale [n] (1 when unset)",
                   ACCEL_ACCESS_READ, 0),
  ACCEL_OP_BUFFER (AccelRmsnorm, beta, "beta", "Optional shift [n] (0 when unset)",
                   ACCEL_ACCESS_READ, 0),
  ACCEL_OP_BUFFER (AccelRmsnorm, y, "y", "Result, shape and type of x; may be x",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
  /**
   * AccelRmsnorm:eps:
   *
   * Added to the mean square before its square root, for stability.
   */
  ACCEL_OP_DOUBLE (AccelRmsnorm, eps, "eps", "Added to the variance before the square root",
                   0.0, G_MAXDOUBLE, 1e-5, 0),
};

ACCEL_DEFINE_OP_TYPE (AccelRmsnorm, accel_rmsnorm, "rmsnorm",
                      "RMS normalisation over the last axis: x / sqrt(mean(x^2) + eps) * gamma + beta",
                      rmsnorm_params, accel_rmsnorm_validate)

/**
 * accel_rmsnorm_new:
 * @x: (transfer none) (nullable): the input, `[..., n]`
 * @gamma: (transfer none) (nullable): the optional scale, `[n]`
 * @beta: (transfer none) (nullable): the optional shift, `[n]`
 * @y: (transfer none) (nullable): the result, the shape of @x
 *
 * Makes a `rmsnorm` op with eps 1e-5.
 *
 * Returns: (transfer full): a new #AccelRmsnorm
 */
AccelOp *
accel_rmsnorm_new (AccelBuffer *x, AccelBuffer *gamma, AccelBuffer *beta, AccelBuffer *y)
{
  g_return_val_if_fail (x == NULL || ACCEL_IS_BUFFER (x), NULL);
  g_return_val_if_fail (gamma == NULL || ACCEL_IS_BUFFER (gamma), NULL);
  g_return_val_if_fail (beta == NULL || ACCEL_IS_BUFFER (beta), NULL);
  g_return_val_if_fail (y == NULL || ACCEL_IS_BUFFER (y), NULL);

  return g_object_new (ACCEL_TYPE_RMSNORM, "x", x,
                       "gamma", gamma,
                       "beta", beta,
                       "y", y, NULL);
}
