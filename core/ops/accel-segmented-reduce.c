/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelSegmentedReduce:
 *
 * Reduces each segment `input[offsets[i] .. offsets[i + 1] − 1]` to
 * `output[i]`. Offsets must be non-decreasing and within `[0, n]`; an empty
 * segment gives 0 for sum, the lowest finite value of the type for max
 * (`-FLT_MAX` for f32, as CUB), the highest for min, and NaN for mean. Types: i32, u32, i64, f32,
 * f64 (mean: f32 and f64 only); `output` has `input`'s type; `offsets` is i32 or
 * i64 `[n_segments + 1]`. Float sums are added in the backend's order.
 *
 * Op name: `segmented-reduce`.
 */

static const AccelDType segment_dtypes[] = {
  ACCEL_DTYPE_I32, ACCEL_DTYPE_U32, ACCEL_DTYPE_I64, ACCEL_DTYPE_F32, ACCEL_DTYPE_F64,
};
static const AccelDType offset_dtypes[] = { ACCEL_DTYPE_I32, ACCEL_DTYPE_I64 };

static gboolean
accel_segmented_reduce_validate (AccelOp *op, GError **error)
{
  AccelSegmentedReduce *self = ACCEL_SEGMENTED_REDUCE (op);

  if (self->reduction > ACCEL_REDUCE_MEAN || (int) self->reduction < 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "segmented-reduce: property “reduction” has the unknown value %d", self->reduction);
      return FALSE;
    }
  if (!accel_op_check_dtype (op, "input", segment_dtypes, G_N_ELEMENTS (segment_dtypes), error)
      || !accel_op_check_dtype (op, "offsets", offset_dtypes, G_N_ELEMENTS (offset_dtypes), error)
      || !accel_op_check_same_dtype (op, "input", "output", error)
      || !accel_op_check_rank (op, "input", 1, 1, error)
      || !accel_op_check_rank (op, "offsets", 1, 1, error)
      || !accel_op_check_contiguous (op, "input", error)
      || !accel_op_check_contiguous (op, "offsets", error)
      || !accel_op_check_contiguous (op, "output", error))
    return FALSE;
  AccelDType dtype = accel_buffer_get_dtype (self->input);
  if (self->reduction == ACCEL_REDUCE_MEAN && dtype != ACCEL_DTYPE_F32 && dtype != ACCEL_DTYPE_F64)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "segmented-reduce: reduction mean needs an f32 or f64 “input”, not %s",
                   accel_dtype_get_name (dtype));
      return FALSE;
    }
  gint64 n_segments = accel_buffer_get_n_elements (self->offsets) - 1;
  if (n_segments < 0)
    return accel_op_shape_error_ (error, "segmented-reduce", "offsets", self->offsets, "[n_segments + 1], at least one entry");
  if (n_segments > G_MAXINT)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "segmented-reduce: more than %d segments", G_MAXINT);
      return FALSE;
    }
  gint64 want[1] = { n_segments };
  return accel_op_expect_dims_ (error, "segmented-reduce", "output", self->output, want, 1, "one per segment of “offsets”")
         && accel_op_check_no_alias_ (error, "segmented-reduce", "output", self->output, "input", self->input)
         && accel_op_check_no_alias_ (error, "segmented-reduce", "output", self->output, "offsets", self->offsets);
}

ACCEL_DEFINE_OP_TYPE (AccelSegmentedReduce, accel_segmented_reduce, "segmented-reduce",
                      "Sum, max, min or mean of each segment of a vector, segments given by offsets",
                      _accel_segmented_reduce_params, accel_segmented_reduce_validate)
