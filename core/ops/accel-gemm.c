/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "accel-op-impl-private.h"
#include "accel-enum-types.h"

/**
 * AccelGemm:
 *
 * General matrix multiply, `c = alpha op(a) op(b) + beta c`, on row-major
 * contiguous buffers. Rank 3 buffers are a batch of matrices with equal batch
 * sizes. Types: f32, f64, c64, c128, and f16 and bf16 with f32 accumulation;
 * all three buffers have the same type. `alpha` and `beta` are real.
 *
 * Op name: `gemm`.
 */

static const AccelDType gemm_dtypes[] = {
  ACCEL_DTYPE_F32, ACCEL_DTYPE_F64, ACCEL_DTYPE_C64, ACCEL_DTYPE_C128,
  ACCEL_DTYPE_F16, ACCEL_DTYPE_BF16,
};

/**
 * accel_gemm_dims:
 * @op: the op whose buffers these are (its name goes in errors)
 * @a: the left matrix, `[m, k]` (`[k, m]` with @transa) or a batch of them
 * @transa: whether @a is stored transposed
 * @b: the right matrix, `[k, n]` (`[n, k]` with @transb) or a batch
 * @transb: whether @b is stored transposed
 * @c: the result, `[m, n]` or a batch
 * @dims: (out caller-allocates): the sizes
 * @error: return location for a #GError
 *
 * Reads and checks the sizes of `c = op(a) op(b)` on contiguous row-major
 * buffers of rank 2, or rank 3 with equal batch sizes: the one reading of
 * a GEMM's dimensions that `gemm` and `matmul` validate with and every
 * GEMM kernel sizes its call with. Each size is at most %G_MAXINT, the
 * limit of the BLAS interfaces.
 *
 * Returns: %TRUE if the shapes agree; else an error naming the buffer
 */
gboolean
accel_gemm_dims (AccelOp *op,
                 AccelBuffer *a,
                 gboolean transa,
                 AccelBuffer *b,
                 gboolean transb,
                 AccelBuffer *c,
                 AccelGemmDims *dims,
                 GError **error)
{
  g_return_val_if_fail (ACCEL_IS_OP (op), FALSE);
  g_return_val_if_fail (ACCEL_IS_BUFFER (a) && ACCEL_IS_BUFFER (b) && ACCEL_IS_BUFFER (c), FALSE);
  g_return_val_if_fail (dims != NULL, FALSE);

  const char *name = accel_op_get_type_name (op);
  static const char *const names[] = { "a", "b", "c" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (!accel_op_check_rank (op, names[i], 2, 3, error) || !accel_op_check_contiguous (op, names[i], error))
      return FALSE;

  const AccelShape *sa = accel_buffer_get_shape (a);
  const AccelShape *sb = accel_buffer_get_shape (b);
  const AccelShape *sc = accel_buffer_get_shape (c);
  guint rank = accel_shape_get_rank (sa);
  if (accel_shape_get_rank (sb) != rank || accel_shape_get_rank (sc) != rank)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "%s: “a”, “b” and “c” must have the same rank (got %u, %u and %u)",
                   name, rank, accel_shape_get_rank (sb), accel_shape_get_rank (sc));
      return FALSE;
    }

  guint r = rank - 2;
  gint64 m = accel_shape_get_dim (sa, transa ? r + 1 : r);
  gint64 k = accel_shape_get_dim (sa, transa ? r : r + 1);
  gint64 kb = accel_shape_get_dim (sb, transb ? r + 1 : r);
  gint64 n = accel_shape_get_dim (sb, transb ? r : r + 1);
  gint64 batch = rank == 3 ? accel_shape_get_dim (sa, 0) : 1;

  if (kb != k)
    {
      g_autofree char *expected = g_strdup_printf (transb ? "[n, %" G_GINT64_FORMAT "] (transb)"
                                                          : "[%" G_GINT64_FORMAT ", n]", k);
      return accel_op_shape_error_ (error, name, "b", b, expected);
    }
  if (accel_shape_get_dim (sc, r) != m || accel_shape_get_dim (sc, r + 1) != n)
    {
      g_autofree char *expected = g_strdup_printf ("[%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT "]", m, n);
      return accel_op_shape_error_ (error, name, "c", c, expected);
    }
  if (rank == 3 && (accel_shape_get_dim (sb, 0) != batch || accel_shape_get_dim (sc, 0) != batch))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_SHAPE_MISMATCH,
                   "%s: batch sizes differ: “a” %" G_GINT64_FORMAT ", “b” %" G_GINT64_FORMAT
                   ", “c” %" G_GINT64_FORMAT, name, batch, accel_shape_get_dim (sb, 0), accel_shape_get_dim (sc, 0));
      return FALSE;
    }
  if (m > G_MAXINT || n > G_MAXINT || k > G_MAXINT)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "%s: m=%" G_GINT64_FORMAT ", n=%" G_GINT64_FORMAT ", k=%" G_GINT64_FORMAT
                   " exceeds the BLAS limit of %d per dimension", name, m, n, k, G_MAXINT);
      return FALSE;
    }
  dims->batch = batch, dims->m = m, dims->n = n, dims->k = k;
  return TRUE;
}

static gboolean
accel_gemm_validate (AccelOp *op, GError **error)
{
  AccelGemm *self = ACCEL_GEMM (op);
  AccelGemmDims dims;

  if (!_accel_op_check_dtypes (op, gemm_dtypes, G_N_ELEMENTS (gemm_dtypes), error, "a", "b", "c", NULL)
      || !accel_gemm_dims (op, self->a, self->transa, self->b, self->transb, self->c, &dims, error))
    return FALSE;
  if (self->compute == ACCEL_GEMM_COMPUTE_TF32 && accel_buffer_get_dtype (self->a) != ACCEL_DTYPE_F32)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "gemm: property “compute” is tf32 but the dtype is %s (tf32 applies to f32 only)",
                   accel_dtype_get_name (accel_buffer_get_dtype (self->a)));
      return FALSE;
    }
  return _accel_op_check_results_alias (op, error);
}

ACCEL_DEFINE_OP_TYPE (AccelGemm, accel_gemm, "gemm",
                      "General matrix multiply c = alpha op(a) op(b) + beta c, optionally batched",
                      _accel_gemm_params, accel_gemm_validate)
