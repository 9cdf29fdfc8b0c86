/* accel-norm-family.c: what `layernorm` and `rmsnorm` share: their
 * parameters (the same fields, laid out alike) and their checks.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "accel-op-check-private.h"

G_STATIC_ASSERT (sizeof (AccelLayernorm) == sizeof (AccelNormFields)
                 && G_STRUCT_OFFSET (AccelLayernorm, eps) == G_STRUCT_OFFSET (AccelNormFields, eps)
                 && G_STRUCT_OFFSET (AccelLayernorm, x) == G_STRUCT_OFFSET (AccelNormFields, x));
G_STATIC_ASSERT (sizeof (AccelRmsnorm) == sizeof (AccelNormFields)
                 && G_STRUCT_OFFSET (AccelRmsnorm, eps) == G_STRUCT_OFFSET (AccelNormFields, eps)
                 && G_STRUCT_OFFSET (AccelRmsnorm, x) == G_STRUCT_OFFSET (AccelNormFields, x));

static const AccelDType norm_dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16 };

gboolean
_accel_norm_validate (AccelOp *op, GError **error)
{
  const AccelNormFields *self = (const AccelNormFields *) op;
  const char *name = accel_op_get_type_name (op);

  if (!_accel_op_check_dtypes (op, norm_dtypes, G_N_ELEMENTS (norm_dtypes), error, "x", "y", NULL)
      || !accel_op_check_rank (op, "x", 1, ACCEL_SHAPE_MAX_RANK, error)
      || !accel_op_check_contiguous (op, "x", error)
      || !accel_op_check_contiguous (op, "y", error)
      || !accel_op_check_same_dims_ (name, "x", self->x, "y", self->y, error)
      || !accel_op_check_in_place_ (error, name, "y", self->y, "x", self->x))
    return FALSE;

  const AccelShape *sx = accel_buffer_get_shape (self->x);
  gint64 n[1] = { accel_shape_get_dim (sx, accel_shape_get_rank (sx) - 1) };
  const char *names[2] = { "gamma", "beta" };
  AccelBuffer *params[2] = { self->gamma, self->beta };
  for (guint i = 0; i < 2; i++)
    if (params[i] != NULL
        && (!accel_op_check_same_dtype (op, "x", names[i], error)
            || !accel_op_check_contiguous (op, names[i], error)
            || !accel_op_expect_dims_ (error, name, names[i], params[i], n, 1, "the last axis of “x”")
            || !accel_op_check_no_alias_ (error, name, "y", self->y, names[i], params[i])))
      return FALSE;
  if (n[0] > G_MAXINT)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: the last axis of “x” has %" G_GINT64_FORMAT " elements; at most %d", name, n[0], G_MAXINT);
      return FALSE;
    }
  return TRUE;
}

