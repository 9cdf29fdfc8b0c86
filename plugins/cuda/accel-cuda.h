/* accel-cuda.h: the CUDA backend's public API, for the authors of plugins
 * that add kernels to the `cuda` backend (cuFFT, cuSOLVER, CUTLASS,
 * FlashAttention, …).
 *
 * A kernel of backend `cuda` receives an #AccelCudaLane as the `context`
 * argument of its #AccelKernelRunFunc. It enqueues its work on the lane's
 * stream (accel_cuda_lane_get_stream()) and returns: it never synchronizes.
 * The device orders the op after the last writers of the buffers it reads,
 * records an event after it, and completes the op when that event fires.
 *
 * Library handles (cuBLAS, cuSOLVER, …) are cached per lane with
 * accel_cuda_lane_open_handle(), and plans (cuFFT plans, cuDNN and
 * cuBLASLt descriptors) in a per-lane cache with
 * accel_cuda_lane_get_plan(); they are made lazily on the device thread,
 * once per lane, and remade after the device's context is rebuilt. Scratch
 * memory comes from accel_cuda_lane_alloc_workspace(), stream-ordered from
 * the device's pool and released after the op.
 *
 * Errors: wrap every CUDA runtime call in accel_cuda_check() and every
 * library call in accel_cuda_check_library(); they map sticky errors to
 * %ACCEL_ERROR_CONTEXT_POISONED (the device then restarts its host process,
 * or fails if it runs in-process), allocation failures to
 * %ACCEL_ERROR_OUT_OF_MEMORY and the rest to %ACCEL_ERROR_LIBRARY.
 *
 * Kernels run on the device's own thread (one per device): a lane and its
 * handles are never touched by two threads at once.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#define ACCEL_CUDA_INSIDE
#include "accel-cuda-types.h"
#include "accel-cuda-enum-types.h"
#include "accel-cuda-error.h"
#include "accel-cuda-lane.h"
#include "accel-cuda-plan-cache.h"
#include "accel-cuda-gpu.h"
#include "accel-cuda-device.h"
#include "accel-cuda-remote-device.h"
#include "accel-cuda-backend.h"
#undef ACCEL_CUDA_INSIDE
