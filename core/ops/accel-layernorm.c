/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelLayernorm:
 * @x: the input, `[..., n]`
 * @gamma: the optional scale, `[n]`
 * @beta: the optional shift, `[n]`
 * @y: the result, the shape of @x
 * @eps: added under the square root
 *
 * Layer normalisation over the last axis: for each row `x[i, :]` of `n`
 * elements, `y = (x − μ) / √(σ² + eps) · gamma + beta` with `μ` the row's mean
 * and `σ²` its biased variance. @gamma and @beta are optional (1 and 0).
 * Types: f32, f16 or bf16 for every buffer, computed in f32; contiguous. @y
 * may be @x itself (in place).
 *
 * Op name: `layernorm`.
 */

static const AccelDType norm_dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16 };

static gboolean
accel_layernorm_validate (AccelOp *op, GError **error)
{
  AccelLayernorm *self = ACCEL_LAYERNORM (op);

  if (!accel_op_require_ ("layernorm", "x", self->x, error)
      || !accel_op_require_ ("layernorm", "y", self->y, error))
    return FALSE;

  if (!accel_op_check_dtype (op, "x", norm_dtypes, G_N_ELEMENTS (norm_dtypes), error)
      || !accel_op_check_same_dtype (op, "x", "y", error)
      || !accel_op_check_rank (op, "x", 1, ACCEL_SHAPE_MAX_RANK, error)
      || !accel_op_check_contiguous (op, "x", error)
      || !accel_op_check_contiguous (op, "y", error)
      || !accel_op_check_same_dims_ ("layernorm", "x", self->x, "y", self->y, error)
      || !accel_op_check_in_place_ (error, "layernorm", "y", self->y, "x", self->x))
    return FALSE;

  const AccelShape *sx = accel_buffer_get_shape (self->x);
  gint64 n[1] = { accel_shape_get_dim (sx, accel_shape_get_rank (sx) - 1) };
  const char *names[2] = { "gamma", "beta" };
  AccelBuffer *params[2] = { self->gamma, self->beta };
  for (guint i = 0; i < 2; i++)
    if (params[i] != NULL
        && (!accel_op_check_same_dtype (op, "x", names[i], error)
            || !accel_op_check_contiguous (op, names[i], error)
            || !accel_op_expect_dims_ (error, "layernorm", names[i], params[i], n, 1, "the last axis of “x”")
            || !accel_op_check_no_alias_ (error, "layernorm", "y", self->y, names[i], params[i])))
      return FALSE;
  if (n[0] > G_MAXINT)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "layernorm: the last axis of “x” has %" G_GINT64_FORMAT " elements; at most %d", n[0], G_MAXINT);
      return FALSE;
    }
  if (!isfinite (self->eps) || self->eps < 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "layernorm: property “eps” is %g; it must be finite and not negative", self->eps);
      return FALSE;
    }
  return TRUE;
}

static const AccelOpParam layernorm_params[] = {
  ACCEL_OP_BUFFER (AccelLayernorm, x, "x", "Input [..., n], normalised over the last axis; f32, f16 or bf16",
                   ACCEL_ACCESS_READ, ACCEL_OP_PARAM_REQUIRED),
  ACCEL_OP_BUFFER (AccelLayernorm, gamma, "gamma", "Optional scale [n] (1 when unset)",
                   ACCEL_ACCESS_READ, 0),
  ACCEL_OP_BUFFER (AccelLayernorm, beta, "beta", "Optional shift [n] (0 when unset)",
                   ACCEL_ACCESS_READ, 0),
  ACCEL_OP_BUFFER (AccelLayernorm, y, "y", "Result, shape and type of x; may be x",
                   ACCEL_ACCESS_WRITE, ACCEL_OP_PARAM_REQUIRED),
  /**
   * AccelLayernorm:eps:
   *
   * Added to the variance before its square root, for stability.
   */
  ACCEL_OP_DOUBLE (AccelLayernorm, eps, "eps", "Added to the variance before the square root",
                   0.0, G_MAXDOUBLE, 1e-5, 0),
};

ACCEL_DEFINE_OP_TYPE (AccelLayernorm, accel_layernorm, "layernorm",
                      "Layer normalisation over the last axis: (x - mean) / sqrt(var + eps) * gamma + beta",
                      layernorm_params, accel_layernorm_validate)

/**
 * accel_layernorm_new:
 * @x: (transfer none) (nullable): the input, `[..., n]`
 * @gamma: (transfer none) (nullable): the optional scale, `[n]`
 * @beta: (transfer none) (nullable): the optional shift, `[n]`
 * @y: (transfer none) (nullable): the result, the shape of @x
 *
 * Makes a `layernorm` op with eps 1e-5.
 *
 * Returns: (transfer full): a new #AccelLayernorm
 */
AccelOp *
accel_layernorm_new (AccelBuffer *x, AccelBuffer *gamma, AccelBuffer *beta, AccelBuffer *y)
{
  g_return_val_if_fail (x == NULL || ACCEL_IS_BUFFER (x), NULL);
  g_return_val_if_fail (gamma == NULL || ACCEL_IS_BUFFER (gamma), NULL);
  g_return_val_if_fail (beta == NULL || ACCEL_IS_BUFFER (beta), NULL);
  g_return_val_if_fail (y == NULL || ACCEL_IS_BUFFER (y), NULL);

  return g_object_new (ACCEL_TYPE_LAYERNORM, "x", x,
                       "gamma", gamma,
                       "beta", beta,
                       "y", y, NULL);
}
