/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-check-private.h"
#include "accel-enum-types.h"

/**
 * AccelSpmm:
 * @row_ptr: i32 `[m + 1]`: row `i` holds the entries `row_ptr[i]` to `row_ptr[i + 1] - 1`
 * @col_ind: i32 `[nnz]`: the column of each entry, ascending within a row
 * @values: f32 or f64 `[nnz]`: the value of each entry
 * @b: the dense matrix, `[n_cols, k]`
 * @c: the result, `[m, k]`
 * @n_cols: the number of columns of the sparse matrix
 * @alpha: the scale of the product
 * @beta: the scale of the old output
 * @check_structure: whether the structure is verified before the product
 *
 * Sparse matrix times dense matrix, `c = alpha s b + beta c`.
 *
 * The sparse matrix `s` is `[m, n_cols]` in CSR form: @row_ptr, @col_ind
 * and @values, with 32-bit indices, column indices ascending (no duplicates)
 * within each row. f32 or f64; the dense buffers have the type of @values.
 * @b is `[n_cols, k]` and @c `[m, k]`, row-major.
 *
 * Op name: `spmm`.
 */

G_DEFINE_FINAL_TYPE (AccelSpmm, accel_spmm, ACCEL_TYPE_OP)

enum {
  PROP_0,
  PROP_ROW_PTR,
  PROP_COL_IND,
  PROP_VALUES,
  PROP_B,
  PROP_C,
  PROP_N_COLS,
  PROP_ALPHA,
  PROP_BETA,
  PROP_CHECK_STRUCTURE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
accel_spmm_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  AccelSpmm *self = ACCEL_SPMM (object);

  switch (prop_id)
    {
    case PROP_ROW_PTR:
      accel_op_set_buffer_ (object, &self->row_ptr, value, pspec);
      break;
    case PROP_COL_IND:
      accel_op_set_buffer_ (object, &self->col_ind, value, pspec);
      break;
    case PROP_VALUES:
      accel_op_set_buffer_ (object, &self->values, value, pspec);
      break;
    case PROP_B:
      accel_op_set_buffer_ (object, &self->b, value, pspec);
      break;
    case PROP_C:
      accel_op_set_buffer_ (object, &self->c, value, pspec);
      break;
    case PROP_N_COLS:
      accel_op_set_int64_ (object, &self->n_cols, value, pspec);
      break;
    case PROP_ALPHA:
      accel_op_set_double_ (object, &self->alpha, value, pspec);
      break;
    case PROP_BETA:
      accel_op_set_double_ (object, &self->beta, value, pspec);
      break;
    case PROP_CHECK_STRUCTURE:
      accel_op_set_boolean_ (object, &self->check_structure, value, pspec);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_spmm_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  AccelSpmm *self = ACCEL_SPMM (object);

  switch (prop_id)
    {
    case PROP_ROW_PTR:
      g_value_set_object (value, self->row_ptr);
      break;
    case PROP_COL_IND:
      g_value_set_object (value, self->col_ind);
      break;
    case PROP_VALUES:
      g_value_set_object (value, self->values);
      break;
    case PROP_B:
      g_value_set_object (value, self->b);
      break;
    case PROP_C:
      g_value_set_object (value, self->c);
      break;
    case PROP_N_COLS:
      g_value_set_int64 (value, self->n_cols);
      break;
    case PROP_ALPHA:
      g_value_set_double (value, self->alpha);
      break;
    case PROP_BETA:
      g_value_set_double (value, self->beta);
      break;
    case PROP_CHECK_STRUCTURE:
      g_value_set_boolean (value, self->check_structure);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
accel_spmm_dispose (GObject *object)
{
  AccelSpmm *self = ACCEL_SPMM (object);

  g_clear_object (&self->row_ptr);
  g_clear_object (&self->col_ind);
  g_clear_object (&self->values);
  g_clear_object (&self->b);
  g_clear_object (&self->c);

  G_OBJECT_CLASS (accel_spmm_parent_class)->dispose (object);
}

static gboolean
accel_spmm_validate (AccelOp *op, GError **error)
{
  AccelSpmm *self = ACCEL_SPMM (op);

  if (!accel_op_require_ ("spmm", "row-ptr", self->row_ptr, error)
      || !accel_op_require_ ("spmm", "col-ind", self->col_ind, error)
      || !accel_op_require_ ("spmm", "values", self->values, error)
      || !accel_op_require_ ("spmm", "b", self->b, error)
      || !accel_op_require_ ("spmm", "c", self->c, error))
    return FALSE;

  gint64 m = 0;
  if (!accel_op_check_csr_ (op, self->row_ptr, self->col_ind, self->values, self->n_cols, &m, error)
      || !accel_op_check_same_dtype (op, "values", "b", error)
      || !accel_op_check_same_dtype (op, "values", "c", error)
      || !accel_op_check_rank (op, "b", 2, 2, error)
      || !accel_op_check_contiguous (op, "b", error)
      || !accel_op_check_contiguous (op, "c", error))
    return FALSE;

  gint64 k = accel_shape_get_dim (accel_buffer_get_shape (self->b), 1);
  gint64 b_dims[2] = { self->n_cols, k };
  gint64 c_dims[2] = { m, k };
  if (!accel_op_expect_dims_ (error, "spmm", "b", self->b, b_dims, 2, "“n-cols” rows")
      || !accel_op_expect_dims_ (error, "spmm", "c", self->c, c_dims, 2, "one row per row of “row-ptr”, the columns of “b”")
      || !accel_op_check_finite_ (error, "spmm", "alpha", self->alpha)
      || !accel_op_check_finite_ (error, "spmm", "beta", self->beta))
    return FALSE;
  if (k > G_MAXINT)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "spmm: “b” has %" G_GINT64_FORMAT " columns; at most %d", k, G_MAXINT);
      return FALSE;
    }
  return accel_op_check_no_alias_ (error, "spmm", "c", self->c, "b", self->b)
         && accel_op_check_no_alias_ (error, "spmm", "c", self->c, "values", self->values)
         && accel_op_check_no_alias_ (error, "spmm", "c", self->c, "row-ptr", self->row_ptr)
         && accel_op_check_no_alias_ (error, "spmm", "c", self->c, "col-ind", self->col_ind);
}

static void
accel_spmm_class_init (AccelSpmmClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  AccelOpClass *op_class = ACCEL_OP_CLASS (klass);

  object_class->set_property = accel_spmm_set_property;
  object_class->get_property = accel_spmm_get_property;
  object_class->dispose = accel_spmm_dispose;
  op_class->validate = accel_spmm_validate;

  accel_op_class_set_metadata (op_class, "spmm",
                               "Sparse (CSR) matrix times dense matrix: c = alpha s b + beta c");

  accel_op_class_install_buffer (op_class, PROP_ROW_PTR, "row-ptr",
                                 "CSR row offsets, i32 [m + 1]: row i holds entries row-ptr[i] to row-ptr[i + 1] - 1",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_COL_IND, "col-ind",
                                 "CSR column indices, i32 [nnz], ascending within each row, each in [0, n-cols)",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_VALUES, "values",
                                 "CSR values [nnz]: f32 or f64",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_B, "b",
                                 "Dense matrix [n-cols, k], row-major",
                                 ACCEL_ACCESS_READ, TRUE);
  accel_op_class_install_buffer (op_class, PROP_C, "c",
                                 "Result [m, k]; read when beta is not 0",
                                 ACCEL_ACCESS_READ_WRITE, TRUE);

  /**
   * AccelSpmm:n-cols:
   *
   * The number of columns of the sparse matrix; its rows are the entries of
   * `row-ptr` less one.
   */
  properties[PROP_N_COLS] =
    g_param_spec_int64 ("n-cols", NULL, "Number of columns of the sparse matrix",
                        0, G_MAXINT64, 0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelSpmm:alpha:
   *
   * Scale of the product of the sparse matrix and `b`.
   */
  properties[PROP_ALPHA] =
    g_param_spec_double ("alpha", NULL, "Scale of the product",
                         -G_MAXDOUBLE, G_MAXDOUBLE, 1.0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelSpmm:beta:
   *
   * Scale of the old contents of the output; with 0 the output is not read
   * (so NaNs there do not propagate).
   */
  properties[PROP_BETA] =
    g_param_spec_double ("beta", NULL, "Scale of the old output (0: it is not read)",
                         -G_MAXDOUBLE, G_MAXDOUBLE, 0.0, ACCEL_OP_PARAM_FLAGS);
  /**
   * AccelSpmm:check-structure:
   *
   * Whether the kernel verifies the CSR structure first (row offsets
   * non-decreasing from 0 to nnz, column indices ascending within each row and
   * below `n-cols`) and fails with %ACCEL_ERROR_INVALID_ARGUMENT naming the
   * first bad entry. On cuda this costs a pass over the indices and one
   * stream synchronisation; set it to %FALSE for a structure already
   * checked, which is then trusted (a malformed one gives undefined results
   * or a device fault there). The cpu backend always checks.
   */
  properties[PROP_CHECK_STRUCTURE] =
    g_param_spec_boolean ("check-structure", NULL, "Verify that column indices are sorted and in range first",
                          TRUE, ACCEL_OP_PARAM_FLAGS);

  for (guint i = PROP_N_COLS; i < N_PROPS; i++)
    g_object_class_install_property (object_class, i, properties[i]);
}

static void
accel_spmm_init (AccelSpmm *self)
{
  self->alpha = 1.0;
  self->check_structure = TRUE;
}

/**
 * accel_spmm_new:
 * @row_ptr: (transfer none) (nullable): i32 `[m + 1]`: row `i` holds the entries `row_ptr[i]` to `row_ptr[i + 1] - 1`
 * @col_ind: (transfer none) (nullable): i32 `[nnz]`: the column of each entry, ascending within a row
 * @values: (transfer none) (nullable): f32 or f64 `[nnz]`: the value of each entry
 * @b: (transfer none) (nullable): the dense matrix, `[n_cols, k]`
 * @c: (transfer none) (nullable): the result, `[m, k]`
 * @n_cols: the number of columns of the sparse matrix
 *
 * Makes an `spmm` op computing `c = s b`.
 *
 * Returns: (transfer full): a new #AccelSpmm
 */
AccelOp *
accel_spmm_new (AccelBuffer *row_ptr, AccelBuffer *col_ind, AccelBuffer *values, AccelBuffer *b, AccelBuffer *c, gint64 n_cols)
{
  g_return_val_if_fail (row_ptr == NULL || ACCEL_IS_BUFFER (row_ptr), NULL);
  g_return_val_if_fail (col_ind == NULL || ACCEL_IS_BUFFER (col_ind), NULL);
  g_return_val_if_fail (values == NULL || ACCEL_IS_BUFFER (values), NULL);
  g_return_val_if_fail (b == NULL || ACCEL_IS_BUFFER (b), NULL);
  g_return_val_if_fail (c == NULL || ACCEL_IS_BUFFER (c), NULL);

  return g_object_new (ACCEL_TYPE_SPMM, "row-ptr", row_ptr,
                       "col-ind", col_ind,
                       "values", values,
                       "b", b,
                       "c", c,
                       "n-cols", n_cols, NULL);
}
