/* accel-cutlass-act.cuh: the matmul epilogue's activations, by run-time
 * kind (AccelCutlassAct), for the general kernels and the CUTLASS epilogue
 * tree alike: ReLU (NaN kept, as the CPU kernel), GELU in its tanh form
 * (cuBLASLt's) and its exact erf form (PyTorch's default).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "accel-cutlass-kernels.h"

namespace accel_cutlass {

__device__ __forceinline__ float
activate (float v, int act)
{
  switch (act)
    {
    case ACCEL_CUTLASS_ACT_RELU:
      return v > 0.0f || isnan (v) ? v : 0.0f;
    case ACCEL_CUTLASS_ACT_GELU_TANH:
      return 0.5f * v * (1.0f + tanhf (0.7978845608028654f * (v + 0.044715f * v * v * v)));
    case ACCEL_CUTLASS_ACT_GELU_ERF:
      return 0.5f * v * (1.0f + erff (v * 0.7071067811865476f));
    default:
      return v;
    }
}

}  // namespace accel_cutlass
