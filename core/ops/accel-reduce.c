/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelReduce:
 *
 * Reduces `src` along `axis`. `dst` has the shape of `src` with that axis
 * removed, or kept with length 1. Types: f32, f64, f16, bf16 (the same for
 * `src` and `dst`), contiguous; sums accumulate in binary64. NaN propagates
 * through max and min. An empty axis gives 0 (sum), NaN (mean), -inf (max)
 * or +inf (min).
 *
 * Op name: `reduce`.
 */

static const AccelDType reduce_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

static gboolean
accel_reduce_validate (AccelOp *op, GError **error)
{
  AccelReduce *self = ACCEL_REDUCE (op);

  if (!_accel_op_check_dtypes (op, reduce_dtypes, G_N_ELEMENTS (reduce_dtypes), error, "src", "dst", NULL)
      || !accel_op_check_rank (op, "src", 1, ACCEL_SHAPE_MAX_RANK, error)
      || !accel_op_check_contiguous (op, "src", error)
      || !accel_op_check_contiguous (op, "dst", error))
    return FALSE;

  const AccelShape *ss = accel_buffer_get_shape (self->src);
  const AccelShape *sd = accel_buffer_get_shape (self->dst);
  int rank = (int) accel_shape_get_rank (ss);
  int axis = self->axis < 0 ? self->axis + rank : self->axis;
  if (axis < 0 || axis >= rank)
    {
      g_autofree char *s = accel_op_describe_shape_ (self->src);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "reduce: property “axis” is %d but “src” %s has rank %d", self->axis, s, rank);
      return FALSE;
    }

  gint64 removed[ACCEL_SHAPE_MAX_RANK], kept[ACCEL_SHAPE_MAX_RANK];
  guint n_removed = 0;
  for (int i = 0; i < rank; i++)
    {
      kept[i] = i == axis ? 1 : accel_shape_get_dim (ss, i);
      if (i != axis)
        removed[n_removed++] = accel_shape_get_dim (ss, i);
    }
  g_autoptr (AccelShape) want_removed = accel_shape_new (removed, n_removed);
  g_autoptr (AccelShape) want_kept = accel_shape_new (kept, rank);
  if (!accel_shape_same_dims (sd, want_removed) && !accel_shape_same_dims (sd, want_kept))
    {
      g_autofree char *a = accel_shape_to_string (want_removed);
      g_autofree char *b = accel_shape_to_string (want_kept);
      g_autofree char *expected = g_strdup_printf ("%s or %s (src with axis %d removed or kept as 1)",
                                                   a, b, axis);
      return accel_op_shape_error_ (error, "reduce", "dst", self->dst, expected);
    }
  return accel_op_check_no_alias_ (error, "reduce", "dst", self->dst, "src", self->src);
}

ACCEL_DEFINE_OP_TYPE (AccelReduce, accel_reduce, "reduce",
                      "Sum, max, min or mean of src along one axis",
                      _accel_reduce_params, accel_reduce_validate)
