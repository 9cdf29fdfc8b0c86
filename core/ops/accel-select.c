/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelSelect:
 *
 * Stream compaction: copies, in order, the elements of `input` whose entry in
 * `flags` is not zero to the start of `output`, and writes how many there were
 * to `count`. The rest of `output` is left as it was. `input` and `output` are
 * rank 1 of the same type (any) and length; `flags` has `input`'s length and
 * type u8, i8, i32 or u32; `count` is `[1]` of i32 or i64.
 *
 * Op name: `select`.
 */

static const AccelDType flag_dtypes[] = {
  ACCEL_DTYPE_U8, ACCEL_DTYPE_I8, ACCEL_DTYPE_I32, ACCEL_DTYPE_U32,
};
static const AccelDType count_dtypes[] = { ACCEL_DTYPE_I32, ACCEL_DTYPE_I64 };

static gboolean
accel_select_validate (AccelOp *op, GError **error)
{
  AccelSelect *self = ACCEL_SELECT (op);

  if (!accel_op_check_dtype (op, "flags", flag_dtypes, G_N_ELEMENTS (flag_dtypes), error)
      || !accel_op_check_dtype (op, "count", count_dtypes, G_N_ELEMENTS (count_dtypes), error)
      || !accel_op_check_same_dtype (op, "input", "output", error))
    return FALSE;
  const char *names[4] = { "input", "flags", "output", "count" };
  AccelBuffer *buffers[4] = { self->input, self->flags, self->output, self->count };
  for (guint i = 0; i < 4; i++)
    if (!accel_op_check_rank (op, names[i], 1, 1, error)
        || !accel_op_check_contiguous (op, names[i], error))
      return FALSE;
  gint64 one[1] = { 1 };
  if (!accel_op_check_same_dims_ ("select", "input", self->input, "flags", self->flags, error)
      || !accel_op_check_same_dims_ ("select", "input", self->input, "output", self->output, error)
      || !accel_op_expect_dims_ (error, "select", "count", self->count, one, 1, NULL))
    return FALSE;
  if (accel_buffer_get_dtype (self->count) == ACCEL_DTYPE_I32
      && accel_buffer_get_n_elements (self->input) > G_MAXINT)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "select: “input” has more than %d elements, too many for an i32 “count”", G_MAXINT);
      return FALSE;
    }
  for (guint i = 2; i < 4; i++)
    for (guint j = 0; j < i; j++)
      if (!accel_op_check_no_alias_ (error, "select", names[i], buffers[i], names[j], buffers[j]))
        return FALSE;
  return TRUE;
}

ACCEL_DEFINE_OP_TYPE (AccelSelect, accel_select, "select",
                      "Stream compaction: copies the elements whose flag is non-zero, in order",
                      _accel_select_params, accel_select_validate)
