/* accel-cuda-types.h: what the public CUDA headers share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(ACCEL_CUDA_INSIDE) && !defined(ACCEL_CUDA_COMPILATION)
#error "Only <accel-cuda.h> can be included directly."
#endif

#include <accel.h>
#include <cuda_runtime_api.h>

G_BEGIN_DECLS

/* Exported whatever the visibility the library is built with. */
#ifndef ACCEL_CUDA_API
#if defined(__GNUC__) || defined(__clang__)
#define ACCEL_CUDA_API __attribute__ ((visibility ("default"))) extern
#else
#define ACCEL_CUDA_API extern
#endif
#endif

/**
 * ACCEL_CUDA_BACKEND_NAME:
 *
 * The name of the CUDA backend, as kernels register against it:
 * `accel_plugin_register_kernel (plugin, "gemm", ACCEL_CUDA_BACKEND_NAME, …)`.
 */
#define ACCEL_CUDA_BACKEND_NAME "cuda"

/**
 * AccelCudaIsolation:
 * @ACCEL_CUDA_ISOLATION_NONE: the CUDA context lives in the application's
 *   process: the lowest latency, but a sticky error (illegal address, …)
 *   leaves the device FAILED for good
 * @ACCEL_CUDA_ISOLATION_PROCESS: the context lives in an `accel-device-host`
 *   child process, replaced after a sticky error or a crash while work
 *   queues; the generation goes up
 *
 * Where a CUDA device's context lives. The environment variable
 * `ACCEL_CUDA_ISOLATION` (`process`, the default, or `none`) chooses it for
 * the devices a process enumerates.
 */
typedef enum {
  ACCEL_CUDA_ISOLATION_NONE,
  ACCEL_CUDA_ISOLATION_PROCESS,
} AccelCudaIsolation;

/**
 * AccelCudaCompletion:
 * @ACCEL_CUDA_COMPLETION_POLL: a completion thread polls the event of the
 *   oldest op in flight with `cudaEventQuery`, spinning briefly and then
 *   backing off with short sleeps when idle (the default: 9.0 µs round trip
 *   on an H100, as fast as a raw launch and synchronize)
 * @ACCEL_CUDA_COMPLETION_CALLBACK: a host function enqueued after each op
 *   (`cudaLaunchHostFunc`) completes it (about 31 µs on an H100)
 * @ACCEL_CUDA_COMPLETION_SYNC: a completion thread blocks in
 *   `cudaEventSynchronize` on each op's event in turn
 *
 * How a CUDA device learns that an op has finished on the GPU. The
 * environment variable `ACCEL_CUDA_COMPLETION` (`poll`, `callback`, `sync`)
 * chooses it for the devices a process enumerates.
 */
typedef enum {
  ACCEL_CUDA_COMPLETION_POLL,
  ACCEL_CUDA_COMPLETION_CALLBACK,
  ACCEL_CUDA_COMPLETION_SYNC,
} AccelCudaCompletion;

/**
 * AccelCudaThrottleReasons:
 * @ACCEL_CUDA_THROTTLE_NONE: the clocks run as fast as they may
 * @ACCEL_CUDA_THROTTLE_GPU_IDLE: nothing runs, so the clocks are low
 * @ACCEL_CUDA_THROTTLE_APPLICATIONS_CLOCKS: held by the applications clock setting
 * @ACCEL_CUDA_THROTTLE_SW_POWER_CAP: the power draw reached the power limit
 * @ACCEL_CUDA_THROTTLE_HW_SLOWDOWN: slowed by hardware (heat or power brake)
 * @ACCEL_CUDA_THROTTLE_SYNC_BOOST: held to match the GPUs of a sync-boost group
 * @ACCEL_CUDA_THROTTLE_SW_THERMAL: slowed by the driver to keep the GPU below its maximum temperature
 * @ACCEL_CUDA_THROTTLE_HW_THERMAL: slowed by hardware because the GPU is too hot
 * @ACCEL_CUDA_THROTTLE_HW_POWER_BRAKE: slowed by an external power brake signal
 * @ACCEL_CUDA_THROTTLE_DISPLAY_CLOCKS: held by the display clock setting
 *
 * Why a GPU's clocks are below their maximum, as NVML reports it (the
 * #AccelCudaGpu:throttle-reasons property).
 */
typedef enum /*< flags >*/ {
  ACCEL_CUDA_THROTTLE_NONE = 0,
  ACCEL_CUDA_THROTTLE_GPU_IDLE = 1 << 0,
  ACCEL_CUDA_THROTTLE_APPLICATIONS_CLOCKS = 1 << 1,
  ACCEL_CUDA_THROTTLE_SW_POWER_CAP = 1 << 2,
  ACCEL_CUDA_THROTTLE_HW_SLOWDOWN = 1 << 3,
  ACCEL_CUDA_THROTTLE_SYNC_BOOST = 1 << 4,
  ACCEL_CUDA_THROTTLE_SW_THERMAL = 1 << 5,
  ACCEL_CUDA_THROTTLE_HW_THERMAL = 1 << 6,
  ACCEL_CUDA_THROTTLE_HW_POWER_BRAKE = 1 << 7,
  ACCEL_CUDA_THROTTLE_DISPLAY_CLOCKS = 1 << 8,
} AccelCudaThrottleReasons;

/**
 * AccelCudaLane:
 *
 * One lane of a CUDA device: a stream, with the library handles made for
 * it. Opaque; it is the `context` pointer every kernel of backend `cuda`
 * receives. Valid only while that kernel runs, on the device thread.
 */
typedef struct _AccelCudaLane AccelCudaLane;

typedef struct _AccelCudaDevice AccelCudaDevice;
typedef struct _AccelCudaGpu AccelCudaGpu;
typedef struct _AccelCudaBackend AccelCudaBackend;
typedef struct _AccelCudaRemoteDevice AccelCudaRemoteDevice;

G_END_DECLS
