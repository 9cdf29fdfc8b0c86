/* accel-cuda-kernels.h: the launchers of the `cuda` plugin's device code
 * (accel-cuda-elementwise.cu, accel-cuda-reduce.cu, accel-cuda-norm.cu). Plain C, free of GLib,
 * so nvcc compiles the kernels without it. Each launcher only enqueues on
 * @stream and returns the launch status.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stdint.h>
#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The values of AccelDType and AccelReduceOp (checked in accel-cuda-plugin.c). */
enum {
  ACCEL_CUDA_DT_F16, ACCEL_CUDA_DT_BF16, ACCEL_CUDA_DT_F32, ACCEL_CUDA_DT_F64,
  ACCEL_CUDA_DT_C64, ACCEL_CUDA_DT_C128, ACCEL_CUDA_DT_I8, ACCEL_CUDA_DT_U8,
  ACCEL_CUDA_DT_I32, ACCEL_CUDA_DT_U32, ACCEL_CUDA_DT_I64, ACCEL_CUDA_DT_FP8_E4M3,
  ACCEL_CUDA_DT_FP8_E5M2,
};
enum {
  ACCEL_CUDA_REDUCE_SUM, ACCEL_CUDA_REDUCE_MAX, ACCEL_CUDA_REDUCE_MIN, ACCEL_CUDA_REDUCE_MEAN,
};

#define ACCEL_CUDA_LAYOUT_MAX_RANK 8

/* A strided layout in elements; rank 0 stands for contiguous. */
typedef struct {
  int rank;
  int64_t dims[ACCEL_CUDA_LAYOUT_MAX_RANK];
  int64_t strides[ACCEL_CUDA_LAYOUT_MAX_RANK];
} AccelCudaLayout;

cudaError_t accel_cuda_launch_copy (const void *src, const AccelCudaLayout *src_layout,
                                    void *dst, const AccelCudaLayout *dst_layout,
                                    int64_t n, size_t esize, cudaStream_t stream);
cudaError_t accel_cuda_launch_fill (void *dst, const AccelCudaLayout *layout, int64_t n,
                                    const uint8_t pattern[16], size_t esize, cudaStream_t stream);
cudaError_t accel_cuda_launch_cast (const void *src, int from, const AccelCudaLayout *src_layout,
                                    void *dst, int to, const AccelCudaLayout *dst_layout,
                                    int64_t n, cudaStream_t stream);
cudaError_t accel_cuda_launch_rng_fill (void *dst, int dtype, int64_t n, uint64_t seed, uint64_t offset,
                                        int normal, double a, double b, cudaStream_t stream);
cudaError_t accel_cuda_launch_reduce (const void *src, void *dst, int dtype, int reduction,
                                      int64_t outer, int64_t len, int64_t inner, cudaStream_t stream);
cudaError_t accel_cuda_launch_softmax (const void *src, void *dst, int dtype, int64_t rows, int64_t len,
                                       cudaStream_t stream);
/* layernorm (@rms 0) or rmsnorm (@rms 1) of @rows rows of @n elements of
 * @dtype (F32, F16 or BF16; else cudaErrorInvalidValue), contiguous;
 * @gamma and @beta nullable, [@n]; @y may be @x. */
cudaError_t accel_cuda_launch_norm (const void *x, const void *gamma, const void *beta, void *y, int dtype, int rms,
                                    int64_t rows, int64_t n, double eps, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
