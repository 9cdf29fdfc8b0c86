/* accel-cublaslt-plugin.c: the `cublaslt` plugin: `matmul` on the `cuda`
 * backend through cuBLASLt, with its epilogue (bias, ReLU, GELU) fused
 * into the GEMM kernel; f32, f16, bf16, and fp8 (e4m3, e5m2) on sm_89 and
 * later. It also registers a `gemm` kernel for f16 and bf16 (see
 * GEMM_RANK).
 *
 * Row-major to column-major: c = op(a) op(b) is run as the column-major
 * cᵀ = op(b)ᵀ op(a)ᵀ, so cuBLASLt's A is our b and its B our a, with the
 * sizes (n, m, k). The bias is a vector over cuBLASLt's rows, which are
 * our columns, as the op defines. fp8 needs cuBLASLt's "TN" form, A
 * transposed and B not: our transb true and transa false, which the op's
 * validation demands.
 *
 * Per lane: one cuBLASLt handle, and a bounded cache of "plans" keyed by
 * everything that decides the algorithm (types, sizes, transposes,
 * epilogue, batch, pointer alignment): the operation and layout
 * descriptors and the algorithm cublasLtMatmulAlgoGetHeuristic chose, so
 * a repeated shape costs no heuristic query. Pointers (bias, the fp8
 * output scale) are set on the cached descriptor at each run. The
 * workspace (up to WORKSPACE_LIMIT, as NVIDIA recommends for Hopper) comes
 * from the lane.
 *
 * alpha · a_scale · b_scale is passed as cuBLASLt's alpha, so the
 * dequantisation scales need no device memory; the fp8 output scale
 * (c_scale) is D_SCALE, uploaded to lane workspace. An fp8 result takes no
 * accumulation: its C is a bf16/f16 scratch matrix that beta 0 never reads.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <string.h>
#include <cublasLt.h>
#include "accel-config.h"
#include "accel-cuda.h"
#include "accel-cublaslt-epilogue.h"

#define MATMUL_RANK 100
/* Below cuBLAS's gemm (100) until accel-bench (`libs-matmul`, matmul with
 * no epilogue against cuBLAS gemm) shows it faster; then raise it to 110. */
#define GEMM_RANK 90
#define PLAN_CACHE_SIZE 64
#define WORKSPACE_LIMIT ((gsize) 32 << 20)

typedef struct {
  gint32 a_type, b_type, c_type, d_type, bias_type;   /* cudaDataType, -1 for none */
  gint32 compute;          /* cublasComputeType_t */
  gint32 epilogue;         /* cublasLtEpilogue_t */
  gint32 transa, transb;   /* the op's */
  gint32 alignment;        /* bytes, the least of the pointers', at most 256 */
  gint64 m, n, k, batch;
} PlanKey;

typedef struct {
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc, ld;
  cublasLtMatmulAlgo_t algo;
  gsize workspace;
} Plan;

static gboolean
check_lt (cublasStatus_t status, const char *what, GError **error)
{
  return accel_cuda_check_library ((int) status, "cuBLASLt", cublasLtGetStatusName (status),
                                   status == CUBLAS_STATUS_ALLOC_FAILED, what, error);
}

static void
plan_free (gpointer data)
{
  Plan *p = data;
  if (p->la)
    (void) cublasLtMatrixLayoutDestroy (p->la);
  if (p->lb)
    (void) cublasLtMatrixLayoutDestroy (p->lb);
  if (p->lc)
    (void) cublasLtMatrixLayoutDestroy (p->lc);
  if (p->ld)
    (void) cublasLtMatrixLayoutDestroy (p->ld);
  if (p->desc)
    (void) cublasLtMatmulDescDestroy (p->desc);
  g_free (p);
}

static void
lt_destroy (gpointer handle)
{
  (void) cublasLtDestroy (handle);
}

static gboolean
lt_open (AccelCudaLane *lane, gpointer *handle, GError **error)
{
  return check_lt (cublasLtCreate ((cublasLtHandle_t *) handle), "cublasLtCreate", error);
}

static gint32
cuda_type (AccelDType dtype)
{
  switch (dtype)
    {
    case ACCEL_DTYPE_F32: return CUDA_R_32F;
    case ACCEL_DTYPE_F16: return CUDA_R_16F;
    case ACCEL_DTYPE_BF16: return CUDA_R_16BF;
    case ACCEL_DTYPE_FP8_E4M3: return CUDA_R_8F_E4M3;
    case ACCEL_DTYPE_FP8_E5M2: return CUDA_R_8F_E5M2;
    default: return -1;
    }
}

static gboolean
is_fp8 (AccelDType dtype)
{
  return dtype == ACCEL_DTYPE_FP8_E4M3 || dtype == ACCEL_DTYPE_FP8_E5M2;
}

static gint32
alignment_of (const void *p)
{
  guintptr v = (guintptr) p;
  gint32 a = 256;
  while (a > 1 && v % a != 0)
    a /= 2;
  return a;
}

static gboolean
layout_new (cublasLtMatrixLayout_t *layout, gint32 type, gint64 rows, gint64 cols, gint64 batch, GError **error)
{
  if (!check_lt (cublasLtMatrixLayoutCreate (layout, (cudaDataType) type, rows, cols, rows),
                 "cublasLtMatrixLayoutCreate", error))
    return FALSE;
  if (batch > 1)
    {
      int count = (int) batch;
      gint64 stride = rows * cols;
      if (!check_lt (cublasLtMatrixLayoutSetAttribute (*layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                       sizeof count), "cublasLtMatrixLayoutSetAttribute", error)
          || !check_lt (cublasLtMatrixLayoutSetAttribute (*layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                          &stride, sizeof stride),
                        "cublasLtMatrixLayoutSetAttribute", error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
desc_set (cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const void *value, gsize size,
          GError **error)
{
  return check_lt (cublasLtMatmulDescSetAttribute (desc, attr, value, size), "cublasLtMatmulDescSetAttribute",
                   error);
}

static gpointer
plan_make (gconstpointer k, gpointer user_data, GError **error)
{
  const PlanKey *key = k;
  cublasLtHandle_t handle = user_data;
  Plan *p = g_new0 (Plan, 1);
  cublasLtMatmulPreference_t pref = NULL;
  cublasOperation_t op_a = key->transb ? CUBLAS_OP_T : CUBLAS_OP_N;   /* cuBLASLt's A is our b */
  cublasOperation_t op_b = key->transa ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = (cublasLtEpilogue_t) key->epilogue;
  gsize limit = WORKSPACE_LIMIT;
  guint32 align = (guint32) key->alignment;
  cublasLtMatmulHeuristicResult_t result;
  int returned = 0;

  if (!check_lt (cublasLtMatmulDescCreate (&p->desc, (cublasComputeType_t) key->compute, CUDA_R_32F),
                 "cublasLtMatmulDescCreate", error)
      || !desc_set (p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a, error)
      || !desc_set (p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b, error)
      || !desc_set (p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue, error)
      || (key->bias_type >= 0
          && !desc_set (p->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &key->bias_type, sizeof key->bias_type, error))
      || !layout_new (&p->la, key->b_type, key->transb ? key->k : key->n, key->transb ? key->n : key->k,
                      key->batch, error)
      || !layout_new (&p->lb, key->a_type, key->transa ? key->m : key->k, key->transa ? key->k : key->m,
                      key->batch, error)
      || !layout_new (&p->lc, key->c_type, key->n, key->m, key->batch, error)
      || !layout_new (&p->ld, key->d_type, key->n, key->m, key->batch, error))
    goto fail;

  if (!check_lt (cublasLtMatmulPreferenceCreate (&pref), "cublasLtMatmulPreferenceCreate", error))
    goto fail;
  const cublasLtMatmulPreferenceAttributes_t aligns[] = {
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
  };
  if (!check_lt (cublasLtMatmulPreferenceSetAttribute (pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit,
                                                       sizeof limit), "cublasLtMatmulPreferenceSetAttribute", error))
    goto fail;
  for (guint i = 0; i < G_N_ELEMENTS (aligns); i++)
    if (!check_lt (cublasLtMatmulPreferenceSetAttribute (pref, aligns[i], &align, sizeof align),
                   "cublasLtMatmulPreferenceSetAttribute", error))
      goto fail;
  if (!check_lt (cublasLtMatmulAlgoGetHeuristic (handle, p->desc, p->la, p->lb, p->lc, p->ld, pref, 1,
                                                 &result, &returned), "cublasLtMatmulAlgoGetHeuristic", error))
    goto fail;
  if (returned < 1)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "cuBLASLt has no algorithm for this matmul (%" G_GINT64_FORMAT " x %" G_GINT64_FORMAT " x %"
                   G_GINT64_FORMAT ", batch %" G_GINT64_FORMAT ", epilogue %d) on this device",
                   key->m, key->n, key->k, key->batch, key->epilogue);
      goto fail;
    }
  p->algo = result.algo;
  p->workspace = result.workspaceSize;
  (void) cublasLtMatmulPreferenceDestroy (pref);
  return p;

fail:
  if (pref)
    (void) cublasLtMatmulPreferenceDestroy (pref);
  plan_free (p);
  return NULL;
}

/* Host-side objects only: dropping one does not disturb queued work. */
static const AccelCudaPlanKind plan_kind = {
  "cublaslt-plans", sizeof (PlanKey), PLAN_CACHE_SIZE, plan_make, plan_free,
};

/* What one run needs beyond the key. */
typedef struct {
  const void *a, *b, *bias;
  void *c;
  float alpha, beta, c_scale;
} Operands;

static gboolean
run_plan (AccelCudaLane *lane, const PlanKey *key, const Operands *o, GError **error)
{
  cudaStream_t stream = accel_cuda_lane_get_stream (lane);
  cublasLtHandle_t handle = accel_cuda_lane_open_handle (lane, "cublaslt", lt_open, lt_destroy, error);
  Plan *p = handle ? accel_cuda_lane_get_plan (lane, &plan_kind, key, handle, error) : NULL;
  if (p == NULL)
    return FALSE;

  if (o->bias && !desc_set (p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &o->bias, sizeof o->bias, error))
    return FALSE;
  const void *c = o->c;
  if (key->d_type == CUDA_R_8F_E4M3 || key->d_type == CUDA_R_8F_E5M2)
    {
      /* The output scale lives on the device; C is scratch beta 0 never reads. */
      float *scale = accel_cuda_lane_alloc_workspace (lane, sizeof (float), error);
      void *scratch = scale ? accel_cuda_lane_alloc_workspace (lane, key->batch * key->m * key->n * 2, error) : NULL;
      if (scratch == NULL
          || !ACCEL_CUDA_CHECK (cudaMemcpyAsync (scale, &o->c_scale, sizeof (float), cudaMemcpyHostToDevice, stream),
                                error)
          || !desc_set (p->desc, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &scale, sizeof scale, error))
        return FALSE;
      c = scratch;
    }
  void *work = NULL;
  if (p->workspace > 0 && (work = accel_cuda_lane_alloc_workspace (lane, p->workspace, error)) == NULL)
    return FALSE;
  return check_lt (cublasLtMatmul (handle, p->desc, &o->alpha, o->b, p->la, o->a, p->lb, &o->beta,
                                   c, p->lc, o->c, p->ld, &p->algo, work, p->workspace, stream),
                   "cublasLtMatmul", error);
}

static cublasLtEpilogue_t
epilogue_for (AccelMatmulEpilogue e)
{
  switch (e)
    {
    case ACCEL_MATMUL_EPILOGUE_BIAS: return CUBLASLT_EPILOGUE_BIAS;
    case ACCEL_MATMUL_EPILOGUE_RELU: return CUBLASLT_EPILOGUE_RELU;
    case ACCEL_MATMUL_EPILOGUE_GELU: return CUBLASLT_EPILOGUE_GELU;
    case ACCEL_MATMUL_EPILOGUE_BIAS_RELU: return CUBLASLT_EPILOGUE_RELU_BIAS;
    case ACCEL_MATMUL_EPILOGUE_BIAS_GELU: return CUBLASLT_EPILOGUE_GELU_BIAS;
    default: return CUBLASLT_EPILOGUE_DEFAULT;   /* none, and the erf GELUs (run after) */
    }
}

/* Sizes from row-major buffers, as the ops define them (validated). */
static gboolean
dims_of (AccelOp *op, AccelBuffer *a, AccelBuffer *b, AccelBuffer *c, gboolean transa, gboolean transb,
         PlanKey *key, GError **error)
{
  AccelGemmDims d;
  if (!accel_gemm_dims (op, a, transa, b, transb, c, &d, error))
    return FALSE;
  key->batch = d.batch, key->m = d.m, key->k = d.k, key->n = d.n;
  key->transa = transa;
  key->transb = transb;
  return TRUE;
}

/* The exact GELU, which cuBLASLt does not fuse: the product (with beta C)
 * into an f32 result, then bias and GELU in one pass storing c. An f32 c is
 * that result itself; a 16-bit one is widened into scratch first when beta
 * reads it. */
static gboolean
run_gelu_erf (AccelCudaLane *lane, AccelMatmul *self, PlanKey *key, const Operands *o, GError **error)
{
  cudaStream_t stream = accel_cuda_lane_get_stream (lane);
  AccelDType tc = accel_buffer_get_dtype (self->c);
  AccelCublasltType type = tc == ACCEL_DTYPE_F16 ? ACCEL_CUBLASLT_F16
                           : tc == ACCEL_DTYPE_BF16 ? ACCEL_CUBLASLT_BF16 : ACCEL_CUBLASLT_F32;
  long long total = key->batch * key->m * key->n;
  float *t = o->c;

  if (type != ACCEL_CUBLASLT_F32)
    {
      t = accel_cuda_lane_alloc_workspace (lane, total * sizeof (float), error);
      if (t == NULL
          || (o->beta != 0.0f
              && !accel_cuda_check (accel_cublaslt_widen (type, o->c, t, total, stream), "widen c", error)))
        return FALSE;
    }
  key->c_type = key->d_type = CUDA_R_32F;
  key->bias_type = -1;
  key->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  key->alignment = MIN (MIN (alignment_of (o->a), alignment_of (o->b)), alignment_of (t));
  Operands product = *o;
  product.bias = NULL;
  product.c = t;
  return run_plan (lane, key, &product, error)
         && accel_cuda_check (accel_cublaslt_gelu_erf (type, t, o->bias, o->c, total, key->n, stream),
                              "gelu-erf epilogue", error);
}

static gboolean
matmul_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  AccelMatmul *self = ACCEL_MATMUL (op);
  int major = 0, minor = 0;

  if (self->residual || self->row_scales || self->col_scales || self->amax)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "cublaslt: the residual, row-scales, col-scales and amax epilogues are not cuBLASLt's "
                   "(the cutlass plugin fuses them)");
      return FALSE;
    }
  if ((self->epilogue == ACCEL_MATMUL_EPILOGUE_GELU_ERF || self->epilogue == ACCEL_MATMUL_EPILOGUE_BIAS_GELU_ERF)
      && is_fp8 (accel_buffer_get_dtype (self->c)))
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "cublaslt: the gelu-erf epilogues take an f32, f16 or bf16 “c”, not fp8; "
                   "gelu (tanh) fuses with fp8 outputs");
      return FALSE;
    }

  if (!is_fp8 (accel_buffer_get_dtype (self->a)))
    return TRUE;
  if (accel_cuda_get_compute_capability (device, &major, &minor) && major * 10 + minor < 89)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
                   "cublaslt: fp8 matmul needs compute capability 8.9 or later; this device has %d.%d",
                   major, minor);
      return FALSE;
    }
  /* cuBLASLt's fp8 kernels read 16-byte rows: k and n (the leading
   * dimensions of a, b and c) must be multiples of 16. */
  PlanKey key;
  if (!dims_of (op, self->a, self->b, self->c, self->transa, self->transb, &key, error))
    return FALSE;
  if (key.k % 16 != 0 || key.n % 16 != 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "cublaslt: fp8 matmul needs k and n to be multiples of 16 (k = %" G_GINT64_FORMAT
                   ", n = %" G_GINT64_FORMAT ")", key.k, key.n);
      return FALSE;
    }
  return TRUE;
}

static gboolean
matmul_run (AccelOp *op, gpointer context, GError **error)
{
  AccelMatmul *self = ACCEL_MATMUL (op);
  AccelDType ta = accel_buffer_get_dtype (self->a), tc = accel_buffer_get_dtype (self->c);
  PlanKey key;
  Operands o = {
    accel_buffer_get_data (self->a), accel_buffer_get_data (self->b),
    self->bias ? accel_buffer_get_data (self->bias) : NULL, accel_buffer_get_data (self->c),
    (float) (self->alpha * self->a_scale * self->b_scale), (float) self->beta, (float) self->c_scale,
  };

  memset (&key, 0, sizeof key);
  if (!dims_of (op, self->a, self->b, self->c, self->transa, self->transb, &key, error))
    return FALSE;
  if (key.m == 0 || key.n == 0 || key.batch == 0)
    return TRUE;
  key.a_type = cuda_type (ta);
  key.b_type = cuda_type (accel_buffer_get_dtype (self->b));
  key.d_type = cuda_type (tc);
  key.bias_type = self->bias ? cuda_type (accel_buffer_get_dtype (self->bias)) : -1;
  /* An fp8 D takes a 16-bit C (the bias type, else bf16). */
  key.c_type = is_fp8 (tc) ? (key.bias_type >= 0 ? key.bias_type : CUDA_R_16BF) : key.d_type;
  key.compute = ta == ACCEL_DTYPE_F32 && self->compute == ACCEL_GEMM_COMPUTE_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                                  : CUBLAS_COMPUTE_32F;
  key.epilogue = epilogue_for (self->epilogue);
  key.alignment = MIN (MIN (alignment_of (o.a), alignment_of (o.b)), alignment_of (o.c));
  if (o.bias)
    key.alignment = MIN (key.alignment, alignment_of (o.bias));
  if (key.k == 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED,
                   "cublaslt: matmul with k = 0 is not supported; use the cpu backend");
      return FALSE;
    }
  if (self->epilogue == ACCEL_MATMUL_EPILOGUE_GELU_ERF || self->epilogue == ACCEL_MATMUL_EPILOGUE_BIAS_GELU_ERF)
    return run_gelu_erf (context, self, &key, &o, error);
  return run_plan (context, &key, &o, error);
}

/* gemm, f16 and bf16: the same path with no epilogue. */

static gboolean
gemm_supports (AccelOp *op, AccelDevice *device, GError **error)
{
  AccelDType dt = accel_buffer_get_dtype (ACCEL_GEMM (op)->a);
  if (dt == ACCEL_DTYPE_F16 || dt == ACCEL_DTYPE_BF16)
    return TRUE;
  g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_DTYPE_UNSUPPORTED,
               "cublaslt: its gemm kernel takes f16 and bf16 only, not %s", accel_dtype_get_name (dt));
  return FALSE;
}

static gboolean
gemm_run (AccelOp *op, gpointer context, GError **error)
{
  AccelGemm *self = ACCEL_GEMM (op);
  PlanKey key;
  Operands o = {
    accel_buffer_get_data (self->a), accel_buffer_get_data (self->b), NULL, accel_buffer_get_data (self->c),
    (float) self->alpha, (float) self->beta, 1.0f,
  };

  if (!gemm_supports (op, NULL, error))
    return FALSE;
  memset (&key, 0, sizeof key);
  if (!dims_of (op, self->a, self->b, self->c, self->transa, self->transb, &key, error))
    return FALSE;
  if (key.m == 0 || key.n == 0 || key.batch == 0)
    return TRUE;
  key.a_type = key.b_type = key.c_type = key.d_type = cuda_type (accel_buffer_get_dtype (self->a));
  key.bias_type = -1;
  key.compute = CUBLAS_COMPUTE_32F;
  key.epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  key.alignment = MIN (MIN (alignment_of (o.a), alignment_of (o.b)), alignment_of (o.c));
  if (key.k == 0)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED, "cublaslt: gemm with k = 0 is not supported");
      return FALSE;
    }
  return run_plan (context, &key, &o, error);
}

static const AccelKernelEntry kernels[] = {
  { "matmul", { .supports = matmul_supports, .run = matmul_run } },
  { "gemm", { .supports = gemm_supports, .run = gemm_run }, GEMM_RANK },
};

ACCEL_PLUGIN_DEFINE_KERNELS (cublaslt,
                             "cuBLASLt kernels on the cuda backend: matmul with fused bias/ReLU/GELU epilogues "
                             "(f32, f16, bf16, fp8 e4m3/e5m2 with per-tensor scales; batched), gemm (f16, bf16)",
                             ACCEL_CUDA_BACKEND_NAME, MATMUL_RANK, kernels, ACCEL_VERSION, "LGPL-2.1-or-later")
