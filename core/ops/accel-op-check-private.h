/* accel-op-check-private.h: validation shared by the linear algebra,
 * sparse, convolution, normalisation and primitive op types. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-op-impl-private.h"

G_BEGIN_DECLS

/* Checks that @buffer has exactly the dims @dims; @why (nullable) says
 * where the expectation comes from. */
static inline gboolean
accel_op_expect_dims_ (GError **error,
                       const char *op,
                       const char *property,
                       AccelBuffer *buffer,
                       const gint64 *dims,
                       guint rank,
                       const char *why)
{
  g_autoptr(AccelShape) want = accel_shape_new (dims, rank);
  if (accel_shape_same_dims (accel_buffer_get_shape (buffer), want))
    return TRUE;
  g_autofree char *ws = accel_shape_to_string (want);
  g_autofree char *expected = why ? g_strdup_printf ("%s (%s)", ws, why) : g_strdup (ws);
  return accel_op_shape_error_ (error, op, property, buffer, expected);
}

/* A matrix `[rows, cols]` or a batch of them `[batch, rows, cols]`. */
typedef struct {
  gboolean batched;
  gint64 batch;   /* 1 when not batched */
  gint64 rows;
  gint64 cols;
} AccelOpMatrixDims;

/* Reads a contiguous matrix or batch of matrices from @property; the
 * libraries behind these ops index with 32-bit ints. */
static inline gboolean
accel_op_matrix_dims_ (AccelOp *op,
                       const char *property,
                       AccelBuffer *buffer,
                       AccelOpMatrixDims *d,
                       GError **error)
{
  if (!accel_op_check_rank (op, property, 2, 3, error)
      || !accel_op_check_contiguous (op, property, error))
    return FALSE;
  const AccelShape *s = accel_buffer_get_shape (buffer);
  guint rank = accel_shape_get_rank (s);
  d->batched = rank == 3;
  d->batch = d->batched ? accel_shape_get_dim (s, 0) : 1;
  d->rows = accel_shape_get_dim (s, rank - 2);
  d->cols = accel_shape_get_dim (s, rank - 1);
  if (d->rows > G_MAXINT || d->cols > G_MAXINT || d->rows * d->cols > G_MAXINT)
    {
      g_autofree char *shape = accel_op_describe_shape_ (buffer);
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: property “%s” has shape %s; each matrix may hold at most %d elements",
                   accel_op_get_type_name (op), property, shape, G_MAXINT);
      return FALSE;
    }
  return TRUE;
}

/* Checks that @buffer is `[batch,] tail...`, batched as @d is. */
static inline gboolean
accel_op_expect_batched_ (GError **error,
                          const char *op,
                          const char *property,
                          AccelBuffer *buffer,
                          const AccelOpMatrixDims *d,
                          const gint64 *tail,
                          guint n_tail,
                          const char *why)
{
  gint64 dims[ACCEL_SHAPE_MAX_RANK];
  guint r = 0;
  if (d->batched)
    dims[r++] = d->batch;
  for (guint i = 0; i < n_tail && r < ACCEL_SHAPE_MAX_RANK; i++)
    dims[r++] = tail[i];
  return accel_op_expect_dims_ (error, op, property, buffer, dims, r, why);
}

/* An output must not share storage with an input. */
static inline gboolean
accel_op_check_no_alias_ (GError **error,
                          const char *op,
                          const char *out_name,
                          AccelBuffer *out,
                          const char *in_name,
                          AccelBuffer *in)
{
  if (out == NULL || in == NULL || !accel_op_buffers_alias_ (out, in))
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "%s: “%s” overlaps “%s”; the result must not alias that input",
               op, out_name, in_name);
  return FALSE;
}

/* An output may be its input itself (in place) but not overlap it partly. */
static inline gboolean
accel_op_check_in_place_ (GError **error,
                          const char *op,
                          const char *out_name,
                          AccelBuffer *out,
                          const char *in_name,
                          AccelBuffer *in)
{
  if (out == NULL || in == NULL || !accel_op_buffers_overlap_partly_ (out, in))
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "%s: “%s” overlaps “%s” partly (in place needs the very same buffer)",
               op, out_name, in_name);
  return FALSE;
}

static inline gboolean
accel_op_check_finite_ (GError **error, const char *op, const char *property, double value)
{
  if (isfinite (value))
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
               "%s: property “%s” is %g; it must be finite", op, property, value);
  return FALSE;
}

/* The right-hand side @b of a solve with the square factor @d (`[n, n]` or
 * `[batch, n, n]`): `[batch,] n` or `[batch,] n, nrhs`; @x has its shape and
 * may be @b itself. */
static inline gboolean
accel_op_check_rhs_ (AccelOp *op,
                     const char *factor,
                     const AccelOpMatrixDims *d,
                     AccelBuffer *b,
                     AccelBuffer *x,
                     GError **error)
{
  const char *name = accel_op_get_type_name (op);
  if (!accel_op_check_same_dtype (op, factor, "b", error)
      || !accel_op_check_same_dtype (op, factor, "x", error)
      || !accel_op_check_contiguous (op, "b", error)
      || !accel_op_check_contiguous (op, "x", error))
    return FALSE;
  guint matrix_rank = d->batched ? 3 : 2;
  guint rank = accel_shape_get_rank (accel_buffer_get_shape (b));
  gint64 tail[2] = { d->rows, 0 };
  guint n_tail = 1;
  if (rank == matrix_rank)
    {
      tail[1] = accel_shape_get_dim (accel_buffer_get_shape (b), rank - 1);
      n_tail = 2;
      if (tail[1] > G_MAXINT || tail[0] * tail[1] > G_MAXINT)
        {
          g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                       "%s: property “b” has %" G_GINT64_FORMAT " right-hand sides; at most %d elements per matrix",
                       name, tail[1], G_MAXINT);
          return FALSE;
        }
    }
  else if (rank != matrix_rank - 1)
    {
      g_autofree char *why = g_strdup_printf ("%s[n] or %s[n, nrhs] with n = %" G_GINT64_FORMAT " from “%s”",
                                              d->batched ? "[batch] + " : "",
                                              d->batched ? "[batch] + " : "", d->rows, factor);
      return accel_op_shape_error_ (error, name, "b", b, why);
    }
  if (!accel_op_expect_batched_ (error, name, "b", b, d, tail, n_tail, "rows and batch of the factor")
      || !accel_op_check_same_dims_ (name, "b", b, "x", x, error)
      || !accel_op_check_in_place_ (error, name, "x", x, "b", b)
      || !accel_op_check_no_alias_ (error, name, "x", x, factor, accel_op_peek_buffer (op, factor)))
    return FALSE;
  return TRUE;
}

/* A CSR matrix: `row-ptr` (i32, m + 1 entries), `col-ind` (i32, nnz) and
 * `values` (f32 or f64, nnz), with @n_cols columns. Sets @m. The entries
 * themselves (sorted, in range) are checked by the kernels, which see them. */
static inline gboolean
accel_op_check_csr_ (AccelOp *op,
                     AccelBuffer *row_ptr,
                     AccelBuffer *col_ind,
                     AccelBuffer *values,
                     gint64 n_cols,
                     gint64 *m,
                     GError **error)
{
  static const AccelDType index_dtypes[] = { ACCEL_DTYPE_I32 };
  static const AccelDType value_dtypes[] = { ACCEL_DTYPE_F32, ACCEL_DTYPE_F64 };
  const char *name = accel_op_get_type_name (op);

  if (!accel_op_check_dtype (op, "row-ptr", index_dtypes, G_N_ELEMENTS (index_dtypes), error)
      || !accel_op_check_dtype (op, "col-ind", index_dtypes, G_N_ELEMENTS (index_dtypes), error)
      || !accel_op_check_dtype (op, "values", value_dtypes, G_N_ELEMENTS (value_dtypes), error)
      || !accel_op_check_rank (op, "row-ptr", 1, 1, error)
      || !accel_op_check_rank (op, "col-ind", 1, 1, error)
      || !accel_op_check_rank (op, "values", 1, 1, error)
      || !accel_op_check_contiguous (op, "row-ptr", error)
      || !accel_op_check_contiguous (op, "col-ind", error)
      || !accel_op_check_contiguous (op, "values", error))
    return FALSE;
  gint64 rows = accel_buffer_get_n_elements (row_ptr) - 1;
  gint64 nnz = accel_buffer_get_n_elements (col_ind);
  if (rows < 0)
    return accel_op_shape_error_ (error, name, "row-ptr", row_ptr, "[m + 1], at least one entry");
  if (accel_buffer_get_n_elements (values) != nnz)
    {
      gint64 want[1] = { nnz };
      return accel_op_expect_dims_ (error, name, "values", values, want, 1, "one value per entry of “col-ind”");
    }
  if (n_cols < 0 || n_cols > G_MAXINT || rows > G_MAXINT || nnz > G_MAXINT)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: %" G_GINT64_FORMAT " rows, “n-cols” %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT
                   " entries: each must be 0 to %d (32-bit indices)", name, rows, n_cols, nnz, G_MAXINT);
      return FALSE;
    }
  *m = rows;
  return TRUE;
}

/* accel-conv2d.c: the geometry shared by conv2d and its two backward ops.
 * The names are the properties of the calling op that play the roles of
 * the input `x`, the filter `w` and the output `y`. */
typedef struct _AccelConv2dParams AccelConv2dParams;
/* layernorm and rmsnorm: the same fields, laid out alike (accel-norm-family.c). */
typedef struct {
  AccelOp parent_instance;
  /* Input [..., n], normalised over the last axis; f32, f16 or bf16. */
  AccelBuffer *x; /*< read required >*/
  /* Optional scale [n] (1 when unset). */
  AccelBuffer *gamma; /*< read >*/
  /* Optional shift [n] (0 when unset). */
  AccelBuffer *beta; /*< read >*/
  /* Result, shape and type of x; may be x. */
  AccelBuffer *y; /*< write required >*/
  /* Added to the variance (layernorm) or the mean square (rmsnorm) before its
   * square root, for stability. */
  double eps; /*< min=0.0 max=G_MAXDOUBLE default=1e-5 >*/
} AccelNormFields;
gboolean _accel_norm_validate (AccelOp *op, GError **error);

/* spmv and spmm: the same fields, laid out alike (accel-csr-family.c). */
typedef struct {
  AccelOp parent_instance;
  /* CSR row offsets, i32 [m + 1]: row i holds entries row-ptr[i] to
   * row-ptr[i + 1] - 1. */
  AccelBuffer *row_ptr; /*< read required >*/
  /* CSR column indices, i32 [nnz], ascending within each row, each in [0,
   * n-cols). */
  AccelBuffer *col_ind; /*< read required >*/
  /* CSR values [nnz]: f32 or f64. */
  AccelBuffer *values; /*< read required >*/
  AccelBuffer *dense_in;
  AccelBuffer *dense_out;
  /* The number of columns of the sparse matrix; its rows are the entries of
   * `row-ptr` less one. */
  gint64 n_cols; /*< min=0 max=G_MAXINT64 default=0 >*/
  /* Scale of the product of the sparse matrix and the dense operand. */
  double alpha; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=1.0 >*/
  /* Scale of the old contents of the output; with 0 the output is not read (so
   * NaNs there do not propagate). */
  double beta; /*< min=-G_MAXDOUBLE max=G_MAXDOUBLE default=0.0 >*/
  /* Whether the kernel verifies the CSR structure first (row offsets
   * non-decreasing from 0 to nnz, column indices ascending within each row and
   * below `n-cols`) and fails with ACCEL_ERROR_INVALID_ARGUMENT naming the
   * first bad entry. On cuda this costs a pass over the indices and one stream
   * synchronisation; set it to FALSE for a structure already checked, which is
   * then trusted (a malformed one gives undefined results or a device fault
   * there). The cpu backend always checks. */
  gboolean check_structure; /*< default=TRUE >*/
} AccelCsrFields;
gboolean _accel_csr_check (AccelOp *op, const char *in, const char *out, gint64 *m, GError **error);

void _accel_conv2d_install_geometry (AccelOpClass *klass, gsize params_offset);
/* Which of the three conv2d roles an op writes: y (conv2d), x
 * (backward-data's dx) or w (backward-filter's dw). */
typedef enum {
  ACCEL_CONV2D_ROLE_X,
  ACCEL_CONV2D_ROLE_W,
  ACCEL_CONV2D_ROLE_Y,
} AccelConv2dRole;

gboolean _accel_conv2d_check_geometry (AccelOp *op,
                                       const AccelConv2dParams *params,
                                       const char *x_name,
                                       AccelBuffer *x,
                                       const char *w_name,
                                       AccelBuffer *w,
                                       const char *y_name,
                                       AccelBuffer *y,
                                       AccelConv2dRole result,
                                       GError **error);

G_END_DECLS
