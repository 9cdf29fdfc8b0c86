/* accel-bench-libs.c: the groups of the CUDA library plugins in
 * accel-bench, each op beside the direct library call on the same data in
 * the same run, on the bench's device (a cuda:N):
 *
 * - libs-matmul: matmul (cublaslt) with a fused bias+GELU epilogue, bf16
 *   and fp8, beside cublasLtMatmul with the same epilogue; and beside
 *   `gemm` (cuBLAS) alone, the lower bound of an unfused gemm + bias +
 *   GELU, which the fused op should beat. matmul with no epilogue beside
 *   gemm tells whether cublaslt's gemm kernel should outrank cuBLAS's.
 * - libs-fft: fft (cufft) beside cufftExec on a plan made once.
 * - libs-cusolver: cholesky, lu, eigh (cusolver) beside the cuSOLVER
 *   routines on column-major copies (the op's transposes and info
 *   read-back included on its side).
 * - libs-cusparse: spmv (cusparse) with and without the structure check
 *   beside cusparseSpMV.
 * - libs-cudnn: conv2d (cudnn) beside cudnnConvolutionForward with the
 *   heuristics' first algorithm.
 * - libs-cub: sort and scan (cub) beside the typed CUB calls.
 * - libs-norm: layernorm and rmsnorm (the cuda plugin's own kernels) in
 *   effective GB/s, beside a device-to-device cudaMemcpyAsync that reads
 *   and writes as many bytes: the bound of a kernel that reads x once and
 *   writes y once. Rows of 4096, 4097 (.odd) and 65536 (.long) elements.
 *
 * The timing is accel-bench-libs-common.c's (accel-bench-libs.h); the
 * libs-cutlass group is in accel-bench-libs-cutlass.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include <cublasLt.h>
#include <cudnn.h>
#include <cufft.h>
#include <cusolverDn.h>
#include <cusparse.h>
#include "accel-bench-libs.h"

cudaError_t accel_bench_raw_sort_f32 (float *keys, float *keys_alt, long long n, void *temp, size_t *temp_bytes,
                                      cudaStream_t stream);
cudaError_t accel_bench_raw_scan_f32 (const float *in, float *out, long long n, void *temp, size_t *temp_bytes,
                                      cudaStream_t stream);

/* libs-matmul */

/* c [n, n] = gelu (a [n, n] bᵀ + bias) with b stored [n, n] (transb). */
static gboolean
bench_matmul_kind (Raw *raw, cublasLtHandle_t handle, AccelDType in, AccelDType out, cudaDataType cin,
                   cudaDataType cout, gint64 n, GError **error)
{
  gint64 d2[2] = { n, n }, d1[1] = { n };
  g_autoptr(AccelBuffer) a = libs_random_buffer (raw->device, in == ACCEL_DTYPE_FP8_E4M3 ? ACCEL_DTYPE_BF16 : in,
                                             d2, 2, -1, 1, 1, error);
  g_autoptr(AccelBuffer) b = a ? libs_random_buffer (raw->device, in == ACCEL_DTYPE_FP8_E4M3 ? ACCEL_DTYPE_BF16 : in,
                                                d2, 2, -1, 1, 2, error) : NULL;
  g_autoptr(AccelBuffer) bias = b ? libs_random_buffer (raw->device, ACCEL_DTYPE_BF16, d1, 1, -1, 1, 3, error) : NULL;
  g_autoptr(AccelShape) s2 = accel_shape_new_2d (n, n);
  g_autoptr(AccelBuffer) c = bias ? accel_device_alloc (raw->device, out, s2, error) : NULL;
  g_autoptr(AccelBuffer) a8 = NULL, b8 = NULL;
  if (c == NULL)
    return FALSE;
  if (in == ACCEL_DTYPE_FP8_E4M3)
    {
      a8 = accel_device_alloc (raw->device, in, s2, error);
      b8 = a8 ? accel_device_alloc (raw->device, in, s2, error) : NULL;
      g_autoptr(AccelOp) ca = b8 ? accel_cast_new (a, a8) : NULL;
      g_autoptr(AccelOp) cb = b8 ? accel_cast_new (b, b8) : NULL;
      if (b8 == NULL || !accel_device_submit (raw->device, ca, NULL, error)
          || !accel_device_submit (raw->device, cb, NULL, error))
        return FALSE;
      g_set_object (&a, a8);
      g_set_object (&b, b8);
    }
  g_autoptr(AccelOp) op = accel_matmul_new (a, b, c, ACCEL_MATMUL_EPILOGUE_BIAS_GELU);
  g_object_set (op, "bias", bias, "transb", TRUE, NULL);

  LtCall l = { 0 };
  gboolean ok = (l.a = libs_raw_copy (a, error)) && (l.b = libs_raw_copy (b, error))
    && (l.bias = libs_raw_copy (bias, error))
    && libs_cuda_ok (cudaMalloc (&l.c, accel_buffer_get_size (c)), "cudaMalloc", error)
    && libs_lt_prepare (&l, handle, CUBLASLT_EPILOGUE_GELU_BIAS, cin, cout, n, n, n, error);
  if (ok)
    {
      double flops = 2.0 * n * n * n;
      g_autofree char *label = g_strdup_printf ("libs-matmul.bias-gelu.%s.%" G_GINT64_FORMAT,
                                                accel_dtype_get_name (in), n);
      ok = libs_compare (raw, label, op, libs_lt_call, &l, 10, flops * 1e-12, "TFLOP/s", error);
    }
  if (ok && in == ACCEL_DTYPE_BF16)
    {
      /* The unfused path costs at least its gemm; and matmul alone beside gemm. */
      g_autoptr(AccelOp) gemm = accel_gemm_new (a, b, c);
      g_autoptr(AccelOp) plain = accel_matmul_new (a, b, c, ACCEL_MATMUL_EPILOGUE_NONE);
      g_object_set (gemm, "transb", TRUE, NULL);
      g_object_set (plain, "transb", TRUE, NULL);
      g_autofree char *l1 = g_strdup_printf ("libs-matmul.gemm-alone.bf16.%" G_GINT64_FORMAT, n);
      g_autofree char *l2 = g_strdup_printf ("libs-matmul.none.bf16.%" G_GINT64_FORMAT, n);
      double flops = 2.0 * n * n * n;
      ok = libs_compare (raw, l1, gemm, NULL, NULL, 10, flops * 1e-12, "TFLOP/s", error)
           && libs_compare (raw, l2, plain, NULL, NULL, 10, flops * 1e-12, "TFLOP/s", error);
    }
  libs_lt_release (&l);
  return ok;
}

static gboolean
run_matmul (AccelBench *bench, GError **error)
{
  Raw raw;
  cublasLtHandle_t handle = NULL;
  gint64 n = accel_bench_is_quick (bench) ? 4096 : 8192;
  gboolean ok = accel_bench_raw_open (bench, &raw, "libs", error)
    && libs_lib_ok (cublasLtCreate (&handle), "cuBLASLt", "cublasLtCreate", error)
    && bench_matmul_kind (&raw, handle, ACCEL_DTYPE_BF16, ACCEL_DTYPE_BF16, CUDA_R_16BF, CUDA_R_16BF, n, error)
    && bench_matmul_kind (&raw, handle, ACCEL_DTYPE_FP8_E4M3, ACCEL_DTYPE_BF16, CUDA_R_8F_E4M3, CUDA_R_16BF, n,
                          error);
  if (handle)
    cublasLtDestroy (handle);
  accel_bench_raw_close (&raw);
  return ok;
}

/* libs-fft */

typedef struct {
  cufftHandle plan;
  void *in, *out;
  gboolean r2c;
} FftCall;

static gboolean
fft_call (Raw *raw, gpointer data, GError **error)
{
  FftCall *f = data;
  cufftResult r = f->r2c ? cufftExecR2C (f->plan, f->in, f->out) : cufftExecC2C (f->plan, f->in, f->out, CUFFT_FORWARD);
  return libs_lib_ok (r, "cuFFT", "cufftExec", error);
}

static gboolean
bench_fft (Raw *raw, gboolean r2c, const gint64 *dims_in, const gint64 *dims_out, guint rank, guint axes,
           GError **error)
{
  /* The input: random reals, for c2c reinterpreted as interleaved complex. */
  gint64 dims_real[ACCEL_SHAPE_MAX_RANK];
  for (guint i = 0; i < rank; i++)
    dims_real[i] = dims_in[i] * (!r2c && i == rank - 1 ? 2 : 1);
  g_autoptr(AccelBuffer) real = libs_random_buffer (raw->device, ACCEL_DTYPE_F32, dims_real, rank, -1, 1, 5, error);
  g_autoptr(AccelShape) sin = accel_shape_new (dims_in, rank);
  g_autoptr(AccelShape) sout = accel_shape_new (dims_out, rank);
  g_autoptr(AccelBuffer) out = real ? accel_device_alloc (raw->device, ACCEL_DTYPE_C64, sout, error) : NULL;
  g_autoptr(AccelBuffer) src = NULL;
  if (out == NULL)
    return FALSE;
  if (r2c)
    src = g_object_ref (real);
  else
    {
      g_autoptr(GBytes) bytes = accel_buffer_download (real, error);
      src = bytes ? accel_device_alloc (raw->device, ACCEL_DTYPE_C64, sin, error) : NULL;
      if (src == NULL || !accel_buffer_upload (src, bytes, error))
        return FALSE;
    }
  g_autoptr(AccelOp) op = accel_fft_new (src, out, r2c ? ACCEL_FFT_R2C : ACCEL_FFT_C2C, ACCEL_FFT_FORWARD, axes);
  FftCall f = { 0, NULL, NULL, r2c };
  long long n[3];
  long long batch = 1;
  for (guint i = 0; i < rank - axes; i++)
    batch *= dims_in[i];
  for (guint i = 0; i < axes; i++)
    n[i] = (r2c ? dims_in : dims_out)[rank - axes + i];
  size_t work = 0;
  gboolean ok = (f.in = libs_raw_copy (src, error)) && (f.out = libs_raw_copy (out, error))
    && libs_lib_ok (cufftCreate (&f.plan), "cuFFT", "cufftCreate", error)
    && libs_lib_ok (cufftMakePlanMany64 (f.plan, axes, n, NULL, 1, 0, NULL, 1, 0, r2c ? CUFFT_R2C : CUFFT_C2C, batch,
                                    &work), "cuFFT", "cufftMakePlanMany64", error)
    && libs_lib_ok (cufftSetStream (f.plan, raw->stream), "cuFFT", "cufftSetStream", error);
  if (ok)
    {
      double points = (double) accel_buffer_get_n_elements (src);
      g_autofree char *label = g_strdup_printf ("libs-fft.%s.%" G_GINT64_FORMAT "x%u", r2c ? "r2c" : "c2c",
                                                (gint64) n[axes - 1], axes);
      ok = libs_compare (raw, label, op, fft_call, &f, 20, points * 1e-9, "Gpoint/s", error);
    }
  if (f.plan)
    cufftDestroy (f.plan);
  cudaFree (f.in);
  cudaFree (f.out);
  return ok;
}

static gboolean
run_fft (AccelBench *bench, GError **error)
{
  Raw raw;
  const gint64 c1[2] = { 64, 1 << 20 };
  const gint64 r2[2] = { 4096, 4096 }, r2o[2] = { 4096, 2049 };
  gboolean ok = accel_bench_raw_open (bench, &raw, "libs", error)
    && bench_fft (&raw, FALSE, c1, c1, 2, 1, error)
    && bench_fft (&raw, TRUE, r2, r2o, 2, 2, error);
  accel_bench_raw_close (&raw);
  return ok;
}

/* libs-cusolver: cholesky f64, lu f32, eigh f32. */

typedef struct {
  cusolverDnHandle_t handle;
  int which;           /* 0 potrf, 1 getrf, 2 syevd */
  int n, lwork;
  void *a, *scratch, *work, *w;
  int *ipiv, *info;
  gsize size;
} SolverCall;

static gboolean
solver_call (Raw *raw, gpointer data, GError **error)
{
  SolverCall *s = data;
  cusolverStatus_t st;
  /* Each call factors a fresh copy, as the op does. */
  if (!libs_cuda_ok (cudaMemcpyAsync (s->scratch, s->a, s->size, cudaMemcpyDeviceToDevice, raw->stream), "copy", error))
    return FALSE;
  if (s->which == 0)
    st = cusolverDnDpotrf (s->handle, CUBLAS_FILL_MODE_UPPER, s->n, s->scratch, s->n, s->work, s->lwork, s->info);
  else if (s->which == 1)
    st = cusolverDnSgetrf (s->handle, s->n, s->n, s->scratch, s->n, s->work, s->ipiv, s->info);
  else
    st = cusolverDnSsyevd (s->handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, s->n, s->scratch, s->n,
                           s->w, s->work, s->lwork, s->info);
  return libs_lib_ok (st, "cuSOLVER", "factorisation", error);
}

static gboolean
bench_solver (Raw *raw, cusolverDnHandle_t handle, int which, gint64 n, GError **error)
{
  AccelDType dt = which == 0 ? ACCEL_DTYPE_F64 : ACCEL_DTYPE_F32;
  /* a = m mᵀ with m [n, 2n]: symmetric and well conditioned, so all three run. */
  gint64 dm[2] = { n, 2 * n };
  g_autoptr(AccelBuffer) m = libs_random_buffer (raw->device, dt, dm, 2, -1, 1, 7, error);
  g_autoptr(AccelShape) s2 = accel_shape_new_2d (n, n);
  g_autoptr(AccelShape) s1 = accel_shape_new_1d (n);
  g_autoptr(AccelBuffer) a = m ? accel_device_alloc (raw->device, dt, s2, error) : NULL;
  g_autoptr(AccelBuffer) out = a ? accel_device_alloc (raw->device, dt, s2, error) : NULL;
  g_autoptr(AccelBuffer) vec = out ? accel_device_alloc (raw->device, which == 1 ? ACCEL_DTYPE_I32 : dt, s1, error)
                                   : NULL;
  if (vec == NULL)
    return FALSE;
  g_autoptr(AccelOp) gram = accel_gemm_new (m, m, a);
  g_object_set (gram, "transb", TRUE, NULL);
  if (!accel_device_submit (raw->device, gram, NULL, error))
    return FALSE;
  g_autoptr(AccelOp) op = which == 0 ? accel_cholesky_new (a, out)
                          : which == 1 ? accel_lu_new (a, out, vec) : accel_eigh_new (a, vec, out);

  SolverCall s = { handle, which, (int) n, 0, NULL, NULL, NULL, NULL, NULL, NULL, accel_buffer_get_size (a) };
  gboolean ok = (s.a = libs_raw_copy (a, error)) && libs_cuda_ok (cudaMalloc (&s.scratch, s.size), "cudaMalloc", error)
    && libs_cuda_ok (cudaMalloc ((void **) &s.info, sizeof (int)), "cudaMalloc", error)
    && libs_cuda_ok (cudaMalloc ((void **) &s.ipiv, n * sizeof (int)), "cudaMalloc", error)
    && libs_cuda_ok (cudaMalloc (&s.w, n * sizeof (double)), "cudaMalloc", error);
  if (ok)
    {
      cusolverStatus_t st = which == 0 ? cusolverDnDpotrf_bufferSize (handle, CUBLAS_FILL_MODE_UPPER, s.n, s.a, s.n, &s.lwork)
        : which == 1 ? cusolverDnSgetrf_bufferSize (handle, s.n, s.n, s.a, s.n, &s.lwork)
        : cusolverDnSsyevd_bufferSize (handle, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, s.n, s.a, s.n,
                                       s.w, &s.lwork);
      ok = libs_lib_ok (st, "cuSOLVER", "bufferSize", error)
           && libs_cuda_ok (cudaMalloc (&s.work, (gsize) MAX (s.lwork, 1) * accel_dtype_get_size (dt)), "cudaMalloc",
                       error);
    }
  if (ok)
    {
      const char *names[] = { "cholesky.f64", "lu.f32", "eigh.f32" };
      g_autofree char *label = g_strdup_printf ("libs-cusolver.%s.%" G_GINT64_FORMAT, names[which], n);
      ok = libs_compare (raw, label, op, solver_call, &s, which == 2 ? 2 : 5, 0, NULL, error);
    }
  cudaFree (s.a);
  cudaFree (s.scratch);
  cudaFree (s.info);
  cudaFree (s.ipiv);
  cudaFree (s.w);
  cudaFree (s.work);
  return ok;
}

static gboolean
run_cusolver (AccelBench *bench, GError **error)
{
  Raw raw;
  cusolverDnHandle_t handle = NULL;
  gint64 n = accel_bench_is_quick (bench) ? 2048 : 8192;
  gboolean ok = accel_bench_raw_open (bench, &raw, "libs", error)
    && libs_lib_ok (cusolverDnCreate (&handle), "cuSOLVER", "cusolverDnCreate", error)
    && libs_lib_ok (cusolverDnSetStream (handle, raw.stream), "cuSOLVER", "cusolverDnSetStream", error)
    && bench_solver (&raw, handle, 0, n, error)
    && bench_solver (&raw, handle, 1, n, error)
    && bench_solver (&raw, handle, 2, n / 2, error);
  if (handle)
    cusolverDnDestroy (handle);
  accel_bench_raw_close (&raw);
  return ok;
}

/* libs-cusparse: spmv on a random matrix with 16 entries per row. */

typedef struct {
  cusparseHandle_t handle;
  cusparseSpMatDescr_t a;
  cusparseDnVecDescr_t x, y;
  void *work;
} SpCall;

static gboolean
sp_call (Raw *raw, gpointer data, GError **error)
{
  SpCall *s = data;
  const float one = 1.0f, zero = 0.0f;
  return libs_lib_ok (cusparseSpMV (s->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->a, s->x, &zero, s->y,
                               CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, s->work), "cuSPARSE", "cusparseSpMV", error);
}

static gboolean
run_cusparse (AccelBench *bench, GError **error)
{
  Raw raw;
  gint64 m = accel_bench_is_quick (bench) ? 1 << 20 : 1 << 23, per_row = 16, nnz = m * per_row;
  if (!accel_bench_raw_open (bench, &raw, "libs", error))
    return FALSE;
  /* Columns spread evenly, ascending: row i has i * 7919 + j * (m / 16) mod m, sorted. */
  g_autofree gint32 *row_ptr = g_new (gint32, m + 1);
  g_autofree gint32 *col_ind = g_new (gint32, nnz);
  for (gint64 i = 0; i <= m; i++)
    row_ptr[i] = (gint32) (i * per_row);
  for (gint64 i = 0; i < m; i++)
    {
      gint64 base = (i * 7919) % (m / per_row);
      for (gint64 j = 0; j < per_row; j++)
        col_ind[i * per_row + j] = (gint32) (base + j * (m / per_row));
    }
  gint64 dr[1] = { m + 1 }, dn[1] = { nnz }, dm[1] = { m };
  g_autoptr(AccelShape) sr = accel_shape_new (dr, 1);
  g_autoptr(AccelShape) sn = accel_shape_new (dn, 1);
  g_autoptr(AccelBuffer) rp = accel_device_alloc (raw.device, ACCEL_DTYPE_I32, sr, error);
  g_autoptr(AccelBuffer) ci = rp ? accel_device_alloc (raw.device, ACCEL_DTYPE_I32, sn, error) : NULL;
  g_autoptr(AccelBuffer) v = ci ? libs_random_buffer (raw.device, ACCEL_DTYPE_F32, dn, 1, -1, 1, 8, error) : NULL;
  g_autoptr(AccelBuffer) x = v ? libs_random_buffer (raw.device, ACCEL_DTYPE_F32, dm, 1, -1, 1, 9, error) : NULL;
  g_autoptr(AccelBuffer) y = x ? libs_random_buffer (raw.device, ACCEL_DTYPE_F32, dm, 1, -1, 1, 10, error) : NULL;
  SpCall s = { NULL, NULL, NULL, NULL, NULL };
  void *rrp = NULL, *rci = NULL, *rv = NULL, *rx = NULL, *ry = NULL;
  size_t size = 0;
  const float one = 1.0f, zero = 0.0f;
  gboolean ok = y != NULL
    && accel_buffer_write (rp, (const guint8 *) row_ptr, (m + 1) * 4, error)
    && accel_buffer_write (ci, (const guint8 *) col_ind, nnz * 4, error)
    && (rrp = libs_raw_copy (rp, error)) && (rci = libs_raw_copy (ci, error)) && (rv = libs_raw_copy (v, error))
    && (rx = libs_raw_copy (x, error)) && (ry = libs_raw_copy (y, error))
    && libs_lib_ok (cusparseCreate (&s.handle), "cuSPARSE", "cusparseCreate", error)
    && libs_lib_ok (cusparseSetStream (s.handle, raw.stream), "cuSPARSE", "cusparseSetStream", error)
    && libs_lib_ok (cusparseCreateCsr (&s.a, m, m, nnz, rrp, rci, rv, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                  CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F), "cuSPARSE", "cusparseCreateCsr", error)
    && libs_lib_ok (cusparseCreateDnVec (&s.x, m, rx, CUDA_R_32F), "cuSPARSE", "cusparseCreateDnVec", error)
    && libs_lib_ok (cusparseCreateDnVec (&s.y, m, ry, CUDA_R_32F), "cuSPARSE", "cusparseCreateDnVec", error)
    && libs_lib_ok (cusparseSpMV_bufferSize (s.handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s.a, s.x, &zero, s.y,
                                        CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &size), "cuSPARSE", "bufferSize", error)
    && libs_cuda_ok (cudaMalloc (&s.work, MAX (size, 1)), "cudaMalloc", error);
  if (ok)
    {
      g_autoptr(AccelOp) op = accel_spmv_new (rp, ci, v, x, y, m);
      double bytes = nnz * 8.0 + m * 12.0;
      ok = libs_compare (&raw, "libs-cusparse.spmv.checked", op, sp_call, &s, 20, bytes * 1e-9, "GB/s", error);
      g_object_set (op, "check-structure", FALSE, NULL);
      ok = ok && libs_compare (&raw, "libs-cusparse.spmv.trusted", op, sp_call, &s, 20, bytes * 1e-9, "GB/s", error);
    }
  if (s.a)
    cusparseDestroySpMat (s.a);
  if (s.x)
    cusparseDestroyDnVec (s.x);
  if (s.y)
    cusparseDestroyDnVec (s.y);
  if (s.handle)
    cusparseDestroy (s.handle);
  cudaFree (s.work);
  cudaFree (rrp);
  cudaFree (rci);
  cudaFree (rv);
  cudaFree (rx);
  cudaFree (ry);
  accel_bench_raw_close (&raw);
  return ok;
}

/* libs-cudnn: a 3x3 convolution, f16, NHWC, 64 x 56 x 56 x 256 -> 256. */

typedef struct {
  cudnnHandle_t handle;
  cudnnTensorDescriptor_t xd, yd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  cudnnConvolutionFwdAlgo_t algo;
  void *x, *w, *y, *work;
  size_t work_size;
} DnnCall;

static gboolean
dnn_call (Raw *raw, gpointer data, GError **error)
{
  DnnCall *d = data;
  const float one = 1.0f, zero = 0.0f;
  return libs_lib_ok (cudnnConvolutionForward (d->handle, &one, d->xd, d->x, d->wd, d->w, d->cd, d->algo, d->work,
                                          d->work_size, &zero, d->yd, d->y), "cuDNN", "cudnnConvolutionForward", error);
}

static gboolean
run_cudnn (AccelBench *bench, GError **error)
{
  Raw raw;
  int n = accel_bench_is_quick (bench) ? 16 : 64, c = 256, h = 56, k = 256;
  gint64 dx[4] = { n, h, h, c }, dw[4] = { k, 3, 3, c }, dy[4] = { n, h, h, k };
  if (!accel_bench_raw_open (bench, &raw, "libs", error))
    return FALSE;
  g_autoptr(AccelBuffer) x = libs_random_buffer (raw.device, ACCEL_DTYPE_F16, dx, 4, -1, 1, 11, error);
  g_autoptr(AccelBuffer) w = x ? libs_random_buffer (raw.device, ACCEL_DTYPE_F16, dw, 4, -1, 1, 12, error) : NULL;
  g_autoptr(AccelBuffer) y = w ? libs_random_buffer (raw.device, ACCEL_DTYPE_F16, dy, 4, -1, 1, 13, error) : NULL;
  DnnCall d = { 0 };
  cudnnConvolutionFwdAlgoPerf_t perf;
  int returned = 0;
  gboolean ok = y != NULL && (d.x = libs_raw_copy (x, error)) && (d.w = libs_raw_copy (w, error)) && (d.y = libs_raw_copy (y, error))
    && libs_lib_ok (cudnnCreate (&d.handle), "cuDNN", "cudnnCreate", error)
    && libs_lib_ok (cudnnSetStream (d.handle, raw.stream), "cuDNN", "cudnnSetStream", error)
    && libs_lib_ok (cudnnCreateTensorDescriptor (&d.xd), "cuDNN", "descriptor", error)
    && libs_lib_ok (cudnnCreateTensorDescriptor (&d.yd), "cuDNN", "descriptor", error)
    && libs_lib_ok (cudnnCreateFilterDescriptor (&d.wd), "cuDNN", "descriptor", error)
    && libs_lib_ok (cudnnCreateConvolutionDescriptor (&d.cd), "cuDNN", "descriptor", error)
    && libs_lib_ok (cudnnSetTensor4dDescriptor (d.xd, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, n, c, h, h), "cuDNN", "x", error)
    && libs_lib_ok (cudnnSetTensor4dDescriptor (d.yd, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, n, k, h, h), "cuDNN", "y", error)
    && libs_lib_ok (cudnnSetFilter4dDescriptor (d.wd, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, k, c, 3, 3), "cuDNN", "w", error)
    && libs_lib_ok (cudnnSetConvolution2dDescriptor (d.cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
               "cuDNN", "conv", error)
    && libs_lib_ok (cudnnSetConvolutionMathType (d.cd, CUDNN_TENSOR_OP_MATH), "cuDNN", "math", error)
    && libs_lib_ok (cudnnGetConvolutionForwardAlgorithm_v7 (d.handle, d.xd, d.wd, d.cd, d.yd, 1, &returned, &perf),
               "cuDNN", "heuristics", error);
  if (ok)
    {
      d.algo = perf.algo;
      d.work_size = perf.memory;
      ok = libs_cuda_ok (cudaMalloc (&d.work, MAX (d.work_size, 1)), "cudaMalloc", error);
    }
  if (ok)
    {
      g_autoptr(AccelOp) op = accel_conv2d_new (x, w, y);
      g_object_set (op, "layout", ACCEL_CONV_LAYOUT_NHWC, "pad-h", 1, "pad-w", 1, NULL);
      double flops = 2.0 * n * h * h * (double) k * c * 9;
      ok = libs_compare (&raw, "libs-cudnn.conv2d.f16.nhwc.3x3", op, dnn_call, &d, 10, flops * 1e-12, "TFLOP/s", error);
    }
  if (d.xd)
    cudnnDestroyTensorDescriptor (d.xd);
  if (d.yd)
    cudnnDestroyTensorDescriptor (d.yd);
  if (d.wd)
    cudnnDestroyFilterDescriptor (d.wd);
  if (d.cd)
    cudnnDestroyConvolutionDescriptor (d.cd);
  if (d.handle)
    cudnnDestroy (d.handle);
  cudaFree (d.x);
  cudaFree (d.w);
  cudaFree (d.y);
  cudaFree (d.work);
  accel_bench_raw_close (&raw);
  return ok;
}

/* libs-cub */

typedef struct {
  int which;          /* 0 sort, 1 scan */
  float *in, *copy, *alt;
  long long n;
  void *temp;
  size_t temp_bytes;
} CubCall;

static gboolean
cub_call (Raw *raw, gpointer data, GError **error)
{
  CubCall *c = data;
  if (c->which == 0)
    /* Both sides sort the same buffer again and again (radix sort does not
     * care that it is sorted already). */
    return libs_cuda_ok (accel_bench_raw_sort_f32 (c->copy, c->alt, c->n, c->temp, &c->temp_bytes, raw->stream),
                    "cub sort", error);
  return libs_cuda_ok (accel_bench_raw_scan_f32 (c->in, c->copy, c->n, c->temp, &c->temp_bytes, raw->stream), "cub scan",
                  error);
}

static gboolean
run_cub (AccelBench *bench, GError **error)
{
  Raw raw;
  long long n = accel_bench_is_quick (bench) ? 1 << 24 : 1 << 27;
  gint64 d1[1] = { n };
  if (!accel_bench_raw_open (bench, &raw, "libs", error))
    return FALSE;
  g_autoptr(AccelBuffer) keys = libs_random_buffer (raw.device, ACCEL_DTYPE_F32, d1, 1, -1, 1, 14, error);
  g_autoptr(AccelBuffer) out = keys ? libs_random_buffer (raw.device, ACCEL_DTYPE_F32, d1, 1, -1, 1, 15, error) : NULL;
  CubCall c = { 0, NULL, NULL, NULL, n, NULL, 0 };
  size_t sort_bytes = 0, scan_bytes = 0;
  gboolean ok = out != NULL && (c.in = libs_raw_copy (keys, error))
    && (c.copy = libs_raw_copy (out, error))
    && libs_cuda_ok (cudaMalloc ((void **) &c.alt, n * 4), "cudaMalloc", error)
    && libs_cuda_ok (accel_bench_raw_sort_f32 (c.copy, c.alt, n, NULL, &sort_bytes, raw.stream), "cub sort", error)
    && libs_cuda_ok (accel_bench_raw_scan_f32 (c.in, c.copy, n, NULL, &scan_bytes, raw.stream), "cub scan", error)
    && libs_cuda_ok (cudaMalloc (&c.temp, MAX (MAX (sort_bytes, scan_bytes), 1)), "cudaMalloc", error);
  if (ok)
    {
      g_autoptr(AccelOp) sort = accel_sort_new (out, NULL);
      g_autoptr(AccelOp) scan = accel_scan_new (keys, out, ACCEL_SCAN_INCLUSIVE);
      c.temp_bytes = sort_bytes;
      ok = libs_compare (&raw, "libs-cub.sort.f32", sort, cub_call, &c, 10, n * 1e-9, "Gkey/s", error);
      c.which = 1;
      c.temp_bytes = scan_bytes;
      ok = ok && libs_compare (&raw, "libs-cub.scan.f32", scan, cub_call, &c, 20, n * 1e-9, "Gelem/s", error);
    }
  cudaFree (c.in);
  cudaFree (c.copy);
  cudaFree (c.alt);
  cudaFree (c.temp);
  accel_bench_raw_close (&raw);
  return ok;
}

/* libs-norm */

/* layernorm (gamma and beta) and rmsnorm (gamma) of x [rows, n] into y,
 * named libs-norm.{layernorm,rmsnorm}.DTYPE then @suffix. Both sides
 * count the bytes of x read and y written; gamma and beta, n elements
 * each and cached, are left out of the op's figure. */
static gboolean
bench_norm (Raw *raw, AccelDType dtype, gint64 rows, gint64 n, const char *suffix, GError **error)
{
  gint64 dims[2] = { rows, n }, dn[1] = { n };
  gsize size = (gsize) rows * n * accel_dtype_get_size (dtype);
  double gb = 2.0 * size * 1e-9;
  g_autoptr(AccelBuffer) x = libs_random_buffer (raw->device, dtype, dims, 2, -3, 5, 16, error);
  g_autoptr(AccelBuffer) y = x ? libs_random_buffer (raw->device, dtype, dims, 2, 0, 1, 17, error) : NULL;
  g_autoptr(AccelBuffer) gamma = y ? libs_random_buffer (raw->device, dtype, dn, 1, 0.5, 1.5, 18, error) : NULL;
  g_autoptr(AccelBuffer) beta = gamma ? libs_random_buffer (raw->device, dtype, dn, 1, -1, 1, 19, error) : NULL;
  AccelBenchRawCopy c = { NULL, NULL, size };
  gboolean ok = beta != NULL && accel_bench_raw_copy_init (raw, &c, size, error);
  if (ok)
    {
      const char *dt = accel_dtype_get_name (dtype);
      g_autofree char *ln_label = g_strdup_printf ("libs-norm.layernorm.%s%s", dt, suffix);
      g_autofree char *rms_label = g_strdup_printf ("libs-norm.rmsnorm.%s%s", dt, suffix);
      g_autoptr(AccelOp) ln = accel_layernorm_new (x, gamma, beta, y);
      g_autoptr(AccelOp) rms = accel_rmsnorm_new (x, gamma, NULL, y);
      ok = libs_compare (raw, ln_label, ln, accel_bench_raw_copy_call, &c, 20, gb, "GB/s", error)
           && libs_compare (raw, rms_label, rms, accel_bench_raw_copy_call, &c, 20, gb, "GB/s", error);
    }
  accel_bench_raw_copy_clear (&c);
  return ok;
}

static gboolean
run_norm (AccelBench *bench, GError **error)
{
  Raw raw;
  gint64 rows = accel_bench_is_quick (bench) ? 2048 : 16384, n = 4096;
  if (!accel_bench_raw_open (bench, &raw, "libs", error))
    return FALSE;
  /* Then rows of odd length (a head, packs and a tail each) and rows too
   * long for registers (x read twice). */
  gboolean ok = bench_norm (&raw, ACCEL_DTYPE_BF16, rows, n, "", error)
                && bench_norm (&raw, ACCEL_DTYPE_F32, rows, n, "", error)
                && bench_norm (&raw, ACCEL_DTYPE_BF16, rows, n + 1, ".odd", error)
                && bench_norm (&raw, ACCEL_DTYPE_BF16, rows / 8, n * 16, ".long", error);
  accel_bench_raw_close (&raw);
  return ok;
}

const AccelBenchGroup accel_bench_libs_groups[] = {
  { "libs-matmul", "matmul (fused bias+GELU; bf16, fp8) beside cublasLtMatmul, and beside gemm alone", run_matmul },
  { "libs-fft", "fft (c2c 1-D batched, r2c 2-D) beside cufftExec", run_fft },
  { "libs-cusolver", "cholesky f64, lu f32, eigh f32 beside the cuSOLVER routines", run_cusolver },
  { "libs-cusparse", "spmv, checked and trusted, beside cusparseSpMV", run_cusparse },
  { "libs-cudnn", "conv2d f16 NHWC 3x3 beside cudnnConvolutionForward", run_cudnn },
  { "libs-cub", "sort and scan beside the typed CUB calls", run_cub },
  { "libs-norm",
    "layernorm, rmsnorm bf16 and f32 [16384, 4096], bf16 [16384, 4097] (.odd) and [2048, 65536] (.long) in GB/s "
    "beside a cudaMemcpyAsync of as many bytes",
    run_norm },
  { NULL, NULL, NULL },
};
