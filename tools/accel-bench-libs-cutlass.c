/* accel-bench-libs-cutlass.c: the libs-cutlass group of accel-bench-libs,
 * the kernels of the cuda_cutlass plugin each beside the best alternative
 * an application has, on the same data in the same run:
 *
 * - libs-cutlass.grouped.moe64, .moe8: grouped-gemm on the mixture-of-experts
 *   shapes of issue 15 (64 experts, K 4096, N 1408, 8192 tokens routed
 *   top-6; 8 experts, K 4096, N 14336, 4096 tokens top-2), bf16, weights
 *   [G, N, K], with skewed expert counts (expert g gets a share in
 *   proportion to (g + 1)^-0.6, the rest to expert 0), beside a loop of
 *   cublasGemmEx, one per non-empty group (the counts known on the host,
 *   which the op never needs). bench/grouped_vs_torch.py runs
 *   torch._grouped_mm on the same shapes and counts.
 * - libs-cutlass.w4a16.m{1,16,128}, .w8a16.m{…}: quant-matmul with int4 and
 *   int8 weights, group size 128, bf16 activations and scales, K = N =
 *   8192, beside cublasGemmEx in bf16 on the weights dequantised
 *   beforehand. Both sides cycle through 4 copies of their weights, so
 *   that the 32 MiB of int4 weights are not served from the 50 MB L2.
 * - libs-cutlass.bias-gelu-residual.bf16: matmul with bias + GELU (tanh)
 *   and a residual added after it, fused (8192 x 4096 x 4096, b [n, k]),
 *   beside cublasLtMatmul with its GELU_BIAS epilogue followed by a
 *   residual-add kernel (accel-bench-libs-raw.cu).
 *
 * All in TFLOP/s; the ratio is the op's speed over the alternative's.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <math.h>
#include <string.h>
#include <cublas_v2.h>
#include "accel-bench-libs.h"

#define COPIES 4

cudaError_t accel_bench_raw_add_bf16 (void *c, const void *r, long long n, cudaStream_t stream);

/* Tokens per expert: shares falling as (g + 1)^-0.6, the rounding left to
 * expert 0 (bench/grouped_vs_torch.py computes the same). */
static void
moe_counts (gint64 groups, gint64 rows, gint64 *counts)
{
  double total = 0;
  gint64 assigned = 0;
  for (gint64 g = 0; g < groups; g++)
    total += pow ((double) (g + 1), -0.6);
  for (gint64 g = 0; g < groups; g++)
    {
      counts[g] = (gint64) floor ((double) rows * pow ((double) (g + 1), -0.6) / total);
      assigned += counts[g];
    }
  counts[0] += rows - assigned;
}

static AccelBuffer *
upload_buffer (AccelDevice *device, AccelDType dtype, const gint64 *dims, guint rank, const void *data,
               GError **error)
{
  g_autoptr(AccelShape) shape = accel_shape_new (dims, rank);
  g_autoptr(AccelBuffer) b = accel_device_alloc (device, dtype, shape, error);
  if (b == NULL || !accel_buffer_write (b, data, accel_buffer_get_size (b), error))
    return NULL;
  return g_steal_pointer (&b);
}

/* out [rows, n] = a [rows, k] · w [n, k]ᵀ in bf16 with f32 accumulation,
 * column-major as cuBLAS sees it: outᵀ = w · aᵀ. */
static gboolean
gemm_bf16 (cublasHandle_t handle, const void *w, const void *a, void *out, gint64 rows, gint64 n, gint64 k,
           GError **error)
{
  const float one = 1.0f, zero = 0.0f;
  return libs_lib_ok (cublasGemmEx (handle, CUBLAS_OP_T, CUBLAS_OP_N, (int) n, (int) rows, (int) k, &one,
                                    w, CUDA_R_16BF, (int) k, a, CUDA_R_16BF, (int) k, &zero,
                                    out, CUDA_R_16BF, (int) n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                      "cuBLAS", "cublasGemmEx", error);
}

/* libs-cutlass.grouped */

typedef struct {
  cublasHandle_t handle;
  const guint16 *a, *b;
  guint16 *out;
  const gint64 *counts;
  gint64 groups, k, n;
} LoopCall;

static gboolean
loop_call (Raw *raw, gpointer data, GError **error)
{
  LoopCall *l = data;
  gint64 row = 0;
  for (gint64 g = 0; g < l->groups; g++)
    {
      if (l->counts[g] > 0
          && !gemm_bf16 (l->handle, l->b + g * l->n * l->k, l->a + row * l->k, l->out + row * l->n, l->counts[g],
                         l->n, l->k, error))
        return FALSE;
      row += l->counts[g];
    }
  return TRUE;
}

static gboolean
bench_grouped (Raw *raw, cublasHandle_t handle, const char *name, gint64 groups, gint64 rows, gint64 k, gint64 n,
               GError **error)
{
  g_autofree gint64 *counts = g_new (gint64, groups);
  g_autofree gint32 *offsets = g_new (gint32, groups + 1);
  moe_counts (groups, rows, counts);
  offsets[0] = 0;
  for (gint64 g = 0; g < groups; g++)
    offsets[g + 1] = offsets[g] + (gint32) counts[g];

  gint64 da[2] = { rows, k }, db[3] = { groups, n, k }, doff[1] = { groups + 1 }, dout[2] = { rows, n };
  g_autoptr(AccelBuffer) a = libs_random_buffer (raw->device, ACCEL_DTYPE_BF16, da, 2, -1, 1, 21, error);
  g_autoptr(AccelBuffer) b = a ? libs_random_buffer (raw->device, ACCEL_DTYPE_BF16, db, 3, -0.05, 0.05, 22, error)
                               : NULL;
  g_autoptr(AccelBuffer) off = b ? upload_buffer (raw->device, ACCEL_DTYPE_I32, doff, 1, offsets, error) : NULL;
  g_autoptr(AccelShape) sout = accel_shape_new (dout, 2);
  g_autoptr(AccelBuffer) out = off ? accel_device_alloc (raw->device, ACCEL_DTYPE_BF16, sout, error) : NULL;
  if (out == NULL)
    return FALSE;
  g_autoptr(AccelOp) op = accel_grouped_gemm_new (a, b, off, out);
  g_object_set (op, "transb", TRUE, NULL);

  LoopCall l = { handle, NULL, NULL, NULL, counts, groups, k, n };
  gboolean ok = (l.a = libs_raw_copy (a, error)) && (l.b = libs_raw_copy (b, error))
    && libs_cuda_ok (cudaMalloc ((void **) &l.out, accel_buffer_get_size (out)), "cudaMalloc", error);
  if (ok)
    {
      g_autofree char *label = g_strdup_printf ("libs-cutlass.grouped.%s", name);
      ok = libs_compare (raw, label, op, loop_call, &l, 10, 2.0 * rows * k * n * 1e-12, "TFLOP/s", error);
    }
  cudaFree ((void *) l.a);
  cudaFree ((void *) l.b);
  cudaFree (l.out);
  return ok;
}

/* libs-cutlass.w4a16, .w8a16 */

typedef struct {
  cublasHandle_t handle;
  void *w[COPIES];
  const void *a;
  void *out;
  gint64 m, n, k;
  guint next;
} DequantCall;

static gboolean
dequant_call (Raw *raw, gpointer data, GError **error)
{
  DequantCall *d = data;
  return gemm_bf16 (d->handle, d->w[d->next++ % COPIES], d->a, d->out, d->m, d->n, d->k, error);
}

static guint16
bf16_of (float f)
{
  guint32 u;
  memcpy (&u, &f, sizeof u);
  return (guint16) ((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

static float
f32_of_bf16 (guint16 h)
{
  guint32 u = (guint32) h << 16;
  float f;
  memcpy (&f, &u, sizeof f);
  return f;
}

static gboolean
bench_quant (Raw *raw, cublasHandle_t handle, AccelQuantFormat format, const gint64 *ms, guint n_ms, gint64 n,
             gint64 k, GError **error)
{
  const int group = 128;
  gboolean int4 = format == ACCEL_QUANT_FORMAT_INT4;
  gint64 groups = k / group, row_bytes = int4 ? k / 2 : k;
  g_autofree guint8 *codes = g_malloc ((gsize) n * row_bytes);
  g_autofree guint16 *scales = g_new (guint16, n * groups);
  g_autofree guint16 *dequant = g_new (guint16, n * k);
  GRand *rand = g_rand_new_with_seed (23);
  for (gint64 i = 0; i < n * row_bytes; i++)
    codes[i] = (guint8) g_rand_int_range (rand, 0, 256);
  for (gint64 i = 0; i < n * groups; i++)
    scales[i] = bf16_of ((float) g_rand_double_range (rand, 0.001, 0.01));
  g_rand_free (rand);
  for (gint64 r = 0; r < n; r++)
    for (gint64 c = 0; c < k; c++)
      {
        guint8 byte = codes[r * row_bytes + (int4 ? c / 2 : c)];
        float q = int4 ? (float) ((c % 2 ? byte >> 4 : byte & 0xF) - 8) : (float) (gint8) byte;
        dequant[r * k + c] = bf16_of (q * f32_of_bf16 (scales[r * groups + c / group]));
      }

  gint64 db[2] = { n, row_bytes }, ds[2] = { n, groups }, dw[2] = { n, k };
  AccelBuffer *bufs[COPIES] = { NULL }, *sbuf = NULL;
  DequantCall d = { handle, { NULL }, NULL, NULL, 0, n, k, 0 };
  gboolean ok = (sbuf = upload_buffer (raw->device, ACCEL_DTYPE_BF16, ds, 2, scales, error)) != NULL;
  for (guint c = 0; ok && c < COPIES; c++)
    {
      g_autoptr(AccelBuffer) w = upload_buffer (raw->device, ACCEL_DTYPE_BF16, dw, 2, dequant, error);
      ok = (bufs[c] = upload_buffer (raw->device, int4 ? ACCEL_DTYPE_U8 : ACCEL_DTYPE_I8, db, 2, codes, error))
           && w && (d.w[c] = libs_raw_copy (w, error));
    }
  for (guint i = 0; ok && i < n_ms; i++)
    {
      gint64 m = ms[i], da[2] = { m, k }, dout[2] = { m, n };
      g_autoptr(AccelBuffer) a = libs_random_buffer (raw->device, ACCEL_DTYPE_BF16, da, 2, -1, 1, 24, error);
      g_autoptr(AccelShape) sout = accel_shape_new (dout, 2);
      g_autoptr(AccelBuffer) out = a ? accel_device_alloc (raw->device, ACCEL_DTYPE_BF16, sout, error) : NULL;
      AccelOp *ops[COPIES] = { NULL };
      ok = out != NULL && (d.a = libs_raw_copy (a, error))
           && libs_cuda_ok (cudaMalloc (&d.out, accel_buffer_get_size (out)), "cudaMalloc", error);
      for (guint c = 0; c < COPIES; c++)
        ops[c] = accel_quant_matmul_new (a, bufs[c], sbuf, out, format, group);
      if (ok)
        {
          g_autofree char *label = g_strdup_printf ("libs-cutlass.%s.m%" G_GINT64_FORMAT,
                                                    int4 ? "w4a16" : "w8a16", m);
          d.m = m;
          ok = libs_compare_ops (raw, label, ops, COPIES, dequant_call, &d, m <= 16 ? 40 : 20,
                                 2.0 * m * n * k * 1e-12, "TFLOP/s", error);
        }
      for (guint c = 0; c < COPIES; c++)
        g_clear_object (&ops[c]);
      cudaFree ((void *) d.a);
      cudaFree (d.out);
      d.a = d.out = NULL;
    }
  for (guint c = 0; c < COPIES; c++)
    {
      g_clear_object (&bufs[c]);
      cudaFree (d.w[c]);
    }
  g_clear_object (&sbuf);
  return ok;
}

/* libs-cutlass.bias-gelu-residual */

typedef struct {
  LtCall lt;
  void *residual;
  long long n;
} TwoPassCall;

static gboolean
two_pass_call (Raw *raw, gpointer data, GError **error)
{
  TwoPassCall *t = data;
  return libs_lt_call (raw, &t->lt, error)
         && libs_cuda_ok (accel_bench_raw_add_bf16 (t->lt.c, t->residual, t->n, raw->stream), "residual add",
                          error);
}

static gboolean
bench_fused (Raw *raw, gint64 m, gint64 n, gint64 k, GError **error)
{
  gint64 da[2] = { m, k }, db[2] = { n, k }, dc[2] = { m, n }, dbias[1] = { n };
  cublasLtHandle_t handle = NULL;
  g_autoptr(AccelBuffer) a = libs_random_buffer (raw->device, ACCEL_DTYPE_BF16, da, 2, -1, 1, 25, error);
  g_autoptr(AccelBuffer) b = a ? libs_random_buffer (raw->device, ACCEL_DTYPE_BF16, db, 2, -0.05, 0.05, 26, error)
                               : NULL;
  g_autoptr(AccelBuffer) bias = b ? libs_random_buffer (raw->device, ACCEL_DTYPE_BF16, dbias, 1, -1, 1, 27, error)
                                  : NULL;
  g_autoptr(AccelBuffer) res = bias ? libs_random_buffer (raw->device, ACCEL_DTYPE_BF16, dc, 2, -1, 1, 28, error)
                                    : NULL;
  g_autoptr(AccelShape) sc = accel_shape_new (dc, 2);
  g_autoptr(AccelBuffer) c = res ? accel_device_alloc (raw->device, ACCEL_DTYPE_BF16, sc, error) : NULL;
  if (c == NULL)
    return FALSE;
  g_autoptr(AccelOp) op = accel_matmul_new (a, b, c, ACCEL_MATMUL_EPILOGUE_BIAS_GELU);
  g_object_set (op, "bias", bias, "transb", TRUE, "residual", res, NULL);

  TwoPassCall t = { { 0 }, NULL, (long long) (m * n) };
  gboolean ok = libs_lib_ok (cublasLtCreate (&handle), "cuBLASLt", "cublasLtCreate", error)
    && (t.lt.a = libs_raw_copy (a, error)) && (t.lt.b = libs_raw_copy (b, error))
    && (t.lt.bias = libs_raw_copy (bias, error)) && (t.residual = libs_raw_copy (res, error))
    && libs_cuda_ok (cudaMalloc (&t.lt.c, accel_buffer_get_size (c)), "cudaMalloc", error)
    && libs_lt_prepare (&t.lt, handle, CUBLASLT_EPILOGUE_GELU_BIAS, CUDA_R_16BF, CUDA_R_16BF, m, n, k, error)
    && libs_compare (raw, "libs-cutlass.bias-gelu-residual.bf16", op, two_pass_call, &t, 10, 2.0 * m * n * k * 1e-12,
                     "TFLOP/s", error);
  libs_lt_release (&t.lt);
  cudaFree (t.residual);
  if (handle)
    cublasLtDestroy (handle);
  return ok;
}

static gboolean
run_cutlass (AccelBench *bench, GError **error)
{
  Raw raw;
  cublasHandle_t handle = NULL;
  gboolean quick = accel_bench_is_quick (bench);
  const gint64 ms[] = { 1, 16, 128 };
  gboolean ok = accel_bench_raw_open (bench, &raw, "libs", error)
    && libs_lib_ok (cublasCreate (&handle), "cuBLAS", "cublasCreate", error)
    && libs_lib_ok (cublasSetStream (handle, raw.stream), "cuBLAS", "cublasSetStream", error)
    && bench_grouped (&raw, handle, "moe64", 64, 8192 * 6, 4096, 1408, error)
    && bench_grouped (&raw, handle, "moe8", 8, 4096 * 2, 4096, 14336, error)
    && bench_quant (&raw, handle, ACCEL_QUANT_FORMAT_INT4, ms, G_N_ELEMENTS (ms), 8192, 8192, error)
    && bench_quant (&raw, handle, ACCEL_QUANT_FORMAT_INT8, ms, G_N_ELEMENTS (ms), 8192, 8192, error)
    && bench_fused (&raw, quick ? 4096 : 8192, 4096, 4096, error);
  if (handle)
    cublasDestroy (handle);
  accel_bench_raw_close (&raw);
  return ok;
}

const AccelBenchGroup accel_bench_libs_cutlass_groups[] = {
  { "libs-cutlass", "grouped-gemm (MoE shapes) beside a cuBLAS loop, quant-matmul (W4A16, W8A16) beside cuBLAS "
    "bf16 on dequantised weights, matmul bias+GELU+residual beside cuBLASLt + an add kernel", run_cutlass },
  { NULL, NULL, NULL },
};
