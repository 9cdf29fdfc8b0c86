/* accel-cublas-plugin.c: the `cublas` plugin: gemm, axpy and scal on the
 * `cuda` backend through cuBLAS.
 *
 * Buffers are row-major; cuBLAS is column-major. A row-major [m, n] matrix
 * is the column-major [n, m] matrix of its transpose, so C = op(A) op(B)
 * runs as the column-major Cᵀ = op(B)ᵀ op(A)ᵀ: cuBLAS is called with B
 * first, A second, and the dimensions (n, m, k).
 *
 * Each lane has its own cuBLAS handle bound to the lane's stream, made on
 * first use. Pointer mode is host: alpha and beta are read at the call.
 * `compute = tf32` runs f32 data through CUBLAS_COMPUTE_32F_FAST_TF32;
 * f16 and bf16 accumulate in f32 (CUBLAS_COMPUTE_32F) on tensor cores.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <cublas_v2.h>
#include "accel-config.h"
#include "accel-cuda.h"

#define KERNEL_RANK 100

static gboolean
check_cublas (cublasStatus_t status, const char *what, GError **error)
{
  return accel_cuda_check_library ((int) status, "cuBLAS", cublasGetStatusName (status),
                                   status == CUBLAS_STATUS_ALLOC_FAILED, what, error);
}

static gboolean
handle_open (AccelCudaLane *lane, gpointer *handle, GError **error)
{
  return check_cublas (cublasCreate ((cublasHandle_t *) handle), "cublasCreate", error)
         && check_cublas (cublasSetStream (*handle, accel_cuda_lane_get_stream (lane)), "cublasSetStream", error)
         && check_cublas (cublasSetPointerMode (*handle, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode", error);
}

static void
handle_destroy (gpointer handle)
{
  (void) cublasDestroy (handle);
}

static cublasHandle_t
lane_handle (gpointer context, GError **error)
{
  return accel_cuda_lane_open_handle (context, "cublas", handle_open, handle_destroy, error);
}

/* The cuBLAS view of a dtype: data type, compute type, scalar kind. */
typedef struct {
  cudaDataType data;
  cublasComputeType_t compute;
  gboolean scalar_double;
  gboolean scalar_complex;
} Types;

static gboolean
types_for (AccelDType dtype, AccelGemmCompute compute, Types *t)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F32:
      *t = (Types) { CUDA_R_32F, compute == ACCEL_GEMM_COMPUTE_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                    : CUBLAS_COMPUTE_32F, FALSE, FALSE };
      return TRUE;
    case ACCEL_DTYPE_F64:
      *t = (Types) { CUDA_R_64F, CUBLAS_COMPUTE_64F, TRUE, FALSE };
      return TRUE;
    case ACCEL_DTYPE_C64:
      *t = (Types) { CUDA_C_32F, CUBLAS_COMPUTE_32F, FALSE, TRUE };
      return TRUE;
    case ACCEL_DTYPE_C128:
      *t = (Types) { CUDA_C_64F, CUBLAS_COMPUTE_64F, TRUE, TRUE };
      return TRUE;
    case ACCEL_DTYPE_F16:
      *t = (Types) { CUDA_R_16F, CUBLAS_COMPUTE_32F, FALSE, FALSE };
      return TRUE;
    case ACCEL_DTYPE_BF16:
      *t = (Types) { CUDA_R_16BF, CUBLAS_COMPUTE_32F, FALSE, FALSE };
      return TRUE;
    default:
      return FALSE;
    }
}

/* A scalar in the form cuBLAS reads for @t: float, double, or their complex
 * pairs with a zero imaginary part. */
typedef union {
  float f[2];
  double d[2];
} Scalar;

static Scalar
scalar_for (const Types *t, double value)
{
  Scalar s = { { 0 } };
  if (t->scalar_double)
    s.d[0] = value;
  else
    s.f[0] = (float) value;
  return s;
}

static cudaDataType
scalar_type (const Types *t)
{
  if (t->scalar_complex)
    return t->scalar_double ? CUDA_C_64F : CUDA_C_32F;
  return t->scalar_double ? CUDA_R_64F : CUDA_R_32F;
}

/* gemm */

static gboolean
gemm_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  AccelGemm *self = ACCEL_GEMM (op);
  Types t;
  if (!types_for (accel_buffer_get_dtype (self->a), self->compute, &t))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "cublas: gemm does not take %s", accel_dtype_get_name (accel_buffer_get_dtype (self->a)));
      return FALSE;
    }
  return TRUE;
}

static gboolean
gemm_run (AccelOp *op, gpointer context, GError **error)
{
  AccelGemm *self = ACCEL_GEMM (op);
  AccelGemmDims d;
  Types t;

  if (!accel_gemm_dims (op, self->a, self->transa, self->b, self->transb, self->c, &d, error))
    return FALSE;
  gint64 m = d.m, k = d.k, n = d.n, batch = d.batch;

  if (!types_for (accel_buffer_get_dtype (self->a), self->compute, &t))
    return gemm_supports (op, NULL, error);
  if (m == 0 || n == 0 || batch == 0)
    return TRUE;

  cublasHandle_t handle = lane_handle (context, error);
  if (handle == NULL)
    return FALSE;

  /* Column-major Cᵀ[n, m] = op(B)ᵀ[n, k] · op(A)ᵀ[k, m]. */
  cublasOperation_t op_b = self->transb ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t op_a = self->transa ? CUBLAS_OP_T : CUBLAS_OP_N;
  gint64 ldb = self->transb ? k : n;
  gint64 lda = self->transa ? m : k;
  gint64 ldc = n;
  Scalar alpha = scalar_for (&t, self->alpha);
  Scalar beta = scalar_for (&t, self->beta);
  const void *a = accel_buffer_get_data (self->a);
  const void *b = accel_buffer_get_data (self->b);
  void *c = accel_buffer_get_data (self->c);

  /* Dimensions fit in int (the op checks them), so these are the very
   * calls an application makes; batch strides are 64-bit in both. */
  if (batch > G_MAXINT)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_INVALID_ARGUMENT,
                   "cublas: gemm batch of %" G_GINT64_FORMAT " exceeds cuBLAS's limit of %d", batch, G_MAXINT);
      return FALSE;
    }
  if (batch == 1)
    return check_cublas (cublasGemmEx (handle, op_b, op_a, (int) n, (int) m, (int) k, &alpha,
                                       b, t.data, (int) ldb, a, t.data, (int) lda,
                                       &beta, c, t.data, (int) ldc, t.compute, CUBLAS_GEMM_DEFAULT),
                         "cublasGemmEx", error);
  return check_cublas (cublasGemmStridedBatchedEx (handle, op_b, op_a, (int) n, (int) m, (int) k, &alpha,
                                                   b, t.data, (int) ldb, k * n,
                                                   a, t.data, (int) lda, m * k,
                                                   &beta, c, t.data, (int) ldc, m * n,
                                                   (int) batch, t.compute, CUBLAS_GEMM_DEFAULT),
                       "cublasGemmStridedBatchedEx", error);
}

/* axpy and scal: f16 and bf16 run in f32. Both take the same dtypes and
 * scalar: axpy adds alpha @x to @y; scal, given no @y, scales @x in place. */

static gboolean
vector_run (const char *name, AccelBuffer *x, AccelBuffer *y, double alpha_value, gpointer context, GError **error)
{
  gint64 n = accel_buffer_get_n_elements (x);
  Types t;

  if (!types_for (accel_buffer_get_dtype (x), ACCEL_GEMM_COMPUTE_DEFAULT, &t))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED, "cublas: %s does not take %s", name,
                   accel_dtype_get_name (accel_buffer_get_dtype (x)));
      return FALSE;
    }
  if (n == 0)
    return TRUE;
  cublasHandle_t handle = lane_handle (context, error);
  if (handle == NULL)
    return FALSE;
  Scalar alpha = scalar_for (&t, alpha_value);
  if (y == NULL)
    return check_cublas (cublasScalEx_64 (handle, n, &alpha, scalar_type (&t),
                                          accel_buffer_get_data (x), t.data, 1, scalar_type (&t)),
                         "cublasScalEx", error);
  return check_cublas (cublasAxpyEx_64 (handle, n, &alpha, scalar_type (&t),
                                        accel_buffer_get_data (x), t.data, 1,
                                        accel_buffer_get_data (y), t.data, 1, scalar_type (&t)),
                       "cublasAxpyEx", error);
}

static gboolean
axpy_run (AccelOp *op, gpointer context, GError **error)
{
  AccelAxpy *self = ACCEL_AXPY (op);
  return vector_run ("axpy", self->x, self->y, self->alpha, context, error);
}

static gboolean
scal_run (AccelOp *op, gpointer context, GError **error)
{
  AccelScal *self = ACCEL_SCAL (op);
  return vector_run ("scal", self->x, NULL, self->alpha, context, error);
}

static const AccelKernelEntry kernels[] = {
  { "gemm", { .supports = gemm_supports, .run = gemm_run } },
  { "axpy", { .run = axpy_run } },
  { "scal", { .run = scal_run } },
};

ACCEL_PLUGIN_DEFINE_KERNELS (cublas,
                             "cuBLAS kernels on the cuda backend: gemm (f32, tf32, f64, c64, c128, f16, bf16; "
                             "batched, transposed), axpy, scal",
                             ACCEL_CUDA_BACKEND_NAME, KERNEL_RANK, kernels, ACCEL_VERSION, "LGPL-2.1-or-later")
