/* accel-cutlass-kernels.h: the C face of the cuda_cutlass plugin's CUDA
 * code (the .cu files), for the plugin's C files and the raw side of
 * accel-bench-libs. Plain C types only: no GLib, no CUTLASS.
 *
 * Every entry point enqueues on the stream it is given and never
 * synchronises; it returns a cudaError_t (as int), or
 * ACCEL_CUTLASS_UNSUPPORTED where the parameters fall outside what it
 * takes (the plugin's supports() functions ask the *_supported twins
 * first, so that never reaches a user).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACCEL_CUTLASS_UNSUPPORTED (-1)

/* Element types, as the kernels see them. */
typedef enum {
  ACCEL_CUTLASS_F32,
  ACCEL_CUTLASS_F16,
  ACCEL_CUTLASS_BF16,
  ACCEL_CUTLASS_E4M3,
  ACCEL_CUTLASS_E5M2,
} AccelCutlassType;

/* What is applied before the residual (the matmul epilogue's activation). */
typedef enum {
  ACCEL_CUTLASS_ACT_NONE,
  ACCEL_CUTLASS_ACT_RELU,
  ACCEL_CUTLASS_ACT_GELU_TANH,
  ACCEL_CUTLASS_ACT_GELU_ERF,
} AccelCutlassAct;

/* --- grouped-gemm ------------------------------------------------------- */

/* The codes the offset check leaves (accel_cuda_lane_check_after): [0] is
 * 1 + the first bad index of group-offsets (0: all good), [1] the value
 * there, [2] the value before it. */
#define ACCEL_CUTLASS_GROUPED_N_CODES 3

typedef struct {
  const void *a;             /* [T, K] */
  const void *b;             /* [G, K, N], or [G, N, K] with transb */
  const void *bias;          /* [G, N] of out_type, or NULL */
  void *out;                 /* [T, N] */
  const int32_t *offsets;    /* [G + 1], on the device */
  int32_t *codes;            /* ACCEL_CUTLASS_GROUPED_N_CODES, zeroed */
  int64_t groups, rows, k, n;
  int transb;
  float alpha;
  AccelCutlassType in_type, out_type;
  int sm_count;              /* of the device the stream runs on */
} AccelCutlassGroupedParams;

/* Checks the offsets on the device and leaves the codes (a one-block
 * kernel); every grouped path calls it first, and reads nothing of a or
 * b when the codes say the offsets are bad. */
int accel_cutlass_grouped_check (const AccelCutlassGroupedParams *p, cudaStream_t stream);

/* Any types the op takes, any sizes: a tiled f32 kernel (sm_80 on). */
int accel_cutlass_grouped_generic (const AccelCutlassGroupedParams *p, cudaStream_t stream);

/* CUTLASS's ptr-array grouped GEMM with TMA and wgmma (sm_90a), where it
 * has an instance: bf16 and f16 inputs with an output of the same type
 * (b either way), fp8-e4m3 inputs with a bf16 output (transb only); K and
 * N multiples of 16 bytes of their rows, 16-byte aligned buffers. */
int accel_cutlass_grouped_sm90_supported (const AccelCutlassGroupedParams *p);
size_t accel_cutlass_grouped_sm90_workspace (const AccelCutlassGroupedParams *p);
int accel_cutlass_grouped_sm90 (const AccelCutlassGroupedParams *p, void *workspace, cudaStream_t stream);

/* --- quant-matmul -------------------------------------------------------
 *
 * out[m, n] = sum over k of a[m, k] · (q[n, k] − zero[n, g]) · scale[n, g]
 *             + bias[n],  g = k / group_size,
 * in f32, rounded once to a's type. */

typedef enum {
  ACCEL_CUTLASS_QUANT_INT4,   /* u8 [N, K / 2], even k in the low nibble, zero 8 unless given */
  ACCEL_CUTLASS_QUANT_INT8,   /* i8 [N, K], zero 0 unless given */
  ACCEL_CUTLASS_QUANT_FP8,    /* e4m3 [N, K], no zero */
} AccelCutlassQuantFormat;

typedef struct {
  const void *a;             /* [M, K], act_type (f16 or bf16) */
  const void *b;             /* the codes */
  const void *scales;        /* [N, K / group_size], scale_type */
  const void *zeros;         /* as scales, or NULL */
  const void *bias;          /* [N], act_type, or NULL */
  void *out;                 /* [M, N], act_type */
  int64_t m, n, k;
  int group_size;
  AccelCutlassQuantFormat format;
  AccelCutlassType act_type, scale_type;
} AccelCutlassQuantParams;

/* Dequantises in f32 inside a tiled kernel: every case (sm_80 on). */
int accel_cutlass_quant_generic (const AccelCutlassQuantParams *p, cudaStream_t stream);

/* Tensor cores (mma.sync, sm_80 on) fed with codes turned into f16/bf16 in
 * registers (exactly: the scale applies to each group's f32 partial sum,
 * and given zero points through the activations' group sums, so the result
 * is the f32 definition's): K-split warps streaming the weights for M up to
 * 16, activation tiles in shared memory above. a and b 16-byte aligned. */
int accel_cutlass_quant_mma_supported (const AccelCutlassQuantParams *p);
size_t accel_cutlass_quant_mma_workspace (const AccelCutlassQuantParams *p);
int accel_cutlass_quant_mma (const AccelCutlassQuantParams *p, void *workspace, cudaStream_t stream);

/* --- matmul with the epilogue extras ------------------------------------
 *
 * v = act (alpha · row_scales[i] · col_scales[j] · (op(a) op(b))[i, j]
 *          + beta · c_old[i, j] + bias[j]) + residual[i, j],
 * c = c_scale · v, amax = max |v|; per batch of m x n, the vectors shared
 * by the batch. alpha carries the op's a-scale and b-scale. */

typedef struct {
  const void *a, *b;         /* [batch, m, k] ([k, m] transa), [batch, k, n] ([n, k] transb) */
  const void *bias;          /* [n] of bias_type, or NULL */
  const void *residual;      /* as c, of c_type, or NULL */
  const float *row_scales;   /* [m], or NULL */
  const float *col_scales;   /* [n], or NULL */
  void *c;                   /* [batch, m, n]; read first when beta != 0 */
  float *amax;               /* [1], or NULL */
  int64_t batch, m, n, k;
  int transa, transb;
  float alpha, beta, c_scale;
  AccelCutlassType a_type, b_type, c_type, bias_type;
  AccelCutlassAct act;
} AccelCutlassMatmulParams;

/* Every case the op takes: tiled f32 (sm_80 on). */
int accel_cutlass_matmul_generic (const AccelCutlassMatmulParams *p, cudaStream_t stream);

/* CUTLASS's TMA + wgmma GEMM with the epilogue fused (sm_90a): bf16 or f16
 * a, b, c, bias and residual; a [m, k], b [n, k] (transb, the
 * torch.nn.Linear layout); beta 0, no amax, c_scale 1; k and n multiples
 * of 8, 16-byte aligned buffers. */
int accel_cutlass_matmul_sm90_supported (const AccelCutlassMatmulParams *p);
size_t accel_cutlass_matmul_sm90_workspace (const AccelCutlassMatmulParams *p, int sm_count);
int accel_cutlass_matmul_sm90 (const AccelCutlassMatmulParams *p, int sm_count, void *workspace, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
