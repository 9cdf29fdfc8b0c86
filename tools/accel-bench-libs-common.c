/* accel-bench-libs-common.c: the raw side and the timing the libs-* groups
 * of accel-bench-libs share (see accel-bench-libs.h).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include "accel-bench-libs.h"

gboolean
libs_cuda_ok (cudaError_t status, const char *what, GError **error)
{
  return accel_cuda_check (status, what, error);
}

gboolean
libs_lib_ok (int status, const char *library, const char *what, GError **error)
{
  return accel_cuda_check_library (status, library, NULL, FALSE, what, error);
}

gboolean
libs_compare_ops (Raw *raw, const char *label, AccelOp **ops, guint n_ops, RawCall call, gpointer data,
                  guint burst, double work, const char *unit, GError **error)
{
  double ta[LIBS_REPS], tr[LIBS_REPS];
  for (int r = -1; r < LIBS_REPS; r++)
    {
      accel_bench_progress (raw->bench, "%s: %d/%d", label, r + 1, LIBS_REPS);
      double a = accel_bench_run_ops_in_flight (raw->device, ops, n_ops, burst, burst, error) / burst;
      double b = call ? accel_bench_raw_burst (raw, call, data, burst, error) : 0;
      if (a < 0 || b < 0)
        return FALSE;
      if (r >= 0)
        ta[r] = a, tr[r] = b;
    }
  double ma = accel_bench_quantile (ta, LIBS_REPS, 0.5);
  double mr = call ? accel_bench_quantile (tr, LIBS_REPS, 0.5) : NAN;
  if (work > 0)
    accel_bench_report (raw->bench, label, unit, work / ma, work / mr);
  else
    accel_bench_report (raw->bench, label, "ms", ma * 1e3, mr * 1e3);
  return TRUE;
}

gboolean
libs_compare (Raw *raw, const char *label, AccelOp *op, RawCall call, gpointer data, guint burst,
              double work, const char *unit, GError **error)
{
  return libs_compare_ops (raw, label, &op, 1, call, data, burst, work, unit, error);
}

gboolean
libs_lt_call (Raw *raw, gpointer data, GError **error)
{
  LtCall *l = data;
  return libs_lib_ok (cublasLtMatmul (l->handle, l->desc, &l->alpha, l->b, l->la, l->a, l->lb, &l->beta, l->c,
                                      l->lc, l->c, l->lc, &l->algo, l->work, l->work_size, raw->stream),
                      "cuBLASLt", "cublasLtMatmul", error);
}

static gboolean
lt_attr (cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const void *value, gsize size,
         GError **error)
{
  return libs_lib_ok (cublasLtMatmulDescSetAttribute (desc, attr, value, size), "cuBLASLt", "attr", error);
}

gboolean
libs_lt_prepare (LtCall *l, cublasLtHandle_t handle, cublasLtEpilogue_t epilogue, cudaDataType cin,
                 cudaDataType cout, gint64 m, gint64 n, gint64 k, GError **error)
{
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  cudaDataType bias_type = CUDA_R_16BF;
  cublasLtMatmulPreference_t pref = NULL;
  cublasLtMatmulHeuristicResult_t result;
  int returned = 0;

  l->handle = handle;
  l->work_size = 32 << 20;
  l->alpha = 1.0f;
  l->beta = 0.0f;
  /* Column-major: cᵀ [n, m] = b [n, k] (stored [k, n], transposed) times aᵀ [k, m]. */
  gboolean ok = libs_cuda_ok (cudaMalloc (&l->work, l->work_size), "cudaMalloc", error)
    && libs_lib_ok (cublasLtMatmulDescCreate (&l->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cuBLASLt", "desc", error)
    && lt_attr (l->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta, error)
    && lt_attr (l->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb, error)
    && lt_attr (l->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue, error)
    && (l->bias == NULL
        || (lt_attr (l->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &l->bias, sizeof l->bias, error)
            && lt_attr (l->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type, error)))
    && libs_lib_ok (cublasLtMatrixLayoutCreate (&l->la, cin, k, n, k), "cuBLASLt", "layout", error)
    && libs_lib_ok (cublasLtMatrixLayoutCreate (&l->lb, cin, k, m, k), "cuBLASLt", "layout", error)
    && libs_lib_ok (cublasLtMatrixLayoutCreate (&l->lc, cout, n, m, n), "cuBLASLt", "layout", error)
    && libs_lib_ok (cublasLtMatmulPreferenceCreate (&pref), "cuBLASLt", "preference", error)
    && libs_lib_ok (cublasLtMatmulPreferenceSetAttribute (pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                          &l->work_size, sizeof l->work_size),
                    "cuBLASLt", "preference", error)
    && libs_lib_ok (cublasLtMatmulAlgoGetHeuristic (handle, l->desc, l->la, l->lb, l->lc, l->lc, pref, 1, &result,
                                                    &returned), "cuBLASLt", "heuristic", error);
  if (pref)
    cublasLtMatmulPreferenceDestroy (pref);
  if (ok && returned < 1)
    {
      g_set_error (error, ACCEL_ERROR, ACCEL_ERROR_NOT_SUPPORTED, "cuBLASLt: no algorithm for the raw baseline");
      return FALSE;
    }
  if (ok)
    l->algo = result.algo;
  return ok;
}

void
libs_lt_release (LtCall *l)
{
  if (l->la)
    cublasLtMatrixLayoutDestroy (l->la);
  if (l->lb)
    cublasLtMatrixLayoutDestroy (l->lb);
  if (l->lc)
    cublasLtMatrixLayoutDestroy (l->lc);
  if (l->desc)
    cublasLtMatmulDescDestroy (l->desc);
  cudaFree (l->a);
  cudaFree (l->b);
  cudaFree (l->c);
  cudaFree (l->bias);
  cudaFree (l->work);
  memset (l, 0, sizeof *l);
}
