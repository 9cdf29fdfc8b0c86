/* accel-dlpack.h: buffers exchanged with other array libraries through
 * DLPack (PyTorch, CuPy, NumPy, JAX, …), without a copy where both sides
 * can address the memory.
 *
 * The structs below are the DLPack ABI (legacy, unversioned
 * `DLManagedTensor`, which every DLPack consumer accepts), written from
 * the DLPack specification under Accel's names so that this header never
 * clashes with a `dlpack.h` included beside it: an #AccelDLManagedTensor
 * pointer is a `DLManagedTensor` pointer, cast either way.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <stdint.h>
#include "accel-types.h"
#include "accel-buffer.h"
#include "accel-device.h"

G_BEGIN_DECLS

/**
 * ACCEL_DLPACK_DEVICE_CPU:
 *
 * DLPack's `kDLCPU`: memory of this process.
 */
#define ACCEL_DLPACK_DEVICE_CPU 1
/**
 * ACCEL_DLPACK_DEVICE_CUDA:
 *
 * DLPack's `kDLCUDA`: CUDA device memory; the device id is the CUDA ordinal.
 */
#define ACCEL_DLPACK_DEVICE_CUDA 2
/**
 * ACCEL_DLPACK_DEVICE_CUDA_HOST:
 *
 * DLPack's `kDLCUDAHost`: page-locked host memory (`cudaMallocHost`).
 */
#define ACCEL_DLPACK_DEVICE_CUDA_HOST 3
/**
 * ACCEL_DLPACK_DEVICE_CUDA_MANAGED:
 *
 * DLPack's `kDLCUDAManaged`: CUDA managed memory (`cudaMallocManaged`).
 */
#define ACCEL_DLPACK_DEVICE_CUDA_MANAGED 13

/**
 * ACCEL_DLPACK_CODE_INT:
 *
 * DLPack's `kDLInt` type code: signed integers.
 */
#define ACCEL_DLPACK_CODE_INT 0
/**
 * ACCEL_DLPACK_CODE_UINT:
 *
 * DLPack's `kDLUInt` type code: unsigned integers.
 */
#define ACCEL_DLPACK_CODE_UINT 1
/**
 * ACCEL_DLPACK_CODE_FLOAT:
 *
 * DLPack's `kDLFloat` type code: IEEE 754 floats.
 */
#define ACCEL_DLPACK_CODE_FLOAT 2
/**
 * ACCEL_DLPACK_CODE_BFLOAT:
 *
 * DLPack's `kDLBfloat` type code: bfloat16.
 */
#define ACCEL_DLPACK_CODE_BFLOAT 4
/**
 * ACCEL_DLPACK_CODE_COMPLEX:
 *
 * DLPack's `kDLComplex` type code: pairs of floats (real, imaginary).
 */
#define ACCEL_DLPACK_CODE_COMPLEX 5
/**
 * ACCEL_DLPACK_CODE_BOOL:
 *
 * DLPack's `kDLBool` type code, which no Accel dtype takes.
 */
#define ACCEL_DLPACK_CODE_BOOL 6
/**
 * ACCEL_DLPACK_CODE_FLOAT8_E4M3FN:
 *
 * DLPack's `kDLFloat8_e4m3fn` type code: %ACCEL_DTYPE_FP8_E4M3.
 */
#define ACCEL_DLPACK_CODE_FLOAT8_E4M3FN 10
/**
 * ACCEL_DLPACK_CODE_FLOAT8_E5M2:
 *
 * DLPack's `kDLFloat8_e5m2` type code: %ACCEL_DTYPE_FP8_E5M2.
 */
#define ACCEL_DLPACK_CODE_FLOAT8_E5M2 12

/**
 * AccelDLDevice:
 * @device_type: where the memory is (%ACCEL_DLPACK_DEVICE_CPU, …)
 * @device_id: the ordinal of the device of that type; 0 for host memory
 *
 * DLPack's `DLDevice`.
 */
typedef struct {
  int32_t device_type;
  int32_t device_id;
} AccelDLDevice;

/**
 * AccelDLDataType:
 * @code: the type code (%ACCEL_DLPACK_CODE_FLOAT, …)
 * @bits: bits of one lane
 * @lanes: lanes of a vector type; 1 for every type Accel takes
 *
 * DLPack's `DLDataType`.
 */
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} AccelDLDataType;

/**
 * AccelDLTensor:
 * @data: the memory (a pointer of @device); %NULL is allowed for no elements
 * @device: where @data is
 * @ndim: the rank
 * @dtype: the element type
 * @shape: (array length=ndim): the dimensions
 * @strides: (array length=ndim) (nullable): the strides in elements, or
 *   %NULL for a compact row-major layout
 * @byte_offset: bytes from @data to the first element
 *
 * DLPack's `DLTensor`: an array that manages no memory.
 */
typedef struct {
  void *data;
  AccelDLDevice device;
  int32_t ndim;
  AccelDLDataType dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} AccelDLTensor;

typedef struct _AccelDLManagedTensor AccelDLManagedTensor;

/**
 * AccelDLManagedTensor:
 * @dl_tensor: the array
 * @manager_ctx: the producer's state
 * @deleter: (nullable): called once by the consumer when it no longer
 *   needs the array; frees @manager_ctx and the struct itself
 *
 * DLPack's (legacy, unversioned) `DLManagedTensor`: an array lent by its
 * producer until its consumer calls @deleter.
 */
struct _AccelDLManagedTensor {
  AccelDLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter) (AccelDLManagedTensor *self);
};

/**
 * AccelDLPackCopy:
 * @ACCEL_DLPACK_COPY_IF_NEEDED: share the memory where both sides can
 *   address it, copy otherwise
 * @ACCEL_DLPACK_COPY_NEVER: share the memory, or fail with
 *   %ACCEL_ERROR_NOT_SUPPORTED saying why it cannot be shared
 * @ACCEL_DLPACK_COPY_ALWAYS: copy, even where the memory could be shared
 *
 * Whether a DLPack exchange may copy, as the `copy` argument of the
 * Python array API's `from_dlpack` and `__dlpack__`.
 */
typedef enum /*< underscore_name=accel_dlpack_copy >*/ {
  ACCEL_DLPACK_COPY_IF_NEEDED,
  ACCEL_DLPACK_COPY_NEVER,
  ACCEL_DLPACK_COPY_ALWAYS,
} AccelDLPackCopy;

ACCEL_API
gboolean accel_device_get_dlpack_device (AccelDevice *self, gint32 *device_type, gint32 *device_id);
ACCEL_API
AccelDLManagedTensor *accel_buffer_to_dlpack (AccelBuffer *self, GError **error);
ACCEL_API
AccelDLManagedTensor *accel_buffer_to_dlpack_host (AccelBuffer *self, AccelDLPackCopy copy, GError **error);
ACCEL_API
AccelBuffer *accel_buffer_new_from_dlpack (AccelDevice *device,
                                           AccelDLManagedTensor *tensor,
                                           AccelDLPackCopy copy,
                                           GError **error);

G_END_DECLS
