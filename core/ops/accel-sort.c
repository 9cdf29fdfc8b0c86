/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelSort:
 *
 * Stable sort of `keys` in place along the last axis (each row of a rank 2+
 * buffer on its own), ascending or descending, carrying `values` along when it
 * is set. The order is that of a radix sort: integers by value; floats by
 * value with `-0.0` and `+0.0` equal (kept in input order), and every NaN,
 * whatever its sign bit, after `+inf`, as numpy's `sort` and PyTorch's
 * `sort` order them (descending puts the NaNs first, as PyTorch's does;
 * cuda may clear the sign bit of a NaN key). Key types:
 * i8, u8, i32, u32, i64, f16, bf16, f32, f64; `values` may have any type and
 * has the dims of `keys`.
 *
 * Op name: `sort`.
 */

static const AccelDType sort_key_dtypes[] = {
  ACCEL_DTYPE_I8, ACCEL_DTYPE_U8, ACCEL_DTYPE_I32, ACCEL_DTYPE_U32, ACCEL_DTYPE_I64,
  ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16, ACCEL_DTYPE_F32, ACCEL_DTYPE_F64,
};

static gboolean
accel_sort_validate (AccelOp *op, GError **error)
{
  AccelSort *self = ACCEL_SORT (op);

  if (!accel_op_check_dtype (op, "keys", sort_key_dtypes, G_N_ELEMENTS (sort_key_dtypes), error)
      || !accel_op_check_rank (op, "keys", 1, ACCEL_SHAPE_MAX_RANK, error)
      || !accel_op_check_contiguous (op, "keys", error))
    return FALSE;
  if (self->values != NULL
      && (!accel_op_check_contiguous (op, "values", error)
          || !accel_op_check_same_dims_ ("sort", "keys", self->keys, "values", self->values, error)))
    return FALSE;
  const AccelShape *s = accel_buffer_get_shape (self->keys);
  gint64 n = accel_shape_get_dim (s, accel_shape_get_rank (s) - 1);
  if (n > G_MAXINT || accel_buffer_get_n_elements (self->keys) / MAX (n, 1) > G_MAXINT)
    {
      g_autofree char *shape = accel_op_describe_shape_ (self->keys);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "sort: “keys” %s has more than %d rows or elements per row", shape, G_MAXINT);
      return FALSE;
    }
  return accel_op_check_no_alias_ (error, "sort", "values", self->values, "keys", self->keys);
}

ACCEL_DEFINE_OP_TYPE (AccelSort, accel_sort, "sort",
                      "Stable sort along the last axis, in place, of keys or key-value pairs",
                      _accel_sort_params, accel_sort_validate)
